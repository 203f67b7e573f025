"""Contact output buffers, the capacity-checked writer and the 4-point manifold reduction.

Every narrow-phase routine reports contacts for an ordered shape pair (A, B) as
(normal n from B to A, depth, witness point pa on A's surface, pb on B's surface, feature),
all in world, with depth = n . (pb - pa): positive when the shapes overlap.
Routines compute in their own natural order and pass ``flip=True`` when the caller's A is
their second shape; flipping swaps the points and negates n, which leaves depth unchanged.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .vec import cross, dot, sub

# Output rows, packed in two arrays to keep compiled signatures small:
#   ints  (c,5) int64:   shape_a, shape_b, feature, body_a, body_b
#   reals (c,19) float64: normal 0:3 (from B to A), depth 3, pa 4:7, pb 7:10 (world witness
#                         points), local_a 10:13, local_b 13:16 (body frames), world 16:19
# The narrow phase writes shapes, normal, depth, pa, pb, feature; the pipeline the rest.
ContactBuffers = namedtuple("ContactBuffers", ["ints", "reals"])
I_SA, I_SB, I_FEAT, I_BA, I_BB = 0, 1, 2, 3, 4
R_N, R_DEPTH, R_PA, R_PB, R_LA, R_LB, R_W = 0, 3, 4, 7, 10, 13, 16

# [m] reduce_to_four's first point is the deepest candidate unless an earlier one is within
# this: resting bodies' corners jitter by a few micrometres step to step, and a first point
# that flips with them changes the manifold (a row without warm start)
DEPTH_TIE = 1e-5

# Per-call work space: candidate points cand (m,7) = (pa, pb, depth) with cand_feat (m,);
# two clipping polygons clip (2,m,3) with tags clip_tag (2,m,2) = (point code, edge label);
# sel (4,) the indices kept by reduce_to_four; wvert (2,V,3) and wface (2,F,4) world
# vertices and face planes of two polytopes; simplex (3,4,3) and lam (4,) for GJK.
# The narrow phase is compiled without reference counting (_nrt=False, which makes
# array views free) and so must not allocate: everything it needs lives here.
Scratch = namedtuple("Scratch", ["cand", "cand_feat", "clip", "clip_tag", "sel", "wvert",
                                 "wface", "simplex", "lam"])


def make_contact_buffers(capacity):
    c = int(capacity)
    return ContactBuffers(np.zeros((c, 5), np.int64), np.zeros((c, 19)))


def make_scratch(max_points, max_verts=8, max_faces=6):
    m = int(max_points)
    return Scratch(np.zeros((m, 7)), np.zeros(m, np.int64), np.zeros((2, m, 3)),
                   np.zeros((2, m, 2), np.int64), np.zeros(4, np.int64),
                   np.zeros((2, max(1, int(max_verts)), 3)),
                   np.zeros((2, max(1, int(max_faces)), 4)), np.zeros((3, 4, 3)),
                   np.zeros(4))


@njit(cache=True, _nrt=False)
def feature_id(kind, ref_side, ref_face, inc_face, code):
    """Pack a feature id: kind (3 bits), reference side (1 bit), two face/edge numbers
    (11 bits each) and a point code (24 bits, see clip_polygon)."""
    return ((((kind * 2 + ref_side) * 2048 + ref_face) * 2048 + inc_face) << 24) + code


@njit(cache=True, _nrt=False)
def emit(out, c, sa, sb, flip, n, depth, pa, pb, feature):
    """Write one contact at row c if it fits; always return c + 1 (the count needed)."""
    if c < out.ints.shape[0]:
        ints = out.ints
        reals = out.reals
        if flip:
            ints[c, I_SA] = sb
            ints[c, I_SB] = sa
            for i in range(3):
                reals[c, R_N + i] = -n[i]
                reals[c, R_PA + i] = pb[i]
                reals[c, R_PB + i] = pa[i]
        else:
            ints[c, I_SA] = sa
            ints[c, I_SB] = sb
            for i in range(3):
                reals[c, R_N + i] = n[i]
                reals[c, R_PA + i] = pa[i]
                reals[c, R_PB + i] = pb[i]
        reals[c, R_DEPTH] = depth
        ints[c, I_FEAT] = feature
    return c + 1


@njit(cache=True, _nrt=False)
def add_candidate(cand, cand_feat, m, pa, pb, depth, feature):
    """Append a candidate point (row m of cand/cand_feat; dropped when full).

    Hot helpers take the few arrays they touch, not the Scratch tuple: numba passes every
    array of a tuple argument field by field on each call."""
    if m < cand.shape[0]:
        for i in range(3):
            cand[m, i] = pa[i]
            cand[m, 3 + i] = pb[i]
        cand[m, 6] = depth
        cand_feat[m] = feature
        return m + 1
    return m


@njit(cache=True, _nrt=False)
def _deeper_tie(cand, i, j, value, best):
    """Candidate i ties with the chosen j (value within a relative 1e-6 of best), lies on
    the same spot of B (within 1e-9 m: one above the other) and deeper by more than 1e-6."""
    if j < 0 or not abs(value - best) <= 1e-6 * best or not cand[i, 6] > cand[j, 6] + 1e-6:
        return False
    d = sub(_pb(cand, i), _pb(cand, j))
    return dot(d, d) <= 1e-18


@njit(cache=True, _nrt=False)
def _pb(cand, i):
    """Candidate i's point on B (columns 3:6)."""
    return (cand[i, 3], cand[i, 4], cand[i, 5])


@njit(cache=True, _nrt=False)
def reduce_to_four(cand, sel, m, n):
    """Pick up to 4 of m candidates keeping the deepest point and the largest area.

    p0 = deepest; p1 = farthest from p0; p2 = max |(p1-p0) x (p-p0) . n| (largest
    triangle); p3 = the point farthest outside that triangle (most negative signed edge
    area). Near ties (depth within 1e-6, lengths/areas within a relative 1e-6) go to the
    earlier candidate, so the choice (and the feature ids) stays put under jitter; of two
    points one above the other (a thin plate's two faces, both within the margin) the
    deeper, the one that touches, is kept.
    Returns the count and writes the kept rows to sel.
    """
    if m <= 4:
        for i in range(m):
            sel[i] = i
        return m
    P = cand
    i0 = 0
    for i in range(1, m):
        if cand[i, 6] > cand[i0, 6] + DEPTH_TIE:
            i0 = i
    p0 = _pb(P, i0)
    i1 = -1
    best = -1.0
    for i in range(m):
        d = sub(_pb(P, i), p0)
        q = dot(d, d)
        if q > best * (1.0 + 1e-6) or _deeper_tie(cand, i, i1, q, best):
            best = q
            i1 = i
    p1 = _pb(P, i1)
    e01 = sub(p1, p0)
    i2 = -1
    best = -1.0
    sgn = 1.0
    for i in range(m):
        a = dot(cross(e01, sub(_pb(P, i), p0)), n)
        if abs(a) > best * (1.0 + 1e-6) or _deeper_tie(cand, i, i2, abs(a), best):
            best = abs(a)
            i2 = i
            sgn = 1.0 if a >= 0.0 else -1.0
    sel[0] = i0
    sel[1] = i1
    sel[2] = i2
    if best <= 1e-18:
        return 2 if i1 != i0 else 1
    p2 = _pb(P, i2)
    i3 = -1
    worst = 0.0
    for i in range(m):
        if i == i0 or i == i1 or i == i2:
            continue
        p = _pb(P, i)
        a0 = sgn * dot(cross(sub(p1, p0), sub(p, p0)), n)
        a1 = sgn * dot(cross(sub(p2, p1), sub(p, p1)), n)
        a2 = sgn * dot(cross(sub(p0, p2), sub(p, p2)), n)
        a = min(a0, min(a1, a2))
        if a < worst * (1.0 + 1e-6) or (a < 0.0 and _deeper_tie(cand, i, i3, -a, -worst)):
            worst = a
            i3 = i
    if i3 < 0:
        return 3
    sel[3] = i3
    return 4


# a candidate closer than this fraction of its two neighbours' distance to the line through
# them, and farther than it from both, lies on an edge of the overlap (a resting wall's
# stones turn by a few micro-radians: its edge points lay 1e-6 m off the line)
ON_EDGE = 1e-4


@njit(cache=True, _nrt=False)
def drop_edge_points(cand, cand_feat, m, n):
    """Drop the candidates that are not corners of the overlap: a point between its two
    neighbours in the list, on their line (ON_EDGE). Clipping leaves such points where two
    faces' edges line up (a wall built stone on stone): there reduce_to_four could start
    from an edge point, keep it, and drop a true corner of the overlap (wall_car kept a side
    patch's points at x = 2.92 .. 3.1 of an overlap 2.9 .. 3.1), and which one it kept
    flipped with the last bit of the start. A point between two others lies in their hull,
    so the kept area shrinks by at most ON_EDGE of it; a polygon without such points (a
    turned face's octagon) is left as it is, and so is a point again (at a neighbour).
    Compacts cand and cand_feat in place; returns the new count."""
    if m <= 4:
        return m
    first = _pb(cand, 0)        # (row 0 may be overwritten before the last point reads it)
    k = 0
    for i in range(m):
        p = _pb(cand, i)
        a = _pb(cand, i - 1 if i > 0 else m - 1)
        b = _pb(cand, i + 1) if i + 1 < m else first
        pa = sub(p, a)
        ab = sub(b, a)
        lab = dot(ab, ab)
        along = dot(pa, ab)         # p's place along a -> b, times lab
        off = dot(cross(pa, ab), n)   # its distance off the line, times sqrt(lab)
        if ON_EDGE * lab < along < (1.0 - ON_EDGE) * lab and \
                off * off <= ON_EDGE * ON_EDGE * lab * lab:
            continue
        if k != i:
            for j in range(7):
                cand[k, j] = cand[i, j]
            cand_feat[k] = cand_feat[i]
        k += 1
    return k


# (1, golden ratio, 2.5) normalised: a direction no box is built along (no two corners of a
# rectangle with sides in a simple ratio tie along its projection on a contact plane)
SKEW = (0.318335213310115, 0.515077194951714, 0.7958380332752876)


@njit(cache=True, _nrt=False)
def in_place_order(cand, sel, k, n):
    """Sort the kept points sel[:k] along SKEW projected on the contact plane (normal n).
    The candidates' order follows where clipping started, which flips where a point lies
    on a clip plane to the last bit (stones built touching): the rows of a patch then came
    in another order, and a patch's Gauss-Seidel answer with them (wall_car's stones
    settled up to 0.9 mm elsewhere after a 1e-15 change of their start)."""
    s = dot(SKEW, n)
    d = (SKEW[0] - s * n[0], SKEW[1] - s * n[1], SKEW[2] - s * n[2])
    for i in range(1, k):
        j = i
        v = sel[i]
        key = dot(_pb(cand, v), d)
        while j > 0 and dot(_pb(cand, sel[j - 1]), d) > key:
            sel[j] = sel[j - 1]
            j -= 1
        sel[j] = v


@njit(cache=True, _nrt=False)
def emit_candidates(out, c, sa, sb, flip, n, cand, cand_feat, sel, m):
    """Reduce the m candidates (sharing normal n) to at most 4 (after drop_edge_points) and
    write them."""
    m = drop_edge_points(cand, cand_feat, m, n)
    k = reduce_to_four(cand, sel, m, n)
    in_place_order(cand, sel, k, n)
    for j in range(k):
        i = sel[j]
        c = emit(out, c, sa, sb, flip, n, cand[i, 6], (cand[i, 0], cand[i, 1], cand[i, 2]),
                 (cand[i, 3], cand[i, 4], cand[i, 5]), cand_feat[i])
    return c


INTERSECTION = 1 << 23  # point codes >= this are (edge label, clip plane) intersections


@njit(cache=True, _nrt=False)
def clip_polygon(clip, tag, s, m, nrm, off, plane):
    """Sutherland-Hodgman: keep the part of polygon src[:m] with nrm.x <= off.

    Each vertex carries a code (what made it: an incident vertex number, or
    INTERSECTION + edge_label*2048 + plane) and a label of its outgoing edge (an incident
    edge number, or 1024 + the clip plane number it was cut along). The codes depend only
    on which features touch, so they stay the same while bodies move a little.
    Reads polygon clip[s], tag[s] (rows (code, label)) and writes clip[1-s], tag[1-s]
    (indexing the 3-d arrays directly: slicing out views costs reference counting).
    Returns the new vertex count.
    """
    k = 0
    d = 1 - s
    cap = clip.shape[1]
    for i in range(m):
        j = i + 1 if i + 1 < m else 0
        P = (clip[s, i, 0], clip[s, i, 1], clip[s, i, 2])
        Q = (clip[s, j, 0], clip[s, j, 1], clip[s, j, 2])
        dP = dot(nrm, P) - off
        dQ = dot(nrm, Q) - off
        if dP <= 0.0:
            if k < cap:
                clip[d, k, 0] = P[0]
                clip[d, k, 1] = P[1]
                clip[d, k, 2] = P[2]
                tag[d, k, 0] = tag[s, i, 0]
                tag[d, k, 1] = tag[s, i, 1] if dQ <= 0.0 else 1024 + plane
                k += 1
        if (dP <= 0.0) != (dQ <= 0.0):
            t = dP / (dP - dQ)
            if k < cap:
                clip[d, k, 0] = P[0] + t * (Q[0] - P[0])
                clip[d, k, 1] = P[1] + t * (Q[1] - P[1])
                clip[d, k, 2] = P[2] + t * (Q[2] - P[2])
                tag[d, k, 0] = INTERSECTION + tag[s, i, 1] * 2048 + plane
                tag[d, k, 1] = tag[s, i, 1] if dP > 0.0 else 1024 + plane
                k += 1
    return k
