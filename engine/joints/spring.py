"""Springs and dampers between two body points (Schmitt sec. 10).

With dp = p2 - p1 and e = dp/|dp|, the force on body 1 (at p1) is
    F = K_f (|dp| - Dist) e + K_d (e . (u2 - u1)) e,      and -F on body 2 at p2.
Forces only act as impulses. The impulse applied at time t stands for the force over the
window [t - h_prev/2, t + h/2] (the velocity then carries the body over [t, t + h]); at the
very start of a simulation h_prev = 0, so the first impulse covers only [0, h/2] -- with
that, Table 10.1 is reproduced.
- approximate mode (default, the report's eq. 9.2): I = F(t) (h_prev + h)/2, applied once
  before the joint iteration;
- iterated mode (the report's "exact" variant): the window integral of the quadratic through
  F(t - h_prev), F(t) and the look-ahead F(t + h) is recomputed in the correction loop and
  only the change I_i - I_{i-1} is applied each time.
The damping impulse is capped at the one that stops the relative motion along e, so a stiff
damper cannot reverse it.
"""
import numpy as np
from numba import njit

from ..impulses import (
    apply_impulse,
    body_arm,
    body_point,
    is_dynamic,
    point_velocity,
    predict_point,
)
from ..jitopts import REFCOUNT


@njit(cache=True)
def _arms(B, Sp, i, arm1, arm2):
    body_arm(B, Sp.const.body[i, 0], Sp.const.anchor[i, 0], arm1)
    body_arm(B, Sp.const.body[i, 1], Sp.const.anchor[i, 1], arm2)


@njit(cache=True)
def _effective_inv_mass(B, b, arm, ex, ey, ez):
    """e^T K_b(r) e = 1/m + (r x e)^T A (r x e)."""
    if not is_dynamic(B, b):
        return 0.0
    cx = arm[1] * ez - arm[2] * ey
    cy = arm[2] * ex - arm[0] * ez
    cz = arm[0] * ey - arm[1] * ex
    a = B.inv_inertia_w[b]
    return B.inv_mass[b] + cx * (a[0, 0] * cx + a[0, 1] * cy + a[0, 2] * cz) \
        + cy * (a[1, 0] * cx + a[1, 1] * cy + a[1, 2] * cz) \
        + cz * (a[2, 0] * cx + a[2, 1] * cy + a[2, 2] * cz)


@njit(cache=True)
def spring_force(Sp, i, p1, p2):
    """Elastic force on body 1 for endpoints p1, p2 (zero if they coincide)."""
    dx, dy, dz = p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]
    ln = np.sqrt(dx * dx + dy * dy + dz * dz)
    if ln == 0.0:
        return 0.0, 0.0, 0.0
    f = Sp.const.stiff[i] * (ln - Sp.const.rest[i]) / ln
    return f * dx, f * dy, f * dz


@njit(cache=True)
def current_force(B, Sp, i, arm1, arm2):
    p1 = body_point(B, Sp.const.body[i, 0], arm1)
    p2 = body_point(B, Sp.const.body[i, 1], arm2)
    return spring_force(Sp, i, p1, p2)


@njit(cache=True, **REFCOUNT)
def apply_approximate(B, Sp, h, h_prev):
    """Apply every spring's and damper's impulse for this step (approximate mode)."""
    if Sp.const.body.shape[0] == 0:   # no springs: no scratch to allocate
        return
    arm1 = np.empty(3)
    arm2 = np.empty(3)
    w = 0.5 * (h_prev + h)
    for i in range(Sp.const.body.shape[0]):
        _arms(B, Sp, i, arm1, arm2)
        fx, fy, fz = current_force(B, Sp, i, arm1, arm2)
        apply_damper(B, Sp, i, arm1, arm2, w, fx, fy, fz, h, h_prev)
        apply_impulse(B, Sp.const.body[i, 0], arm1, fx * w, fy * w, fz * w)
        apply_impulse(B, Sp.const.body[i, 1], arm2, -fx * w, -fy * w, -fz * w)


@njit(cache=True)
def apply_damper(B, Sp, i, arm1, arm2, w, fx, fy, fz, h, h_prev):
    """The damper's impulse for the window w, on the rate at t, before the spring's impulse
    (f: the spring's force on the first body). The velocities at t hold the last h_prev/2
    of gravity and the loads but not yet the spring's share of them, which acts in this
    window's impulse; so the rate at t is rate - k (f . e) h_prev / 2 (k: the two ends'
    inverse mass along the spring e). That holds for the plain window and for both half
    kicks of S_SPRING_SYNC (h_prev = 0 at t: the velocities already hold the spring's last
    half; h = 0 at t + h: they hold gravity's whole step, from the drift, and none of the
    spring's second half). A mass at rest on a damped spring under gravity then reads 0
    and rests where spring and weight balance (without it: damping g h / 2 / stiffness
    short of that)."""
    if Sp.const.damp[i] == 0.0:
        return
    p1 = body_point(B, Sp.const.body[i, 0], arm1)
    p2 = body_point(B, Sp.const.body[i, 1], arm2)
    dx, dy, dz = p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]
    ln = np.sqrt(dx * dx + dy * dy + dz * dz)
    if ln == 0.0:
        return
    ex, ey, ez = dx / ln, dy / ln, dz / ln
    u1 = point_velocity(B, Sp.const.body[i, 0], arm1)
    u2 = point_velocity(B, Sp.const.body[i, 1], arm2)
    rate = ex * (u2[0] - u1[0]) + ey * (u2[1] - u1[1]) + ez * (u2[2] - u1[2])
    mass_inv = _effective_inv_mass(B, Sp.const.body[i, 0], arm1, ex, ey, ez) \
        + _effective_inv_mass(B, Sp.const.body[i, 1], arm2, ex, ey, ez)
    if mass_inv == 0.0:
        return
    rate -= mass_inv * (fx * ex + fy * ey + fz * ez) * 0.5 * h_prev
    mag = Sp.const.damp[i] * rate * w
    stop = rate / mass_inv
    if abs(mag) > abs(stop):
        mag = stop
    apply_impulse(B, Sp.const.body[i, 0], arm1, mag * ex, mag * ey, mag * ez)
    apply_impulse(B, Sp.const.body[i, 1], arm2, -mag * ex, -mag * ey, -mag * ez)


@njit(cache=True)
def window_integral(f_prev, f0, fh, h_prev, h):
    """Integral over [-h_prev/2, h/2] of the quadratic through (-h_prev, f_prev), (0, f0),
    (h, fh); with h_prev = 0 the line through the last two over [0, h/2]."""
    if h_prev == 0.0:
        return 0.5 * h * f0 + 0.125 * h * (fh - f0)
    c = ((fh - f0) / h + (f_prev - f0) / h_prev) / (h + h_prev)
    b = (fh - f0) / h - c * h
    return f0 * 0.5 * (h + h_prev) + 0.125 * b * (h * h - h_prev * h_prev) \
        + c * (h ** 3 + h_prev ** 3) / 24.0


@njit(cache=True, **REFCOUNT)
def begin_iterated(B, Sp, h, h_prev):
    """Iterated mode: start a step with the approximate impulse F(t) (h_prev + h)/2 (kept in
    Sp.applied, refined in the loop) and the dampers (applied once)."""
    arm1 = np.empty(3)
    arm2 = np.empty(3)
    w = 0.5 * (h_prev + h)
    for i in range(Sp.const.body.shape[0]):
        _arms(B, Sp, i, arm1, arm2)
        fx, fy, fz = current_force(B, Sp, i, arm1, arm2)
        Sp.applied[i, 0], Sp.applied[i, 1], Sp.applied[i, 2] = fx * w, fy * w, fz * w
        apply_damper(B, Sp, i, arm1, arm2, w, fx, fy, fz, h, h_prev)
        apply_impulse(B, Sp.const.body[i, 0], arm1, fx * w, fy * w, fz * w)
        apply_impulse(B, Sp.const.body[i, 1], arm2, -fx * w, -fy * w, -fz * w)


@njit(cache=True)
def correct_iterated(B, Sp, i, h, h_prev, eps, order, gravity, scratch_a, scratch_x, arms):
    """Re-integrate spring i's impulse with the look-ahead and apply the change.

    arms: (2, 3) scratch (this runs inside the solver loop, which must not allocate).
    Returns (displacement the change causes over h, corrected?)."""
    arm1 = arms[0]
    arm2 = arms[1]
    _arms(B, Sp, i, arm1, arm2)
    b1, b2 = Sp.const.body[i, 0], Sp.const.body[i, 1]
    f0 = current_force(B, Sp, i, arm1, arm2)
    q1 = predict_point(B, b1, arm1, h, order, gravity, scratch_a, scratch_x)
    q2 = predict_point(B, b2, arm2, h, order, gravity, scratch_a, scratch_x)
    fh = spring_force(Sp, i, q1, q2)
    dx = window_integral(Sp.force_prev[i, 0], f0[0], fh[0], h_prev, h) - Sp.applied[i, 0]
    dy = window_integral(Sp.force_prev[i, 1], f0[1], fh[1], h_prev, h) - Sp.applied[i, 1]
    dz = window_integral(Sp.force_prev[i, 2], f0[2], fh[2], h_prev, h) - Sp.applied[i, 2]
    mag = np.sqrt(dx * dx + dy * dy + dz * dz)
    inv_m = 0.0
    if is_dynamic(B, b1):
        inv_m += B.inv_mass[b1]
    if is_dynamic(B, b2):
        inv_m += B.inv_mass[b2]
    effect = mag * inv_m * h
    # the change is always applied (it is cheap and makes the impulse exact); it only counts
    # as a correction, keeping the loop going, when its effect over h reaches eps
    apply_impulse(B, b1, arm1, dx, dy, dz)
    apply_impulse(B, b2, arm2, -dx, -dy, -dz)
    Sp.applied[i, 0] += dx
    Sp.applied[i, 1] += dy
    Sp.applied[i, 2] += dz
    return effect, effect >= eps


@njit(cache=True, **REFCOUNT)
def end_step(B, Sp):
    """Remember F(t) for the next step's window (call before time advances)."""
    if Sp.const.body.shape[0] == 0:   # no springs: no scratch to allocate
        return
    arm1 = np.empty(3)
    arm2 = np.empty(3)
    for i in range(Sp.const.body.shape[0]):
        _arms(B, Sp, i, arm1, arm2)
        f = current_force(B, Sp, i, arm1, arm2)
        Sp.force_prev[i, 0], Sp.force_prev[i, 1], Sp.force_prev[i, 2] = f[0], f[1], f[2]


@njit(cache=True, **REFCOUNT)
def potential_energy(B, Sp):
    if Sp.const.body.shape[0] == 0:   # no springs: no scratch to allocate
        return 0.0
    arm1 = np.empty(3)
    arm2 = np.empty(3)
    e = 0.0
    for i in range(Sp.const.body.shape[0]):
        _arms(B, Sp, i, arm1, arm2)
        p1 = body_point(B, Sp.const.body[i, 0], arm1)
        p2 = body_point(B, Sp.const.body[i, 1], arm2)
        ln = np.sqrt((p2[0] - p1[0]) ** 2 + (p2[1] - p1[1]) ** 2 + (p2[2] - p1[2]) ** 2)
        e += 0.5 * Sp.const.stiff[i] * (ln - Sp.const.rest[i]) ** 2
    return e
