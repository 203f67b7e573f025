"""Closed-form narrow phase for planes, spheres, capsules, boxes-on-planes and cylinders.

All routines: (S WorldShapes, P PolySet, a, b, flip, thr, out, c, sc) -> new count c,
reporting contacts with depth >= -thr (thr = margin + motion reach of both shapes).
Shape a is the routine's first shape; normals point from b to a (see manifold.py).
"""
import math

import numpy as np
from numba import njit

from .manifold import add_candidate, emit, emit_candidates
from .vec import (
    add,
    clamp,
    col,
    cross,
    dot,
    madd,
    neg,
    norm,
    normalize,
    rot,
    rot_t,
    scale,
    sub,
    to_world,
    v3,
)


@njit(cache=True, _nrt=False)
def _plane(S, b):
    """(unit normal, point) of plane shape b; its solid is n.(x - p) <= 0."""
    return col(S.rot[b], 1), v3(S.pos, b)


@njit(cache=True, _nrt=False)
def closest_segment_point(a0, a1, p):
    """Parameter t in [0,1] of the point of segment a0-a1 nearest to p."""
    d = sub(a1, a0)
    dd = dot(d, d)
    if dd < 1e-300:
        return 0.0
    return clamp(dot(sub(p, a0), d) / dd, 0.0, 1.0)


@njit(cache=True, _nrt=False)
def closest_segments(p1, q1, p2, q2):
    """Parameters (s, t) of the closest points p1+s(q1-p1), p2+t(q2-p2) of two segments
    (Ericson, Real-Time Collision Detection, 5.1.9)."""
    d1 = sub(q1, p1)
    d2 = sub(q2, p2)
    r = sub(p1, p2)
    a = dot(d1, d1)
    e = dot(d2, d2)
    f = dot(d2, r)
    eps = 1e-300
    if a <= eps and e <= eps:
        return 0.0, 0.0
    if a <= eps:
        return 0.0, clamp(f / e, 0.0, 1.0)
    cc = dot(d1, r)
    if e <= eps:
        return clamp(-cc / a, 0.0, 1.0), 0.0
    bb = dot(d1, d2)
    den = a * e - bb * bb
    s = clamp((bb * f - cc * e) / den, 0.0, 1.0) if den > 1e-14 * a * e else 0.0
    t = (bb * s + f) / e
    if t < 0.0:
        t = 0.0
        s = clamp(-cc / a, 0.0, 1.0)
    elif t > 1.0:
        t = 1.0
        s = clamp((bb - cc) / a, 0.0, 1.0)
    return s, t


@njit(cache=True, _nrt=False)
def sphere_plane(S, P, a, b, flip, thr, out, c, sc):
    """Sphere a on plane b: depth = r - n.(centre - p)."""
    n, p0 = _plane(S, b)
    ca = v3(S.pos, a)
    r = S.size[a, 0]
    dist = dot(n, sub(ca, p0))
    depth = r - dist
    if depth >= -thr:
        c = emit(out, c, a, b, flip, n, depth, madd(ca, n, -r), madd(ca, n, -dist), np.int64(0))
    return c


@njit(cache=True, _nrt=False)
def _sphere_sphere_core(ca, ra, cb, rb, a, b, flip, thr, out, c, feature):
    d = sub(ca, cb)
    L = norm(d)
    n = scale(d, 1.0 / L) if L > 1e-12 else (0.0, 1.0, 0.0)
    depth = ra + rb - L
    if depth >= -thr:
        c = emit(out, c, a, b, flip, n, depth, madd(ca, n, -ra), madd(cb, n, rb), feature)
    return c


@njit(cache=True, _nrt=False)
def sphere_sphere(S, P, a, b, flip, thr, out, c, sc):
    """Centres distance L: n = (ca - cb)/L, depth = ra + rb - L."""
    return _sphere_sphere_core(v3(S.pos, a), S.size[a, 0], v3(S.pos, b), S.size[b, 0],
                               a, b, flip, thr, out, c, np.int64(0))


@njit(cache=True, _nrt=False)
def sphere_capsule(S, P, a, b, flip, thr, out, c, sc):
    """Sphere a against the segment core of capsule b (a sphere at the nearest point)."""
    ca = v3(S.pos, a)
    pb = v3(S.pos, b)
    ax = scale(col(S.rot[b], 1), S.size[b, 1])
    b0 = sub(pb, ax)
    b1 = add(pb, ax)
    t = closest_segment_point(b0, b1, ca)
    q = madd(b0, sub(b1, b0), t)
    return _sphere_sphere_core(ca, S.size[a, 0], q, S.size[b, 0], a, b, flip, thr, out, c,
                               np.int64(0))


@njit(cache=True, _nrt=False)
def capsule_capsule(S, P, a, b, flip, thr, out, c, sc):
    """Two capsules: closest points of the core segments; when the segments are nearly
    parallel and their projections overlap, two points at the ends of the overlap."""
    pa = v3(S.pos, a)
    pb = v3(S.pos, b)
    ua = col(S.rot[a], 1)
    ub = col(S.rot[b], 1)
    ha = S.size[a, 1]
    hb = S.size[b, 1]
    ra = S.size[a, 0]
    rb = S.size[b, 0]
    a0 = madd(pa, ua, -ha)
    a1 = madd(pa, ua, ha)
    b0 = madd(pb, ub, -hb)
    b1 = madd(pb, ub, hb)
    if ha > 0.0 and hb > 0.0 and norm(cross(ua, ub)) < 0.05:
        # parallel: overlap of b's projection on a's axis, parameter along a in [-ha, ha]
        s0 = dot(sub(b0, pa), ua)
        s1 = dot(sub(b1, pa), ua)
        lo = max(-ha, min(s0, s1))
        hi = min(ha, max(s0, s1))
        if hi - lo > 1e-6 * (ha + hb):
            for k in range(2):
                s = lo if k == 0 else hi
                qa = madd(pa, ua, s)
                t = closest_segment_point(b0, b1, qa)
                qb = madd(b0, sub(b1, b0), t)
                c = _sphere_sphere_core(qa, ra, qb, rb, a, b, flip, thr, out, c, 1 + k)
            return c
    s, t = closest_segments(a0, a1, b0, b1)
    qa = madd(a0, sub(a1, a0), s)
    qb = madd(b0, sub(b1, b0), t)
    if norm(sub(qa, qb)) < 1e-12:
        n = normalize(cross(ua, ub))
        if dot(n, sub(pa, pb)) < 0.0:
            n = neg(n)
        qa = madd(qb, n, 1e-12)
    return _sphere_sphere_core(qa, ra, qb, rb, a, b, flip, thr, out, c, np.int64(0))


@njit(cache=True, _nrt=False)
def capsule_plane(S, P, a, b, flip, thr, out, c, sc):
    """Both segment end spheres against the plane (2 points when lying flat)."""
    n, p0 = _plane(S, b)
    pa = v3(S.pos, a)
    u = col(S.rot[a], 1)
    r = S.size[a, 0]
    hl = S.size[a, 1]
    for k in range(2):
        e = madd(pa, u, -hl if k == 0 else hl)
        dist = dot(n, sub(e, p0))
        depth = r - dist
        if depth >= -thr:
            c = emit(out, c, a, b, flip, n, depth, madd(e, n, -r), madd(e, n, -dist), k)
        if hl == 0.0:
            break
    return c


@njit(cache=True, _nrt=False)
def poly_plane(S, P, a, b, flip, thr, out, c, sc):
    """Box or hull a on plane b: every vertex with depth -n.(v - p) >= -thr, reduced to 4.
    Feature = vertex number."""
    n, p0 = _plane(S, b)
    q = S.poly[a]
    pa = v3(S.pos, a)
    Ra = S.rot[a]
    v0 = P.table[q, 0]
    m = np.int64(0)
    for i in range(P.table[q, 1]):
        w = to_world(pa, Ra, v3(P.vert, v0 + i))
        dist = dot(n, sub(w, p0))
        if -dist >= -thr:
            m = add_candidate(sc.cand, sc.cand_feat, m, w, madd(w, n, -dist), -dist, i)
    return emit_candidates(out, c, a, b, flip, n, sc.cand, sc.cand_feat, sc.sel, m)


@njit(cache=True, _nrt=False)
def cylinder_plane(S, P, a, b, flip, thr, out, c, sc):
    """Cylinder a on plane b: 4 rim points per cap, reduced to 4.

    Axis u, plane normal n; w = n - (n.u) u is the in-cap direction towards the plane.
    If |w| < 0.1 (caps within ~6 deg of parallel to the plane) the rim points of the cap
    that faces the plane sit at the shape's fixed local +-X, +-Z (stable ids for a standing
    cylinder; the far cap's rim, within the margin above a thin disc, took the place of
    three of the four points in the reduction, and a spinning disc tipped and chattered on
    the one left); otherwise only each cap's deepest rim point, in direction -w/|w| (2 points
    when lying flat: its side line).
    The other rim points of a tilted or lying cylinder are never nearer the plane; as
    speculative rows of a fast-rolling cylinder they took the place of a side-line point in
    the reduction to four, and it tipped over its one remaining point.
    """
    n, p0 = _plane(S, b)
    pa = v3(S.pos, a)
    Ra = S.rot[a]
    u = col(Ra, 1)
    r = S.size[a, 0]
    hh = S.size[a, 1]
    w = madd(n, u, -dot(n, u))
    lw = norm(w)
    if lw < 0.1:
        e1 = col(Ra, 0)
        e2 = col(Ra, 2)
        base = 0
    else:
        e1 = scale(w, -1.0 / lw)
        e2 = cross(u, e1)
        base = 8
    m = np.int64(0)
    near = 0 if dot(n, u) < 0.0 else 1         # the cap facing the plane (cap 0 at +u hh)
    for cap in range(2):
        if base == 0 and cap != near:
            continue
        cc = madd(pa, u, hh if cap == 0 else -hh)
        for k in range(4 if base == 0 else 1):
            if k == 0:
                d = e1
            elif k == 1:
                d = e2
            elif k == 2:
                d = neg(e1)
            else:
                d = neg(e2)
            x = madd(cc, d, r)
            dist = dot(n, sub(x, p0))
            if -dist >= -thr:
                m = add_candidate(sc.cand, sc.cand_feat, m, x, madd(x, n, -dist), -dist,
                                  base + cap * 4 + k)
    return emit_candidates(out, c, a, b, flip, n, sc.cand, sc.cand_feat, sc.sel, m)


@njit(cache=True, _nrt=False)
def sphere_box(S, P, a, b, flip, thr, out, c, sc):
    """Sphere a, box b: closest box point to the centre in box coordinates; a centre inside
    the box is pushed out through the nearest face."""
    ca = v3(S.pos, a)
    r = S.size[a, 0]
    pb = v3(S.pos, b)
    Rb = S.rot[b]
    he = v3(S.size, b)
    q = rot_t(Rb, sub(ca, pb))
    inside = abs(q[0]) <= he[0] and abs(q[1]) <= he[1] and abs(q[2]) <= he[2]
    if inside:
        ax = 0
        best = he[0] - abs(q[0])
        for i in range(1, 3):
            g = he[i] - abs(q[i])
            if g < best:
                best = g
                ax = i
        sgn = 1.0 if q[ax] >= 0.0 else -1.0
        nl = (sgn if ax == 0 else 0.0, sgn if ax == 1 else 0.0, sgn if ax == 2 else 0.0)
        n = rot(Rb, nl)
        surf = madd(ca, n, best)
        depth = r + best
        if depth >= -thr:
            c = emit(out, c, a, b, flip, n, depth, madd(ca, n, -r), surf, 1 + ax)
        return c
    cl = (clamp(q[0], -he[0], he[0]), clamp(q[1], -he[1], he[1]), clamp(q[2], -he[2], he[2]))
    d = rot(Rb, sub(q, cl))
    dist = norm(d)
    n = scale(d, 1.0 / dist)
    depth = r - dist
    if depth >= -thr:
        c = emit(out, c, a, b, flip, n, depth, madd(ca, n, -r), to_world(pb, Rb, cl), np.int64(0))
    return c


@njit(cache=True, _nrt=False)
def sphere_cylinder(S, P, a, b, flip, thr, out, c, sc):
    """Sphere a, cylinder b (exact): clamp the centre radially to r and axially to +-hh;
    a centre inside leaves through the side or the nearer cap, whichever is closer."""
    ca = v3(S.pos, a)
    rs = S.size[a, 0]
    pb = v3(S.pos, b)
    Rb = S.rot[b]
    r = S.size[b, 0]
    hh = S.size[b, 1]
    q = rot_t(Rb, sub(ca, pb))
    rho = math.sqrt(q[0] * q[0] + q[2] * q[2])
    if rho <= r and abs(q[1]) <= hh:
        side = r - rho
        capg = hh - abs(q[1])
        if side < capg:
            if rho > 1e-12:
                nl = (q[0] / rho, 0.0, q[2] / rho)
            else:
                nl = (1.0, 0.0, 0.0)
            surf = (nl[0] * r, q[1], nl[2] * r)
            pen = side
            f = 1
        else:
            sg = 1.0 if q[1] >= 0.0 else -1.0
            nl = (0.0, sg, 0.0)
            surf = (q[0], sg * hh, q[2])
            pen = capg
            f = 2
        n = rot(Rb, nl)
        depth = rs + pen
        if depth >= -thr:
            c = emit(out, c, a, b, flip, n, depth, madd(ca, n, -rs), to_world(pb, Rb, surf), f)
        return c
    if rho > r:
        cl = (q[0] * r / rho, clamp(q[1], -hh, hh), q[2] * r / rho)
    else:
        cl = (q[0], clamp(q[1], -hh, hh), q[2])
    d = rot(Rb, sub(q, cl))
    dist = norm(d)
    n = scale(d, 1.0 / dist)
    depth = rs - dist
    if depth >= -thr:
        c = emit(out, c, a, b, flip, n, depth, madd(ca, n, -rs), to_world(pb, Rb, cl), np.int64(0))
    return c
