"""Box-box contact: separating axis test (15 axes) and reference-face clipping.

In A's frame, with Rm = Ra^T Rb (B's axes as columns) and t = Ra^T (pb - pa), the
separation along a unit axis L is |t.L| - sum_k ha_k |L.e_k| - sum_k hb_k |L.Rm e_k|.
Axes: A's 3 faces, B's 3 faces, the 9 edge directions e_i x Rm e_j (skipped when
parallel). A face wins over an edge unless the edge separates more by EDGE_TOL * size, so
resting stacks keep stable face manifolds. Face contact: the other box's face most
anti-parallel to the reference normal is clipped against the 4 side planes of the
reference face (in the reference box's frame), points deeper than -thr are kept and
reduced to 4. Edge contact: one point, the closest points of the two edges, and while the
boxes are apart the best face's manifold beside it (speculative rows for a tumbling pair that
turns face on face within the step).
"""
import numpy as np
from numba import njit

from .manifold import add_candidate, clip_polygon, emit, emit_candidates, feature_id
from .narrow_basic import closest_segments
from .vec import add, col, cross, dot, madd, neg, norm, rot, rot_t, scale, sub, tget, v3

FACE_TOL = 1e-3   # relative: B's face must beat A's by this * smallest half extent
EDGE_TOL = 5e-3   # relative: an edge axis must beat the best face by this much


@njit(cache=True, _nrt=False)
def box_box(S, P, a, b, flip, thr, out, c, sc):
    """Pair-table entry point; see box_box_arrays."""
    return box_box_arrays(S.pos, S.rot, S.size, a, b, flip, thr, out, c, sc.clip,
                          sc.clip_tag, sc.cand, sc.cand_feat, sc.sel)


@njit(cache=True, _nrt=False)
def box_box_arrays(pos, rot_, size, a, b, flip, thr, out, c, clip, tag, cand, cand_feat,
                   sel):
    """Box a against box b given only the arrays it reads (the hot path of resting piles
    calls this directly: every array in a tuple argument costs time on each call)."""
    pa = v3(pos, a)
    pb = v3(pos, b)
    Ra = rot_[a]
    Rb = rot_[b]
    ha = v3(size, a)
    hb = v3(size, b)
    t = rot_t(Ra, sub(pb, pa))
    # Rm[i][j] = Ra_i . Rb_j as three column tuples
    m0 = rot_t(Ra, col(Rb, 0))
    m1 = rot_t(Ra, col(Rb, 1))
    m2 = rot_t(Ra, col(Rb, 2))
    e = 1e-12
    A0 = (abs(m0[0]) + e, abs(m0[1]) + e, abs(m0[2]) + e)
    A1 = (abs(m1[0]) + e, abs(m1[1]) + e, abs(m1[2]) + e)
    A2 = (abs(m2[0]) + e, abs(m2[1]) + e, abs(m2[2]) + e)
    # faces of A
    best_a = -1e300
    ia = np.int64(0)
    for i in range(3):
        s = abs(t[i]) - (ha[i] + hb[0] * A0[i] + hb[1] * A1[i] + hb[2] * A2[i])
        if s > thr:
            return c
        if s > best_a:
            best_a = s
            ia = i
    # faces of B
    best_b = -1e300
    ib = np.int64(0)
    for j in range(3):
        mj = m0 if j == 0 else (m1 if j == 1 else m2)
        Aj = A0 if j == 0 else (A1 if j == 1 else A2)
        s = abs(dot(t, mj)) - (hb[j] + ha[0] * Aj[0] + ha[1] * Aj[1] + ha[2] * Aj[2])
        if s > thr:
            return c
        if s > best_b:
            best_b = s
            ib = j
    # edges
    best_e = -1e300
    ei = np.int64(-1)
    ej = np.int64(-1)
    for i in range(3):
        ex = (1.0 if i == 0 else 0.0, 1.0 if i == 1 else 0.0, 1.0 if i == 2 else 0.0)
        for j in range(3):
            mj = m0 if j == 0 else (m1 if j == 1 else m2)
            L = cross(ex, mj)
            ln = norm(L)
            if ln < 1e-6:
                continue
            ra = ha[0] * abs(L[0]) + ha[1] * abs(L[1]) + ha[2] * abs(L[2])
            rb = (hb[0] * abs(dot(L, m0)) + hb[1] * abs(dot(L, m1))
                  + hb[2] * abs(dot(L, m2)))
            s = (abs(dot(t, L)) - ra - rb) / ln
            if s > thr:
                return c
            if s > best_e:
                best_e = s
                ei = i
                ej = j
    size = min(min(ha[0], min(ha[1], ha[2])), min(hb[0], min(hb[1], hb[2])))
    best_f = max(best_a, best_b)
    if ei >= 0 and best_e > best_f + EDGE_TOL * size:
        c = _edge_contact(pa, Ra, ha, pb, Rb, hb, t, ei, ej, m0, m1, m2, a, b, flip, thr,
                          out, c)
        if best_e <= 0.0:
            return c
        # still apart: the best face's manifold beside the edge point, for a tumbling pair
        # that meets face on face within the step with corners the edge point does not
        # cover (each point's depth is its distance below the reference face, <= 0 while
        # the edge axis separates them: speculative rows, acting only if those corners close)
    if best_b > best_a + FACE_TOL * size:
        tj = dot(t, m0 if ib == 0 else (m1 if ib == 1 else m2))
        s = -1.0 if tj > 0.0 else 1.0     # B's face normal towards A
        return _face_contact(pb, Rb, hb, ib, s, pa, Ra, ha, np.int64(1), a, b, flip, thr, out, c,
                             clip, tag, cand, cand_feat, sel)
    s = 1.0 if t[ia] >= 0.0 else -1.0     # A's face normal towards B
    return _face_contact(pa, Ra, ha, ia, s, pb, Rb, hb, np.int64(0), a, b, flip, thr, out, c,
                         clip, tag, cand, cand_feat, sel)


@njit(cache=True, _nrt=False)
def _face_contact(pR, RR, hR, i, s, pI, RI, hI, ref_side, a, b, flip, thr, out, c, clip,
                  tag, cand, cand_feat, sel):
    """Clip the incident box's face against reference face (axis i, sign s) of box R."""
    nR = scale(col(RR, i), s)                 # world, outward from R towards I
    dI = rot_t(RI, nR)
    j = 0
    if abs(tget(dI, 1)) > abs(tget(dI, j)):
        j = 1
    if abs(tget(dI, 2)) > abs(tget(dI, j)):
        j = 2
    si = -1.0 if tget(dI, j) > 0.0 else 1.0         # incident face faces R
    u = (j + 1) % 3
    v = (j + 2) % 3
    tl = rot_t(RR, sub(pI, pR))
    cu = rot_t(RR, col(RI, u))
    cv = rot_t(RR, col(RI, v))
    cj = rot_t(RR, col(RI, j))
    fc = madd(tl, cj, si * tget(hI, j))
    for k in range(4):
        su = 1.0 if (k == 0 or k == 3) else -1.0
        sv = 1.0 if k < 2 else -1.0
        x = madd(madd(fc, cu, su * tget(hI, u)), cv, sv * tget(hI, v))
        clip[0, k, 0] = x[0]
        clip[0, k, 1] = x[1]
        clip[0, k, 2] = x[2]
        tag[0, k, 0] = k
        tag[0, k, 1] = k
    m = np.int64(4)
    a1 = (i + 1) % 3
    a2 = (i + 2) % 3
    for p in range(4):
        ax = a1 if p < 2 else a2
        sg = 1.0 if (p & 1) == 0 else -1.0
        nrm = (sg if ax == 0 else 0.0, sg if ax == 1 else 0.0, sg if ax == 2 else 0.0)
        m = clip_polygon(clip, tag, p & 1, m, nrm, tget(hR, ax), p)
        if m == 0:
            return c
    # after 4 clips the result is back in clip_a
    n_out = neg(nR) if ref_side == 0 else nR   # from B to A
    ref_face = i * 2 + (1 if s > 0.0 else 0)
    inc_face = j * 2 + (1 if si > 0.0 else 0)
    cnt = np.int64(0)
    for k in range(m):
        x = (clip[0, k, 0], clip[0, k, 1], clip[0, k, 2])
        depth = tget(hR, i) - s * tget(x, i)
        if depth >= -thr:
            w = add(pR, rot(RR, x))
            wr = madd(w, nR, depth)
            f = feature_id(0, ref_side, ref_face, inc_face, tag[0, k, 0])
            if ref_side == 0:
                cnt = add_candidate(cand, cand_feat, cnt, wr, w, depth, f)
            else:
                cnt = add_candidate(cand, cand_feat, cnt, w, wr, depth, f)
    return emit_candidates(out, c, a, b, flip, n_out, cand, cand_feat, sel, cnt)


@njit(cache=True, _nrt=False)
def _edge_contact(pa, Ra, ha, pb, Rb, hb, t, i, j, m0, m1, m2, a, b, flip, thr, out, c):
    """One point at the closest points of A's edge along axis i and B's along axis j."""
    ex = (1.0 if i == 0 else 0.0, 1.0 if i == 1 else 0.0, 1.0 if i == 2 else 0.0)
    mj = m0 if j == 0 else (m1 if j == 1 else m2)
    L = cross(ex, mj)
    if dot(t, L) < 0.0:
        L = neg(L)
    L = scale(L, 1.0 / norm(L))               # A frame, from A towards B
    ca = (0.0, 0.0, 0.0)
    bits_a = 0
    for k in range(3):
        if k != i:
            sg = 1.0 if L[k] >= 0.0 else -1.0
            ca = madd(ca, (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0,
                           1.0 if k == 2 else 0.0), sg * ha[k])
            bits_a = bits_a * 2 + (1 if sg > 0.0 else 0)
    nw = rot(Ra, L)                            # world, from A towards B
    LB = rot_t(Rb, nw)
    cb = (0.0, 0.0, 0.0)
    bits_b = 0
    for k in range(3):
        if k != j:
            sg = -1.0 if LB[k] >= 0.0 else 1.0
            cb = madd(cb, (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0,
                           1.0 if k == 2 else 0.0), sg * hb[k])
            bits_b = bits_b * 2 + (1 if sg > 0.0 else 0)
    wa = add(pa, rot(Ra, ca))
    wb = add(pb, rot(Rb, cb))
    da = scale(col(Ra, i), ha[i])
    db = scale(col(Rb, j), hb[j])
    s, u = closest_segments(sub(wa, da), add(wa, da), sub(wb, db), add(wb, db))
    qa = madd(sub(wa, da), da, 2.0 * s)
    qb = madd(sub(wb, db), db, 2.0 * u)
    depth = dot(nw, sub(qa, qb))
    if depth >= -thr:
        f = feature_id(1, 0, i * 3 + j, bits_a * 4 + bits_b, 0)
        c = emit(out, c, a, b, flip, neg(nw), depth, qa, qb, f)
    return c
