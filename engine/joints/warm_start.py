"""Warm start of the joints' locks in the velocity stage (P-step 4) of the iterative loop: it
starts with the correction the same stage made in the last step, as the contacts do
(contacts/solve.warm_start) and as Box2D and Bullet do for their joints.

A joint's locks need about the same correction step after step (P-step 4 takes the second
half of a steady constraint force's impulse, the first went in at t), so Gauss-Seidel
started from it has little left to correct. P-step 4 is linear in the impulses along rows
fixed at t + h, so the velocities it ends with do not depend on the start beyond eps_vel: the
loop still stops only after a whole cycle without a correction. Measured velocity cycles per
step (numba off, the same start): tree_31 at h = 1/30 76 -> 56, the floating 7-hinge chain
at h = 1/60 45 -> 36, the slider crank 26 -> 25; chain8's energy error as cold.

Not in the position stage: its rows turn with the look-ahead as the loop goes, so where it
ends along a free axis depends on its path at second order; warm started there, chain8 at
h = 0.005 (Dmax 1e-5) gained energy, its mean |E - E0| over 10 s 5x the cold start's (0.113
against 0.022 J; 12x at h = 0.0025), for 30 % fewer position cycles.

What is kept is the change of the joint's relative velocity its corrections asked for, not
the impulse: Joints.warm[j] (W_* columns, joints/__init__.py) holds the sum of the
corrections' right sides (relax du) along the translation rows and along the rotation rows
as two world vectors, and the step length. begin() scales them by min(h / h_stored, 1) (a
halved step needs about half), projects them on the locks' rows at t + h (nothing is asked
along a free axis) and applies them as one correction of the joint, K m = d with K as it is
now (ball.apply_relative, generic.push_locks): kept as impulses, the part of last step's
impulse that no longer points at a pendulum's pivot spun its small bob up. The loop then
adds each correction's right side. Motors, limits and contacts keep their own accounts. The
global solvers' rounds do not warm start: begin() clears the sums. A sleeping joint (not
enabled) keeps them for when it wakes.
"""
from numba import njit

from ..jitopts import NO_REFCOUNT
from . import BALL, P_RLOCK, P_TLOCK, W_H, W_R, W_T
from .ball import apply_relative
from .generic import _arms, _locked_axes, push_locks, rotation_rows_of
from .rows import dot


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _on_rows(x, y, z, axes, n):
    """The components of (x, y, z) along the n orthonormal rows of axes (0 past n)."""
    a0 = dot(axes[0, 0], axes[0, 1], axes[0, 2], x, y, z) if n > 0 else 0.0
    a1 = dot(axes[1, 0], axes[1, 1], axes[1, 2], x, y, z) if n > 1 else 0.0
    a2 = dot(axes[2, 0], axes[2, 1], axes[2, 2], x, y, z) if n > 2 else 0.0
    return a0, a1, a2


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _along(a0, a1, a2, axes, n, w, col):
    """w[col:col + 3] = sum a_i axes_i over the first n rows."""
    for i in range(3):
        v = 0.0
        if n > 0:
            v += a0 * axes[0, i]
        if n > 1:
            v += a1 * axes[1, i]
        if n > 2:
            v += a2 * axes[2, i]
        w[col + i] = v


@njit(cache=True, **NO_REFCOUNT)
def begin(B, J, h, apply, s):
    """Start the velocity stage of a (sub)step of length h: with `apply` the last step's
    correction of each joint goes in (module doc), else the sums start at zero. s: scratch
    (12, 3, 3). Arms, inertias and K^-1 must be those at t + h (iterative.prepare)."""
    w = J.warm
    for j in range(w.shape[0]):
        if not J.enabled[j]:
            continue
        f = min(h / w[j, W_H], 1.0) if apply and w[j, W_H] > 0.0 else 0.0
        w[j, W_H] = h
        tx, ty, tz = f * w[j, W_T], f * w[j, W_T + 1], f * w[j, W_T + 2]
        rx, ry, rz = f * w[j, W_R], f * w[j, W_R + 1], f * w[j, W_R + 2]
        for i in range(3):
            w[j, W_T + i] = 0.0
            w[j, W_R + i] = 0.0
        if f == 0.0:
            continue
        if J.const.kind[j] == BALL:     # p = K^-1 d at the arms
            apply_relative(j, J.const.body, J.arm, J.kinv, B.static, B.inv_mass, B.vel,
                           B.omega, B.inv_inertia_w, B.pred_ok, tx, ty, tz)
            w[j, W_T], w[j, W_T + 1], w[j, W_T + 2] = tx, ty, tz
            continue
        tmask = int(J.const.param[j, P_TLOCK])
        rmask = int(J.const.param[j, P_RLOCK])
        nt = _locked_axes(B, J, j, tmask, False, s[0]) if tmask != 0 else 0
        nr = rotation_rows_of(B, J, j, rmask, False, s[2]) if rmask != 0 else 0
        t0, t1, t2 = _on_rows(tx, ty, tz, s[0], nt)
        r0, r1, r2 = _on_rows(rx, ry, rz, s[2], nr)
        if nt > 0:
            _arms(B, J, j, tmask == 7, s[3, 0], s[3, 1])
        push_locks(B, J, j, s, nt, nr, t0, t1, t2, r0, r1, r2)
        _along(t0, t1, t2, s[0], nt, w[j], W_T)
        _along(r0, r1, r2, s[2], nr, w[j], W_R)
