"""The normal rows of a face patch solved together (block Gauss-Seidel over patches).

A patch of three or more points (a box face on another: up to 4 corners, contacts/rows.py
find_patches) has more normal rows than the relative degrees of freedom they act on: a
push along n and two tilts. Visited one by one, the first corner took more of the load,
the body tilted, the patch friction at the centre answered the tilt, and the stack kept
that self-stress: a straight stack of 10 cubes on the ground at h = 1/60 carried 0.0187 N s
of friction per step at its bottom patch, corner loads 0.114 .. 0.259 of an even 0.184,
and its velocity loop ran to the cycle cap for 400 steps while Gauss-Seidel drifted along
the patch's near-null mode. Solved as one block, the patch takes the least-norm impulses
that meet all its rows' demands at once: the stack's corners carry even loads from the first
step, no friction, and its loops stop after one cycle once it rests.

Rows i of patch f act (stage demand, _demand) with arms r_i = c + d_i, c the patch centre
(C.patch_frame), d_i = a_i t1 + b_i t2 in the contact plane; S_i = (1, a_i, b_i).
  impulses p (rows) act on the bodies as the wrench y = S^T p: y_0 n at c, torque
  y_1 (t1 x n) + y_2 (t2 x n);
  the rows' normal velocities are u_i = S_i . w, w = G v the patch's generalised velocity
  (n.(v + omega x c), (t1 x n).omega, (t2 x n).omega, relative: A's less B's);
  K3 = G M^-1 G^T (3 x 3) per moving side: im (l_j . l_k) + g_j . (A g_k), l = (n, 0, 0),
  g = (c x n, t1 x n, t2 x n).
Demanded changes du_i (velocity stage -u_n, position stage -g'/h): z = (S^T S)^-1 S^T du,
the plane through them (exact for two flat faces); y = K3^-1 z; p = S (S^T S)^-1 y, the
least-norm row impulses with S^T p = y. Taken when every row's accumulated impulse stays
>= 0 and the rows' other demands are met to the tolerance; otherwise (fewer than 3 rows
acting, points in a line, normals apart by more than SAME_NORMAL, no patch frame in the
stage, a row past its clamp, a demand off the plane, a row routed through a joint tree)
the rows go one by one as before (contacts/solve.py).
"""
from numba import njit

from ..impulses import angular_impulse_to
from .rows import STAGE_POSITION, relative_velocity

BLOCK_ROWS = 3      # patches of this many acting rows or more are solved as one block ...
MAX_ROWS = 4        # ... of at most this many rows (a face's manifold: collision/manifold.py)
FLAT = 1e-6         # (S^T S)'s in-plane determinant over its squared trace below this: a line
SAME_NORMAL = 1.0 - 1e-6   # a block's rows' normals agree within 1.4 mrad (a patch takes
                           # rows within 8 degrees, rows.py SAME_PATCH_COS: a hull's facets)
NOISE = 1e-9        # [m] a row without impulse joins a block once it is this far in (over the
                    # step, in the velocity stage): a row that joins takes a share of the load,
                    # and rows that touch exactly (a wall built stone on stone) would join or
                    # not with the sign of rounding noise (wall_car's last-bit spread itself
                    # came from the manifold's point order: collision/manifold.py
                    # in_place_order)


@njit(cache=True, inline='always')
def _demand(B, C, c, stage, h):
    """(acts, du): does row c take part in this stage's solve now, and the normal velocity
    change it asks for (solve.correct_position / correct_velocity: the same rules, but for
    NOISE)."""
    ux, uy, uz = relative_velocity(B, C, c, C.arm[c, 0], C.arm[c, 1])
    un = C.normal[c, 0] * ux + C.normal[c, 1] * uy + C.normal[c, 2] * uz
    if stage == STAGE_POSITION:
        g = C.g0[c] + h * (un - C.un0[c])
        if g >= -NOISE and C.acc_n[c] <= 0.0:
            return False, 0.0
        return True, -g / h
    if C.acc_n[c] <= 0.0 or (un >= -NOISE / h and C.acc_v[c] <= 0.0):
        return False, 0.0
    return True, -un


@njit(cache=True, inline='always')
def _plane(C, f, c):
    """(a, b): row c's point in patch f's contact plane, from its centre along t1, t2."""
    g = C.patch_frame[f]
    dx = C.arm[c, 0, 0] - g[0, 0]
    dy = C.arm[c, 0, 1] - g[0, 1]
    dz = C.arm[c, 0, 2] - g[0, 2]
    return (dx * g[2, 0] + dy * g[2, 1] + dz * g[2, 2],
            dx * g[3, 0] + dy * g[3, 1] + dz * g[3, 2])


@njit(cache=True, inline='always')
def _inverse3(m00, m01, m02, m11, m12, m22):
    """The inverse of a symmetric 3 x 3 matrix as its 6 entries (00, 01, 02, 11, 12, 22),
    and its determinant."""
    c00 = m11 * m22 - m12 * m12
    c01 = m02 * m12 - m01 * m22
    c02 = m01 * m12 - m02 * m11
    det = m00 * c00 + m01 * c01 + m02 * c02
    if det == 0.0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    q = 1.0 / det
    return (c00 * q, c01 * q, c02 * q, (m00 * m22 - m02 * m02) * q,
            (m01 * m02 - m00 * m12) * q, (m00 * m11 - m01 * m01) * q, det)


@njit(cache=True, inline='always')
def _times3(i00, i01, i02, i11, i12, i22, x0, x1, x2):
    return (i00 * x0 + i01 * x1 + i02 * x2, i01 * x0 + i11 * x1 + i12 * x2,
            i02 * x0 + i12 * x1 + i22 * x2)


@njit(cache=True, inline='always')
def _k3(B, heavy, C, f):
    """K3 of patch f (module docstring) as its 6 entries."""
    n = C.normal[f]
    g = C.patch_frame[f]
    k00 = k01 = k02 = k11 = k12 = k22 = 0.0
    # t1 x n and t2 x n (the tilts' torque directions), the same for both sides
    e1x = g[2, 1] * n[2] - g[2, 2] * n[1]
    e1y = g[2, 2] * n[0] - g[2, 0] * n[2]
    e1z = g[2, 0] * n[1] - g[2, 1] * n[0]
    e2x = g[3, 1] * n[2] - g[3, 2] * n[1]
    e2y = g[3, 2] * n[0] - g[3, 0] * n[2]
    e2z = g[3, 0] * n[1] - g[3, 1] * n[0]
    for side in range(2):
        b = C.body[f, side]
        if heavy[b]:
            continue
        A = B.inv_inertia_w[b]
        # c x n for this side's centre arm
        cx = g[side, 1] * n[2] - g[side, 2] * n[1]
        cy = g[side, 2] * n[0] - g[side, 0] * n[2]
        cz = g[side, 0] * n[1] - g[side, 1] * n[0]
        a0x, a0y, a0z = _times3(A[0, 0], A[0, 1], A[0, 2], A[1, 1], A[1, 2], A[2, 2],
                                cx, cy, cz)
        a1x, a1y, a1z = _times3(A[0, 0], A[0, 1], A[0, 2], A[1, 1], A[1, 2], A[2, 2],
                                e1x, e1y, e1z)
        a2x, a2y, a2z = _times3(A[0, 0], A[0, 1], A[0, 2], A[1, 1], A[1, 2], A[2, 2],
                                e2x, e2y, e2z)
        k00 += B.inv_mass[b] + cx * a0x + cy * a0y + cz * a0z
        k01 += cx * a1x + cy * a1y + cz * a1z
        k02 += cx * a2x + cy * a2y + cz * a2z
        k11 += e1x * a1x + e1y * a1y + e1z * a1z
        k12 += e1x * a2x + e1y * a2y + e1z * a2z
        k22 += e2x * a2x + e2y * a2y + e2z * a2z
    return k00, k01, k02, k11, k12, k22


@njit(cache=True, inline='always')
def _row(B, C, f, k, stage, h):
    """(acts, du, a, b) of patch f's row f + k (_demand, _plane); acts False past its end."""
    c = f + k
    if k >= C.pcount[f]:
        return False, 0.0, 0.0, 0.0
    acts, du = _demand(B, C, c, stage, h)
    a, b = _plane(C, f, c)
    return acts, du, a, b


@njit(cache=True, inline='always')
def solve_patch(B, heavy, C, f, stage, h, tol):
    """Patch f's normal rows as one block (module docstring) for the stage (STAGE_POSITION:
    acc_n, STAGE_VELOCITY: acc_v). Returns (done, the largest normal velocity change it
    caused): done False leaves the rows to be visited one by one (nothing was applied where
    the change is 0; else the block went in and a row's demand is still above tol)."""
    if C.pcount[f] > MAX_ROWS or C.keff[f] > 0.0:   # (keff: on a joint tree, its own K)
        return False, 0.0
    if C.prows[f] == 0:     # no patch frame in this stage (patch_frame holds stale data)
        return False, 0.0
    for c in range(f + 1, f + C.pcount[f]):
        if (C.normal[c, 0] * C.normal[f, 0] + C.normal[c, 1] * C.normal[f, 1]
                + C.normal[c, 2] * C.normal[f, 2]) < SAME_NORMAL:
            return False, 0.0
    # the rows' demands, given up as soon as fewer than BLOCK_ROWS could act (in a pouring
    # pile most patches touch on 1 or 2 points, and the rows then work their demands out
    # again: 100 cubes poured into a bin, 11 000 of 12 657 block visits in 0.25 s)
    p = C.pcount[f]
    r0 = _row(B, C, f, 0, stage, h)
    acting = 1 if r0[0] else 0
    if acting + p - 1 < BLOCK_ROWS:
        return False, 0.0
    r1 = _row(B, C, f, 1, stage, h)
    acting += 1 if r1[0] else 0
    if acting + p - 2 < BLOCK_ROWS:
        return False, 0.0
    r2 = _row(B, C, f, 2, stage, h)
    acting += 1 if r2[0] else 0
    if acting + p - 3 < BLOCK_ROWS:
        return False, 0.0
    r3 = _row(B, C, f, 3, stage, h)
    acts = (r0[0], r1[0], r2[0], r3[0])
    du = (r0[1], r1[1], r2[1], r3[1])
    pa = (r0[2], r1[2], r2[2], r3[2])
    pb = (r0[3], r1[3], r2[3], r3[3])
    m = 0
    s_a = s_b = s_aa = s_ab = s_bb = 0.0        # S^T S
    q0 = q1 = q2 = 0.0                          # S^T du
    for k in range(MAX_ROWS):
        if acts[k]:
            a, b = pa[k], pb[k]
            m += 1
            s_a += a
            s_b += b
            s_aa += a * a
            s_ab += a * b
            s_bb += b * b
            q0 += du[k]
            q1 += a * du[k]
            q2 += b * du[k]
    if m < BLOCK_ROWS:
        return False, 0.0
    # the points' spread in the plane (covariance times m): a line has none across it
    vaa = s_aa - s_a * s_a / m
    vab = s_ab - s_a * s_b / m
    vbb = s_bb - s_b * s_b / m
    if vaa * vbb - vab * vab <= FLAT * (vaa + vbb) * (vaa + vbb):
        return False, 0.0
    i00, i01, i02, i11, i12, i22, _ = _inverse3(float(m), s_a, s_b, s_aa, s_ab, s_bb)
    z0, z1, z2 = _times3(i00, i01, i02, i11, i12, i22, q0, q1, q2)
    k00, k01, k02, k11, k12, k22 = _k3(B, heavy, C, f)
    j00, j01, j02, j11, j12, j22, det = _inverse3(k00, k01, k02, k11, k12, k22)
    if not det > 0.0:
        return False, 0.0
    y0, y1, y2 = _times3(j00, j01, j02, j11, j12, j22, z0, z1, z2)
    w0, w1, w2 = _times3(i00, i01, i02, i11, i12, i22, y0, y1, y2)
    acc = C.acc_n if stage == STAGE_POSITION else C.acc_v
    for k in range(MAX_ROWS):                   # every acting row keeps acc >= 0?
        if acts[k] and acc[f + k] + w0 + w1 * pa[k] + w2 * pb[k] < 0.0:
            return False, 0.0
    # the rows' impulses p_k n_k at their arms, summed into one impulse per body
    lx = ly = lz = 0.0
    ta = (0.0, 0.0, 0.0)
    tb = (0.0, 0.0, 0.0)
    caused = 0.0
    off = 0.0                                   # the largest demand off the plane
    for k in range(MAX_ROWS):
        if not acts[k]:
            continue
        c = f + k
        p = w0 + w1 * pa[k] + w2 * pb[k]
        acc[c] += p
        fit = z0 + z1 * pa[k] + z2 * pb[k]
        caused = max(caused, abs(fit))
        off = max(off, abs(du[k] - fit))
        px, py, pz = p * C.normal[c, 0], p * C.normal[c, 1], p * C.normal[c, 2]
        lx += px
        ly += py
        lz += pz
        ra, rb = C.arm[c, 0], C.arm[c, 1]
        ta = (ta[0] + ra[1] * pz - ra[2] * py, ta[1] + ra[2] * px - ra[0] * pz,
              ta[2] + ra[0] * py - ra[1] * px)
        tb = (tb[0] + rb[1] * pz - rb[2] * py, tb[1] + rb[2] * px - rb[0] * pz,
              tb[2] + rb[0] * py - rb[1] * px)
    for side in range(2):
        b = C.body[f, side]
        if heavy[b]:
            continue
        s = 1.0 if side == 0 else -1.0
        t = ta if side == 0 else tb
        im = s * B.inv_mass[b]
        B.vel[b, 0] += im * lx
        B.vel[b, 1] += im * ly
        B.vel[b, 2] += im * lz
        angular_impulse_to(B.static, B.omega, B.inv_inertia_w, B.pred_ok, b, s * t[0],
                           s * t[1], s * t[2])
    # a demand off the plane (a row deeper than the face's plane): row by row
    return off <= tol, caused
