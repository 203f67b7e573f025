"""Small shared pieces of the generic joint: frame axes now and after the step, the
effective masses of rows, applying a row's impulse, and one joint's rows as one block
(K matrix, LDL^T with a small active set for the bounded rows).

Notation (method-notes.md): an impulse p acts +p on A at r_a and -p on B at r_b, so the
relative point velocity u_b - u_a changes by -K p with K = K_A(r_a) + K_B(r_b); an angular
impulse l acts +l on A and -l on B, so w_b - w_a changes by -L l with L = A_A + A_B.
A static body and the world (index -1) contribute nothing and do not move.
"""
from numba import njit

from ..jitopts import NO_REFCOUNT
from ..impulses import angular_impulse_to, dynamic, impulse_to
from . import A_CL, A_CP


@njit(cache=True, **NO_REFCOUNT)
def axis_now(B, J, j, side, c):
    """World direction of column c of joint j's frame in body `side`, at time t."""
    b = J.body[j, side]
    f = J.frame[j, side]
    if b < 0:
        return f[0, c], f[1, c], f[2, c]
    r = B.rot[b]
    return (r[0, 0] * f[0, c] + r[0, 1] * f[1, c] + r[0, 2] * f[2, c],
            r[1, 0] * f[0, c] + r[1, 1] * f[1, c] + r[1, 2] * f[2, c],
            r[2, 0] * f[0, c] + r[2, 1] * f[1, c] + r[2, 2] * f[2, c])


@njit(cache=True, **NO_REFCOUNT)
def axis_ahead(B, J, j, side, c):
    """The same direction at t + h: M_rot R f (the body's look-ahead cache must be fresh)."""
    x, y, z = axis_now(B, J, j, side, c)
    b = J.body[j, side]
    if not dynamic(B.static, b):
        return x, y, z
    m = B.pred_rot[b]
    return (m[0, 0] * x + m[0, 1] * y + m[0, 2] * z, m[1, 0] * x + m[1, 1] * y + m[1, 2] * z,
            m[2, 0] * x + m[2, 1] * y + m[2, 2] * z)


@njit(cache=True, **NO_REFCOUNT)
def axis_at(B, J, j, side, c, ahead):
    """axis_ahead (t + h) or axis_now (t) of column c of the joint frame of `side`."""
    if ahead:
        return axis_ahead(B, J, j, side, c)
    return axis_now(B, J, j, side, c)


@njit(cache=True, **NO_REFCOUNT)
def dot(ax, ay, az, bx, by, bz):
    return ax * bx + ay * by + az * bz


@njit(cache=True, **NO_REFCOUNT)
def cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(cache=True, **NO_REFCOUNT)
def quad(m, x, y, z, u, v, w):
    """x^T m u for a 3x3 m."""
    return x * (m[0, 0] * u + m[0, 1] * v + m[0, 2] * w) \
        + y * (m[1, 0] * u + m[1, 1] * v + m[1, 2] * w) \
        + z * (m[2, 0] * u + m[2, 1] * v + m[2, 2] * w)


@njit(cache=True, **NO_REFCOUNT)
def angular_mass(B, J, j, out):
    """out = L = A_A + A_B (3x3), the relative angular velocity change per angular impulse."""
    for r in range(3):
        for c in range(3):
            out[r, c] = 0.0
    for side in range(2):
        b = J.body[j, side]
        if dynamic(B.static, b):
            for r in range(3):
                for c in range(3):
                    out[r, c] += B.inv_inertia_w[b, r, c]


@njit(cache=True, **NO_REFCOUNT)
def push_angular(B, J, j, lx, ly, lz):
    """+l on body A, -l on body B."""
    angular_impulse_to(B.static, B.omega, B.inv_inertia_w, B.pred_ok, J.body[j, 0], lx, ly, lz)
    angular_impulse_to(B.static, B.omega, B.inv_inertia_w, B.pred_ok, J.body[j, 1],
                       -lx, -ly, -lz)


@njit(cache=True, **NO_REFCOUNT)
def push_linear(B, J, j, arm_a, arm_b, px, py, pz):
    """+p on body A at arm_a, -p on body B at arm_b."""
    impulse_to(B.static, B.inv_mass, B.vel, B.omega, B.inv_inertia_w, B.pred_ok, J.body[j, 0],
               arm_a[0], arm_a[1], arm_a[2], px, py, pz)
    impulse_to(B.static, B.inv_mass, B.vel, B.omega, B.inv_inertia_w, B.pred_ok, J.body[j, 1],
               arm_b[0], arm_b[1], arm_b[2], -px, -py, -pz)


@njit(cache=True, **NO_REFCOUNT)
def angular_velocity_of(B, b):
    if not dynamic(B.static, b):
        return 0.0, 0.0, 0.0
    return B.omega[b, 0], B.omega[b, 1], B.omega[b, 2]


# ---- one joint's rows as one block ------------------------------------------------------------
#
# A row i of joint j is a scalar velocity c_i = d_i.(u_b - u_a) + a_i.(w_B - w_A) with the
# point velocities u at the row's arms r_ai, r_bi; equivalently
#     c_i = G_iB . (v_B, w_B) - G_iA . (v_A, w_A),  G_iX = (d_i, r_Xi x d_i + a_i) = (d_i, g_Xi).
# An impulse lam_i on the row acts +lam_i (d_i, g_Ai) on A (linear, angular about the centre)
# and -lam_i (d_i, g_Bi) on B, so every row's c changes by -K lam with
#     K_ik = (1/m_A + 1/m_B) d_i.d_k + g_Ai.A_A g_Ak + g_Bi.A_B g_Bk     (A = world inv. inertia)
# (a static body or the world contributes nothing). A translational row has d = locked axis,
# a = 0; a rotational, angle-limit or angle-motor row has d = 0, a = its axis; an offset row
# has d = the slider axis at B's anchor. The block K lam = b (b: the wanted decrease of each
# c) is solved together; rows whose accumulated impulse is capped or one-sided (limits,
# motors) keep lam inside [lo, hi] by a small active-set solve: clamp the worst violator,
# re-solve the others, release a clamped row whose residual points back inside; repeat.
ROWS_MAX = 12
(R_D, R_GA, R_GB, R_LGA, R_LGB) = (0, 3, 6, 9, 12)       # 3 columns each
(R_RHS, R_LAM, R_LO, R_HI, R_STATE, R_ACC, R_Y) = range(15, 22)
R_K = 24                     # ROWS_MAX columns: K
R_F = R_K + ROWS_MAX         # ROWS_MAX columns: LDL^T factor of the free rows (D on the diagonal)
BLOCK_COLS = R_F + ROWS_MAX
# The joint solvers' scratch: slabs 0-3 small 3x3 work matrices and arm vectors (their top-left
# corners), slab 4 the block of the visited joint (ROWS_MAX rows of BLOCK_COLS columns).
SCRATCH_SHAPE = (5, ROWS_MAX, BLOCK_COLS)
BLOCK_SLAB = 4
FREE, AT_LO, AT_HI = 0.0, 1.0, 2.0
DEPENDENT = 1e-8             # pivot / diagonal below this: the row depends on earlier rows
LOCK_LINEAR, LOCK_ANGULAR = -1.0, -2.0   # R_ACC of the lock rows (no accumulator column)


@njit(cache=True, **NO_REFCOUNT)
def set_row(blk, i, dx, dy, dz, ax, ay, az, bx, by, bz, rhs, lo, hi, acc_col):
    """Row i: direction d, angular parts g_A = a, g_B = b, right side, bounds of lam, the
    accumulator column (LOCK_LINEAR / LOCK_ANGULAR: a lock row, an equality)."""
    blk[i, R_D], blk[i, R_D + 1], blk[i, R_D + 2] = dx, dy, dz
    blk[i, R_GA], blk[i, R_GA + 1], blk[i, R_GA + 2] = ax, ay, az
    blk[i, R_GB], blk[i, R_GB + 1], blk[i, R_GB + 2] = bx, by, bz
    blk[i, R_RHS] = rhs
    blk[i, R_LO] = lo
    blk[i, R_HI] = hi
    blk[i, R_ACC] = acc_col
    blk[i, R_LAM] = 0.0
    blk[i, R_STATE] = FREE


@njit(cache=True, **NO_REFCOUNT)
def set_linear_row(blk, i, arm_a, arm_b, dx, dy, dz, rhs, lo, hi, acc_col):
    """A row along d at the arms (g_X = r_X x d)."""
    ax, ay, az = cross(arm_a[0], arm_a[1], arm_a[2], dx, dy, dz)
    bx, by, bz = cross(arm_b[0], arm_b[1], arm_b[2], dx, dy, dz)
    set_row(blk, i, dx, dy, dz, ax, ay, az, bx, by, bz, rhs, lo, hi, acc_col)


@njit(cache=True, **NO_REFCOUNT)
def set_angular_row(blk, i, wx, wy, wz, rhs, lo, hi, acc_col):
    """A rotational row about w (d = 0, g_A = g_B = w)."""
    set_row(blk, i, 0.0, 0.0, 0.0, wx, wy, wz, wx, wy, wz, rhs, lo, hi, acc_col)


@njit(cache=True, **NO_REFCOUNT)
def block_matrix(B, J, j, blk, n):
    """K of the first n rows (and A_A g_A, A_B g_B per row, kept for applying)."""
    a = J.body[j, 0]
    b = J.body[j, 1]
    dyn_a = dynamic(B.static, a)
    dyn_b = dynamic(B.static, b)
    im = (B.inv_mass[a] if dyn_a else 0.0) + (B.inv_mass[b] if dyn_b else 0.0)
    ia = B.inv_inertia_w
    for i in range(n):
        for r in range(3):
            if dyn_a:
                blk[i, R_LGA + r] = ia[a, r, 0] * blk[i, R_GA] + ia[a, r, 1] * blk[i, R_GA + 1] \
                    + ia[a, r, 2] * blk[i, R_GA + 2]
            else:
                blk[i, R_LGA + r] = 0.0
            if dyn_b:
                blk[i, R_LGB + r] = ia[b, r, 0] * blk[i, R_GB] + ia[b, r, 1] * blk[i, R_GB + 1] \
                    + ia[b, r, 2] * blk[i, R_GB + 2]
            else:
                blk[i, R_LGB + r] = 0.0
    for i in range(n):
        for k in range(i + 1):
            v = 0.0
            for r in range(3):
                v += im * blk[i, R_D + r] * blk[k, R_D + r] \
                    + blk[i, R_GA + r] * blk[k, R_LGA + r] + blk[i, R_GB + r] * blk[k, R_LGB + r]
            blk[i, R_K + k] = v
            blk[k, R_K + i] = v


@njit(cache=True, **NO_REFCOUNT)
def block_factor(blk, n):
    """LDL^T of K over the free rows, in row order (L below the diagonal of the R_F columns,
    D on it). A row whose pivot falls below DEPENDENT times its diagonal depends on earlier
    free rows: its D is set to 0 and the solve gives it lam = 0."""
    for i in range(n):
        if blk[i, R_STATE] != FREE:
            continue
        for k in range(i):
            if blk[k, R_STATE] != FREE or blk[k, R_F + k] == 0.0:
                continue
            v = blk[i, R_K + k]
            for p in range(k):
                if blk[p, R_STATE] == FREE and blk[p, R_F + p] != 0.0:
                    v -= blk[i, R_F + p] * blk[k, R_F + p] * blk[p, R_F + p]
            blk[i, R_F + k] = v / blk[k, R_F + k]
        d = blk[i, R_K + i]
        for p in range(i):
            if blk[p, R_STATE] == FREE and blk[p, R_F + p] != 0.0:
                d -= blk[i, R_F + p] * blk[i, R_F + p] * blk[p, R_F + p]
        blk[i, R_F + i] = d if d > DEPENDENT * blk[i, R_K + i] else 0.0


@njit(cache=True, **NO_REFCOUNT)
def block_solve(blk, n):
    """lam of the free rows from K_FF lam_F = b_F - K_FC lam_C (factor current)."""
    for i in range(n):            # forward: L z = y
        if blk[i, R_STATE] != FREE or blk[i, R_F + i] == 0.0:
            continue
        y = blk[i, R_RHS]
        for c in range(n):
            if blk[c, R_STATE] != FREE:
                y -= blk[i, R_K + c] * blk[c, R_LAM]
        for k in range(i):
            if blk[k, R_STATE] == FREE and blk[k, R_F + k] != 0.0:
                y -= blk[i, R_F + k] * blk[k, R_Y]
        blk[i, R_Y] = y
    for i in range(n - 1, -1, -1):    # D L^T lam = z
        if blk[i, R_STATE] != FREE:
            continue
        if blk[i, R_F + i] == 0.0:
            blk[i, R_LAM] = 0.0
            continue
        v = blk[i, R_Y] / blk[i, R_F + i]
        for k in range(i + 1, n):
            if blk[k, R_STATE] == FREE and blk[k, R_F + k] != 0.0:
                v -= blk[k, R_F + i] * blk[k, R_LAM]
        blk[i, R_LAM] = v


@njit(cache=True, **NO_REFCOUNT)
def solve_block(blk, n):
    """lam of the n rows: K lam = b with lo <= lam <= hi on the bounded rows (active set)."""
    for i in range(n):
        blk[i, R_STATE] = FREE
        blk[i, R_LAM] = 0.0
    for _ in range(3 * n + 3):
        block_factor(blk, n)
        block_solve(blk, n)
        worst = -1
        most = 0.0
        for i in range(n):        # the free row farthest outside its bounds (in velocity)
            if blk[i, R_STATE] != FREE:
                continue
            lam = blk[i, R_LAM]
            v = max(blk[i, R_LO] - lam, lam - blk[i, R_HI]) * blk[i, R_K + i]
            if v > most:
                most = v
                worst = i
        if worst >= 0:
            at_lo = blk[worst, R_LAM] < blk[worst, R_LO]
            blk[worst, R_STATE] = AT_LO if at_lo else AT_HI
            blk[worst, R_LAM] = blk[worst, R_LO] if at_lo else blk[worst, R_HI]
            continue
        worst = -1
        most = 0.0
        for i in range(n):        # a clamped row whose residual K lam - b points inside
            s = blk[i, R_STATE]
            if s == FREE:
                continue
            g = -blk[i, R_RHS]
            for k in range(n):
                g += blk[i, R_K + k] * blk[k, R_LAM]
            v = -g if s == AT_LO else g
            if v > 1e-9 * (abs(blk[i, R_RHS]) + abs(blk[i, R_LAM]) * blk[i, R_K + i]) \
                    and v > most:
                most = v
                worst = i
        if worst < 0:
            return
        blk[worst, R_STATE] = FREE


@njit(cache=True, **NO_REFCOUNT)
def apply_block(B, J, j, blk, n):
    """Apply the rows' lam (+ on A, - on B) and add them to their accumulators."""
    px = py = pz = 0.0
    wax = way = waz = 0.0
    wbx = wby = wbz = 0.0
    for i in range(n):
        lam = blk[i, R_LAM]
        px += lam * blk[i, R_D]
        py += lam * blk[i, R_D + 1]
        pz += lam * blk[i, R_D + 2]
        wax += lam * blk[i, R_LGA]
        way += lam * blk[i, R_LGA + 1]
        waz += lam * blk[i, R_LGA + 2]
        wbx += lam * blk[i, R_LGB]
        wby += lam * blk[i, R_LGB + 1]
        wbz += lam * blk[i, R_LGB + 2]
        col = int(blk[i, R_ACC])
        if col >= 0:
            J.acc[j, col] += lam
        elif col == LOCK_LINEAR:    # this step's lock impulses, for the next step's warm start
            for r in range(3):
                J.acc[j, A_CP + r] += lam * blk[i, R_D + r]
        else:
            for r in range(3):
                J.acc[j, A_CL + r] += lam * blk[i, R_GA + r]
    for side in range(2):
        b = J.body[j, side]
        if not dynamic(B.static, b):
            continue
        sg = 1.0 if side == 0 else -1.0
        im = B.inv_mass[b] * sg
        B.vel[b, 0] += im * px
        B.vel[b, 1] += im * py
        B.vel[b, 2] += im * pz
        if side == 0:
            B.omega[b, 0] += wax
            B.omega[b, 1] += way
            B.omega[b, 2] += waz
        else:
            B.omega[b, 0] -= wbx
            B.omega[b, 1] -= wby
            B.omega[b, 2] -= wbz
        B.pred_ok[b] = False
