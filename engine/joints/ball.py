"""Ball joint (point fixed, 3 DOF removed): Schmitt's point-to-point joint, P-steps 2 and 4.

Position constraint, checked by look-ahead at t + h:
    C = b' - a'  (a' = LookAhead(A, a, h), b' = LookAhead(B, b, h)),  |C| < eps_pos.
Correction (P-step 2): the relative point velocity that closes the gap over h is C/h, so
    K = K_A(r_a) + K_B(r_b),   p = K^-1 C / h,   +p on A at a, -p on B at b,
with the arms r at time t (K is constant while time stands still; kinv is precomputed).
Velocity constraint at t + h (P-step 4): du = u_b - u_a, p = K^-1 du, same signs.

Linearised look-ahead (the iterative loop, as the contacts do: contacts/rows.py). The
predicted gap moves with the bodies' velocities as dC = h d(du) (exact for the centres,
s(t+h) = s + v h + g h^2/2; to first order in the rotation's change for the arms), so
snapshot() takes the exact C0 and the relative point velocity du0 at that moment, and a
visit between snapshots reads
    C = C0 + h (du - du0)
with no Taylor series per visit; its correction p = K^-1 C / h closes C exactly (dC = -h K p
= -C). The loop takes an exact snapshot before it stops, so it ends on the exact look-ahead.

The functions take the joint arrays (body, arm, kinv) and the body arrays they touch one by
one, not the Joints/Bodies tuples (see impulses.py: a tuple argument costs one refcount call
per member array at every inlined call site).
"""
import numpy as np
from numba import njit

from ..impulses import add_k_matrix_of, impulse_to, invert3, point_at, predicted_point, velocity_at


@njit(cache=True)
def prepare(j, body, arm, kinv, static, inv_mass, inv_inertia_w, k):
    """K^-1 for joint j from the current arms (arm must be up to date). k: 3x3 scratch."""
    for r in range(3):
        for c in range(3):
            k[r, c] = 0.0
    for side in range(2):
        add_k_matrix_of(static, inv_mass, inv_inertia_w, body[j, side], arm[j, side, 0],
                        arm[j, side, 1], arm[j, side, 2], k)
    invert3(k, kinv[j])


@njit(cache=True)
def position_error(j, body, arm, static, pos, pred_pos, pred_rot):
    """Predicted gap vector b' - a' at t + h (both bodies' look-ahead caches fresh)."""
    ax, ay, az = predicted_point(static, pos, pred_pos, pred_rot, body[j, 0], arm[j, 0, 0],
                                 arm[j, 0, 1], arm[j, 0, 2])
    bx, by, bz = predicted_point(static, pos, pred_pos, pred_rot, body[j, 1], arm[j, 1, 0],
                                 arm[j, 1, 1], arm[j, 1, 2])
    return bx - ax, by - ay, bz - az


@njit(cache=True)
def correct_position(j, body, arm, kinv, h, eps, static, pos, inv_mass, vel, omega,
                     inv_inertia_w, pred_ok, pred_pos, pred_rot):
    """One P-step 1/2 visit: returns (error before, corrected?)."""
    dx, dy, dz = position_error(j, body, arm, static, pos, pred_pos, pred_rot)
    err = np.sqrt(dx * dx + dy * dy + dz * dz)
    if err < eps:
        return err, False
    apply_relative(j, body, arm, kinv, static, inv_mass, vel, omega, inv_inertia_w, pred_ok,
                   dx / h, dy / h, dz / h)
    return err, True


@njit(cache=True)
def relative_velocity(j, body, arm, static, vel, omega):
    """du = u_b - u_a of the two anchor points (arms at the current time)."""
    ax, ay, az = velocity_at(static, vel, omega, body[j, 0], arm[j, 0, 0], arm[j, 0, 1],
                             arm[j, 0, 2])
    bx, by, bz = velocity_at(static, vel, omega, body[j, 1], arm[j, 1, 0], arm[j, 1, 1],
                             arm[j, 1, 2])
    return bx - ax, by - ay, bz - az


@njit(cache=True)
def snapshot(j, body, arm, static, pos, vel, omega, pred_pos, pred_rot, lin):
    """Exact look-ahead (both bodies' caches fresh): lin[j, 0] = C0, lin[j, 1] = du0.
    Returns |C0|."""
    dx, dy, dz = position_error(j, body, arm, static, pos, pred_pos, pred_rot)
    ux, uy, uz = relative_velocity(j, body, arm, static, vel, omega)
    lin[j, 0, 0], lin[j, 0, 1], lin[j, 0, 2] = dx, dy, dz
    lin[j, 1, 0], lin[j, 1, 1], lin[j, 1, 2] = ux, uy, uz
    return np.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True)
def correct_position_linear(j, body, arm, kinv, h, eps, static, inv_mass, vel, omega,
                            inv_inertia_w, pred_ok, lin):
    """One P-step 1/2 visit on the linearised look-ahead C = C0 + h (du - du0): returns
    (error before, corrected?)."""
    ux, uy, uz = relative_velocity(j, body, arm, static, vel, omega)
    dx = lin[j, 0, 0] + h * (ux - lin[j, 1, 0])
    dy = lin[j, 0, 1] + h * (uy - lin[j, 1, 1])
    dz = lin[j, 0, 2] + h * (uz - lin[j, 1, 2])
    err = np.sqrt(dx * dx + dy * dy + dz * dz)
    if err < eps:
        return err, False
    apply_relative(j, body, arm, kinv, static, inv_mass, vel, omega, inv_inertia_w, pred_ok,
                   dx / h, dy / h, dz / h)
    return err, True


@njit(cache=True)
def correct_velocity(j, body, arm, kinv, eps, static, inv_mass, vel, omega, inv_inertia_w,
                     pred_ok):
    """One P-step 4 visit at t + h: returns (error before, corrected?)."""
    dx, dy, dz = relative_velocity(j, body, arm, static, vel, omega)
    err = np.sqrt(dx * dx + dy * dy + dz * dz)
    if err <= eps:
        return err, False
    apply_relative(j, body, arm, kinv, static, inv_mass, vel, omega, inv_inertia_w, pred_ok,
                   dx, dy, dz)
    return err, True


@njit(cache=True)
def apply_relative(j, body, arm, kinv, static, inv_mass, vel, omega, inv_inertia_w, pred_ok,
                   dx, dy, dz):
    """Apply p = K^-1 d: +p on body A, -p on body B (removes relative velocity d)."""
    px = kinv[j, 0, 0] * dx + kinv[j, 0, 1] * dy + kinv[j, 0, 2] * dz
    py = kinv[j, 1, 0] * dx + kinv[j, 1, 1] * dy + kinv[j, 1, 2] * dz
    pz = kinv[j, 2, 0] * dx + kinv[j, 2, 1] * dy + kinv[j, 2, 2] * dz
    impulse_to(static, inv_mass, vel, omega, inv_inertia_w, pred_ok, body[j, 0],
               arm[j, 0, 0], arm[j, 0, 1], arm[j, 0, 2], px, py, pz)
    impulse_to(static, inv_mass, vel, omega, inv_inertia_w, pred_ok, body[j, 1],
               arm[j, 1, 0], arm[j, 1, 1], arm[j, 1, 2], -px, -py, -pz)


@njit(cache=True)
def gap(j, body, arm, pos):
    """Current (not predicted) distance of the two anchor points."""
    ax, ay, az = point_at(pos, body[j, 0], arm[j, 0, 0], arm[j, 0, 1], arm[j, 0, 2])
    bx, by, bz = point_at(pos, body[j, 1], arm[j, 1, 0], arm[j, 1, 1], arm[j, 1, 2])
    return np.sqrt((bx - ax) ** 2 + (by - ay) ** 2 + (bz - az) ** 2)
