"""Coulomb friction per contact patch: one tangential impulse and one twist at the patch's
centre instead of one friction impulse per contact point.

A patch is the run of contact rows between the same two bodies with (nearly) the same
normal n, e.g. the up-to-4 points of a box face. Per-point friction on such a patch is a
rank-deficient system: the 8 tangential rows of 4 corners act on only 3 relative degrees of
freedom (2 slides, 1 twist), and Gauss-Seidel keeps trading impulse between the corners
without settling (a resting 10-box stack needed ~20 000 contact visits per step). The patch
form has exactly those 3 rows:

  centre x = mean of the points, arms r_A = x - s_A, r_B = x - s_B, tangents t1, t2 of n;
  lambda = (p1, p2, tau): linear impulse p1 t1 + p2 t2 at x (+ on A, - on B) and angular
  impulse tau n (+ on A, - on B);
  constraint (sticking): relative velocity at x along t1, t2 and relative spin about n are 0:
      u = (t1.(u_A - u_B), t2.(u_A - u_B), n.(w_A - w_B)),  u_i = v_i + w_i x r_i;
  K (3x3, symmetric): column of a unit linear impulse t: per body, w = A (r x t),
      du = t/m + w x r -> rows (t1.du, t2.du, n.w); column of a unit angular impulse n:
      w = A n, du = w x r -> rows (t1.du, t2.du, n.w); summed over both bodies;
  sticking impulse: lambda = -K^-1 u.
Cone (Schmitt sec. 11 per patch): |tau| <= mu_s N R and |p| <= mu_s N, N the patch's
accumulated normal impulse, R the mean distance of its points from x (so a patch can give the
twist its points could give one by one; where the twist is cut to its cone, p is solved
again for that twist). Beyond it the patch slides: the accumulated impulse is scaled back
onto the dynamic cone (|p| = mu_d N, |tau| <= mu_d N R) in the direction of the sticking
impulse, so friction opposes the slide and never reverses it. Schmitt's rule sets
p = -mu_d N u_t/|u_t| from the current sliding direction instead; in a Gauss-Seidel loop
that throws the full impulse from side to side with the sign of a residual u_t of
micrometres per second: the bonded wall of wall_car (252 stones) shook itself down within
2 s that way, and stands with the projection.
On a joint tree (C.keff > 0, solvers/contact_tree.py) K is the tree's (C.kpatch).
"""
import numpy as np
from numba import njit

from .impulses import (angular_impulse_to, dynamic, impulse_to,
                       predicted_point, velocity_at)
from .jitopts import NO_REFCOUNT

TINY = 1e-12
SAME_PATCH_COS = 0.99      # rows with normals closer than this belong to one patch

STAGE_POSITION, STAGE_VELOCITY, STAGE_COLLISION = 0, 1, 2


@njit(cache=True, **NO_REFCOUNT)
def find_patches(C):
    """C.first[c]: the first row of c's patch (consecutive rows, same bodies, same normal)."""
    for c in range(C.body.shape[0]):
        C.first[c] = c
        if c > 0:
            p = C.first[c - 1]
            if C.body[c, 0] == C.body[p, 0] and C.body[c, 1] == C.body[p, 1] and \
                    C.normal[c, 0] * C.normal[p, 0] + C.normal[c, 1] * C.normal[p, 1] \
                    + C.normal[c, 2] * C.normal[p, 2] > SAME_PATCH_COS:
                C.first[c] = p


@njit(cache=True, inline='always')
def is_patch_end(C, i, step):
    """Is order position i the last row of its patch when the rows are visited in the order
    i, i + step, ...?"""
    j = i + step
    return j < 0 or j >= C.order.shape[0] or C.first[C.order[j]] != C.first[C.order[i]]


@njit(cache=True, inline='always')
def patch_range(C, i):
    """Order positions lo..hi (inclusive) of the patch of order position i."""
    f = C.first[C.order[i]]
    lo = i
    while lo > 0 and C.first[C.order[lo - 1]] == f:
        lo -= 1
    hi = i
    while hi + 1 < C.order.shape[0] and C.first[C.order[hi + 1]] == f:
        hi += 1
    return lo, hi


@njit(cache=True, **NO_REFCOUNT)
def patch_geometry(B, C, lo, hi, stage, centre):
    """centre[0] = patch centre x, centre[2] = r_A, centre[1] = r_B; stage position: also the
    mean point displacement over the step into centre[1] first (returned as d) -- the
    look-ahead of both bodies must be fresh. Rows with flag 0 are skipped in the collision
    stage. Returns (rows, N, R, d)."""
    f = C.first[C.order[lo]]
    a, b = C.body[f, 0], C.body[f, 1]
    for r in range(3):
        for j in range(3):
            centre[r, j] = 0.0
    normal_total = 0.0
    count = 0
    for j in range(lo, hi + 1):
        c = C.order[j]
        if stage == STAGE_COLLISION and C.flag[c] == 0:
            continue
        count += 1
        normal_total += C.acc_v[c] if stage == STAGE_VELOCITY else C.acc_n[c]
        for s in range(3):
            centre[0, s] += 0.5 * (B.pos[a, s] + C.arm[c, 0, s] + B.pos[b, s] + C.arm[c, 1, s])
        if stage == STAGE_POSITION:
            pa = predicted_point(B.static, B.pos, B.pred_pos, B.pred_rot, a, C.arm[c, 0, 0],
                                 C.arm[c, 0, 1], C.arm[c, 0, 2])
            pb = predicted_point(B.static, B.pos, B.pred_pos, B.pred_rot, b, C.arm[c, 1, 0],
                                 C.arm[c, 1, 1], C.arm[c, 1, 2])
            for s in range(3):
                centre[1, s] += pa[s] - C.ref[c, 0, s] - pb[s] + C.ref[c, 1, s]
    if count == 0:
        return 0, 0.0, 0.0, (0.0, 0.0, 0.0)
    for s in range(3):
        centre[0, s] /= count
        centre[1, s] /= count
    d = (centre[1, 0], centre[1, 1], centre[1, 2])
    radius = 0.0
    for j in range(lo, hi + 1):
        c = C.order[j]
        if stage == STAGE_COLLISION and C.flag[c] == 0:
            continue
        dx = B.pos[a, 0] + C.arm[c, 0, 0] - centre[0, 0]
        dy = B.pos[a, 1] + C.arm[c, 0, 1] - centre[0, 1]
        dz = B.pos[a, 2] + C.arm[c, 0, 2] - centre[0, 2]
        radius += np.sqrt(dx * dx + dy * dy + dz * dz) / count
    for s in range(3):
        centre[2, s] = centre[0, s] - B.pos[a, s]
        centre[1, s] = centre[0, s] - B.pos[b, s]
    return count, normal_total, radius, d


@njit(cache=True, **NO_REFCOUNT)
def apply_patch_impulse(B, heavy, C, f, centre, px, py, pz, tau):
    """Linear impulse p at the patch centre and angular impulse tau n: + on A, - on B."""
    n = C.normal[f]
    for side in range(2):
        body = C.body[f, side]
        if heavy[body]:
            continue
        sgn = 1.0 if side == 0 else -1.0
        r = centre[2] if side == 0 else centre[1]
        impulse_to(B.static, B.inv_mass, B.vel, B.omega, B.inv_inertia_w, B.pred_ok, body,
                   r[0], r[1], r[2], sgn * px, sgn * py, sgn * pz)
        angular_impulse_to(B.static, B.omega, B.inv_inertia_w, B.pred_ok, body,
                           sgn * tau * n[0], sgn * tau * n[1], sgn * tau * n[2])


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
def _add_response(B, heavy, b, rx, ry, rz, tx, ty, tz, nx, ny, nz, k, col, angular):
    """k[0:3, col] += the response (t1.du, t2.du, n.dw) of body b to a unit linear impulse
    along t at arm r (angular False) or a unit angular impulse about t (angular True);
    t1, t2 are read from k[3], k[4] (see _patch_matrix)."""
    if heavy[b] or not dynamic(B.static, b):
        return
    A = B.inv_inertia_w
    im = 0.0 if angular else B.inv_mass[b]
    if angular:
        lx, ly, lz = tx, ty, tz
    else:
        lx, ly, lz = ry * tz - rz * ty, rz * tx - rx * tz, rx * ty - ry * tx
    wx = A[b, 0, 0] * lx + A[b, 0, 1] * ly + A[b, 0, 2] * lz
    wy = A[b, 1, 0] * lx + A[b, 1, 1] * ly + A[b, 1, 2] * lz
    wz = A[b, 2, 0] * lx + A[b, 2, 1] * ly + A[b, 2, 2] * lz
    dx = im * tx + wy * rz - wz * ry
    dy = im * ty + wz * rx - wx * rz
    dz = im * tz + wx * ry - wy * rx
    k[0, col] += k[3, 0] * dx + k[3, 1] * dy + k[3, 2] * dz
    k[1, col] += k[4, 0] * dx + k[4, 1] * dy + k[4, 2] * dz
    k[2, col] += nx * wx + ny * wy + nz * wz


@njit(cache=True, inline='always')
def _tangent_rows(n, k):
    """k[3], k[4] = t1, t2 of n; returns them."""
    t1x, t1y, t1z, t2x, t2y, t2z = tangents(n[0], n[1], n[2])
    k[3, 0], k[3, 1], k[3, 2] = t1x, t1y, t1z
    k[4, 0], k[4, 1], k[4, 2] = t2x, t2y, t2z
    return t1x, t1y, t1z, t2x, t2y, t2z


@njit(cache=True, **NO_REFCOUNT)
def _patch_matrix(B, heavy, a, b, ra, rb, n, k):
    """k[0:3, 0:3] = the patch's K (module docstring); k[3], k[4] = t1, t2 (k is (5, 3))."""
    nx, ny, nz = n[0], n[1], n[2]
    t1x, t1y, t1z, t2x, t2y, t2z = _tangent_rows(n, k)
    for i in range(3):
        for j in range(3):
            k[i, j] = 0.0
    for side in range(2):
        body = a if side == 0 else b
        r = ra if side == 0 else rb
        _add_response(B, heavy, body, r[0], r[1], r[2], t1x, t1y, t1z, nx, ny, nz, k, 0, False)
        _add_response(B, heavy, body, r[0], r[1], r[2], t2x, t2y, t2z, nx, ny, nz, k, 1, False)
        _add_response(B, heavy, body, r[0], r[1], r[2], nx, ny, nz, nx, ny, nz, k, 2, True)


@njit(cache=True, inline='always')
def _solve3(k, u0, u1, u2):
    """x = -K^-1 u (Cramer); (0, 0, 0, False) if K is singular."""
    a, b, c = k[0, 0], k[0, 1], k[0, 2]
    d, e, f = k[1, 0], k[1, 1], k[1, 2]
    g, h, i = k[2, 0], k[2, 1], k[2, 2]
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    if not abs(det) > TINY * TINY * TINY:
        return 0.0, 0.0, 0.0, False
    x0 = (u0 * (e * i - f * h) - b * (u1 * i - f * u2) + c * (u1 * h - e * u2)) / det
    x1 = (a * (u1 * i - f * u2) - u0 * (d * i - f * g) + c * (d * u2 - u1 * g)) / det
    x2 = (a * (e * u2 - u1 * h) - b * (d * u2 - u1 * g) + u0 * (d * h - e * g)) / det
    return -x0, -x1, -x2, True


@njit(cache=True, inline='always')
def _stick_with_twist(k, u1, u2, d3, s1, s2):
    """The linear sticking impulse when the twist change is fixed at d3 (its cone took
    over): K[0:2, 0:2] s = -(u + K[0:2, 2] d3); (s1, s2) unchanged if that block is singular.
    Through a joint tree the slide and the twist are strongly coupled, and the 3x3 answer's
    linear part would count on a twist the patch cannot give."""
    r1 = -(u1 + k[0, 2] * d3)
    r2 = -(u2 + k[1, 2] * d3)
    det = k[0, 0] * k[1, 1] - k[0, 1] * k[1, 0]
    if not abs(det) > TINY * TINY:
        return s1, s2
    return (r1 * k[1, 1] - k[0, 1] * r2) / det, (k[0, 0] * r2 - k[1, 0] * r1) / det


@njit(cache=True, **NO_REFCOUNT)
def patch_friction(B, heavy, C, i, stage, h, k, centre):
    """Friction of the patch of order position i. stage: STAGE_POSITION (mean relative
    velocity over the step from the look-ahead, budget acc_n, store acc_t/acc_w[:,0]),
    STAGE_VELOCITY (velocity at t+h, budget acc_v, store acc_tv/acc_w[:,1]) or
    STAGE_COLLISION (velocity now, budget acc_n of the colliding rows, acc_t/acc_w[:,0]).
    Stage position: both bodies' look-ahead must be fresh (the caller refreshes it).
    The accumulated patch impulse lives in the patch's first row. k: (5, 3) scratch,
    centre: (3, 3) scratch. Returns the largest velocity change caused [m/s]."""
    f = C.first[C.order[i]]
    a, b = C.body[f, 0], C.body[f, 1]
    n = C.normal[f]
    acc_t = C.acc_tv if stage == STAGE_VELOCITY else C.acc_t
    col = 1 if stage == STAGE_VELOCITY else 0
    lo, hi = patch_range(C, i)
    count, normal_total, radius, d = patch_geometry(B, C, lo, hi, stage, centre)
    if count == 0 or (normal_total <= 0.0 and acc_t[f, 0] == 0.0 and acc_t[f, 1] == 0.0
                      and acc_t[f, 2] == 0.0 and C.acc_w[f, col] == 0.0):
        return 0.0
    # relative velocity at the centre: linear (stage position: mean over the step) and spin
    if stage == STAGE_POSITION:
        ux, uy, uz = d[0] / h, d[1] / h, d[2] / h
    else:
        va = velocity_at(B.static, B.vel, B.omega, a, centre[2, 0], centre[2, 1], centre[2, 2])
        vb = velocity_at(B.static, B.vel, B.omega, b, centre[1, 0], centre[1, 1], centre[1, 2])
        ux, uy, uz = va[0] - vb[0], va[1] - vb[1], va[2] - vb[2]
    spin = 0.0
    for side in range(2):
        body = C.body[f, side]
        if dynamic(B.static, body):
            sgn = 1.0 if side == 0 else -1.0
            spin += sgn * (n[0] * B.omega[body, 0] + n[1] * B.omega[body, 1]
                           + n[2] * B.omega[body, 2])
    through_tree = C.keff[f] > 0.0      # solvers/contact_tree.py
    if through_tree:
        _tangent_rows(n, k)
        for r in range(3):
            for q in range(3):
                k[r, q] = C.kpatch[f, r, q]
    else:
        _patch_matrix(B, heavy, a, b, centre[2], centre[1], n, k)
    u1 = k[3, 0] * ux + k[3, 1] * uy + k[3, 2] * uz
    u2 = k[4, 0] * ux + k[4, 1] * uy + k[4, 2] * uz
    s1, s2, s3, ok = _solve3(k, u1, u2, spin)
    if not ok:
        return 0.0
    o1 = k[3, 0] * acc_t[f, 0] + k[3, 1] * acc_t[f, 1] + k[3, 2] * acc_t[f, 2]
    o2 = k[4, 0] * acc_t[f, 0] + k[4, 1] * acc_t[f, 1] + k[4, 2] * acc_t[f, 2]
    o3 = C.acc_w[f, col]
    c1, c2, c3 = o1 + s1, o2 + s2, o3 + s3
    # Coulomb cone, twist and linear each (module docstring): beyond the static cone the
    # accumulated impulse is scaled back onto the dynamic one
    if abs(c3) > C.coef[f, 1] * normal_total * radius:
        lim = C.coef[f, 2] * normal_total * radius
        c3 = min(max(c3, -lim), lim)
        s1, s2 = _stick_with_twist(k, u1, u2, c3 - o3, s1, s2)
        c1, c2 = o1 + s1, o2 + s2
    mag = np.sqrt(c1 * c1 + c2 * c2)
    if mag > C.coef[f, 1] * normal_total:
        g = C.coef[f, 2] * normal_total / mag
        c1, c2 = c1 * g, c2 * g
    d1, d2, d3 = c1 - o1, c2 - o2, c3 - o3
    if d1 == 0.0 and d2 == 0.0 and d3 == 0.0:
        return 0.0
    acc_t[f, 0] = c1 * k[3, 0] + c2 * k[4, 0]
    acc_t[f, 1] = c1 * k[3, 1] + c2 * k[4, 1]
    acc_t[f, 2] = c1 * k[3, 2] + c2 * k[4, 2]
    C.acc_w[f, col] = c3
    apply_patch_impulse(B, heavy, C, f, centre, d1 * k[3, 0] + d2 * k[4, 0],
                        d1 * k[3, 1] + d2 * k[4, 1], d1 * k[3, 2] + d2 * k[4, 2], d3)
    # velocity change caused: K d (linear part, and the spin times R as a point speed)
    e1 = k[0, 0] * d1 + k[0, 1] * d2 + k[0, 2] * d3
    e2 = k[1, 0] * d1 + k[1, 1] * d2 + k[1, 2] * d3
    e3 = (k[2, 0] * d1 + k[2, 1] * d2 + k[2, 2] * d3) * radius
    return max(np.sqrt(e1 * e1 + e2 * e2), abs(e3))
