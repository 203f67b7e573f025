"""The generic joint: translational and rotational locks over body A's joint frame, limits,
motors and springs on the free coordinates. Every joint kind but the ball is one of these.

Position constraints, checked by look-ahead at t + h (a', b' the predicted anchor points,
F_A', F_B' the predicted joint frames with columns x, y, z):
  translational (point / line / plane), one row per locked axis x_i of A:
     C_i = x_i' . (b' - a');  with all three locked the point is fixed, with some free the
     rows act on A at the place of B's anchor (r_a = b - s_A), the point of the line/plane
     closest to it;
  rotational, L = A_A + A_B:
     3 locked (orientation fixed): C = delta = rotation vector of F_B' F_A'^T (3 rows, world
        axes);
     2 locked, free axis k (common axis): delta = angle(a_A', a_B') unit(a_A' x a_B') with
        a = F e_k; rows C_i = x_i' . delta on A's two other axes;
     1 locked k, free i, j (universal): A's axis u = F_A e_i and B's axis v = F_B e_j stay
        perpendicular: C = angle(u, v) - pi/2 = -asin(u.v), row direction w = unit(u x v);
  limits, one-sided, on a free coordinate phi: C = phi' - lo >= 0 and hi - phi' >= 0;
  motor: velocity target C-dot = phi-dot - omega_target; servo (Schmitt sec. 10: target
     angle phi_soll, maximum torque T_max; the brake C_F is a damper in apply_forces):
     the wanted change of phi-dot that brings phi' to phi_soll (see correct_position).
Their time derivatives (the velocity rows, also P-step 4 at t + h with the relative
velocities now) are all of one form (rows.py):
     C-dot_i = d_i . (u_b - u_a) + a_i . (w_B - w_A),   u = v + w x r at the row's arms,
with d_i = x_i, a_i = 0 for translational rows; d_i = 0, a_i = the row's axis for rotational
rows and angle coordinates; d_i = x_A at B's anchor for the offset coordinate. An impulse
lam_i on row i acts +lam_i (d_i, r_a x d_i + a_i) on A and -lam_i (d_i, r_b x d_i + a_i) on B,
which changes every C-dot_k by -(K lam)_k with the joint's row matrix
     K_ki = (1/m_A + 1/m_B) d_k.d_i + g_Ak . A_A g_Ai + g_Bk . A_B g_Bi,  g_X = r_X x d + a
(for translational rows alone: P (K_A(r_a) + K_B(r_b)) P^T; rotational alone: P L P^T).
One visit (P-step 2) stacks every active row of the joint -- locks, limits whose predicted
coordinate passes the stop (or whose accumulated impulse is non-zero), the motor -- and
solves K lam = C / h (lock and limit rows; C-dot - target for motors) as ONE block, so the
rows' corrections do not fight each other. Limit rows keep their accumulated lam one-sided,
motor rows |sum lam| <= T_max h; the block keeps those bounds by a small active-set solve
(rows.solve_block: clamp the worst violator at its bound, re-solve the rest, release a
clamped row whose residual points back inside). A row that depends on earlier ones (a motor
on the axis of an active limit) gets no impulse while they are free.
Rotational errors are compared with eps_pos read as radians.
Free coordinates: angle about x_A (phi = atan2(z_A.y_B, y_A.y_B)), offset along x_A
((b - a).x_A), and the universal's second angle about y_B (atan2((x_A x x_B).y_B, x_A.x_B)).
"""
import numpy as np
from numba import njit

from ..jitopts import NO_REFCOUNT
from ..impulses import add_k_matrix_of, dynamic, ensure_look_ahead, velocity_at
from . import (A_CL, A_CP, A_STEP, A_WH, A_WL, A_WM, A_WP, A_HI1, A_HI2, A_LO1, A_LO2, A_MOTOR, A_SERVO_MODE, A_VHI1, A_VHI2, A_VLO1,
               A_VLO2, SERVO_DEADBEAT, SERVO_PROFILE, SERVO_UNDECIDED,
               COORD_ANGLE_B_Y, COORD_ANGLE_X, COORD_NONE, COORD_OFFSET_X, MOTOR_POSITION,
               MOTOR_VELOCITY, P_BRAKE, P_COORD1, P_COORD2, P_HI1, P_HI2, P_LIM1, P_LIM2,
               P_LO1, P_LO2, P_MAX, P_MOTOR, P_RLOCK, P_SEQ_LEN, P_SEQ_REPEAT, P_SEQ_START,
               P_SPRING_C, P_SPRING_K, P_SPRING_REST, P_TARGET, P_TLOCK)
from .rows import (AT_LO, BLOCK_SLAB, LOCK_ANGULAR, LOCK_LINEAR, R_F, R_K, R_LAM, R_RHS, R_STATE, angular_mass,
                   angular_velocity_of, apply_block, axis_at, block_factor, block_matrix, cross,
                   dot, push_angular, push_linear, quad, set_angular_row, set_linear_row,
                   solve_block)


# ---- points and arms ----------------------------------------------------------------------

@njit(cache=True, **NO_REFCOUNT)
def _point(B, J, j, side, ahead):
    """Anchor point of `side` now or at t + h."""
    b = J.body[j, side]
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


@njit(cache=True, **NO_REFCOUNT)
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
    a = J.body[j, 0]
    if a < 0:
        arm_a[0], arm_a[1], arm_a[2] = bx, by, bz
    else:
        arm_a[0], arm_a[1], arm_a[2] = bx - B.pos[a, 0], by - B.pos[a, 1], bz - B.pos[a, 2]


@njit(cache=True, **NO_REFCOUNT)
def _k_matrix(B, J, j, arm_a, arm_b, k):
    for r in range(3):
        for c in range(3):
            k[r, c] = 0.0
    add_k_matrix_of(B.static, B.inv_mass, B.inv_inertia_w, J.body[j, 0], arm_a[0], arm_a[1],
                    arm_a[2], k)
    add_k_matrix_of(B.static, B.inv_mass, B.inv_inertia_w, J.body[j, 1], arm_b[0], arm_b[1],
                    arm_b[2], k)


@njit(cache=True, **NO_REFCOUNT)
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


# ---- free coordinates, limits, motors, springs ------------------------------------------------

@njit(cache=True, **NO_REFCOUNT)
def coordinate(B, J, j, ctype, ahead):
    """(value, direction) of a free coordinate now or at t + h."""
    if ctype == COORD_ANGLE_X:
        x = axis_at(B, J, j, 0, 0, ahead)
        ya = axis_at(B, J, j, 0, 1, ahead)
        za = axis_at(B, J, j, 0, 2, ahead)
        yb = axis_at(B, J, j, 1, 1, ahead)
        phi = np.arctan2(dot(za[0], za[1], za[2], yb[0], yb[1], yb[2]),
                         dot(ya[0], ya[1], ya[2], yb[0], yb[1], yb[2]))
        return phi, x[0], x[1], x[2]
    if ctype == COORD_ANGLE_B_Y:
        xa = axis_at(B, J, j, 0, 0, ahead)
        xb = axis_at(B, J, j, 1, 0, ahead)
        y = axis_at(B, J, j, 1, 1, ahead)
        c = cross(xa[0], xa[1], xa[2], xb[0], xb[1], xb[2])
        phi = np.arctan2(dot(c[0], c[1], c[2], y[0], y[1], y[2]),
                         dot(xa[0], xa[1], xa[2], xb[0], xb[1], xb[2]))
        return phi, y[0], y[1], y[2]
    # offset along A's x axis
    x = axis_at(B, J, j, 0, 0, ahead)
    a = _point(B, J, j, 0, ahead)
    b = _point(B, J, j, 1, ahead)
    return dot(x[0], x[1], x[2], b[0] - a[0], b[1] - a[1], b[2] - a[2]), x[0], x[1], x[2]


@njit(cache=True, **NO_REFCOUNT)
def _row_mass(B, J, j, ctype, wx, wy, wz, s):
    """k of a one-dimensional row: w^T L w (angles) or x^T K x (offsets, at B's anchor)."""
    if ctype == COORD_OFFSET_X:
        _arms(B, J, j, False, s[3, 0], s[3, 1])
        _k_matrix(B, J, j, s[3, 0], s[3, 1], s[1])
        return quad(s[1], wx, wy, wz, wx, wy, wz)
    angular_mass(B, J, j, s[1])
    return quad(s[1], wx, wy, wz, wx, wy, wz)


@njit(cache=True, **NO_REFCOUNT)
def _rate(B, J, j, ctype, wx, wy, wz, s):
    """Time derivative of the coordinate: w.(w_B - w_A) or x.(u_b - u_a)."""
    if ctype == COORD_OFFSET_X:
        _arms(B, J, j, False, s[3, 0], s[3, 1])
        ua = velocity_at(B.static, B.vel, B.omega, J.body[j, 0], s[3, 0, 0], s[3, 0, 1],
                         s[3, 0, 2])
        ub = velocity_at(B.static, B.vel, B.omega, J.body[j, 1], s[3, 1, 0], s[3, 1, 1],
                         s[3, 1, 2])
        return dot(wx, wy, wz, ub[0] - ua[0], ub[1] - ua[1], ub[2] - ua[2])
    wa = angular_velocity_of(B, J.body[j, 0])
    wb = angular_velocity_of(B, J.body[j, 1])
    return dot(wx, wy, wz, wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2])


@njit(cache=True, **NO_REFCOUNT)
def _push_row(B, J, j, ctype, wx, wy, wz, lam, s):
    """Impulse lam along the row (angular l = lam w, or linear p = lam x at the arms)."""
    if ctype == COORD_OFFSET_X:
        _arms(B, J, j, False, s[3, 0], s[3, 1])
        push_linear(B, J, j, s[3, 0], s[3, 1], lam * wx, lam * wy, lam * wz)
    else:
        push_angular(B, J, j, lam * wx, lam * wy, lam * wz)


@njit(cache=True)
def target_at(J, j, t):
    """Motor target at time t: the constant, or the sequence (times, values) interpolated
    linearly, optionally repeating."""
    n = int(J.param[j, P_SEQ_LEN])
    if n == 0:
        return J.param[j, P_TARGET]
    s0 = int(J.param[j, P_SEQ_START])
    t0 = J.seq[s0, 0]
    t1 = J.seq[s0 + n - 1, 0]
    if J.param[j, P_SEQ_REPEAT] != 0.0 and t1 > t0:
        t = t0 + (t - t0) % (t1 - t0)
    if t <= t0:
        return J.seq[s0, 1]
    if t >= t1:
        return J.seq[s0 + n - 1, 1]
    for i in range(s0, s0 + n - 1):
        ta, tb = J.seq[i, 0], J.seq[i + 1, 0]
        if t <= tb:
            f = (t - ta) / (tb - ta) if tb > ta else 1.0
            return J.seq[i, 1] + f * (J.seq[i + 1, 1] - J.seq[i, 1])
    return J.seq[s0 + n - 1, 1]


@njit(cache=True, **NO_REFCOUNT)
def _limit(J, j, which):
    """(coordinate type, lower, upper) of limit `which` (0, 1); type COORD_NONE if none."""
    ctype = int(J.param[j, P_COORD1 if which == 0 else P_COORD2])
    if J.param[j, P_LIM1 if which == 0 else P_LIM2] == 0.0:
        ctype = COORD_NONE
    return ctype, J.param[j, P_LO1 if which == 0 else P_LO2], \
        J.param[j, P_HI1 if which == 0 else P_HI2]


@njit(cache=True, **NO_REFCOUNT)
def apply_forces(B, J, j, h, h_prev, s):
    """Spring, damper and brake on the primary coordinate, as one impulse at t over the
    window (h_prev + h)/2 (like joints/spring.py); damping never reverses the motion."""
    ks = J.param[j, P_SPRING_K]
    damp = J.param[j, P_SPRING_C] + J.param[j, P_BRAKE]
    ctype = int(J.param[j, P_COORD1])
    if ctype == COORD_NONE or (ks == 0.0 and damp == 0.0):
        return
    phi, wx, wy, wz = coordinate(B, J, j, ctype, False)
    k = _row_mass(B, J, j, ctype, wx, wy, wz, s)
    if k <= 0.0:
        return
    w = 0.5 * (h_prev + h)
    rate = _rate(B, J, j, ctype, wx, wy, wz, s)
    drag = damp * rate * w
    if abs(drag) > abs(rate) / k:
        drag = rate / k
    force_impulse = -ks * (phi - J.param[j, P_SPRING_REST]) * w - drag
    _push_row(B, J, j, ctype, wx, wy, wz, -force_impulse, s)


@njit(cache=True)
def coordinate_now(B, J, j, which):
    """Current value of the primary (0) or secondary (1) free coordinate (0 if none)."""
    ctype = int(J.param[j, P_COORD1 if which == 0 else P_COORD2])
    if ctype == COORD_NONE:
        return 0.0
    return coordinate(B, J, j, ctype, False)[0]


# ---- one solver visit -----------------------------------------------------------------------

@njit(cache=True, **NO_REFCOUNT)
def _fresh(B, J, j, h, order, gravity, scratch_a, scratch_x):
    for side in range(2):
        ensure_look_ahead(J.body[j, side], B.static, B.pred_ok, B.pos, B.vel, B.omega,
                          B.inertia_w, B.inv_inertia_w, B.pred_pos, B.pred_series, B.pred_rot,
                          h, order, gravity, scratch_a, scratch_x)


@njit(cache=True, **NO_REFCOUNT)
def _coord_row(B, J, j, ctype, wx, wy, wz, blk, i, rhs, lo, hi, col, s):
    """Row i of the block on a free coordinate: an angle (angular row about w) or an offset
    (linear row along w at B's anchor)."""
    if ctype == COORD_OFFSET_X:
        _arms(B, J, j, False, s[3, 0], s[3, 1])
        set_linear_row(blk, i, s[3, 0], s[3, 1], wx, wy, wz, rhs, lo, hi, col)
    else:
        set_angular_row(blk, i, wx, wy, wz, rhs, lo, hi, col)


@njit(cache=True, **NO_REFCOUNT)
def _lock_rows(B, J, j, h, velocity, blk, s):
    """The translational and rotational lock rows of joint j into blk (position: errors of
    the look-ahead over h; velocity: relative velocities now). Returns (rows, translational
    error, rotational error)."""
    n = 0
    terr = 0.0
    mask = int(J.param[j, P_TLOCK])
    if mask != 0:
        axes = s[0]
        arm_a, arm_b = s[3, 0], s[3, 1]
        nt = _locked_axes(B, J, j, mask, not velocity, axes)
        _arms(B, J, j, mask == 7, arm_a, arm_b)
        if velocity:
            ua = velocity_at(B.static, B.vel, B.omega, J.body[j, 0], arm_a[0], arm_a[1],
                             arm_a[2])
            ub = velocity_at(B.static, B.vel, B.omega, J.body[j, 1], arm_b[0], arm_b[1],
                             arm_b[2])
            dx, dy, dz = ub[0] - ua[0], ub[1] - ua[1], ub[2] - ua[2]
        else:
            ax, ay, az = _point(B, J, j, 0, True)
            bx, by, bz = _point(B, J, j, 1, True)
            dx, dy, dz = (bx - ax) / h, (by - ay) / h, (bz - az) / h
        sq = 0.0
        for r in range(nt):
            e = dot(axes[r, 0], axes[r, 1], axes[r, 2], dx, dy, dz)
            sq += e * e
            set_linear_row(blk, n, arm_a, arm_b, axes[r, 0], axes[r, 1], axes[r, 2], e,
                           -np.inf, np.inf, LOCK_LINEAR)
            n += 1
        terr = np.sqrt(sq) * h
    rerr = 0.0
    rmask = int(J.param[j, P_RLOCK])
    if rmask != 0:
        axes = s[0]
        nr, e0, e1, e2 = _rotation_error(B, J, j, rmask, not velocity, axes)
        wa = angular_velocity_of(B, J.body[j, 0])
        wb = angular_velocity_of(B, J.body[j, 1])
        sq = 0.0
        for r in range(nr):
            if velocity:
                e = dot(axes[r, 0], axes[r, 1], axes[r, 2], wb[0] - wa[0], wb[1] - wa[1],
                        wb[2] - wa[2])
            else:
                e = (e0 if r == 0 else (e1 if r == 1 else e2)) / h
            sq += e * e
            set_angular_row(blk, n, axes[r, 0], axes[r, 1], axes[r, 2], e, -np.inf, np.inf,
                            LOCK_ANGULAR)
            n += 1
        rerr = np.sqrt(sq) * h
    return n, terr, rerr


@njit(cache=True, **NO_REFCOUNT)
def _change(acc, inc, lo, hi):
    """|change| of an accumulated impulse acc by inc, kept inside [lo, hi]."""
    return abs(min(hi, max(lo, acc + inc)) - acc)


@njit(cache=True, **NO_REFCOUNT)
def correct_position(B, J, j, h, eps, t, order, gravity, scratch_a, scratch_x, s):
    """P-steps 1-2 for joint j: every row (locks, active limits, motor) from the look-ahead,
    solved as one block (rows.solve_block). Skips the visit when the locks are within eps,
    no limit row would change its accumulated impulse noticeably (effect on its coordinate
    over h below eps/1000) and the motor row's change would move its coordinate by less
    than eps over h (a servo is a position row like the locks: within eps of its goal it is
    done; demanding eps/1000 of it made chains of servos iterate hundreds of extra cycles),
    so a cycle that applies nothing leaves every measured error valid.
    Returns (largest error, corrected?)."""
    _fresh(B, J, j, h, order, gravity, scratch_a, scratch_x)
    blk = s[BLOCK_SLAB]
    n, terr, rerr = _lock_rows(B, J, j, h, False, blk, s)
    lock_need = terr >= eps or rerr >= eps
    need = lock_need
    err = max(terr, rerr)
    n_locks = n
    tiny = 1e-3 * eps
    for which in range(2):
        ctype, lo, hi = _limit(J, j, which)
        if ctype == COORD_NONE:
            continue
        phi, wx, wy, wz = coordinate(B, J, j, ctype, True)
        k = _row_mass(B, J, j, ctype, wx, wy, wz, s)
        if k <= 0.0:
            continue
        # lower stop: the accumulated impulse stays <= 0 (only pushes the coordinate up)
        col = A_LO1 if which == 0 else A_LO2
        acc = J.acc[j, col]
        if phi < lo or acc != 0.0:
            rhs = (phi - lo) / h
            _coord_row(B, J, j, ctype, wx, wy, wz, blk, n, rhs, -np.inf, -acc, col, s)
            n += 1
            err = max(err, lo - phi)
            need = need or _change(acc, rhs / k, -np.inf, 0.0) * k * h >= tiny
        col = A_HI1 if which == 0 else A_HI2
        acc = J.acc[j, col]
        if phi > hi or acc != 0.0:
            rhs = (phi - hi) / h
            _coord_row(B, J, j, ctype, wx, wy, wz, blk, n, rhs, -acc, np.inf, col, s)
            n += 1
            err = max(err, phi - hi)
            need = need or _change(acc, rhs / k, 0.0, np.inf) * k * h >= tiny
    built = False
    n_limits = n
    mode = int(J.param[j, P_MOTOR])
    ctype = int(J.param[j, P_COORD1])
    if mode != 0 and ctype != COORD_NONE:
        cap = J.param[j, P_MAX] * h
        acc = J.acc[j, A_MOTOR]
        if mode == MOTOR_VELOCITY:
            phi, wx, wy, wz = coordinate(B, J, j, ctype, False)
            k = _row_mass(B, J, j, ctype, wx, wy, wz, s)
            if k > 0.0:
                rhs = _rate(B, J, j, ctype, wx, wy, wz, s) - target_at(J, j, t)
                _coord_row(B, J, j, ctype, wx, wy, wz, blk, n, rhs, -cap - acc, cap - acc,
                           A_MOTOR, s)
                n += 1
                need = need or _change(acc, rhs / k, -cap, cap) * k * h >= eps
        elif mode == MOTOR_POSITION:
            # servo: reach the target at t + h (deadbeat on the look-ahead) when the torque
            # allows it in this step; from farther away, never approach faster than the
            # speed from which the maximum torque still stops it in time:
            # |rate| <= sqrt(2 a |goal - phi|) with a = T_max k / 2. k is the row's effective
            # mass with the joint's locks held (the Schur complement of the lock rows: the
            # LDL^T pivot of the motor row factored after them), not w^T L w alone.
            ahead, wx, wy, wz = coordinate(B, J, j, ctype, True)
            now = coordinate(B, J, j, ctype, False)[0]
            _coord_row(B, J, j, ctype, wx, wy, wz, blk, n, 0.0, -cap - acc, cap - acc,
                       A_MOTOR, s)
            block_matrix(B, J, j, blk, n + 1)
            built = True
            for i in range(n_locks, n):        # the limit rows out of the Schur complement
                blk[i, R_STATE] = AT_LO
            block_factor(blk, n + 1)
            k = blk[n, R_F + n]
            if k > 0.0:
                goal = target_at(J, j, t + h)
                rate = _rate(B, J, j, ctype, wx, wy, wz, s)
                change = (goal - ahead) / h
                # the regime is chosen at the step's first visit and kept for the step, so
                # the row stays one smooth function during the iteration
                if J.acc[j, A_SERVO_MODE] == SERVO_UNDECIDED:
                    J.acc[j, A_SERVO_MODE] = SERVO_PROFILE \
                        if abs(change) > J.param[j, P_MAX] * k * h else SERVO_DEADBEAT
                if J.acc[j, A_SERVO_MODE] == SERVO_PROFILE:
                    vmax = np.sqrt(J.param[j, P_MAX] * k * abs(goal - now))
                    change = min(vmax, max(-vmax, rate + change)) - rate
                blk[n, R_RHS] = -change
                n += 1
                need = need or _change(acc, -change / k, -cap, cap) * k * h >= eps
    if not need:
        return err, False
    if not built:
        block_matrix(B, J, j, blk, n)
    solve_block(blk, n)
    if not lock_need:      # only limit/motor rows asked: apply only a noticeable change
        big = False
        for i in range(n_locks, n):
            if abs(blk[i, R_LAM]) * blk[i, R_K + i] * h >= (tiny if i < n_limits else eps):
                big = True
        if not big:
            return err, False
    apply_block(B, J, j, blk, n)
    return err, True


@njit(cache=True, **NO_REFCOUNT)
def correct_velocity(B, J, j, eps, s):
    """P-step 4 for joint j at t + h: the lock rows and, at a stop, the limit row that
    removes the velocity driving into it (one-sided), as one block."""
    blk = s[BLOCK_SLAB]
    n, terr, rerr = _lock_rows(B, J, j, 1.0, True, blk, s)
    need = terr > eps or rerr > eps
    err = max(terr, rerr)
    for which in range(2):
        ctype, lo, hi = _limit(J, j, which)
        if ctype == COORD_NONE:
            continue
        phi, wx, wy, wz = coordinate(B, J, j, ctype, False)
        rate = _rate(B, J, j, ctype, wx, wy, wz, s)
        if phi <= lo + 1e-9 and rate < -eps:
            col = A_VLO1 if which == 0 else A_VLO2
            _coord_row(B, J, j, ctype, wx, wy, wz, blk, n, rate, -np.inf, -J.acc[j, col],
                       col, s)
            n += 1
            err = max(err, -rate)
            need = True
        elif phi >= hi - 1e-9 and rate > eps:
            col = A_VHI1 if which == 0 else A_VHI2
            _coord_row(B, J, j, ctype, wx, wy, wz, blk, n, rate, -J.acc[j, col], np.inf,
                       col, s)
            n += 1
            err = max(err, rate)
            need = True
    if not need:
        return err, False
    block_matrix(B, J, j, blk, n)
    solve_block(blk, n)
    apply_block(B, J, j, blk, n)
    return err, True


@njit(cache=True, **NO_REFCOUNT)
def error_now(B, J, j, s):
    """Largest constraint violation at the current time: translational (m), rotational (rad)
    and limit overshoot."""
    err = 0.0
    mask = int(J.param[j, P_TLOCK])
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
    rmask = int(J.param[j, P_RLOCK])
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


# ---- warm start -------------------------------------------------------------------------------

@njit(cache=True, **NO_REFCOUNT)
def warm_start(B, J, j, h, s):
    """Apply the last completed position stage's lock impulses (linear p at the lock arms,
    angular l) and motor impulse, scaled to this step's h, before the iteration; they count
    as this step's impulses so far. A servo holding a load against gravity at the end of a
    chain needs nearly the same impulses every step; without this start the Gauss-Seidel
    loop rebuilt them from zero through the whole chain each step (a welded cantilever of
    servos took hundreds of cycles per step). The converged result does not depend on the
    start: every lock row is corrected to eps from wherever it starts."""
    for c in range(A_STEP):
        J.acc[j, c] = 0.0
    if J.acc[j, A_WH] <= 0.0:
        return
    f = h / J.acc[j, A_WH]
    px, py, pz = f * J.acc[j, A_WP], f * J.acc[j, A_WP + 1], f * J.acc[j, A_WP + 2]
    lx, ly, lz = f * J.acc[j, A_WL], f * J.acc[j, A_WL + 1], f * J.acc[j, A_WL + 2]
    # only along the directions locked now (A has turned since): a component along a free
    # direction would be work on a free coordinate that no row takes back
    mask = int(J.param[j, P_TLOCK])
    if mask != 0:
        axes = s[0]
        n = _locked_axes(B, J, j, mask, False, axes)
        if n < 3:
            qx = qy = qz = 0.0
            for r in range(n):
                c = dot(axes[r, 0], axes[r, 1], axes[r, 2], px, py, pz)
                qx += c * axes[r, 0]
                qy += c * axes[r, 1]
                qz += c * axes[r, 2]
            px, py, pz = qx, qy, qz
        _arms(B, J, j, mask == 7, s[3, 0], s[3, 1])
        push_linear(B, J, j, s[3, 0], s[3, 1], px, py, pz)
        J.acc[j, A_CP], J.acc[j, A_CP + 1], J.acc[j, A_CP + 2] = px, py, pz
    rmask = int(J.param[j, P_RLOCK])
    if rmask != 0:
        axes = s[0]
        n = _rotation_error(B, J, j, rmask, False, axes)[0]
        if n < 3:
            qx = qy = qz = 0.0
            for r in range(n):
                c = dot(axes[r, 0], axes[r, 1], axes[r, 2], lx, ly, lz)
                qx += c * axes[r, 0]
                qy += c * axes[r, 1]
                qz += c * axes[r, 2]
            lx, ly, lz = qx, qy, qz
        push_angular(B, J, j, lx, ly, lz)
        J.acc[j, A_CL], J.acc[j, A_CL + 1], J.acc[j, A_CL + 2] = lx, ly, lz
    ctype = int(J.param[j, P_COORD1])
    if int(J.param[j, P_MOTOR]) != 0 and ctype != COORD_NONE:
        cap = J.param[j, P_MAX] * h
        lam = min(cap, max(-cap, f * J.acc[j, A_WM]))
        phi, wx, wy, wz = coordinate(B, J, j, ctype, False)
        _push_row(B, J, j, ctype, wx, wy, wz, lam, s)
        J.acc[j, A_MOTOR] = lam


@njit(cache=True, **NO_REFCOUNT)
def keep_warm(J, j, h):
    """The position stage of a step of length h completed: its impulses start the next."""
    for r in range(3):
        J.acc[j, A_WP + r] = J.acc[j, A_CP + r]
        J.acc[j, A_WL + r] = J.acc[j, A_CL + r]
    J.acc[j, A_WM] = J.acc[j, A_MOTOR]
    J.acc[j, A_WH] = h
