"""What every visit of a contact needs and what stays fixed while a stage runs, computed
once per stage (contacts/solve.py visits the rows, contacts/friction.py the patches).

Row c (one contact point, arms r_A, r_B, normal n from B to A): its normal response
    k_normal = n^T K n,   K = K_A(r_A) + K_B(r_B),   K_i(r) = E/m_i - [r]x A_i [r]x,
    i.e. k_normal = sum over the moving sides of 1/m + (r x n) . A (r x n),
in two variants: [0] both bodies as they are (the loops), [1] as the shock pass sees it, the
body of the lower layer infinitely heavy (contacts.shock_pass; needs contacts.layers first).

Patch f (rows f .. f + count - 1, first[c] = f; contacts/friction.py): centre x = mean of the
rows' points (the collision stage: of its colliding rows only), arms x - s_A, x - s_B,
tangents t1, t2 of n, R = mean distance of the points from x, and the patch's 3x3 K for the
slide along t1, t2 at x and the twist about n (both variants).

Linearised look-ahead (position stage). The predicted gap of row c,
    g' = -depth + n . ((a' - a_0) - (b' - b_0)),   a' = s_A(t+h) + M_rot,A r_A,
(-depth replaced by 0 for rows deeper than SPLIT_DEPTH: gap_base),
moves with the bodies' velocities as dg' = h n . du (exact for the centres, s(t+h) = s + v h
+ g h^2/2; to first order in the rotation's change for the arms). snapshot() takes the
exact look-ahead of every row (g0, and the relative normal velocity un0 at that moment),
and of every patch the mean displacement over the step (patch_disp0) and the relative
velocity at its centre (patch_vel0); between snapshots a visit reads
    g' = g0 + h (u_n - un0),   d = patch_disp0 + h (u_x - patch_vel0),
with no Taylor series per visit. patch_disp0 also holds the rows' mean anchor drift, and
pturn the patch's turn from it (friction anchors, contacts/system.py), so a sticking patch's
friction in the position stage takes back what it crept in earlier steps. The loops take a new
snapshot every few cycles and before they stop, so they end on the exact look-ahead
(solvers/iterative.py, rounds.py); the shock pass after them works on the last snapshot,
and depth_projection.py removes what depth the step still leaves.
"""
import numpy as np
from numba import njit

from ..impulses import ensure_look_ahead, predicted_point, velocity_at
from ..jitopts import NO_REFCOUNT
from ..state import S_GX

STAGE_POSITION, STAGE_VELOCITY, STAGE_COLLISION = 0, 1, 2
SNAP_EVERY = 4             # cycles between snapshots of the look-ahead in the position loops
SPLIT_DEPTH = 1e-3         # [m] deeper rows leave their depth to depth_projection.py
SAME_PATCH_COS = 0.99      # rows with normals closer than this belong to one patch
TOUCH_GAP = 1e-4           # [m] rows closer than this touch (contacts.collide takes them at t)
TINY = 1e-12
MEAN_OVER_RMS = (np.sqrt(2.0) + np.arcsinh(1.0)) / 3.0 / np.sqrt(2.0 / 3.0)   # a square's
SLIDE_SPEED = 1e-3         # [m/s] a patch sliding faster when a stage begins has the dynamic
                           # friction cone in that stage, else the static one
# Contacts.collision: NOT_COLLIDING, or collision_code(round, by_poisson) for a row that
# collides this step in that collision round (contacts.collide): 2 round + 1 where its
# target is Newton's (or 0: a slow row), 2 round + 2 for a fast row under Poisson's law (its
# restitution impulse e I_n follows the compression sweeps)
NOT_COLLIDING = 0


@njit(cache=True, inline='always')
def collision_code(rnd, by_poisson):
    return 2 * rnd + (2 if by_poisson else 1)


@njit(cache=True, inline='always')
def colliding(C, c):
    return C.collision[c] != NOT_COLLIDING


@njit(cache=True, inline='always')
def collision_round(C, c):
    """The collision round row c collides in this step; -1 if it does not."""
    return (C.collision[c] - 1) // 2 if C.collision[c] != NOT_COLLIDING else -1


@njit(cache=True, inline='always')
def by_poisson(C, c):
    """Does row c collide under Poisson's law (fast, with restitution_law = poisson)?"""
    return C.collision[c] != NOT_COLLIDING and C.collision[c] % 2 == 0


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
def row_knn(B, C, c, shock):
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
    g = C.patch_frame[f]
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



@njit(cache=True, inline='always')
def _counts(B, C, c, stage, h, gx, gy, gz):
    """Does row c act in this stage (so its point belongs to the patch's friction)? The
    collision stage: its colliding rows; the position stage: rows whose gap can close
    within the step (g(t) = -depth + u_n t + a_n t^2/2 comes within TOUCH_GAP on [0, h];
    speculative rows further off would otherwise pull the patch's centre and its twist
    radius towards points that never touch); the velocity correction: rows that took
    impulse in the position stage."""
    if stage == STAGE_COLLISION:
        return colliding(C, c)
    if stage == STAGE_VELOCITY:
        return C.acc_n[c] > 0.0
    gap = -C.depth[c]
    if gap <= TOUCH_GAP:
        return True
    n = C.normal[c]
    ux, uy, uz = relative_velocity(B, C, c, C.arm[c, 0], C.arm[c, 1])
    un = n[0] * ux + n[1] * uy + n[2] * uz
    an = 0.0
    for side in range(2):
        if not B.static[C.body[c, side]]:
            an += (1.0 if side == 0 else -1.0) * (n[0] * gx + n[1] * gy + n[2] * gz)
    low = min(gap + un * h + 0.5 * an * h * h, gap)
    if an > 0.0 and 0.0 < -un / an < h:      # the gap's lowest point inside the step
        low = min(low, gap - 0.5 * un * un / an)
    return low <= TOUCH_GAP


@njit(cache=True, inline='always')
def _twist_radius(k, cap, face, spread):
    """R of the twist cone |tau| <= mu N R from the k points that act (spread = sum of
    their squared distances from their mean): the face's mean distance from the centre under
    a uniform pressure (the torque of friction on a spinning face is mu N R). A cylinder's
    cap lying on the other body (cap >= 3 rim points in the patch, whichever of them take
    impulse in this stage; radius face) is its disc: R = 2 r / 3. Three or more
    points span a polygon whose polar moment per area is J/A = spread / 12 (exact for
    triangles and parallelograms: a box face, or the overlap of two boxes' faces), and
    R = MEAN_OVER_RMS sqrt(J/A) (the square's ratio, 0.937; the disc's is 0.943); two
    points L apart are a line, R = L/4 (spread = L^2/2); one point has none."""
    if cap >= 3:
        return 2.0 / 3.0 * face
    if k >= 3:
        return MEAN_OVER_RMS * np.sqrt(max(spread, 0.0) / 12.0)
    if k == 2:
        return 0.25 * np.sqrt(2.0 * max(spread, 0.0))
    return 0.0


@njit(cache=True, **NO_REFCOUNT)
def _patch_geometry(B, C, f, stage, h, gx, gy, gz):
    """Centre arms, tangents and R of patch f into C.patch_frame[f] / C.prad[f] from the rows
    that act in this stage (_counts), in one pass; returns how many."""
    a, b = C.body[f, 0], C.body[f, 1]
    g = C.patch_frame[f]
    cx = cy = cz = 0.0          # sum of the rows' midpoints
    ax = ay = az = 0.0          # sum of A's arms, and of their squares
    sq = 0.0
    count = 0
    cap = 0
    face = 0.0
    for c in range(f, f + C.pcount[f]):
        if C.face[c] > 0.0:            # a cap's rim points: counted or not, its disc
            cap += 1
            face = max(face, C.face[c])
        if not _counts(B, C, c, stage, h, gx, gy, gz):
            continue
        count += 1
        rx, ry, rz = C.arm[c, 0, 0], C.arm[c, 0, 1], C.arm[c, 0, 2]
        ax += rx
        ay += ry
        az += rz
        sq += rx * rx + ry * ry + rz * rz
        cx += 0.5 * (B.pos[a, 0] + rx + B.pos[b, 0] + C.arm[c, 1, 0])
        cy += 0.5 * (B.pos[a, 1] + ry + B.pos[b, 1] + C.arm[c, 1, 1])
        cz += 0.5 * (B.pos[a, 2] + rz + B.pos[b, 2] + C.arm[c, 1, 2])
    if count == 0:
        C.prad[f] = 0.0
        return 0
    cx, cy, cz = cx / count, cy / count, cz / count
    spread = sq - (ax * ax + ay * ay + az * az) / count
    C.prad[f] = _twist_radius(count, cap, face, spread)
    g[0, 0], g[0, 1], g[0, 2] = cx - B.pos[a, 0], cy - B.pos[a, 1], cz - B.pos[a, 2]
    g[1, 0], g[1, 1], g[1, 2] = cx - B.pos[b, 0], cy - B.pos[b, 1], cz - B.pos[b, 2]
    t1x, t1y, t1z, t2x, t2y, t2z = tangents(C.normal[f, 0], C.normal[f, 1], C.normal[f, 2])
    g[2, 0], g[2, 1], g[2, 2] = t1x, t1y, t1z
    g[3, 0], g[3, 1], g[3, 2] = t2x, t2y, t2z
    return count


@njit(cache=True, inline='always')
def _slip_speed(B, C, f):
    """Patch f's relative sliding speed now: the tangential relative velocity at its centre,
    and its relative spin about n times R."""
    g = C.patch_frame[f]
    n = C.normal[f]
    ux, uy, uz = relative_velocity(B, C, f, g[0], g[1])
    un = n[0] * ux + n[1] * uy + n[2] * uz
    tx, ty, tz = ux - un * n[0], uy - un * n[1], uz - un * n[2]
    a, b = C.body[f, 0], C.body[f, 1]
    spin = 0.0
    for i in range(3):
        spin += n[i] * ((0.0 if B.static[a] else B.omega[a, i])
                        - (0.0 if B.static[b] else B.omega[b, i]))
    return max(np.sqrt(tx * tx + ty * ty + tz * tz), abs(spin) * C.prad[f])


@njit(cache=True, **NO_REFCOUNT)
def prepare_rows(B, C, stage, shock, h, settings, rnd=-1):
    """k_normal of every row and geometry and K of every patch for this stage (step h), at the
    current arms (contacts.prepare); the shock variant too where shock is True. The
    collision stage prepares only the patches that hold a colliding row (the others get
    prows 0); its later rounds (contacts.collide, rnd >= 0) only those that hold a row of
    round rnd, leaving the others as they are."""
    gx, gy, gz = settings[S_GX], settings[S_GX + 1], settings[S_GX + 2]
    nc = C.body.shape[0]
    f = 0
    while f < nc:
        end = f + C.pcount[f]
        if stage == STAGE_COLLISION and not _any_colliding(C, f, end, rnd):
            if rnd < 0:
                C.prows[f] = 0
            f = end
            continue
        for c in range(f, end):
            C.k_normal[c, 0] = row_knn(B, C, c, False)
            C.k_normal[c, 1] = row_knn(B, C, c, True) if shock else C.k_normal[c, 0]
            C.split[c] = C.depth[c] > SPLIT_DEPTH and (C.free[C.body[c, 0]]
                                                       or C.free[C.body[c, 1]])
        C.prows[f] = _patch_geometry(B, C, f, stage, h, gx, gy, gz)
        if C.prows[f] > 0:
            if stage != STAGE_VELOCITY:    # the correction at t + h keeps the step's state
                C.slide[f] = _slip_speed(B, C, f) > SLIDE_SPEED
            _patch_k(B, C, f, False, C.pk[f, 0])
            if shock:
                _patch_k(B, C, f, True, C.pk[f, 1])
            else:
                for i in range(3):
                    for j in range(3):
                        C.pk[f, 1, i, j] = C.pk[f, 0, i, j]
        f = end


@njit(cache=True, inline='always')
def _any_colliding(C, f, end, rnd):
    """Does patch f (rows f .. end - 1) hold a colliding row (of round rnd, if rnd >= 0;
    contacts.collide's Contacts.collision)?"""
    for c in range(f, end):
        if colliding(C, c) and (rnd < 0 or collision_round(C, c) == rnd):
            return True
    return False


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


@njit(cache=True, inline='always')
def _surface_point(B, C, c, side, h):
    """Row c's contact point on its body `side` (0: A, 1: B) at t + h, for the look-ahead
    (the cache must be fresh). A point of a face, edge or corner is fixed in the body. On a
    curved surface (C.radius rho > 0) the contact point is not: it stays where the surface
    faces the other body while the body turns. Its centre of curvature k = r + s rho n
    (s = +1 for A, -1 for B; the sphere's centre, the capsule's segment point, the
    cylinder's axis point) moves with the body; the point stays at -s rho n from it, and
    turning adds the material points' mean sweep past it, h w x (-s rho n), so a ball
    rolling without slip predicts no slip and no lift-off, however far it turns."""
    b = C.body[c, side]
    rho = C.radius[c, side]
    r = C.arm[c, side]
    if rho == 0.0:
        return predicted_point(B.static, B.pos, B.pred_pos, B.pred_rot, b, r[0], r[1], r[2])
    s = 1.0 if side == 0 else -1.0
    n = C.normal[c]
    ox, oy, oz = -s * rho * n[0], -s * rho * n[1], -s * rho * n[2]   # surface point - k
    kx, ky, kz = predicted_point(B.static, B.pos, B.pred_pos, B.pred_rot, b, r[0] - ox,
                                 r[1] - oy, r[2] - oz)
    w = B.omega[b]
    return (kx + ox + h * (w[1] * oz - w[2] * oy),
            ky + oy + h * (w[2] * ox - w[0] * oz),
            kz + oz + h * (w[0] * oy - w[1] * ox))


@njit(cache=True, **NO_REFCOUNT)
def snapshot(B, C, h, order, gravity, scratch_a, scratch_x):
    """Exact look-ahead of every row and patch (module docstring: g0, un0, patch_disp0, patch_vel0).
    Returns the largest position correction [m] a row still wants: its predicted
    penetration, or for a row that holds impulse but would open, the gap its impulse can
    take back (acc_n k_normal h)."""
    worst = 0.0
    for c in range(C.body.shape[0]):
        for side in range(2):
            ensure_look_ahead(C.body[c, side], B.static, B.pred_ok, B.pos, B.vel, B.omega,
                              B.inertia_w, B.inv_inertia_w, B.pred_pos, B.pred_series,
                              B.pred_rot, h, order, gravity, scratch_a, scratch_x)
        pa = _surface_point(B, C, c, 0, h)
        pb = _surface_point(B, C, c, 1, h)
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
            worst = max(worst, min(g, C.acc_n[c] * C.k_normal[c, 0] * h))
        f = C.first[c]
        if f == c:
            C.patch_disp0[f, 0] = C.patch_disp0[f, 1] = C.patch_disp0[f, 2] = 0.0
        w = 1.0 / C.pcount[f]          # (+ the row's anchor drift: friction anchors)
        C.patch_disp0[f, 0] += w * (dx + C.drift[c, 0])
        C.patch_disp0[f, 1] += w * (dy + C.drift[c, 1])
        C.patch_disp0[f, 2] += w * (dz + C.drift[c, 2])
        if f == c:
            g3 = C.patch_frame[f]
            ux, uy, uz = relative_velocity(B, C, c, g3[0], g3[1])
            C.patch_vel0[f, 0], C.patch_vel0[f, 1], C.patch_vel0[f, 2] = ux, uy, uz
            C.pturn[f] = _patch_turn(C, f)
    return worst


@njit(cache=True, inline='always')
def _patch_turn(C, f):
    """The turn of A relative to B about n that patch f's rows' anchor drifts e add up to
    (friction anchors, contacts/system.py): a turn phi moves a point at arm r from the
    patch centre by phi n x r, so phi = sum n.(r x e) / sum |r_t|^2 (r_t: r in the plane)."""
    n = C.normal[f]
    g = C.patch_frame[f]
    num = 0.0
    den = 0.0
    for c in range(f, f + C.pcount[f]):
        rx, ry, rz = C.arm[c, 0, 0] - g[0, 0], C.arm[c, 0, 1] - g[0, 1], C.arm[c, 0, 2] - g[0, 2]
        rn = rx * n[0] + ry * n[1] + rz * n[2]
        rx, ry, rz = rx - rn * n[0], ry - rn * n[1], rz - rn * n[2]
        ex, ey, ez = C.drift[c, 0], C.drift[c, 1], C.drift[c, 2]
        num += n[0] * (ry * ez - rz * ey) + n[1] * (rz * ex - rx * ez) + n[2] * (rx * ey - ry * ex)
        den += rx * rx + ry * ry + rz * rz
    return num / den if den > TINY else 0.0
