"""Ball joint (point fixed, 3 DOF removed): Schmitt's point-to-point joint, P-steps 2 and 4.

Position constraint, checked by look-ahead at t + h:
    C = b' - a'  (a' = LookAhead(A, a, h), b' = LookAhead(B, b, h)),  |C| < eps_pos.
Correction (P-step 2): the relative point velocity that closes the gap over h is C/h, so
    K = K_A(r_a) + K_B(r_b),   p = K^-1 C / h,   +p on A at a, -p on B at b,
with the arms r at time t (K is constant while time stands still; kinv is precomputed).
Velocity constraint at t + h (P-step 4): du = u_b - u_a, p = K^-1 du, same signs.
Both corrections are scaled by the loop's over-relaxation factor `relax` (1 in Gauss-Seidel;
solvers/relaxation.py).

Linearised look-ahead (the iterative loop, as the contacts do: contacts/rows.py). A
predicted point a' = s(t+h) + M_rot r moves with its body's velocities, to second order in
the change (dv, dw) since a snapshot, as
    da' = h dv + u x r' + u x (u x r')/2,   u = h (dw + (h/2) w0 x dw),   r' = M_rot r:
exact for the centre (s(t+h) = s + v h + g h^2/2); for the arm, M_rot = exp(h [w]x) of a
rotation about a fixed axis (a rod's) turned further by exp([u]x), with u the change of
the rotation vector through the left Jacobian E + (h/2) [w0]x to first order in h w0 (the
gyroscopic change of w over the step, of the same order, is left out: exact for a body
with equal moments, and the loop ends on the exact look-ahead). snapshot() keeps the exact
gap C0 and each side's r', v0, w0; a visit between snapshots reads
    C = C0 + db' - da'
with no Taylor series per visit, and corrects it with the same p = K^-1 C / h. The loop
takes an exact snapshot before it stops, so it ends on the exact look-ahead. (chain8 at
h = 0.01, snapshots only at the start and before stopping: the first-order model
h (dv + dw x r) took 3.3 snapshots a step and 28 % more corrections than the exact
look-ahead; this one 2.1 and as many corrections.)

The functions take the joint arrays (body, arm, kinv) and the body arrays they touch one by
one, not the Joints/Bodies tuples (see impulses.py: a tuple argument costs one refcount call
per member array at every inlined call site).
"""
import numpy as np
from numba import njit

from ..impulses import (
    add_k_matrix_of,
    dynamic,
    impulse_to,
    invert3,
    point_at,
    predicted_point,
    rotation_change,
    turn_terms,
    velocity_at,
)
from . import W_T


@njit(cache=True, inline='always')
def prepare(j, body, arm, kinv, static, inv_mass, inv_inertia_w, k):
    """K^-1 for joint j from the current arms (arm must be up to date). k: 3x3 scratch."""
    for r in range(3):
        for c in range(3):
            k[r, c] = 0.0
    for side in range(2):
        add_k_matrix_of(static, inv_mass, inv_inertia_w, body[j, side], arm[j, side, 0],
                        arm[j, side, 1], arm[j, side, 2], k)
    invert3(k, kinv[j])


@njit(cache=True, inline='always')
def position_error(j, body, arm, static, pos, pred_pos, pred_rot):
    """Predicted gap vector b' - a' at t + h (both bodies' look-ahead caches fresh)."""
    ax, ay, az = predicted_point(static, pos, pred_pos, pred_rot, body[j, 0], arm[j, 0, 0],
                                 arm[j, 0, 1], arm[j, 0, 2])
    bx, by, bz = predicted_point(static, pos, pred_pos, pred_rot, body[j, 1], arm[j, 1, 0],
                                 arm[j, 1, 1], arm[j, 1, 2])
    return bx - ax, by - ay, bz - az


@njit(cache=True, inline='always')
def correct_position(j, body, arm, kinv, h, eps, static, pos, inv_mass, vel, omega,
                     inv_inertia_w, pred_ok, pred_pos, pred_rot):
    """One P-step 1/2 visit: returns (error before, corrected?)."""
    dx, dy, dz = position_error(j, body, arm, static, pos, pred_pos, pred_rot)
    return close_gap(j, body, arm, kinv, h, eps, static, inv_mass, vel, omega, inv_inertia_w,
                     pred_ok, dx, dy, dz, 1.0)


@njit(cache=True, inline='always')
def close_gap(j, body, arm, kinv, h, eps, static, inv_mass, vel, omega, inv_inertia_w,
              pred_ok, dx, dy, dz, relax):
    """A position visit's correction of the predicted gap d = b' - a': none while |d| < eps,
    else the relative velocity change relax d/h at the anchors (K p = relax d/h). Returns
    (|d|, corrected?)."""
    err = np.sqrt(dx * dx + dy * dy + dz * dz)
    if err < eps:
        return err, False
    f = relax / h
    apply_relative(j, body, arm, kinv, static, inv_mass, vel, omega, inv_inertia_w, pred_ok,
                   dx * f, dy * f, dz * f)
    return err, True


@njit(cache=True, inline='always')
def relative_velocity(j, body, arm, static, vel, omega):
    """du = u_b - u_a of the two anchor points (arms at the current time)."""
    ax, ay, az = velocity_at(static, vel, omega, body[j, 0], arm[j, 0, 0], arm[j, 0, 1],
                             arm[j, 0, 2])
    bx, by, bz = velocity_at(static, vel, omega, body[j, 1], arm[j, 1, 0], arm[j, 1, 1],
                             arm[j, 1, 2])
    return bx - ax, by - ay, bz - az


@njit(cache=True, inline='always')
def snapshot(j, body, arm, static, pos, vel, omega, pred_pos, pred_rot, lin):
    """Exact look-ahead (both bodies' caches fresh) into lin[j]: the gap C0 = b' - a', then
    per side (A: 1, 3, 4; B: 2, 5, 6) r' = M_rot r, v0 and w0. Returns |C0|."""
    dx, dy, dz = position_error(j, body, arm, static, pos, pred_pos, pred_rot)
    lin[j, 0, 0], lin[j, 0, 1], lin[j, 0, 2] = dx, dy, dz
    for side in range(2):
        b = body[j, side]
        if not dynamic(static, b):
            continue    # (never read: _moved returns 0 for it)
        rx, ry, rz = arm[j, side, 0], arm[j, side, 1], arm[j, side, 2]
        for i in range(3):
            lin[j, 1 + side, i] = pred_rot[b, i, 0] * rx + pred_rot[b, i, 1] * ry \
                + pred_rot[b, i, 2] * rz
            lin[j, 3 + 2 * side, i] = vel[b, i]
            lin[j, 4 + 2 * side, i] = omega[b, i]
    return np.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True, inline='always')
def _moved(j, side, body, static, vel, omega, h, lin):
    """da' of one side since the snapshot (module doc): h dv + u x r' + u x (u x r')/2."""
    b = body[j, side]
    if not dynamic(static, b):
        return 0.0, 0.0, 0.0
    v0, w0, r = 3 + 2 * side, 4 + 2 * side, 1 + side
    ux, uy, uz = rotation_change(h, lin[j, w0, 0], lin[j, w0, 1], lin[j, w0, 2],
                                 omega[b, 0] - lin[j, w0, 0], omega[b, 1] - lin[j, w0, 1],
                                 omega[b, 2] - lin[j, w0, 2])
    cx, cy, cz, ex, ey, ez = turn_terms(ux, uy, uz, lin[j, r, 0], lin[j, r, 1], lin[j, r, 2])
    return (h * (vel[b, 0] - lin[j, v0, 0]) + cx + ex,
            h * (vel[b, 1] - lin[j, v0, 1]) + cy + ey,
            h * (vel[b, 2] - lin[j, v0, 2]) + cz + ez)


@njit(cache=True, inline='always')
def correct_position_linear(j, body, arm, kinv, h, eps, static, inv_mass, vel, omega,
                            inv_inertia_w, pred_ok, lin, relax):
    """One P-step 1/2 visit on the linearised look-ahead C = C0 + db' - da' of the last
    snapshot: returns (error before, corrected?)."""
    ax, ay, az = _moved(j, 0, body, static, vel, omega, h, lin)
    bx, by, bz = _moved(j, 1, body, static, vel, omega, h, lin)
    return close_gap(j, body, arm, kinv, h, eps, static, inv_mass, vel, omega, inv_inertia_w,
                     pred_ok, lin[j, 0, 0] + bx - ax, lin[j, 0, 1] + by - ay,
                     lin[j, 0, 2] + bz - az, relax)


@njit(cache=True, inline='always')
def correct_velocity(j, body, arm, kinv, eps, static, inv_mass, vel, omega, inv_inertia_w,
                     pred_ok, relax, warm):
    """One P-step 4 visit at t + h: returns (error before, corrected?)."""
    dx, dy, dz = relative_velocity(j, body, arm, static, vel, omega)
    err = np.sqrt(dx * dx + dy * dy + dz * dz)
    if err <= eps:
        return err, False
    apply_relative(j, body, arm, kinv, static, inv_mass, vel, omega, inv_inertia_w, pred_ok,
                   dx * relax, dy * relax, dz * relax)
    warm[j, W_T] += dx * relax          # the stage's sum (joints/warm_start.py)
    warm[j, W_T + 1] += dy * relax
    warm[j, W_T + 2] += dz * relax
    return err, True


@njit(cache=True, inline='always')
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


@njit(cache=True, inline='always')
def gap(j, body, arm, pos):
    """Current (not predicted) distance of the two anchor points."""
    ax, ay, az = point_at(pos, body[j, 0], arm[j, 0, 0], arm[j, 0, 1], arm[j, 0, 2])
    bx, by, bz = point_at(pos, body[j, 1], arm[j, 1, 0], arm[j, 1, 1], arm[j, 1, 2])
    return np.sqrt((bx - ax) ** 2 + (by - ay) ** 2 + (bz - az) ** 2)
