"""GJK distance between a point or segment (A) and a convex polytope's vertices (B).

Minkowski difference D = A - B; GJK keeps a simplex W of support points w = sA(-v) - sB(v)
and replaces v by the point of conv(W) nearest the origin (Voronoi-region tests of
Ericson, Real-Time Collision Detection 5.1.5/5.1.6) until v.v - v.w <= 1e-12 v.v. The
barycentric weights of the final simplex give the witness points on A and B. Returns
(distance, witness on A, witness on B, overlap flag); overlap means the origin lies in D
(distance 0), for which the caller uses a separating-axis test instead.
"""
import math

from numba import njit

from .vec import dot, sub, v3


@njit(cache=True, _nrt=False)
def _support_b(vert, v0, nv, d):
    best = -1e300
    ib = v0
    for i in range(v0, v0 + nv):
        s = vert[i, 0] * d[0] + vert[i, 1] * d[1] + vert[i, 2] * d[2]
        if s > best:
            best = s
            ib = i
    return ib


@njit(cache=True, _nrt=False)
def _closest_triangle(a, b, c):
    """Barycentric weights of the point of triangle abc nearest the origin."""
    ab = sub(b, a)
    ac = sub(c, a)
    d1 = -dot(ab, a)
    d2 = -dot(ac, a)
    if d1 <= 0.0 and d2 <= 0.0:
        return 1.0, 0.0, 0.0
    d3 = -dot(ab, b)
    d4 = -dot(ac, b)
    if d3 >= 0.0 and d4 <= d3:
        return 0.0, 1.0, 0.0
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return 1.0 - v, v, 0.0
    d5 = -dot(ab, c)
    d6 = -dot(ac, c)
    if d6 >= 0.0 and d5 <= d6:
        return 0.0, 0.0, 1.0
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return 1.0 - w, 0.0, w
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return 0.0, 1.0 - w, w
    den = va + vb + vc
    if den <= 0.0:
        return 1.0, 0.0, 0.0
    v = vb / den
    w = vc / den
    return 1.0 - v - w, v, w


@njit(cache=True, _nrt=False)
def _solve_simplex(W, m, lam):
    """Weights lam[:m] of the point of conv(W[:m]) nearest the origin.
    Returns False when the origin is inside a (non-flat) tetrahedron."""
    if m == 1:
        lam[0] = 1.0
        return True
    if m == 2:
        a = v3(W, 0)
        b = v3(W, 1)
        ab = sub(b, a)
        dd = dot(ab, ab)
        t = 0.0 if dd < 1e-300 else min(1.0, max(0.0, -dot(a, ab) / dd))
        lam[0] = 1.0 - t
        lam[1] = t
        return True
    if m == 3:
        l0, l1, l2 = _closest_triangle(v3(W, 0), v3(W, 1), v3(W, 2))
        lam[0] = l0
        lam[1] = l1
        lam[2] = l2
        return True
    P = (v3(W, 0), v3(W, 1), v3(W, 2), v3(W, 3))
    best = 1e300
    inside = True
    for f in range(4):
        i0 = (f + 1) % 4
        i1 = (f + 2) % 4
        i2 = (f + 3) % 4
        a = P[i0]
        b = P[i1]
        c = P[i2]
        nrm = (
            (b[1] - a[1]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[1] - a[1]),
            (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2]),
            (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))
        so = -dot(nrm, a)                  # origin side
        sd = dot(nrm, sub(P[f], a))        # opposite vertex side
        if abs(sd) < 1e-14 * (dot(nrm, nrm) + 1e-300):
            inside = False                  # flat tetrahedron: never "inside"
        if so * sd >= 0.0 and abs(sd) > 0.0:
            continue                       # origin on the inner side of this face
        inside = False
        l0, l1, l2 = _closest_triangle(a, b, c)
        q = (l0 * a[0] + l1 * b[0] + l2 * c[0], l0 * a[1] + l1 * b[1] + l2 * c[1],
             l0 * a[2] + l1 * b[2] + l2 * c[2])
        d = dot(q, q)
        if d < best:
            best = d
            lam[f] = 0.0
            lam[i0] = l0
            lam[i1] = l1
            lam[i2] = l2
    if inside:
        return False
    if best == 1e300:
        lam[0] = 1.0
        lam[1] = 0.0
        lam[2] = 0.0
        lam[3] = 0.0
    return True


@njit(cache=True, _nrt=False)
def gjk_segment_polytope(p0, p1, na, vert, v0, nv, simplex, lam):
    """GJK between the segment p0-p1 (a point when na == 1) and conv(vert[v0:v0+nv]);
    simplex (3,4,3) and lam (4,) are work space.

    Returns (dist, point on segment, point on polytope, overlap)."""
    W = simplex[0]
    SA = simplex[1]
    SB = simplex[2]
    for i in range(4):
        lam[i] = 0.0
    v = sub(p0, v3(vert, v0))
    m = 0
    for _ in range(64):
        nd = (-v[0], -v[1], -v[2])
        if na == 2 and dot(p1, nd) > dot(p0, nd):
            sa = p1
        else:
            sa = p0
        sb = v3(vert, _support_b(vert, v0, nv, v))
        w = sub(sa, sb)
        vv = dot(v, v)
        if m > 0 and vv - dot(v, w) <= 1e-12 * vv:
            break
        dup = False
        for i in range(m):
            d = sub(v3(W, i), w)
            if dot(d, d) < 1e-24:
                dup = True
        if dup:
            break
        for r in range(3):
            W[m, r] = w[r]
            SA[m, r] = sa[r]
            SB[m, r] = sb[r]
        m += 1
        if not _solve_simplex(W, m, lam):
            return 0.0, p0, p0, True
        k = 0
        for i in range(m):
            if lam[i] > 0.0:
                for r in range(3):
                    W[k, r] = W[i, r]
                    SA[k, r] = SA[i, r]
                    SB[k, r] = SB[i, r]
                lam[k] = lam[i]
                k += 1
        m = k
        v = (0.0, 0.0, 0.0)
        for i in range(m):
            v = (v[0] + lam[i] * W[i, 0], v[1] + lam[i] * W[i, 1], v[2] + lam[i] * W[i, 2])
        if dot(v, v) < 1e-24:
            return 0.0, p0, p0, True
    qa = (0.0, 0.0, 0.0)
    qb = (0.0, 0.0, 0.0)
    for i in range(m):
        qa = (qa[0] + lam[i] * SA[i, 0], qa[1] + lam[i] * SA[i, 1], qa[2] + lam[i] * SA[i, 2])
        qb = (qb[0] + lam[i] * SB[i, 0], qb[1] + lam[i] * SB[i, 1], qb[2] + lam[i] * SB[i, 2])
    d = sub(qa, qb)
    return math.sqrt(dot(d, d)), qa, qb, False
