"""The generic joint: translational and rotational locks over body A's joint frame, limits,
motors and springs on the free coordinates. Every joint kind but the ball is one of these.

Translational rows (basic constraints point / line / plane): with a', b' the look-ahead
anchor points and x_i the predicted axes of A's joint frame for the locked bits,
    C_i = x_i . (b' - a'),  the impulse p = sum m_i x_i at the arms (+p on A, -p on B).
With all three locked this is the ball joint; with some free the impulse acts on A at the
place of B's anchor (r_a = b - s_A), the point of the line/plane closest to it.
Rotational rows (method-notes.md), F_A', F_B' the predicted joint frames:
  3 locked (orientation fixed): delta = rotation vector of F_B' F_A'^T, rows e_1..e_3;
  2 locked, free axis k (common axis): delta = angle(a_A', a_B') unit(a_A' x a_B') with
     a = F e_k, rows: the two other axes of A;
  1 locked k, free i, j (universal): A's axis u = F_A e_i and B's axis v = F_B e_j stay
     perpendicular: err = angle(u, v) - pi/2 = -asin(u.v), row w = unit(u x v);
  the impulse l = sum m_i w_i (+l on A, -l on B).
All locked rows are solved together, K m = C / h with K = G M^-1 G^T of the rows (lock_rows).
Velocity rows (P-step 4) use the same directions with the relative velocities at t + h.
The locks' and the motor row's corrections are scaled by the loop's over-relaxation factor
`relax` (1 in Gauss-Seidel; solvers/relaxation.py; the motor's accumulated impulse is still
clamped to its cap); the limits' are not (one-sided).
Rotational errors are compared with eps_pos read as radians.
Free coordinates: angle about x_A (phi = atan2(z_A.y_B, y_A.y_B)), offset along x_A
((b - a).x_A), and the universal's second angle about y_B (atan2((x_A x x_B).y_B, x_A.x_B)).
Angles are unwrapped: read on the branch nearest their value at the step's start (J.angle,
stored at the end of each step), so limits, servo targets and springs hold beyond +-pi.
A one-dimensional row along direction w changes its coordinate by -k lambda h per impulse
lambda (k = w^T L w, or x^T K x for offsets); limits keep their accumulated lambda one-sided,
motors keep |sum lambda| <= max h (Schmitt sec. 10: servo axes; method-notes: limits, motors).
"""
import numpy as np
from numba import njit

from ..impulses import (
    add_k_matrix_of,
    dynamic,
    ensure_look_ahead,
    look_ahead_linear,
    velocity_at,
)
from ..jitopts import NO_REFCOUNT
from . import (
    A_GOAL,
    A_H,
    A_HI1,
    A_HI2,
    A_KEFF,
    A_LO1,
    A_LO2,
    A_MOTOR,
    A_RATE_GOAL,
    A_SERVO_MODE,
    A_VHI1,
    A_VHI2,
    A_VLO1,
    A_VLO2,
    A_VMOTOR,
    COORD_ANGLE_B_Y,
    COORD_ANGLE_X,
    COORD_NONE,
    COORD_OFFSET_X,
    MOTOR_POSITION,
    MOTOR_VELOCITY,
    P_BRAKE,
    P_COORD1,
    P_COORD2,
    P_HI1,
    P_HI2,
    P_LIM1,
    P_LIM2,
    P_LO1,
    P_LO2,
    P_MAX,
    P_MOTOR,
    P_RLOCK,
    P_SEQ_LEN,
    P_SEQ_REPEAT,
    P_SEQ_START,
    P_SPRING_C,
    P_SPRING_K,
    P_SPRING_REST,
    P_TARGET,
    P_TLOCK,
    SERVO_DEADBEAT,
    SERVO_PROFILE,
    SERVO_UNDECIDED,
    W_R,
    W_T,
)
from .rows import (
    angular_mass,
    angular_velocity_of,
    axis_at,
    cross,
    dot,
    push_angular,
    push_linear,
    quad,
)

# ---- points and arms ----------------------------------------------------------------------

@njit(cache=True, inline='always', **NO_REFCOUNT)
def _point(B, J, j, side, ahead):
    """Anchor point of `side` now or at t + h."""
    b = J.const.body[j, side]
    rx, ry, rz = J.arm[j, side, 0], J.arm[j, side, 1], J.arm[j, side, 2]
    if b < 0:
        return rx, ry, rz
    if ahead and dynamic(B.static, b):
        m = B.pred_rot[b]
        p = B.pred_pos[b]
        return (p[0] + m[0, 0] * rx + m[0, 1] * ry + m[0, 2] * rz,
                p[1] + m[1, 0] * rx + m[1, 1] * ry + m[1, 2] * rz,
                p[2] + m[2, 0] * rx + m[2, 1] * ry + m[2, 2] * rz)
    return B.pos[b, 0] + rx, B.pos[b, 1] + ry, B.pos[b, 2] + rz


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _arms(B, J, j, full_point, arm_a, arm_b):
    """Arms of the translational rows at time t: B's anchor; on A its anchor when the point
    is fully fixed, else the place of B's anchor (r_a = b - s_A)."""
    for i in range(3):
        arm_b[i] = J.arm[j, 1, i]
    if full_point:
        for i in range(3):
            arm_a[i] = J.arm[j, 0, i]
        return
    bx, by, bz = _point(B, J, j, 1, False)
    a = J.const.body[j, 0]
    if a < 0:
        arm_a[0], arm_a[1], arm_a[2] = bx, by, bz
    else:
        arm_a[0], arm_a[1], arm_a[2] = bx - B.pos[a, 0], by - B.pos[a, 1], bz - B.pos[a, 2]


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _k_matrix(B, J, j, arm_a, arm_b, k):
    for r in range(3):
        for c in range(3):
            k[r, c] = 0.0
    add_k_matrix_of(B.static, B.inv_mass, B.inv_inertia_w, J.const.body[j, 0], arm_a[0], arm_a[1],
                    arm_a[2], k)
    add_k_matrix_of(B.static, B.inv_mass, B.inv_inertia_w, J.const.body[j, 1], arm_b[0], arm_b[1],
                    arm_b[2], k)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _locked_axes(B, J, j, mask, ahead, axes):
    """Rows of `axes` = A's frame axes for the set bits of mask; returns their count."""
    n = 0
    for c in range(3):
        if mask & (1 << c):
            x, y, z = axis_at(B, J, j, 0, c, ahead)
            axes[n, 0], axes[n, 1], axes[n, 2] = x, y, z
            n += 1
    return n


# ---- rotational rows ------------------------------------------------------------------------

@njit(cache=True, **NO_REFCOUNT)
def _rotation_error(B, J, j, mask, ahead, axes):
    """Rotational error vector delta and its rows (in axes[:n]); returns (n, e0, e1, e2)."""
    if mask == 7:
        # delta = rotation vector of E = F_B F_A^T (B's frame relative to A's)
        e = axes  # scratch for E, overwritten by the row directions below
        for r in range(3):
            for c in range(3):
                e[r, c] = 0.0
        for col in range(3):
            ax, ay, az = axis_at(B, J, j, 0, col, ahead)
            bx, by, bz = axis_at(B, J, j, 1, col, ahead)
            a = (ax, ay, az)
            bb = (bx, by, bz)
            for r in range(3):
                for c in range(3):
                    e[r, c] += bb[r] * a[c]
        vx = 0.5 * (e[2, 1] - e[1, 2])
        vy = 0.5 * (e[0, 2] - e[2, 0])
        vz = 0.5 * (e[1, 0] - e[0, 1])
        sn = np.sqrt(vx * vx + vy * vy + vz * vz)
        cs = 0.5 * (e[0, 0] + e[1, 1] + e[2, 2] - 1.0)
        f = np.arctan2(sn, cs) / sn if sn > 1e-12 else 1.0
        for r in range(3):
            for c in range(3):
                axes[r, c] = 1.0 if r == c else 0.0
        return 3, f * vx, f * vy, f * vz
    if mask == 0:
        return 0, 0.0, 0.0, 0.0
    locked = 0
    for c in range(3):
        if mask & (1 << c):
            locked += 1
    if locked == 2:
        k = 0 if not mask & 1 else (1 if not mask & 2 else 2)   # the free axis
        ax, ay, az = axis_at(B, J, j, 0, k, ahead)
        bx, by, bz = axis_at(B, J, j, 1, k, ahead)
        cx, cy, cz = cross(ax, ay, az, bx, by, bz)
        sn = np.sqrt(cx * cx + cy * cy + cz * cz)
        f = np.arctan2(sn, dot(ax, ay, az, bx, by, bz)) / sn if sn > 1e-12 else 1.0
        n = _locked_axes(B, J, j, 7 & ~(1 << k), ahead, axes)
        return n, dot(axes[0, 0], axes[0, 1], axes[0, 2], f * cx, f * cy, f * cz), \
            dot(axes[1, 0], axes[1, 1], axes[1, 2], f * cx, f * cy, f * cz), 0.0
    # one locked axis k: A's axis i stays perpendicular to B's axis j (i, j the others)
    k = 0 if mask & 1 else (1 if mask & 2 else 2)
    i = (k + 1) % 3
    jj = (k + 2) % 3
    ux, uy, uz = axis_at(B, J, j, 0, i, ahead)
    vx, vy, vz = axis_at(B, J, j, 1, jj, ahead)
    wx, wy, wz = cross(ux, uy, uz, vx, vy, vz)
    wn = np.sqrt(wx * wx + wy * wy + wz * wz)
    axes[0, 0], axes[0, 1], axes[0, 2] = wx / wn, wy / wn, wz / wn
    return 1, -np.arcsin(min(1.0, max(-1.0, dot(ux, uy, uz, vx, vy, vz)))), 0.0, 0.0


@njit(cache=True, **NO_REFCOUNT)
def rotation_rows_of(B, J, j, mask, ahead, axes):
    """The rotational locks' rows (as _rotation_error's, without the error) into axes[:n];
    returns n."""
    if mask == 7:
        for r in range(3):
            for c in range(3):
                axes[r, c] = 1.0 if r == c else 0.0
        return 3
    if mask == 0:
        return 0
    locked = _bits(mask)
    if locked == 2:
        k = 0 if not mask & 1 else (1 if not mask & 2 else 2)   # the free axis
        return _locked_axes(B, J, j, 7 & ~(1 << k), ahead, axes)
    k = 0 if mask & 1 else (1 if mask & 2 else 2)
    ux, uy, uz = axis_at(B, J, j, 0, (k + 1) % 3, ahead)
    vx, vy, vz = axis_at(B, J, j, 1, (k + 2) % 3, ahead)
    wx, wy, wz = cross(ux, uy, uz, vx, vy, vz)
    wn = np.sqrt(wx * wx + wy * wy + wz * wz)
    axes[0, 0], axes[0, 1], axes[0, 2] = wx / wn, wy / wn, wz / wn
    return 1


@njit(cache=True, **NO_REFCOUNT)
def rotation_row_errors(B, J, j, mask, velocity, axes):
    """(n, e0, e1, e2) of the rotational locks, rows in axes[:n]: the look-ahead error
    (position stage), or the same rows with the relative angular velocity w_B - w_A at
    t + h (velocity stage)."""
    if not velocity:
        return _rotation_error(B, J, j, mask, True, axes)
    n = rotation_rows_of(B, J, j, mask, False, axes)
    wa = angular_velocity_of(B, J.const.body[j, 0])
    wb = angular_velocity_of(B, J.const.body[j, 1])
    dx, dy, dz = wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2]
    return n, dot(axes[0, 0], axes[0, 1], axes[0, 2], dx, dy, dz), \
        dot(axes[1, 0], axes[1, 1], axes[1, 2], dx, dy, dz) if n > 1 else 0.0, \
        dot(axes[2, 0], axes[2, 1], axes[2, 2], dx, dy, dz) if n > 2 else 0.0


# ---- free coordinates, limits, motors, springs ------------------------------------------------

TWO_PI = 2.0 * np.pi


@njit(cache=True)
def unwrapped(raw, ref):
    """An angle read in (-pi, pi] on the branch nearest `ref`, its value at the step's start:
    phi = raw + 2 pi round((ref - raw) / 2 pi). Exact while a step turns the joint by less
    than pi (188 rad/s at h = 1/60); within half a turn of 0 it is `raw` to the bit."""
    return raw + TWO_PI * np.floor((ref - raw) / TWO_PI + 0.5)


@njit(cache=True, **NO_REFCOUNT)
def coordinate(B, J, j, ctype, ahead):
    """(value, direction) of a free coordinate now or at t + h; angles unwrapped."""
    if ctype == COORD_ANGLE_X:
        x = axis_at(B, J, j, 0, 0, ahead)
        ya = axis_at(B, J, j, 0, 1, ahead)
        za = axis_at(B, J, j, 0, 2, ahead)
        yb = axis_at(B, J, j, 1, 1, ahead)
        phi = np.arctan2(dot(za[0], za[1], za[2], yb[0], yb[1], yb[2]),
                         dot(ya[0], ya[1], ya[2], yb[0], yb[1], yb[2]))
        return unwrapped(phi, J.angle[j, 0]), x[0], x[1], x[2]
    if ctype == COORD_ANGLE_B_Y:
        xa = axis_at(B, J, j, 0, 0, ahead)
        xb = axis_at(B, J, j, 1, 0, ahead)
        y = axis_at(B, J, j, 1, 1, ahead)
        c = cross(xa[0], xa[1], xa[2], xb[0], xb[1], xb[2])
        phi = np.arctan2(dot(c[0], c[1], c[2], y[0], y[1], y[2]),
                         dot(xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]))
        return unwrapped(phi, J.angle[j, 1]), y[0], y[1], y[2]
    # offset along A's x axis
    x = axis_at(B, J, j, 0, 0, ahead)
    a = _point(B, J, j, 0, ahead)
    b = _point(B, J, j, 1, ahead)
    return dot(x[0], x[1], x[2], b[0] - a[0], b[1] - a[1], b[2] - a[2]), x[0], x[1], x[2]


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _row_mass(B, J, j, ctype, wx, wy, wz, s):
    """k of a one-dimensional row: w^T L w (angles) or x^T K x (offsets, at B's anchor)."""
    if ctype == COORD_OFFSET_X:
        _arms(B, J, j, False, s[3, 0], s[3, 1])
        _k_matrix(B, J, j, s[3, 0], s[3, 1], s[1])
        return quad(s[1], wx, wy, wz, wx, wy, wz)
    angular_mass(B, J, j, s[1])
    return quad(s[1], wx, wy, wz, wx, wy, wz)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _rate(B, J, j, ctype, wx, wy, wz, s):
    """Time derivative of the coordinate: w.(w_B - w_A) or x.(u_b - u_a)."""
    if ctype == COORD_OFFSET_X:
        _arms(B, J, j, False, s[3, 0], s[3, 1])
        ua = velocity_at(B.static, B.vel, B.omega, J.const.body[j, 0], s[3, 0, 0], s[3, 0, 1],
                         s[3, 0, 2])
        ub = velocity_at(B.static, B.vel, B.omega, J.const.body[j, 1], s[3, 1, 0], s[3, 1, 1],
                         s[3, 1, 2])
        return dot(wx, wy, wz, ub[0] - ua[0], ub[1] - ua[1], ub[2] - ua[2])
    wa = angular_velocity_of(B, J.const.body[j, 0])
    wb = angular_velocity_of(B, J.const.body[j, 1])
    return dot(wx, wy, wz, wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2])


@njit(cache=True, inline='always', **NO_REFCOUNT)
def push_row(B, J, j, ctype, wx, wy, wz, lam, s):
    """Impulse lam along the row (angular l = lam w, or linear p = lam x at the arms)."""
    if ctype == COORD_OFFSET_X:
        _arms(B, J, j, False, s[3, 0], s[3, 1])
        push_linear(B, J, j, s[3, 0], s[3, 1], lam * wx, lam * wy, lam * wz)
    else:
        push_angular(B, J, j, lam * wx, lam * wy, lam * wz)


@njit(cache=True, **NO_REFCOUNT)
def _accumulate(B, J, j, col, inc, lo, hi, ctype, wx, wy, wz, k, h, eps, s):
    """Add inc to the row's accumulated impulse, clamped to [lo, hi], and apply the change
    -- unless its effect on the coordinate over h is below eps/1000: such a change is
    skipped, so a cycle that applies nothing leaves every measured error valid.
    Returns the effect applied (0 if none)."""
    old = J.acc[j, col]
    new = min(hi, max(lo, old + inc))
    d = new - old
    effect = abs(d) * k * h
    if effect < 1e-3 * eps:
        return 0.0
    J.acc[j, col] = new
    push_row(B, J, j, ctype, wx, wy, wz, d, s)
    return effect


@njit(cache=True)
def target_at(J, j, t):
    """Motor target at time t: the constant, or the sequence (times, values) interpolated
    linearly, optionally repeating."""
    n = int(J.const.param[j, P_SEQ_LEN])
    if n == 0:
        return J.const.param[j, P_TARGET]
    s0 = int(J.const.param[j, P_SEQ_START])
    t0 = J.const.seq[s0, 0]
    t1 = J.const.seq[s0 + n - 1, 0]
    if J.const.param[j, P_SEQ_REPEAT] != 0.0 and t1 > t0:
        t = t0 + (t - t0) % (t1 - t0)
    if t <= t0:
        return J.const.seq[s0, 1]
    if t >= t1:
        return J.const.seq[s0 + n - 1, 1]
    for i in range(s0, s0 + n - 1):
        ta, tb = J.const.seq[i, 0], J.const.seq[i + 1, 0]
        if t <= tb:
            f = (t - ta) / (tb - ta) if tb > ta else 1.0
            return J.const.seq[i, 1] + f * (J.const.seq[i + 1, 1] - J.const.seq[i, 1])
    return J.const.seq[s0 + n - 1, 1]


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _limit(J, j, which):
    """(coordinate type, lower, upper) of limit `which` (0, 1); type COORD_NONE if none."""
    ctype = int(J.const.param[j, P_COORD1 if which == 0 else P_COORD2])
    if J.const.param[j, P_LIM1 if which == 0 else P_LIM2] == 0.0:
        ctype = COORD_NONE
    return ctype, J.const.param[j, P_LO1 if which == 0 else P_LO2], \
        J.const.param[j, P_HI1 if which == 0 else P_HI2]


# ---- K of the locked rows, and the motor row's effective mass ----------------------------
# K of the joint's locked rows and its motor row m together, K = G M^-1 G^T over both bodies
# (G: the rows' Jacobians; a linear row x at the arms r_a, r_b is -[x, r_a x x] on A and
# [x, r_b x x] on B, an angular row w is -[0, w] on A and [0, w] on B). The coordinate's
# response to an impulse along the motor row, once the locks have taken their share, is
# k_eff = 1 / [K^-1]_mm = the Schur complement K_mm - K_ml K_ll^-1 K_lm. For a lever on a
# hinge it is 1 / (I_c + m d^2), where the row alone (k = w^T L w) sees 1 / I_c. Rotational
# locks are taken along A's frame axes (exact for the hinge's and the fixed joint's rows, a
# first-order stand-in for the universal's u x v). K lives flat in s[6..11] (7 x 7 <= 54).

@njit(cache=True, inline='always', **NO_REFCOUNT)
def _kat(r, c):
    i = r * 7 + c
    return 6 + i // 9, (i % 9) // 3, i % 3


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _row_of(s, r, nt, nr, motor_linear, wx, wy, wz):
    """(linear?, direction) of row r: nt translational locks (s[0]), nr rotational locks
    (s[2]), then the motor row."""
    if r < nt:
        return True, s[0, r, 0], s[0, r, 1], s[0, r, 2]
    if r < nt + nr:
        q = r - nt
        return False, s[2, q, 0], s[2, q, 1], s[2, q, 2]
    return motor_linear, wx, wy, wz


@njit(cache=True, **NO_REFCOUNT)
def _k_entry(B, J, j, s, r, c, nt, nr, motor_linear, wx, wy, wz):
    lr, xr, yr, zr = _row_of(s, r, nt, nr, motor_linear, wx, wy, wz)
    lc, xc, yc, zc = _row_of(s, c, nt, nr, motor_linear, wx, wy, wz)
    v = 0.0
    for side in range(2):
        b = J.const.body[j, side]
        if b < 0 or not dynamic(B.static, b):
            continue
        ax, ay, az = s[3, side, 0], s[3, side, 1], s[3, side, 2]
        if lr:
            ur = cross(ax, ay, az, xr, yr, zr)
        else:
            ur = (xr, yr, zr)
        if lc:
            uc = cross(ax, ay, az, xc, yc, zc)
        else:
            uc = (xc, yc, zc)
        if lr and lc:
            v += B.inv_mass[b] * dot(xr, yr, zr, xc, yc, zc)
        v += quad(B.inv_inertia_w[b], ur[0], ur[1], ur[2], uc[0], uc[1], uc[2])
    return v


@njit(cache=True, **NO_REFCOUNT)
def effective_row_mass(B, J, j, ctype, wx, wy, wz, k, s):
    """k_eff of the motor row (see above); k (the row alone) where nothing is locked or the
    locked rows are dependent."""
    tmask = int(J.const.param[j, P_TLOCK])
    rmask = int(J.const.param[j, P_RLOCK])
    nt = _locked_axes(B, J, j, tmask, False, s[0])
    nr = _locked_axes(B, J, j, rmask, False, s[2])
    if nt + nr == 0:
        return k
    _arms(B, J, j, tmask == 7, s[3, 0], s[3, 1])
    linear = ctype == COORD_OFFSET_X
    n = nt + nr + 1
    for r in range(n):
        for c in range(r, n):
            v = _k_entry(B, J, j, s, r, c, nt, nr, linear, wx, wy, wz)
            a = _kat(r, c)
            s[a[0], a[1], a[2]] = v
            a = _kat(c, r)
            s[a[0], a[1], a[2]] = v
    # Gaussian elimination of the locked rows (K is symmetric positive semi-definite);
    # a row whose pivot has vanished depends on the earlier ones and is left out
    m = n - 1
    for p in range(m):
        a = _kat(p, p)
        piv = s[a[0], a[1], a[2]]
        if piv <= 1e-12 * k:
            continue
        for r in range(p + 1, n):
            a = _kat(r, p)
            f = s[a[0], a[1], a[2]] / piv
            if f == 0.0:
                continue
            for c in range(p + 1, n):
                a = _kat(r, c)
                b = _kat(p, c)
                s[a[0], a[1], a[2]] -= f * s[b[0], b[1], b[2]]
    a = _kat(m, m)
    keff = s[a[0], a[1], a[2]]
    return keff if 0.0 < keff <= k * (1.0 + 1e-9) else k


# ---- the locks together --------------------------------------------------------------------
# One visit solves all the joint's locked rows at once, as the ball joint does its three.
# With the rows' Jacobians G (above: a translation x is -[x, r_a x x] on A and [x, r_b x x]
# on B, a rotation w is -[0, w] on A and [0, w] on B), K = G M^-1 G^T in 3 x 3 blocks,
#     K = [[T, C], [C^T, R]],  T_ik = sum 1/m x_i.x_k + u_i^T I^-1 u_k  (u = r x x),
#                              C_ik = sum u_i^T I^-1 w_k,  R_ik = sum w_i^T I^-1 w_k,
# summed over the joint's moving bodies (the signs cancel in each product); rows a joint
# leaves free are padded with T_ii = 1 (or R_ii = 1) and error 0. With e the rows' errors
# (the look-ahead's / h in the position stage, the relative velocities in P-step 4) it
# solves K m = relax e by the Schur complement:
#     X = T^-1 C,  (R - C^T X) m_r = e_r - X^T e_t,  m_t = T^-1 e_t - X m_r,
# and applies p = sum m_t,i x_i at the arms and l = sum m_r,i w_i (+ on A, - on B).
# Solved part by part (the translations, then the rotations), each undoes the other through
# the arms: a pin off a lever's centre turns the lever, the rotational locks turn it back.
# The slider crank's loops took 30 + 46 cycles a step so, 18 + 26 with the parts together.

@njit(cache=True, inline='always', **NO_REFCOUNT)
def _inverse3(m, out):
    """out = m^-1 for a symmetric positive semi-definite 3 x 3 m; zeros where m is
    singular (its rows depend on each other: nothing is solved)."""
    c00 = m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1]
    c01 = m[1, 2] * m[2, 0] - m[1, 0] * m[2, 2]
    c02 = m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]
    det = m[0, 0] * c00 + m[0, 1] * c01 + m[0, 2] * c02
    # det / (m00 m11 m22) in [0, 1] for such a matrix (Hadamard): how far its rows are from
    # depending on each other, whatever their scales (a planar joint's row across a long
    # arm has k ~ 1e6 beside a padded 1)
    if not det > 1e-12 * m[0, 0] * m[1, 1] * m[2, 2]:
        for r in range(3):
            for c in range(3):
                out[r, c] = 0.0
        return
    f = 1.0 / det
    out[0, 0] = c00 * f
    out[0, 1] = out[1, 0] = c01 * f
    out[0, 2] = out[2, 0] = c02 * f
    out[1, 1] = (m[0, 0] * m[2, 2] - m[0, 2] * m[2, 0]) * f
    out[1, 2] = out[2, 1] = (m[0, 2] * m[1, 0] - m[0, 0] * m[1, 2]) * f
    out[2, 2] = (m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]) * f


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _lock_blocks(B, J, j, s, nt, nr):
    """T, C, R (above) into s[6], s[7], s[8] from the translation rows s[0][:nt] (arms s[3])
    and the rotation rows s[2][:nr]; per moving body, u = r x x into s[4] and I^-1 u,
    I^-1 w into s[9], s[10]."""
    for r in range(3):
        for c in range(3):
            s[6, r, c] = 1.0 if (r == c and r >= nt) else 0.0
            s[7, r, c] = 0.0
            s[8, r, c] = 1.0 if (r == c and r >= nr) else 0.0
    u, iu, iw = s[4], s[9], s[10]
    for side in range(2):
        b = J.const.body[j, side]
        if b < 0 or not dynamic(B.static, b):
            continue
        im = B.inv_mass[b]
        m = B.inv_inertia_w[b]
        for r in range(nt):
            x, y, z = cross(s[3, side, 0], s[3, side, 1], s[3, side, 2], s[0, r, 0],
                            s[0, r, 1], s[0, r, 2])
            u[r, 0], u[r, 1], u[r, 2] = x, y, z
            for i in range(3):
                iu[r, i] = m[i, 0] * x + m[i, 1] * y + m[i, 2] * z
        for r in range(nr):
            for i in range(3):
                iw[r, i] = m[i, 0] * s[2, r, 0] + m[i, 1] * s[2, r, 1] + m[i, 2] * s[2, r, 2]
        for r in range(nt):
            for c in range(r, nt):
                s[6, r, c] += im * dot(s[0, r, 0], s[0, r, 1], s[0, r, 2], s[0, c, 0],
                                       s[0, c, 1], s[0, c, 2]) \
                    + dot(iu[r, 0], iu[r, 1], iu[r, 2], u[c, 0], u[c, 1], u[c, 2])
            for c in range(nr):
                s[7, r, c] += dot(iu[r, 0], iu[r, 1], iu[r, 2], s[2, c, 0], s[2, c, 1],
                                  s[2, c, 2])
        for r in range(nr):
            for c in range(r, nr):
                s[8, r, c] += dot(iw[r, 0], iw[r, 1], iw[r, 2], s[2, c, 0], s[2, c, 1],
                                  s[2, c, 2])
    for r in range(3):
        for c in range(r + 1, 3):
            s[6, c, r] = s[6, r, c]
            s[8, c, r] = s[8, r, c]


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _factor_locks(t, c, r, ti, x, si, sv):
    """The Schur complement's factors (above) of the blocks t, c, r: ti = T^-1,
    x = X = T^-1 C and sv = (R - C^T X)^-1 (si: scratch; sv may be r itself)."""
    _inverse3(t, ti)
    for i in range(3):              # X = T^-1 C
        for k in range(3):
            x[i, k] = ti[i, 0] * c[0, k] + ti[i, 1] * c[1, k] + ti[i, 2] * c[2, k]
    for i in range(3):              # R - C^T X
        for k in range(3):
            si[i, k] = r[i, k] - (c[0, i] * x[0, k] + c[1, i] * x[1, k] + c[2, i] * x[2, k])
    _inverse3(si, sv)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _solve_factored(ti, c, x, sv, t0, t1, t2, r0, r1, r2):
    """m_t, m_r of K m = (e_t, e_r) from _factor_locks' factors and the block C:
    y = T^-1 e_t, m_r = sv (e_r - C^T y), m_t = y - X m_r.
    Returns (m_t0, m_t1, m_t2, m_r0, m_r1, m_r2)."""
    y0 = ti[0, 0] * t0 + ti[0, 1] * t1 + ti[0, 2] * t2
    y1 = ti[1, 0] * t0 + ti[1, 1] * t1 + ti[1, 2] * t2
    y2 = ti[2, 0] * t0 + ti[2, 1] * t1 + ti[2, 2] * t2
    q0 = r0 - (c[0, 0] * y0 + c[1, 0] * y1 + c[2, 0] * y2)
    q1 = r1 - (c[0, 1] * y0 + c[1, 1] * y1 + c[2, 1] * y2)
    q2 = r2 - (c[0, 2] * y0 + c[1, 2] * y1 + c[2, 2] * y2)
    m3 = sv[0, 0] * q0 + sv[0, 1] * q1 + sv[0, 2] * q2
    m4 = sv[1, 0] * q0 + sv[1, 1] * q1 + sv[1, 2] * q2
    m5 = sv[2, 0] * q0 + sv[2, 1] * q1 + sv[2, 2] * q2
    return (y0 - (x[0, 0] * m3 + x[0, 1] * m4 + x[0, 2] * m5),
            y1 - (x[1, 0] * m3 + x[1, 1] * m4 + x[1, 2] * m5),
            y2 - (x[2, 0] * m3 + x[2, 1] * m4 + x[2, 2] * m5), m3, m4, m5)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _push_solved(B, J, j, rows_t, rows_r, arm_a, arm_b, nt, nr, m0, m1, m2, m3, m4, m5):
    """p = sum m_t,i x_i at the arms, l = sum m_r,i w_i (+ on A, - on B) over the nt
    translation rows rows_t and the nr rotation rows rows_r."""
    px = py = pz = lx = ly = lz = 0.0
    for r in range(nt):             # (rows past nt, nr are not set: m is 0 there)
        m = m0 if r == 0 else (m1 if r == 1 else m2)
        px += m * rows_t[r, 0]
        py += m * rows_t[r, 1]
        pz += m * rows_t[r, 2]
    for r in range(nr):
        m = m3 if r == 0 else (m4 if r == 1 else m5)
        lx += m * rows_r[r, 0]
        ly += m * rows_r[r, 1]
        lz += m * rows_r[r, 2]
    if nt > 0:
        push_linear(B, J, j, arm_a, arm_b, px, py, pz)
    if nr > 0:
        push_angular(B, J, j, lx, ly, lz)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def push_locks(B, J, j, s, nt, nr, t0, t1, t2, r0, r1, r2):
    """Apply the impulses that change the relative velocity along the nt translation rows
    (s[0], arms s[3]) by -t and along the nr rotation rows (s[2]) by -r: K m = (t, r),
    p = sum m_i x_i at the arms, l = sum m_i w_i (+ on A, - on B)."""
    _lock_blocks(B, J, j, s, nt, nr)
    _factor_locks(s[6], s[7], s[8], s[9], s[10], s[11], s[8])
    m0, m1, m2, m3, m4, m5 = _solve_factored(s[9], s[7], s[10], s[8], t0, t1, t2, r0, r1, r2)
    _push_solved(B, J, j, s[0], s[2], s[3, 0], s[3, 1], nt, nr, m0, m1, m2, m3, m4, m5)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _warm_sums(J, j, rows_t, rows_r, nt, nr, t0, t1, t2, r0, r1, r2):
    """The velocity stage's sums (joints/warm_start.py): the rows' corrections."""
    for r in range(nt):
        e = t0 if r == 0 else (t1 if r == 1 else t2)
        for i in range(3):
            J.warm[j, W_T + i] += e * rows_t[r, i]
    for r in range(nr):
        e = r0 if r == 0 else (r1 if r == 1 else r2)
        for i in range(3):
            J.warm[j, W_R + i] += e * rows_r[r, i]


@njit(cache=True, inline='always', **NO_REFCOUNT)
def _bits(mask):
    return (mask & 1) + ((mask >> 1) & 1) + ((mask >> 2) & 1)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def lock_rows(B, J, j, h, eps, s, relax):
    """Position (look-ahead) visit of all the joint's locks together (above).
    s: scratch (12, 3, 3): translation rows s[0], rotation rows s[2], arms s[3], the blocks
    and the solve s[4..11]. Returns (error, corrected)."""
    tmask = int(J.const.param[j, P_TLOCK])
    rmask = int(J.const.param[j, P_RLOCK])
    nt = 0
    t0 = t1 = t2 = 0.0
    if tmask != 0:
        nt = _locked_axes(B, J, j, tmask, True, s[0])
        _arms(B, J, j, tmask == 7, s[3, 0], s[3, 1])
        ax, ay, az = _point(B, J, j, 0, True)
        bx, by, bz = _point(B, J, j, 1, True)
        dx, dy, dz = bx - ax, by - ay, bz - az
        t0 = dot(s[0, 0, 0], s[0, 0, 1], s[0, 0, 2], dx, dy, dz)
        t1 = dot(s[0, 1, 0], s[0, 1, 1], s[0, 1, 2], dx, dy, dz) if nt > 1 else 0.0
        t2 = dot(s[0, 2, 0], s[0, 2, 1], s[0, 2, 2], dx, dy, dz) if nt > 2 else 0.0
    nr = 0
    r0 = r1 = r2 = 0.0
    if rmask != 0:
        nr, r0, r1, r2 = rotation_row_errors(B, J, j, rmask, False, s[2])
    err = max(np.sqrt(t0 * t0 + t1 * t1 + t2 * t2), np.sqrt(r0 * r0 + r1 * r1 + r2 * r2))
    if err < eps:
        return err, False
    scale = relax / h
    push_locks(B, J, j, s, nt, nr, t0 * scale, t1 * scale, t2 * scale, r0 * scale, r1 * scale,
               r2 * scale)
    return err, True


# The velocity stage's K is fixed: its rows, arms and inertias are those at t + h, which its
# impulses do not change. factor_velocity_locks puts each joint's rows, arms and K's factors
# into J.locks once per stage (LK_* below); a visit (velocity_locks) then only reads the
# relative velocities and solves with them (the floating 7-hinge chain's velocity visit:
# 0.61 -> 0.26 us, its velocity stage 123 -> 53 us a step at h = 1/60).
LK_ROWS_T, LK_ROWS_R, LK_ARMS, LK_TI, LK_X, LK_C, LK_SV = range(7)


@njit(cache=True, **NO_REFCOUNT)
def factor_velocity_locks(B, J, j, s):
    """J.locks[j] at t + h (above); s: scratch (12, 3, 3). Arms and inertias must be those
    at t + h (iterative.prepare)."""
    tmask = int(J.const.param[j, P_TLOCK])
    rmask = int(J.const.param[j, P_RLOCK])
    nt = _locked_axes(B, J, j, tmask, False, s[0]) if tmask != 0 else 0
    nr = rotation_rows_of(B, J, j, rmask, False, s[2]) if rmask != 0 else 0
    if nt > 0:
        _arms(B, J, j, tmask == 7, s[3, 0], s[3, 1])
    _lock_blocks(B, J, j, s, nt, nr)
    lk = J.locks[j]
    _factor_locks(s[6], s[7], s[8], lk[LK_TI], lk[LK_X], s[11], lk[LK_SV])
    for r in range(3):
        for c in range(3):
            lk[LK_ROWS_T, r, c] = s[0, r, c]
            lk[LK_ROWS_R, r, c] = s[2, r, c]
            lk[LK_C, r, c] = s[7, r, c]
        lk[LK_ARMS, 0, r] = s[3, 0, r]
        lk[LK_ARMS, 1, r] = s[3, 1, r]


@njit(cache=True, inline='always', **NO_REFCOUNT)
def velocity_locks(B, J, j, eps, relax):
    """Velocity visit (P-step 4) of all the joint's locks together, with the factors of
    factor_velocity_locks: the rows' relative velocities at t + h, solved as the position
    visit's errors. Returns (error, corrected)."""
    lk = J.locks[j]
    nt = _bits(int(J.const.param[j, P_TLOCK]))
    nr = _bits(int(J.const.param[j, P_RLOCK]))
    t0 = t1 = t2 = r0 = r1 = r2 = 0.0
    if nt > 0:
        arms, rows = lk[LK_ARMS], lk[LK_ROWS_T]
        ua = velocity_at(B.static, B.vel, B.omega, J.const.body[j, 0], arms[0, 0],
                         arms[0, 1], arms[0, 2])
        ub = velocity_at(B.static, B.vel, B.omega, J.const.body[j, 1], arms[1, 0],
                         arms[1, 1], arms[1, 2])
        dx, dy, dz = ub[0] - ua[0], ub[1] - ua[1], ub[2] - ua[2]
        t0 = dot(rows[0, 0], rows[0, 1], rows[0, 2], dx, dy, dz)
        t1 = dot(rows[1, 0], rows[1, 1], rows[1, 2], dx, dy, dz) if nt > 1 else 0.0
        t2 = dot(rows[2, 0], rows[2, 1], rows[2, 2], dx, dy, dz) if nt > 2 else 0.0
    if nr > 0:
        rows = lk[LK_ROWS_R]
        wa = angular_velocity_of(B, J.const.body[j, 0])
        wb = angular_velocity_of(B, J.const.body[j, 1])
        dx, dy, dz = wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2]
        r0 = dot(rows[0, 0], rows[0, 1], rows[0, 2], dx, dy, dz)
        r1 = dot(rows[1, 0], rows[1, 1], rows[1, 2], dx, dy, dz) if nr > 1 else 0.0
        r2 = dot(rows[2, 0], rows[2, 1], rows[2, 2], dx, dy, dz) if nr > 2 else 0.0
    err = max(np.sqrt(t0 * t0 + t1 * t1 + t2 * t2), np.sqrt(r0 * r0 + r1 * r1 + r2 * r2))
    if err <= eps:
        return err, False
    t0, t1, t2, r0, r1, r2 = relax * t0, relax * t1, relax * t2, relax * r0, relax * r1, \
        relax * r2
    m0, m1, m2, m3, m4, m5 = _solve_factored(lk[LK_TI], lk[LK_C], lk[LK_X], lk[LK_SV], t0, t1,
                                             t2, r0, r1, r2)
    _push_solved(B, J, j, lk[LK_ROWS_T], lk[LK_ROWS_R], lk[LK_ARMS, 0], lk[LK_ARMS, 1], nt, nr,
                 m0, m1, m2, m3, m4, m5)
    _warm_sums(J, j, lk[LK_ROWS_T], lk[LK_ROWS_R], nt, nr, t0, t1, t2, r0, r1, r2)
    return err, True


@njit(cache=True, inline='always', **NO_REFCOUNT)
def stopping_speed(a, h, d):
    """The largest rate from which a deceleration a, applied from the next step on, stops
    within distance d when this step moves rate*h first: rate h + rate^2 / (2 a) = d."""
    return -a * h + np.sqrt(a * a * h * h + 2.0 * a * d)


@njit(cache=True, **NO_REFCOUNT)
def motor_cap(J, j, h):
    """The impulse the motor row may take in the position stage: T_max h, or half of it for
    a servo on its profile (the other half is the velocity stage's, so a servo at full
    torque acts as a constant torque over the step: half its impulse at t, half at t + h,
    as the look-ahead integrates gravity)."""
    if J.acc[j, A_SERVO_MODE] == SERVO_PROFILE:
        return 0.5 * J.const.param[j, P_MAX] * h
    return J.const.param[j, P_MAX] * h


@njit(cache=True, **NO_REFCOUNT)
def motor_change(B, J, j, h, t, s):
    """The motor row of joint j: (coordinate type, k, wanted change of the coordinate's rate,
    row direction); k = 0 when there is no motor row (or it moves nothing).
    velocity motor: the target rate minus the rate;
    servo (a = T_max k_eff, k_eff the row's effective mass through the joint's locks):
    deadbeat -- reach the target at t + h -- when that change and the removal of the rate
    it arrives with (the velocity stage's part) fit in this step's a h; else the profile:
    never approach faster than the speed from which half the torque stops it in time,
    stopping_speed(a / 2, h, |goal - phi|), with half the budget in each stage.
    The regime, the velocity stage's goals and the budget are set at the step's first
    visit (J.acc[j, A_SERVO_MODE] ...) and kept for the step, so the row stays one smooth
    function during the iteration."""
    mode = int(J.const.param[j, P_MOTOR])
    ctype = int(J.const.param[j, P_COORD1])
    if mode == 0 or ctype == COORD_NONE:
        return ctype, 0.0, 0.0, 0.0, 0.0, 0.0
    if mode == MOTOR_VELOCITY:
        phi, wx, wy, wz = coordinate(B, J, j, ctype, False)
        k = _row_mass(B, J, j, ctype, wx, wy, wz, s)
        if k <= 0.0:
            return ctype, 0.0, 0.0, wx, wy, wz
        goal_rate = target_at(J, j, t)
        if J.acc[j, A_SERVO_MODE] == SERVO_UNDECIDED:
            J.acc[j, A_SERVO_MODE] = SERVO_DEADBEAT
            J.acc[j, A_RATE_GOAL] = target_at(J, j, t + h)
            J.acc[j, A_H] = h
            J.acc[j, A_KEFF] = effective_row_mass(B, J, j, ctype, wx, wy, wz, k, s)
        return ctype, k, goal_rate - _rate(B, J, j, ctype, wx, wy, wz, s), wx, wy, wz
    ahead, wx, wy, wz = coordinate(B, J, j, ctype, True)
    now = coordinate(B, J, j, ctype, False)[0]
    k = _row_mass(B, J, j, ctype, wx, wy, wz, s)
    if k <= 0.0:
        return ctype, 0.0, 0.0, wx, wy, wz
    goal = target_at(J, j, t + h)
    rate = _rate(B, J, j, ctype, wx, wy, wz, s)
    change = (goal - ahead) / h
    if J.acc[j, A_SERVO_MODE] == SERVO_UNDECIDED:
        keff = effective_row_mass(B, J, j, ctype, wx, wy, wz, k, s)
        goal_rate = (target_at(J, j, t + 2.0 * h) - goal) / h
        budget = J.const.param[j, P_MAX] * keff * h
        dead = abs(change) + abs(rate + change - goal_rate) <= budget
        J.acc[j, A_SERVO_MODE] = SERVO_DEADBEAT if dead else SERVO_PROFILE
        J.acc[j, A_RATE_GOAL] = goal_rate
        J.acc[j, A_GOAL] = goal
        J.acc[j, A_KEFF] = keff
        J.acc[j, A_H] = h
    if J.acc[j, A_SERVO_MODE] == SERVO_PROFILE:
        vmax = stopping_speed(0.5 * J.const.param[j, P_MAX] * J.acc[j, A_KEFF], h, abs(goal - now))
        change = min(vmax, max(-vmax, rate + change)) - rate
    return ctype, k, change, wx, wy, wz


@njit(cache=True, **NO_REFCOUNT)
def motor_velocity_row(B, J, j, eps, s):
    """P-step 4 for the motor: bring the coordinate's rate at t + h to the rate the position
    stage left as its goal (a velocity motor's target; a deadbeat servo's target rate; on
    the profile, the stopping speed toward the goal from where the body now is), within
    what is left of the step's budget: |position + velocity stage impulse| <= T_max h.
    Returns whether it applied an impulse (the row is no constraint: no error of its own)."""
    mode = J.acc[j, A_SERVO_MODE]
    if mode == SERVO_UNDECIDED or int(J.const.param[j, P_MOTOR]) == 0:
        return False
    ctype = int(J.const.param[j, P_COORD1])
    phi, wx, wy, wz = coordinate(B, J, j, ctype, False)
    k = _row_mass(B, J, j, ctype, wx, wy, wz, s)
    if k <= 0.0:
        return False
    want = J.acc[j, A_RATE_GOAL]
    if int(J.const.param[j, P_MOTOR]) == MOTOR_POSITION and mode == SERVO_PROFILE:
        d = J.acc[j, A_GOAL] - phi
        v = stopping_speed(0.5 * J.const.param[j, P_MAX] * J.acc[j, A_KEFF], J.acc[j, A_H],
                           abs(d))
        want = v if d >= 0.0 else -v
    rate = _rate(B, J, j, ctype, wx, wy, wz, s)
    if abs(rate - want) <= eps:   # within eps_vel: like the limits' rows, nothing to do
        return False
    # sized with the effective mass (the step's first visit found it): once the joint's
    # locked rows have answered, the rate has changed by k_eff lambda -- in one pass, where
    # the row's own k would leave the locks and the motor trading impulses for many rounds
    keff = J.acc[j, A_KEFF] if J.acc[j, A_KEFF] > 0.0 else k
    cap, used = J.const.param[j, P_MAX] * J.acc[j, A_H], J.acc[j, A_MOTOR]
    eff = _accumulate(B, J, j, A_VMOTOR, (rate - want) / keff, -cap - used, cap - used,
                      ctype, wx, wy, wz, keff, 1.0, eps, s)
    return eff > 0.0


@njit(cache=True, inline='always', **NO_REFCOUNT)
def limit_and_motor_rows(B, J, j, h, eps, t, s, motor, relax):
    """Look-ahead visit of the limit rows and (if `motor`) the motor row (position stage;
    relax: the loop's over-relaxation, applied to the motor row)."""
    err = 0.0
    corrected = False
    for which in range(2):
        ctype, lo, hi = _limit(J, j, which)
        if ctype == COORD_NONE:
            continue
        phi, wx, wy, wz = coordinate(B, J, j, ctype, True)
        k = _row_mass(B, J, j, ctype, wx, wy, wz, s)
        if k <= 0.0:
            continue
        col_lo = A_LO1 if which == 0 else A_LO2
        col_hi = A_HI1 if which == 0 else A_HI2
        # lower stop: the accumulated impulse stays <= 0 (only pushes the coordinate up)
        if phi < lo or J.acc[j, col_lo] != 0.0:
            eff = _accumulate(B, J, j, col_lo, -(lo - phi) / (k * h), -np.inf, 0.0, ctype,
                              wx, wy, wz, k, h, eps, s)
            err = max(err, lo - phi)
            corrected = corrected or eff > 0.0
        if phi > hi or J.acc[j, col_hi] != 0.0:
            eff = _accumulate(B, J, j, col_hi, -(hi - phi) / (k * h), 0.0, np.inf, ctype,
                              wx, wy, wz, k, h, eps, s)
            err = max(err, phi - hi)
            corrected = corrected or eff > 0.0
    if motor:
        ctype, k, change, wx, wy, wz = motor_change(B, J, j, h, t, s)
        if k > 0.0:
            cap = motor_cap(J, j, h)
            # sized with the row's own k: sized with k_eff (as the velocity row is) the
            # motor overshoots before the locks answer: the slider crank's loop halved its
            # step 1 400 times in 400 steps
            eff = _accumulate(B, J, j, A_MOTOR, -relax * change / k, -cap, cap, ctype, wx, wy,
                              wz, k, h, eps, s)
            corrected = corrected or eff > 0.0
    return err, corrected


@njit(cache=True, **NO_REFCOUNT)
def limit_velocity_rows(B, J, j, eps, s, motor_counts):
    """P-step 4 for the limits: at a stop, remove the velocity that drives into it; and the
    motor's velocity row, only while motor_counts (the loop's first contact_cycles rounds,
    as for the contacts: coupled motors converge slowly against the joints' solves, and a
    motor is no constraint -- the joints' rows then finish without it)."""
    err = 0.0
    corrected = False
    for which in range(2):
        ctype, lo, hi = _limit(J, j, which)
        if ctype == COORD_NONE:
            continue
        phi, wx, wy, wz = coordinate(B, J, j, ctype, False)
        rate = _rate(B, J, j, ctype, wx, wy, wz, s)
        k = _row_mass(B, J, j, ctype, wx, wy, wz, s)
        if k <= 0.0:
            continue
        if phi <= lo + 1e-9 and rate < -eps:
            _accumulate(B, J, j, A_VLO1 if which == 0 else A_VLO2, rate / k, -np.inf, 0.0,
                        ctype, wx, wy, wz, k, 1.0, eps, s)
            err = max(err, -rate)
            corrected = True
        elif phi >= hi - 1e-9 and rate > eps:
            _accumulate(B, J, j, A_VHI1 if which == 0 else A_VHI2, rate / k, 0.0, np.inf,
                        ctype, wx, wy, wz, k, 1.0, eps, s)
            err = max(err, rate)
            corrected = True
    if motor_counts and motor_velocity_row(B, J, j, eps, s):
        corrected = True
    return err, corrected


@njit(cache=True, **NO_REFCOUNT)
def apply_forces(B, J, j, h, h_prev, s):
    """Spring, damper and brake on the primary coordinate, as one impulse at t over the
    window (h_prev + h)/2 (like joints/spring.py); damping never reverses the motion: it is
    capped at the impulse that stops the coordinate through the joint's locks, rate / k_eff
    (effective_row_mass; for a lever on a hinge 1 / (I_c + m d^2), where the row alone, k,
    sees 1 / I_c and capped strong damping 11 times too early on an imported arm).

    The damper's rate is the coordinate's at t: the velocities at t hold the last h_prev/2
    of gravity and the loads through the joints (the velocity stage's share of the step),
    but the spring's share of those h_prev/2 is still to come, in this window's impulse.
    So the damper reads
        rate(t) = rate + k_eff F_spring h_prev / 2,
    the spring's part through the joint's locks. A damped servo at rest under gravity reads
    0 (read without it, it read gravity's alpha h / 2 and rested kv alpha h / 2 over its
    stiffness short of where spring and weight balance, as MuJoCo's does not). Not with
    h = 0 (S_SPRING_SYNC's second half kick, at t + h before the velocity stage: there the
    coordinate's rate holds neither gravity's nor the spring's last half, which balance at
    rest; cf. joints/spring.apply_damper, whose ends' velocities hold gravity's drift)."""
    ks = J.const.param[j, P_SPRING_K]
    damp = J.const.param[j, P_SPRING_C] + J.const.param[j, P_BRAKE]
    ctype = int(J.const.param[j, P_COORD1])
    if ctype == COORD_NONE or (ks == 0.0 and damp == 0.0):
        return
    phi, wx, wy, wz = coordinate(B, J, j, ctype, False)
    k = _row_mass(B, J, j, ctype, wx, wy, wz, s)
    if k <= 0.0:
        return
    w = 0.5 * (h_prev + h)
    spring_force = -ks * (phi - J.const.param[j, P_SPRING_REST])
    rate = _rate(B, J, j, ctype, wx, wy, wz, s)
    keff = -1.0                          # (computed where needed)
    if damp != 0.0 and spring_force != 0.0 and h > 0.0 and h_prev > 0.0:
        keff = effective_row_mass(B, J, j, ctype, wx, wy, wz, k, s)
        rate += keff * spring_force * 0.5 * h_prev
    drag = damp * rate * w
    if abs(drag) > abs(rate) / k:        # (k_eff <= k: only then can the cap bind)
        if keff < 0.0:
            keff = effective_row_mass(B, J, j, ctype, wx, wy, wz, k, s)
        if abs(drag) > abs(rate) / keff:
            drag = rate / keff
    force_impulse = spring_force * w - drag
    push_row(B, J, j, ctype, wx, wy, wz, -force_impulse, s)


@njit(cache=True, **NO_REFCOUNT)
def apply_effort(B, J, j, dt, s):
    """An actuator's effort (J.effort: torque about the primary coordinate's axis, or force
    along it) as the impulse effort * dt along the coordinate's row, equal and
    opposite on the two bodies (the row's impulse lam drives the coordinate by -lam)."""
    effort = J.effort[j]
    ctype = int(J.const.param[j, P_COORD1])
    if effort == 0.0 or ctype == COORD_NONE:
        return
    _, wx, wy, wz = coordinate(B, J, j, ctype, False)
    push_row(B, J, j, ctype, wx, wy, wz, -effort * dt, s)


@njit(cache=True, **NO_REFCOUNT)
def store_angles(B, J):
    """Each joint's angles now, unwrapped, into J.angle: at the end of each step (the next
    one reads its angles on their branch). Without reference counting: with it, the call
    from stage 6 cost chain8 (nine ball joints, nothing to store) 0.45 us a step."""
    for j in range(J.const.kind.shape[0]):
        for which in range(2):
            ctype = int(J.const.param[j, P_COORD1 if which == 0 else P_COORD2])
            if ctype == COORD_ANGLE_X:
                J.angle[j, 0] = coordinate(B, J, j, ctype, False)[0]
            elif ctype == COORD_ANGLE_B_Y:
                J.angle[j, 1] = coordinate(B, J, j, ctype, False)[0]


@njit(cache=True)
def store_angles_now(B, J):
    """store_angles from Python: when a joint is added or its geometry edited."""
    store_angles(B, J)


@njit(cache=True)
def coordinate_now(B, J, j, which):
    """Current value of the primary (0) or secondary (1) free coordinate (0 if none)."""
    ctype = int(J.const.param[j, P_COORD1 if which == 0 else P_COORD2])
    if ctype == COORD_NONE:
        return 0.0
    return coordinate(B, J, j, ctype, False)[0]


# ---- one solver visit -----------------------------------------------------------------------

@njit(cache=True, inline='always', **NO_REFCOUNT)
def _fresh(B, J, j, h, order, gravity, scratch_a, scratch_x, base, linear):
    """The joint's two bodies' look-ahead: exact, or with `linear` the linearised one
    (impulses.look_ahead_linear). Returns True if a linearised one was used."""
    used = False
    for side in range(2):
        b = J.const.body[j, side]
        if linear:
            if look_ahead_linear(b, B.static, B.pred_ok, B.pos, B.vel, B.omega, B.inertia_w,
                                 B.inv_inertia_w, B.pred_pos, B.pred_series, B.pred_rot, h,
                                 order, gravity, scratch_a, scratch_x, base):
                used = True
        else:
            ensure_look_ahead(b, B.static, B.pred_ok, B.pos, B.vel, B.omega, B.inertia_w,
                              B.inv_inertia_w, B.pred_pos, B.pred_series, B.pred_rot, h,
                              order, gravity, scratch_a, scratch_x)
    return used


@njit(cache=True, **NO_REFCOUNT)
def correct_position(B, J, j, h, eps, t, order, gravity, scratch_a, scratch_x, s, base, linear,
                     relax, velocity_motor):
    """P-steps 1-2 for all rows of joint j: the locks together (lock_rows), then -- on the
    look-ahead after their impulse -- the limits and the motor, on the exact look-ahead, or
    with `linear`
    on the linearised one from each body's base (the iterative loop, which takes the exact
    one before it stops; impulses.look_ahead_linear); relax scales the locks' corrections;
    a velocity motor's row takes part only while `velocity_motor` (the iterative loop's
    first contact_cycles cycles: against a closed loop it converges slowly, and a velocity
    motor is no constraint -- the slider crank took 106 cycles a step with it to the end,
    30 without; a servo's row, which holds a position, takes part throughout).
    Returns (largest error, corrected?, a linearised look-ahead used?)."""
    u1 = _fresh(B, J, j, h, order, gravity, scratch_a, scratch_x, base, linear)
    e1, c1 = lock_rows(B, J, j, h, eps, s, relax)
    mode = int(J.const.param[j, P_MOTOR])
    if J.const.param[j, P_LIM1] == 0.0 and J.const.param[j, P_LIM2] == 0.0 and mode == 0:
        return e1, c1, u1           # no limit or motor rows
    u2 = _fresh(B, J, j, h, order, gravity, scratch_a, scratch_x, base, linear)
    motor = velocity_motor or mode != MOTOR_VELOCITY
    e2, c2 = limit_and_motor_rows(B, J, j, h, eps, t, s, motor, relax)
    return max(e1, e2), c1 or c2, u1 or u2


@njit(cache=True, inline='always', **NO_REFCOUNT)
def exact_base(B):
    """The `base` argument of correct_position where it is exact (never read then): body
    arrays of the same types."""
    return B.pred_pos, B.pred_rot, B.vel, B.omega, B.pred_ok


@njit(cache=True, **NO_REFCOUNT)
def correct_velocity(B, J, j, eps, s, motor_counts, relax):
    """P-step 4 for all rows of joint j at t + h (motor_counts: see limit_velocity_rows;
    relax scales the locks' corrections), after factor_velocity_locks in this stage."""
    e1, c1 = velocity_locks(B, J, j, eps, relax)
    e2, c2 = limit_velocity_rows(B, J, j, eps, s, motor_counts)
    return max(e1, e2), c1 or c2


@njit(cache=True, **NO_REFCOUNT)
def error_now(B, J, j, s):
    """Largest constraint violation at the current time: translational (m), rotational (rad)
    and limit overshoot."""
    err = 0.0
    mask = int(J.const.param[j, P_TLOCK])
    if mask != 0:
        axes = s[0]
        n = _locked_axes(B, J, j, mask, False, axes)
        ax, ay, az = _point(B, J, j, 0, False)
        bx, by, bz = _point(B, J, j, 1, False)
        e = 0.0
        for r in range(n):
            d = dot(axes[r, 0], axes[r, 1], axes[r, 2], bx - ax, by - ay, bz - az)
            e += d * d
        err = np.sqrt(e)
    rmask = int(J.const.param[j, P_RLOCK])
    if rmask != 0:
        n, e0, e1, e2 = _rotation_error(B, J, j, rmask, False, s[0])
        err = max(err, np.sqrt(e0 * e0 + e1 * e1 + e2 * e2))
    for which in range(2):
        ctype, lo, hi = _limit(J, j, which)
        if ctype == COORD_NONE:
            continue
        phi = coordinate(B, J, j, ctype, False)[0]
        err = max(err, lo - phi, phi - hi)
    return err
