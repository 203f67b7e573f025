"""A joint's rows as a Jacobian, for the tree solver (solvers/tree.py, solvers/rounds.py).

Row k of joint j is a unit direction of one of two kinds, with c_k its velocity:
  translational, direction n:  c_k = n . (u_a - u_b)   (relative velocity of the anchors),
  rotational, axis a:          c_k = a . (w_a - w_b).
On side s (body A: sgn = +1, body B: sgn = -1) the row acts on the body velocity (v, w) as
    G_ks = sgn [n^T, (r_s x n)^T]   (translational; r_s the row's arm on that side),
    G_ks = sgn [0,   a^T]           (rotational),
and impulses y along the rows act on the body as G_s^T y (+y on A, -y on B), so
K = G M^-1 G^T and a ball joint's rows are [E, -[r]x]. The rows are taken at time t, the
linearisation the solve uses; the errors are measured as in generic.py (look-ahead, the
predicted axes of the same rows):
  ball: the world axes, arms = the anchors;
  translational locks: the locked axes x_i of A's joint frame, the arms of generic._arms
    (B's anchor; on A its anchor when the point is fully fixed, else the place of B's);
  rotational locks: 3 locked: the world axes; 2 locked (common axis k): A's other two axes;
    1 locked (universal): unit(u x v);
  the motor or servo row, while its impulse stays inside +-generic.motor_cap: A's x axis
    (an angle, rotational) or along it at the translational arms (an offset). Its coordinate
    rate is -c_k, so the wanted change of c_k is minus the wanted change of the rate
    (generic.motor_change).
Right sides (wanted change of c_k): position stage e_k / h (e_k the look-ahead error along
the row), velocity stage (P-step 4) -c_k.
"""
import numpy as np
from numba import njit

from ..impulses import velocity_at
from ..jitopts import NO_REFCOUNT
from . import (
    A_BOUND,
    A_MOTOR,
    A_SAT,
    BALL,
    COORD_NONE,
    COORD_OFFSET_X,
    P_COORD1,
    P_MOTOR,
    P_RLOCK,
    P_TLOCK,
)
from .generic import (
    _arms,
    _locked_axes,
    _point,
    coordinate,
    motor_cap,
    motor_change,
    rotation_row_errors,
    rotation_rows_of,
)
from .rows import dot


@njit(cache=True, **NO_REFCOUNT)
def has_motor(J, j):
    return J.const.kind[j] != BALL and J.const.param[j, P_MOTOR] != 0.0 \
        and int(J.const.param[j, P_COORD1]) != COORD_NONE


@njit(cache=True, **NO_REFCOUNT)
def motor_in_solve(J, j, position_stage):
    """The motor row is a row of the solve in the position stage while it is not saturated.
    J.acc[j, A_SAT]: 0 never saturated this step, +k saturated for the k-th time (out of the
    solve; its accumulated impulse is brought to and held at A_BOUND cap, A_BOUND = +-1,
    as a known impulse of the solve), -k back in after k times."""
    return position_stage and has_motor(J, j) and J.acc[j, A_SAT] <= 0.0


@njit(cache=True, **NO_REFCOUNT)
def motor_wants_back(B, J, j, h, t, eps, s):
    """A saturated motor re-enters the solve when the change it wants points back inside
    its torque limit (and would move its coordinate by eps or more over h); at most twice
    per step, so the set of rows cannot cycle. Returns whether it re-entered."""
    sat = J.acc[j, A_SAT]
    if sat <= 0.0 or sat >= 3.0 or J.acc[j, A_MOTOR] != J.acc[j, A_BOUND] * motor_cap(J, j, h):
        return False
    k, change = motor_change(B, J, j, h, t, s)[1:3]
    if k <= 0.0 or abs(change) * h < eps:
        return False
    if -change / k * J.acc[j, A_BOUND] < 0.0:   # the impulse it wants is inside the limit
        J.acc[j, A_SAT] = -sat
        return True
    return False


@njit(cache=True, **NO_REFCOUNT)
def add_motor_load(B, J, j, lam, xb, s):
    """xb += the body impulses of lam along joint j's motor row (+lam on A, -lam on B), as
    the known impulse of a saturated motor in the tree solve."""
    ctype = int(J.const.param[j, P_COORD1])
    wx, wy, wz = coordinate(B, J, j, ctype, False)[1:]
    if ctype == COORD_OFFSET_X:
        _arms(B, J, j, False, s[3, 0], s[3, 1])
    for side in range(2):
        b = J.const.body[j, side]
        if b < 0 or B.static[b]:
            continue
        f = lam if side == 0 else -lam
        if ctype == COORD_OFFSET_X:
            r = s[3, side]
            xb[b, 0] += f * wx
            xb[b, 1] += f * wy
            xb[b, 2] += f * wz
            xb[b, 3] += f * (r[1] * wz - r[2] * wy)
            xb[b, 4] += f * (r[2] * wx - r[0] * wz)
            xb[b, 5] += f * (r[0] * wy - r[1] * wx)
        else:
            xb[b, 3] += f * wx
            xb[b, 4] += f * wy
            xb[b, 5] += f * wz


@njit(cache=True, **NO_REFCOUNT)
def row_code(J, j, motor_in):
    """What the rows of a joint other than a ball joint depend on besides the configuration
    (for refactoring): its locks and whether its motor row is in the solve."""
    return int(J.const.param[j, P_TLOCK]) | (int(J.const.param[j, P_RLOCK]) << 3) \
        | ((1 if motor_in else 0) << 6)


@njit(cache=True, **NO_REFCOUNT)
def _lin_row(g, n, x, y, z, arm_a, arm_b):
    for side in range(2):
        r = arm_a if side == 0 else arm_b
        g[side, n, 0], g[side, n, 1], g[side, n, 2] = x, y, z
        g[side, n, 3] = r[1] * z - r[2] * y
        g[side, n, 4] = r[2] * x - r[0] * z
        g[side, n, 5] = r[0] * y - r[1] * x
    return n + 1


@njit(cache=True, **NO_REFCOUNT)
def _ang_row(g, n, x, y, z):
    for side in range(2):
        g[side, n, 3], g[side, n, 4], g[side, n, 5] = x, y, z
    return n + 1


@njit(cache=True, **NO_REFCOUNT)
def build_rows(B, J, j, motor_in, g, s):
    """Rows of joint j at time t into g (2, 6, 6): (row count, index of the motor row or
    -1). s: scratch (12, 3, 3)."""
    for side in range(2):
        for r in range(6):
            for c in range(6):
                g[side, r, c] = 0.0
    if J.const.kind[j] == BALL:
        n = _lin_row(g, 0, 1.0, 0.0, 0.0, J.arm[j, 0], J.arm[j, 1])
        n = _lin_row(g, n, 0.0, 1.0, 0.0, J.arm[j, 0], J.arm[j, 1])
        return _lin_row(g, n, 0.0, 0.0, 1.0, J.arm[j, 0], J.arm[j, 1]), -1
    n = 0
    axes, arm_a, arm_b = s[0], s[3, 0], s[3, 1]
    tmask = int(J.const.param[j, P_TLOCK])
    if tmask != 0:
        m = _locked_axes(B, J, j, tmask, False, axes)
        _arms(B, J, j, tmask == 7, arm_a, arm_b)
        for i in range(m):
            n = _lin_row(g, n, axes[i, 0], axes[i, 1], axes[i, 2], arm_a, arm_b)
    rmask = int(J.const.param[j, P_RLOCK])
    if rmask != 0:
        m = rotation_rows_of(B, J, j, rmask, False, axes)
        for i in range(m):
            n = _ang_row(g, n, axes[i, 0], axes[i, 1], axes[i, 2])
    if not motor_in:
        return n, -1
    ctype = int(J.const.param[j, P_COORD1])
    wx, wy, wz = coordinate(B, J, j, ctype, False)[1:]
    if ctype == COORD_OFFSET_X:
        _arms(B, J, j, False, arm_a, arm_b)
        return _lin_row(g, n, wx, wy, wz, arm_a, arm_b), n
    return _ang_row(g, n, wx, wy, wz), n


@njit(cache=True, **NO_REFCOUNT)
def row_targets(B, J, j, h, t, velocity, motor_row, out, s):
    """Wanted changes of the rows' velocities into out[:n] (the rows of build_rows; the
    bodies' look-ahead must be fresh in the position stage). Returns (largest lock error,
    motor error: how far the motor row would move its coordinate over h). Not for ball
    joints: on the hot path of the tree benchmarks, solvers/rounds.py writes their gap
    (world rows) directly."""
    ahead = not velocity
    scale = 1.0 if velocity else 1.0 / h
    n = 0
    err = 0.0
    axes, arm_a, arm_b = s[0], s[3, 0], s[3, 1]
    tmask = int(J.const.param[j, P_TLOCK])
    if tmask != 0:
        m = _locked_axes(B, J, j, tmask, ahead, axes)
        if velocity:
            _arms(B, J, j, tmask == 7, arm_a, arm_b)
            ua = velocity_at(B.static, B.vel, B.omega, J.const.body[j, 0], arm_a[0], arm_a[1],
                             arm_a[2])
            ub = velocity_at(B.static, B.vel, B.omega, J.const.body[j, 1], arm_b[0], arm_b[1],
                             arm_b[2])
        else:
            ua = _point(B, J, j, 0, True)
            ub = _point(B, J, j, 1, True)
        e2 = 0.0
        for i in range(m):
            e = dot(axes[i, 0], axes[i, 1], axes[i, 2], ub[0] - ua[0], ub[1] - ua[1],
                    ub[2] - ua[2])
            out[n] = e * scale
            e2 += e * e
            n += 1
        err = np.sqrt(e2)
    rmask = int(J.const.param[j, P_RLOCK])
    if rmask != 0:
        m, r0, r1, r2 = rotation_row_errors(B, J, j, rmask, velocity, axes)
        out[n] = r0 * scale
        if m > 1:
            out[n + 1] = r1 * scale
        if m > 2:
            out[n + 2] = r2 * scale
        err = max(err, np.sqrt(r0 * r0 + r1 * r1 + r2 * r2))
    if motor_row < 0:
        return err, 0.0
    change = motor_change(B, J, j, h, t, s)[2]
    out[motor_row] = -change
    return err, abs(change) * h
