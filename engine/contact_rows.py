"""What every visit of a contact needs and what stays fixed while a stage runs, computed
once per stage (contacts.py visits the rows, contact_friction.py the patches).

Row c (one contact point, arms r_A, r_B, normal n from B to A): its normal response
    knn = n^T K n,   K = K_A(r_A) + K_B(r_B),   K_i(r) = E/m_i - [r]x A_i [r]x,
    i.e. knn = sum over the moving sides of 1/m + (r x n) . A (r x n),
in two variants: [0] both bodies as they are (the loops), [1] as the shock pass sees it, the
body of the lower layer infinitely heavy (contacts.shock_pass; needs contacts.layers first).

Patch f (rows f .. f + count - 1, first[c] = f; contact_friction.py): centre x = mean of the
rows' points (the collision stage: of its colliding rows only), arms x - s_A, x - s_B,
tangents t1, t2 of n, R = mean distance of the points from x, and the patch's 3x3 K for the
slide along t1, t2 at x and the twist about n (both variants).

Linearised look-ahead (position stage). The predicted gap of row c,
    g' = -depth + n . ((a' - a_0) - (b' - b_0)),   a' = s_A(t+h) + M_rot,A r_A,
(-depth replaced by 0 for rows deeper than SPLIT_DEPTH: gap_base),
moves with the bodies' velocities as dg' = h n . du (exact for the centres, s(t+h) = s + v h
+ g h^2/2; to first order in the rotation's change for the arms). snapshot() takes the
exact look-ahead of every row (g0, and the relative normal velocity un0 at that moment),
and of every patch the mean displacement over the step (pd0) and the relative velocity at
its centre (pu0); between snapshots a visit reads
    g' = g0 + h (u_n - un0),   d = pd0 + h (u_x - pu0),
with no Taylor series per visit. The loops take a new snapshot every few cycles and before
they stop, so they end on the exact look-ahead (solvers/iterative.py, rounds.py); the shock
pass after them works on the last snapshot, and depth_projection.py removes what depth the
step still leaves.
"""
import numpy as np
from numba import njit

from .impulses import ensure_look_ahead, predicted_point, velocity_at
from .jitopts import NO_REFCOUNT

STAGE_POSITION, STAGE_VELOCITY, STAGE_COLLISION = 0, 1, 2
SNAP_EVERY = 4             # cycles between snapshots of the look-ahead in the position loops
SPLIT_DEPTH = 1e-3         # [m] deeper rows leave their depth to depth_projection.py
SAME_PATCH_COS = 0.99      # rows with normals closer than this belong to one patch


@njit(cache=True, inline='always')
def tangents(nx, ny, nz):
    """Unit t1, t2 with (t1, t2, n) orthonormal."""
    if abs(nx) < 0.57:
        ax, ay, az = 0.0, nz, -ny       # n x e_x
    else:
        ax, ay, az = -nz, 0.0, nx       # n x e_y
    la = np.sqrt(ax * ax + ay * ay + az * az)
    ax, ay, az = ax / la, ay / la, az / la
    return ax, ay, az, ny * az - nz * ay, nz * ax - nx * az, nx * ay - ny * ax


@njit(cache=True, inline='always')
def _moves(B, C, b, c, shock):
    """Body b of contact c takes impulses in this variant (not static, not the shock
    pass's lower layer)."""
    if B.static[b]:
        return False
    return not (shock and C.body_layer[b] < C.layer[c])


@njit(cache=True, inline='always')
def _angular_response(A, b, rx, ry, rz, lx, ly, lz):
    """w = A_b (r x l): the spin a unit linear impulse along l at arm r gives body b."""
    cx, cy, cz = ry * lz - rz * ly, rz * lx - rx * lz, rx * ly - ry * lx
    return (A[b, 0, 0] * cx + A[b, 0, 1] * cy + A[b, 0, 2] * cz,
            A[b, 1, 0] * cx + A[b, 1, 1] * cy + A[b, 1, 2] * cz,
            A[b, 2, 0] * cx + A[b, 2, 1] * cy + A[b, 2, 2] * cz)


@njit(cache=True, **NO_REFCOUNT)
def _row_knn(B, C, c, shock):
    """n^T K n of row c (module docstring)."""
    nx, ny, nz = C.normal[c, 0], C.normal[c, 1], C.normal[c, 2]
    k = 0.0
    for side in range(2):
        b = C.body[c, side]
        if not _moves(B, C, b, c, shock):
            continue
        rx, ry, rz = C.arm[c, side, 0], C.arm[c, side, 1], C.arm[c, side, 2]
        wx, wy, wz = _angular_response(B.inv_inertia_w, b, rx, ry, rz, nx, ny, nz)
        # n . (w x r) = (r x n) . w
        k += B.inv_mass[b] + (ry * nz - rz * ny) * wx + (rz * nx - rx * nz) * wy \
            + (rx * ny - ry * nx) * wz
    return k


@njit(cache=True, **NO_REFCOUNT)
def _patch_k(B, C, f, shock, k):
    """k (3, 3) = the patch's K: column j = the response (t1.du, t2.du, n.dw) to a unit
    linear impulse along t1 (j = 0), t2 (1) at the centre, or a unit angular impulse about
    n (2); + on A, - on B, summed over the moving sides (response of -x on B is -du, and it
    enters the relative velocity with -1 again)."""
    g = C.pgeo[f]
    for i in range(3):
        for j in range(3):
            k[i, j] = 0.0
    n = C.normal[f]
    for side in range(2):
        b = C.body[f, side]
        if not _moves(B, C, b, f, shock):
            continue
        rx, ry, rz = g[side, 0], g[side, 1], g[side, 2]
        A = B.inv_inertia_w
        im = B.inv_mass[b]
        for j in range(3):
            if j < 2:
                lx, ly, lz = g[2 + j, 0], g[2 + j, 1], g[2 + j, 2]
                wx, wy, wz = _angular_response(A, b, rx, ry, rz, lx, ly, lz)
                dx = im * lx + wy * rz - wz * ry
                dy = im * ly + wz * rx - wx * rz
                dz = im * lz + wx * ry - wy * rx
            else:
                wx = A[b, 0, 0] * n[0] + A[b, 0, 1] * n[1] + A[b, 0, 2] * n[2]
                wy = A[b, 1, 0] * n[0] + A[b, 1, 1] * n[1] + A[b, 1, 2] * n[2]
                wz = A[b, 2, 0] * n[0] + A[b, 2, 1] * n[1] + A[b, 2, 2] * n[2]
                dx, dy, dz = wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx
            k[0, j] += g[2, 0] * dx + g[2, 1] * dy + g[2, 2] * dz
            k[1, j] += g[3, 0] * dx + g[3, 1] * dy + g[3, 2] * dz
            k[2, j] += n[0] * wx + n[1] * wy + n[2] * wz


@njit(cache=True, **NO_REFCOUNT)
def find_patches(C):
    """C.first[c]: the first row of c's patch (consecutive rows, same bodies, same normal);
    C.pcount[f]: the patch's number of rows (in its first row)."""
    for c in range(C.body.shape[0]):
        C.first[c] = c
        C.pcount[c] = 1
        if c > 0:
            p = C.first[c - 1]
            if C.body[c, 0] == C.body[p, 0] and C.body[c, 1] == C.body[p, 1] and \
                    C.normal[c, 0] * C.normal[p, 0] + C.normal[c, 1] * C.normal[p, 1] \
                    + C.normal[c, 2] * C.normal[p, 2] > SAME_PATCH_COS:
                C.first[c] = p
                C.pcount[p] += 1



@njit(cache=True, **NO_REFCOUNT)
def _patch_geometry(B, C, f, stage):
    """Centre arms, tangents and R of patch f into C.pgeo[f] / C.prad[f]; returns the rows
    counted (the collision stage counts only its colliding rows)."""
    a, b = C.body[f, 0], C.body[f, 1]
    g = C.pgeo[f]
    cx = cy = cz = 0.0
    count = 0
    for c in range(f, f + C.pcount[f]):
        if stage == STAGE_COLLISION and C.flag[c] == 0:
            continue
        count += 1
        cx += 0.5 * (B.pos[a, 0] + C.arm[c, 0, 0] + B.pos[b, 0] + C.arm[c, 1, 0])
        cy += 0.5 * (B.pos[a, 1] + C.arm[c, 0, 1] + B.pos[b, 1] + C.arm[c, 1, 1])
        cz += 0.5 * (B.pos[a, 2] + C.arm[c, 0, 2] + B.pos[b, 2] + C.arm[c, 1, 2])
    if count == 0:
        C.prad[f] = 0.0
        return 0
    cx, cy, cz = cx / count, cy / count, cz / count
    radius = 0.0
    for c in range(f, f + C.pcount[f]):
        if stage == STAGE_COLLISION and C.flag[c] == 0:
            continue
        dx = B.pos[a, 0] + C.arm[c, 0, 0] - cx
        dy = B.pos[a, 1] + C.arm[c, 0, 1] - cy
        dz = B.pos[a, 2] + C.arm[c, 0, 2] - cz
        radius += np.sqrt(dx * dx + dy * dy + dz * dz)
    C.prad[f] = radius / count
    g[0, 0], g[0, 1], g[0, 2] = cx - B.pos[a, 0], cy - B.pos[a, 1], cz - B.pos[a, 2]
    g[1, 0], g[1, 1], g[1, 2] = cx - B.pos[b, 0], cy - B.pos[b, 1], cz - B.pos[b, 2]
    t1x, t1y, t1z, t2x, t2y, t2z = tangents(C.normal[f, 0], C.normal[f, 1], C.normal[f, 2])
    g[2, 0], g[2, 1], g[2, 2] = t1x, t1y, t1z
    g[3, 0], g[3, 1], g[3, 2] = t2x, t2y, t2z
    return count


@njit(cache=True, **NO_REFCOUNT)
def prepare_rows(B, C, stage, shock):
    """knn of every row and geometry and K of every patch for this stage, at the current
    arms (contacts.prepare); the shock variant too where shock is True."""
    for c in range(C.body.shape[0]):
        C.knn[c, 0] = _row_knn(B, C, c, False)
        C.knn[c, 1] = _row_knn(B, C, c, True) if shock else C.knn[c, 0]
        C.split[c] = C.depth[c] > SPLIT_DEPTH and (C.free[C.body[c, 0]]
                                                   or C.free[C.body[c, 1]])
        if C.first[c] != c:
            continue
        C.prows[c] = _patch_geometry(B, C, c, stage)
        if C.prows[c] == 0:
            continue
        _patch_k(B, C, c, False, C.pk[c, 0])
        if shock:
            _patch_k(B, C, c, True, C.pk[c, 1])
        else:
            for i in range(3):
                for j in range(3):
                    C.pk[c, 1, i, j] = C.pk[c, 0, i, j]


@njit(cache=True, inline='always')
def gap_base(C, c):
    """The gap the loops start from: -depth, but for a row deeper than SPLIT_DEPTH with a
    body the depth projection can move (split) 0: the loops only keep it from growing, and
    depth_projection.py removes it after the step by moving the bodies, without friction
    (which in a jammed pile can lock the loops' push-out) and without leaving velocity
    behind (a push-out through the velocities throws the bodies apart). Shallow rows keep
    their depth in the loops: a resting stack's micrometres are removed with friction
    holding."""
    base = -C.depth[c]
    if C.split[c] and base < 0.0:
        return 0.0
    return base


@njit(cache=True, inline='always')
def relative_velocity(B, C, c, ra, rb):
    """u = u_A - u_B at arms ra, rb of contact c's bodies (now)."""
    a, b = C.body[c, 0], C.body[c, 1]
    ua = velocity_at(B.static, B.vel, B.omega, a, ra[0], ra[1], ra[2])
    ub = velocity_at(B.static, B.vel, B.omega, b, rb[0], rb[1], rb[2])
    return ua[0] - ub[0], ua[1] - ub[1], ua[2] - ub[2]


@njit(cache=True, **NO_REFCOUNT)
def snapshot(B, C, h, order, gravity, scratch_a, scratch_x):
    """Exact look-ahead of every row and patch (module docstring: g0, un0, pd0, pu0).
    Returns the largest position correction [m] a row still wants: its predicted
    penetration, or for a row that holds impulse but would open, the gap its impulse can
    take back (acc_n knn h)."""
    worst = 0.0
    for c in range(C.body.shape[0]):
        a, b = C.body[c, 0], C.body[c, 1]
        for side in range(2):
            ensure_look_ahead(C.body[c, side], B.static, B.pred_ok, B.pos, B.vel, B.omega,
                              B.inertia_w, B.inv_inertia_w, B.pred_pos, B.pred_series,
                              B.pred_rot, h, order, gravity, scratch_a, scratch_x)
        pa = predicted_point(B.static, B.pos, B.pred_pos, B.pred_rot, a, C.arm[c, 0, 0],
                             C.arm[c, 0, 1], C.arm[c, 0, 2])
        pb = predicted_point(B.static, B.pos, B.pred_pos, B.pred_rot, b, C.arm[c, 1, 0],
                             C.arm[c, 1, 1], C.arm[c, 1, 2])
        dx = pa[0] - C.ref[c, 0, 0] - pb[0] + C.ref[c, 1, 0]
        dy = pa[1] - C.ref[c, 0, 1] - pb[1] + C.ref[c, 1, 1]
        dz = pa[2] - C.ref[c, 0, 2] - pb[2] + C.ref[c, 1, 2]
        n = C.normal[c]
        g = gap_base(C, c) + n[0] * dx + n[1] * dy + n[2] * dz
        C.g0[c] = g
        ux, uy, uz = relative_velocity(B, C, c, C.arm[c, 0], C.arm[c, 1])
        C.un0[c] = n[0] * ux + n[1] * uy + n[2] * uz
        if g < 0.0:
            worst = max(worst, -g)
        elif C.acc_n[c] > 0.0:
            worst = max(worst, min(g, C.acc_n[c] * C.knn[c, 0] * h))
        f = C.first[c]
        if f == c:
            C.pd0[f, 0] = C.pd0[f, 1] = C.pd0[f, 2] = 0.0
        w = 1.0 / C.pcount[f]
        C.pd0[f, 0] += w * dx
        C.pd0[f, 1] += w * dy
        C.pd0[f, 2] += w * dz
        if f == c:
            g3 = C.pgeo[f]
            ux, uy, uz = relative_velocity(B, C, c, g3[0], g3[1])
            C.pu0[f, 0], C.pu0[f, 1], C.pu0[f, 2] = ux, uy, uz
    return worst
