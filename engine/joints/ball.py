"""Ball joint (point fixed, 3 DOF removed): Schmitt's point-to-point joint, P-steps 2 and 4.

Position constraint, checked by look-ahead at t + h:
    C = b' - a'  (a' = LookAhead(A, a, h), b' = LookAhead(B, b, h)),  |C| < eps_pos.
Correction (P-step 2): the relative point velocity that closes the gap over h is C/h, so
    K = K_A(r_a) + K_B(r_b),   p = K^-1 C / h,   +p on A at a, -p on B at b,
with the arms r at time t (K is constant while time stands still; kinv is precomputed).
Velocity constraint at t + h (P-step 4): du = u_b - u_a, p = K^-1 du, same signs.
"""
import numpy as np
from numba import njit

from ..impulses import (add_k_matrix, apply_impulse, body_point, invert3, point_velocity,
                        predict_point)


@njit(cache=True)
def prepare(B, J, j):
    """K^-1 for joint j from the current arms (J.arm must be up to date)."""
    k = np.zeros((3, 3))
    add_k_matrix(B, J.body[j, 0], J.arm[j, 0], k)
    add_k_matrix(B, J.body[j, 1], J.arm[j, 1], k)
    invert3(k, J.kinv[j])


@njit(cache=True, inline='always')
def position_error(B, J, j, h, order, gravity, scratch_a, scratch_x):
    """Predicted gap vector b' - a' at t + h."""
    ax, ay, az = predict_point(B, J.body[j, 0], J.arm[j, 0], h, order, gravity, scratch_a,
                               scratch_x)
    bx, by, bz = predict_point(B, J.body[j, 1], J.arm[j, 1], h, order, gravity, scratch_a,
                               scratch_x)
    return bx - ax, by - ay, bz - az


@njit(cache=True, inline='always')
def correct_position(B, J, j, h, eps, order, gravity, scratch_a, scratch_x):
    """One P-step 1/2 visit: returns (error before, corrected?)."""
    dx, dy, dz = position_error(B, J, j, h, order, gravity, scratch_a, scratch_x)
    err = np.sqrt(dx * dx + dy * dy + dz * dz)
    if err < eps:
        return err, False
    apply_relative(B, J, j, dx / h, dy / h, dz / h)
    return err, True


@njit(cache=True, inline='always')
def correct_velocity(B, J, j, eps):
    """One P-step 4 visit at t + h: returns (error before, corrected?)."""
    ax, ay, az = point_velocity(B, J.body[j, 0], J.arm[j, 0])
    bx, by, bz = point_velocity(B, J.body[j, 1], J.arm[j, 1])
    dx, dy, dz = bx - ax, by - ay, bz - az
    err = np.sqrt(dx * dx + dy * dy + dz * dz)
    if err <= eps:
        return err, False
    apply_relative(B, J, j, dx, dy, dz)
    return err, True


@njit(cache=True, inline='always')
def apply_relative(B, J, j, dx, dy, dz):
    """Apply p = K^-1 d: +p on body A, -p on body B (removes relative velocity d)."""
    k = J.kinv[j]
    px = k[0, 0] * dx + k[0, 1] * dy + k[0, 2] * dz
    py = k[1, 0] * dx + k[1, 1] * dy + k[1, 2] * dz
    pz = k[2, 0] * dx + k[2, 1] * dy + k[2, 2] * dz
    apply_impulse(B, J.body[j, 0], J.arm[j, 0], px, py, pz)
    apply_impulse(B, J.body[j, 1], J.arm[j, 1], -px, -py, -pz)


@njit(cache=True)
def gap(B, J, j):
    """Current (not predicted) distance of the two anchor points."""
    ax, ay, az = body_point(B, J.body[j, 0], J.arm[j, 0])
    bx, by, bz = body_point(B, J.body[j, 1], J.arm[j, 1])
    return np.sqrt((bx - ax) ** 2 + (by - ay) ** 2 + (bz - az) ** 2)
