"""Contacts with convex polytopes (boxes, hulls, cylinder prisms) by GJK and SAT.

capsule_poly: a sphere or capsule (a point or segment core of radius r) against a
polytope. Separated cores: GJK gives the distance d and normal; depth = r - d. When the
normal is within ~6 deg of a face normal the segment is clipped to that face's side planes
(two points for a capsule lying on a face). Overlapping cores: SAT over the face normals
and (for a segment) the directions seg x edge; the least penetrating axis wins.

poly_poly: SAT over both face sets and the edge pairs that form a face of the Minkowski
difference (Gauss-map test of Gregorius, GDC 2013); a face axis is preferred unless an
edge separates more by EDGE_TOL * size. Face contact: the other polytope's most
anti-parallel face is clipped against the reference face's side planes, points within
-thr are kept and reduced to 4. Edge contact: the closest points of the two edges.
"""
import numpy as np
from numba import njit

from .gjk import gjk_segment_polytope
from .manifold import add_candidate, clip_polygon, emit, emit_candidates, feature_id
from .narrow_basic import closest_segments
from .shapes import CAPSULE
from .vec import col, cross, dot, madd, neg, norm, rot, rot_t, scale, sub, to_world, v3

FACE_TOL = 1e-3
EDGE_TOL = 5e-3


@njit(cache=True, _nrt=False)
def _clip_segment_to_face(P, f, p0, p1):
    """Parameters [t0, t1] of segment p0-p1 inside the side planes of face f (local)."""
    t0 = 0.0
    t1 = 1.0
    n = v3(P.face, f)
    i0 = P.face_idx[f, 0]
    cnt = P.face_idx[f, 1]
    d = sub(p1, p0)
    return_ok = True
    for k in range(cnt):
        va = v3(P.vert, P.findex[i0 + k])
        vb = v3(P.vert, P.findex[i0 + (k + 1) % cnt])
        s = cross(sub(vb, va), n)
        d0 = dot(s, sub(p0, va))
        dd = dot(s, d)
        if abs(dd) < 1e-300:
            if d0 > 0.0:
                return_ok = False
            continue
        t = -d0 / dd
        if dd > 0.0:
            t1 = min(t1, t)
        else:
            t0 = max(t0, t)
    return t0, t1, return_ok and t0 <= t1


@njit(cache=True, _nrt=False)
def capsule_poly(S, P, a, b, flip, thr, out, c, sc):
    """Sphere or capsule a against polytope shape b (box, cylinder prism or hull)."""
    pb = v3(S.pos, b)
    Rb = S.rot[b]
    q = S.poly[b]
    vs = P.table[q, 0]
    nv = P.table[q, 1]
    fs = P.table[q, 2]
    r = S.size[a, 0]
    hl = S.size[a, 1] if S.kind[a] == CAPSULE else 0.0
    ca = rot_t(Rb, sub(v3(S.pos, a), pb))
    u = rot_t(Rb, col(S.rot[a], 1))
    p0 = madd(ca, u, -hl)
    p1 = madd(ca, u, hl)
    na = 2 if hl > 0.0 else 1
    dist, qa, qb, overlap = gjk_segment_polytope(p0, p1, na, P.vert, vs, nv, sc.simplex,
                                                 sc.lam)
    if not overlap and dist > 1e-9:
        depth = r - dist
        if depth < -thr:
            return c
        n = scale(sub(qa, qb), 1.0 / dist)
        if na == 2:
            fb = -1
            best = 0.995
            for f in range(fs, fs + P.table[q, 3]):
                dd = dot(v3(P.face, f), n)
                if dd > best:
                    best = dd
                    fb = f
            if fb >= 0:
                cc = _face_points(P, fb, fb - fs, p0, p1, r, pb, Rb, a, b, flip, thr, out, c)
                if cc > c:
                    return cc
        nw = rot(Rb, n)
        return emit(out, c, a, b, flip, nw, depth, to_world(pb, Rb, madd(qa, n, -r)),
                    to_world(pb, Rb, qb), feature_id(5, 0, 0, 0, 0))
    # cores overlap: SAT
    best_f = -1e300
    fb = fs
    for f in range(fs, fs + P.table[q, 3]):
        n = v3(P.face, f)
        s = min(dot(n, p0), dot(n, p1)) - P.face[f, 3]
        if s > best_f:
            best_f = s
            fb = f
    best_e = -1e300
    eb = -1
    ln_best = (0.0, 1.0, 0.0)
    if na == 2:
        cen = v3(P.centroid, q)
        d = sub(p1, p0)
        es = P.table[q, 4]
        for e in range(es, es + P.table[q, 5]):
            va = v3(P.vert, vs + P.edge[e, 0])
            vb = v3(P.vert, vs + P.edge[e, 1])
            L = cross(d, sub(vb, va))
            ln = norm(L)
            if ln < 0.005 * norm(d) * norm(sub(vb, va)):
                continue
            L = scale(L, 1.0 / ln)
            if dot(L, sub(va, cen)) < 0.0:
                L = neg(L)
            smax = -1e300
            for i in range(vs, vs + nv):
                smax = max(smax, dot(L, v3(P.vert, i)))
            s = min(dot(L, p0), dot(L, p1)) - smax
            if s > best_e:
                best_e = s
                eb = e
                ln_best = L
    size = max(norm(sub(p1, p0)), 1e-3)
    if eb >= 0 and best_e > best_f + EDGE_TOL * size:
        va = v3(P.vert, vs + P.edge[eb, 0])
        vb = v3(P.vert, vs + P.edge[eb, 1])
        s, t = closest_segments(p0, p1, va, vb)
        xa = madd(p0, sub(p1, p0), s)       # n is normal to the segment: n.xa = min n.p
        n = ln_best
        depth = r - best_e
        if depth >= -thr:
            c = emit(out, c, a, b, flip, rot(Rb, n), depth,
                     to_world(pb, Rb, madd(xa, n, -r)), to_world(pb, Rb, madd(xa, n, -best_e)),
                     feature_id(6, 0, eb - P.table[q, 4], 0, 0))
        return c
    cc = _face_points(P, fb, fb - fs, p0, p1, r, pb, Rb, a, b, flip, thr, out, c)
    if cc > c or na == 1:
        if na == 1 and cc == c:
            n = v3(P.face, fb)
            g = dot(n, p0) - P.face[fb, 3]
            depth = r - g
            if depth >= -thr:
                cc = emit(out, c, a, b, flip, rot(Rb, n), depth,
                          to_world(pb, Rb, madd(p0, n, -r)),
                          to_world(pb, Rb, madd(p0, n, -g)), feature_id(4, 0, fb - fs, 0, 0))
        return cc
    # segment outside the face prism: deepest end point on the face plane
    n = v3(P.face, fb)
    x = p0 if dot(n, p0) <= dot(n, p1) else p1
    g = dot(n, x) - P.face[fb, 3]
    depth = r - g
    if depth >= -thr:
        c = emit(out, c, a, b, flip, rot(Rb, n), depth, to_world(pb, Rb, madd(x, n, -r)),
                 to_world(pb, Rb, madd(x, n, -g)), feature_id(4, 0, fb - fs, 0, 2))
    return c


@njit(cache=True, _nrt=False)
def _face_points(P, f, flocal, p0, p1, r, pb, Rb, a, b, flip, thr, out, c):
    """Clip segment p0-p1 (local to b) to face f; emit its ends within -thr of depth."""
    t0, t1, ok = _clip_segment_to_face(P, f, p0, p1)
    if not ok:
        return c
    n = v3(P.face, f)
    nw = rot(Rb, n)
    d = sub(p1, p0)
    for k in range(2):
        if k == 1 and t1 - t0 < 1e-9:
            break
        x = madd(p0, d, t0 if k == 0 else t1)
        g = dot(n, x) - P.face[f, 3]
        depth = r - g
        if depth >= -thr:
            c = emit(out, c, a, b, flip, nw, depth, to_world(pb, Rb, madd(x, n, -r)),
                     to_world(pb, Rb, madd(x, n, -g)), feature_id(4, 0, flocal, 0, k))
    return c


@njit(cache=True, _nrt=False)
def _world_poly(P, q, pos, R, V, N):
    """World vertices V[:nv], face planes N[:nf] = (normal, offset) and the centroid of
    polytope q at (pos, R); returns (nv, nf, centroid)."""
    vs = P.table[q, 0]
    nv = P.table[q, 1]
    fs = P.table[q, 2]
    nf = P.table[q, 3]
    for i in range(nv):
        w = to_world(pos, R, v3(P.vert, vs + i))
        V[i, 0] = w[0]
        V[i, 1] = w[1]
        V[i, 2] = w[2]
    for f in range(nf):
        n = rot(R, v3(P.face, fs + f))
        N[f, 0] = n[0]
        N[f, 1] = n[1]
        N[f, 2] = n[2]
        N[f, 3] = P.face[fs + f, 3] + dot(n, pos)
    return nv, nf, to_world(pos, R, v3(P.centroid, q))


@njit(cache=True, _nrt=False)
def _face_query(NA, nfa, VB, nvb):
    """Largest over faces f of A of min_j n_f . VB_j - offset_f, and that face."""
    best = -1e300
    fb = 0
    for f in range(nfa):
        n = v3(NA, f)
        smin = 1e300
        for j in range(nvb):
            s = dot(n, v3(VB, j))
            if s < smin:
                smin = s
        s = smin - NA[f, 3]
        if s > best:
            best = s
            fb = f
    return best, fb


@njit(cache=True, _nrt=False)
def poly_poly(S, P, a, b, flip, thr, out, c, sc):
    """Polytope shape a against polytope shape b (SAT + face clipping)."""
    qa = S.poly[a]
    qb = S.poly[b]
    VA = sc.wvert[0]
    VB = sc.wvert[1]
    NA = sc.wface[0]
    NB = sc.wface[1]
    nva, nfa, CA = _world_poly(P, qa, v3(S.pos, a), S.rot[a], VA, NA)
    nvb, nfb, CB = _world_poly(P, qb, v3(S.pos, b), S.rot[b], VB, NB)
    sa, fa = _face_query(NA, nfa, VB, nvb)
    if sa > thr:
        return c
    sb, fb = _face_query(NB, nfb, VA, nva)
    if sb > thr:
        return c
    # edge pairs forming a Minkowski face
    best_e = -1e300
    ea_best = -1
    eb_best = -1
    L_best = (0.0, 1.0, 0.0)
    esa = P.table[qa, 4]
    esb = P.table[qb, 4]
    for ea in range(esa, esa + P.table[qa, 5]):
        n1 = v3(NA, P.edge[ea, 2])
        n2 = v3(NA, P.edge[ea, 3])
        pa0 = v3(VA, P.edge[ea, 0])
        da = sub(v3(VA, P.edge[ea, 1]), pa0)
        bxa = cross(n2, n1)
        for eb in range(esb, esb + P.table[qb, 5]):
            m1 = v3(NB, P.edge[eb, 2])
            m2 = v3(NB, P.edge[eb, 3])
            dxc = cross(m2, m1)
            cba = -dot(m1, bxa)
            dba = -dot(m2, bxa)
            adc = dot(n1, dxc)
            bdc = dot(n2, dxc)
            if not (cba * dba < 0.0 and adc * bdc < 0.0 and cba * bdc > 0.0):
                continue
            pb0 = v3(VB, P.edge[eb, 0])
            db = sub(v3(VB, P.edge[eb, 1]), pb0)
            L = cross(da, db)
            ln = norm(L)
            if ln < 0.005 * norm(da) * norm(db):
                continue
            L = scale(L, 1.0 / ln)
            if dot(L, sub(pa0, CA)) < 0.0:
                L = neg(L)
            s = dot(L, sub(pb0, pa0))
            if s > thr:
                return c
            if s > best_e:
                best_e = s
                ea_best = ea
                eb_best = eb
                L_best = L
    size = max(1e-3, min(_extent(VA, nva), _extent(VB, nvb)))
    best_f = max(sa, sb)
    if ea_best >= 0 and best_e > best_f + EDGE_TOL * size:
        pa0 = v3(VA, P.edge[ea_best, 0])
        pa1 = v3(VA, P.edge[ea_best, 1])
        pb0 = v3(VB, P.edge[eb_best, 0])
        pb1 = v3(VB, P.edge[eb_best, 1])
        s, t = closest_segments(pa0, pa1, pb0, pb1)
        xa = madd(pa0, sub(pa1, pa0), s)
        xb = madd(pb0, sub(pb1, pb0), t)
        depth = dot(L_best, sub(xa, xb))
        if depth >= -thr:
            c = emit(out, c, a, b, flip, neg(L_best), depth, xa, xb,
                     feature_id(3, 0, ea_best - esa, eb_best - esb, 0))
        return c
    if sb > sa + FACE_TOL * size:
        return _poly_face_contact(P, qb, fb, VB, NB, qa, VA, NA, nfa, np.int64(1), a, b,
                                  flip, thr, out, c, sc)
    return _poly_face_contact(P, qa, fa, VA, NA, qb, VB, NB, nfb, np.int64(0), a, b, flip,
                              thr, out, c, sc)


@njit(cache=True, _nrt=False)
def _extent(V, nv):
    """Half the smallest axis-aligned extent of the vertex cloud V[:nv] (a size scale)."""
    e = 1e300
    for r in range(3):
        lo = 1e300
        hi = -1e300
        for i in range(nv):
            lo = min(lo, V[i, r])
            hi = max(hi, V[i, r])
        e = min(e, 0.5 * (hi - lo))
    return e


@njit(cache=True, _nrt=False)
def _poly_face_contact(P, qr, fr, VR, NR, qi, VI, NI, nfi, ref_side, a, b, flip, thr,
                       out, c, sc):
    """Clip the incident face of polytope qi against reference face fr of qr (world)."""
    nR = v3(NR, fr)
    fi = 0
    best = 1e300
    for f in range(nfi):
        d = dot(v3(NI, f), nR)
        if d < best:
            best = d
            fi = f
    fsi = P.table[qi, 2] + fi
    i0 = P.face_idx[fsi, 0]
    cnt = P.face_idx[fsi, 1]
    cap = sc.clip.shape[1]
    m = min(cnt, cap)
    for k in range(m):
        vi = P.findex[i0 + k]
        for r in range(3):
            sc.clip[0, k, r] = VI[vi, r]
        sc.clip_tag[0, k, 0] = k
        sc.clip_tag[0, k, 1] = k
    fsr = P.table[qr, 2] + fr
    j0 = P.face_idx[fsr, 0]
    cr = P.face_idx[fsr, 1]
    src = np.int64(0)
    for k in range(cr):
        va = v3(VR, P.findex[j0 + k])
        vb = v3(VR, P.findex[j0 + (k + 1) % cr])
        sn = cross(sub(vb, va), nR)
        ln = norm(sn)
        if ln < 1e-300:
            continue
        sn = scale(sn, 1.0 / ln)
        off = dot(sn, va)
        m = clip_polygon(sc.clip, sc.clip_tag, src, m, sn, off, k)
        src = 1 - src
        if m == 0:
            return c
    X = sc.clip
    T = sc.clip_tag
    n_out = neg(nR) if ref_side == 0 else nR
    oR = NR[fr, 3]
    cnt_out = np.int64(0)
    for k in range(m):
        w = (X[src, k, 0], X[src, k, 1], X[src, k, 2])
        depth = oR - dot(nR, w)
        if depth >= -thr:
            wr = madd(w, nR, depth)
            f = feature_id(2, ref_side, fr, fi, T[src, k, 0])
            if ref_side == 0:
                cnt_out = add_candidate(sc.cand, sc.cand_feat, cnt_out, wr, w, depth, f)
            else:
                cnt_out = add_candidate(sc.cand, sc.cand_feat, cnt_out, w, wr, depth, f)
    return emit_candidates(out, c, a, b, flip, n_out, sc.cand, sc.cand_feat, sc.sel,
                           cnt_out)
