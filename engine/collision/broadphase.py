"""Broad phase: sweep and prune on one axis (within slabs) over shape AABBs + filters.

The sweep axis is the one with the largest variance of box centres (planes left out);
it only changes when another axis is 1.5x better, so the shape order from the last call
stays almost sorted and an insertion sort (O(n) for coherent motion) keeps it sorted; a
full argsort is used after an axis change or when the insertion sort would do more than
16 n moves. Pairs are reported once, as (i, j) with i < j, sorted by (i, j)
(sort_pairs): the narrow phase writes each pair's rows in this order, and the contact loops
visit a layer's rows in it, so consecutive rows share a body and their other bodies'
indices move forward together. In the sweep's order (by position along the axis) they
jumped over the whole body arrays: the loops' cost per row visit grew 1.6-1.8x from 1 000
to 10 000 cubes poured into a bin, once the arrays left the cache.
"""
import numpy as np
from numba import njit

from .sort import argsort_stable, lower_bound

AXIS_SWITCH = 1.5


@njit(cache=True)
def pair_key(ba, bb, n_bodies):
    """Key of an unordered body pair: min*n + max."""
    if ba < bb:
        return ba * n_bodies + bb
    return bb * n_bodies + ba


@njit(cache=True)
def pair_allowed(sa, sb, shape_body, body_static, shape_group, shape_mask, excluded_keys,
                 n_bodies):
    """Shapes collide iff on different bodies, not both static, each one's groups meet
    the other's mask, and the body pair is not in the sorted excluded key array."""
    ba = shape_body[sa]
    bb = shape_body[sb]
    if ba == bb:
        return False
    if body_static[ba] and body_static[bb]:
        return False
    if (shape_group[sa] & shape_mask[sb]) == 0 or (shape_group[sb] & shape_mask[sa]) == 0:
        return False
    ne = excluded_keys.shape[0]
    if ne > 0:
        key = pair_key(ba, bb, n_bodies)
        i = lower_bound(excluded_keys, key)
        if i < ne and excluded_keys[i] == key:
            return False
    return True


@njit(cache=True)
def _choose_axis(aabb_min, aabb_max, current):
    k = aabb_min.shape[0]
    s1 = [0.0, 0.0, 0.0]
    s2 = [0.0, 0.0, 0.0]
    cnt = 0
    for i in range(k):
        if aabb_max[i, 0] - aabb_min[i, 0] > 1e29 or aabb_max[i, 1] - aabb_min[i, 1] > 1e29 \
                or aabb_max[i, 2] - aabb_min[i, 2] > 1e29:
            continue
        cnt += 1
        for r in range(3):
            c = 0.5 * (aabb_min[i, r] + aabb_max[i, r])
            s1[r] += c
            s2[r] += c * c
    if cnt == 0:
        return 0 if current < 0 else current
    var = [s2[r] / cnt - (s1[r] / cnt) ** 2 for r in range(3)]
    best = 0
    for r in range(1, 3):
        if var[r] > var[best]:
            best = r
    if current < 0:
        return best
    if var[best] > AXIS_SWITCH * var[current]:
        return best
    return current


@njit(cache=True)
def _sort_order(keys, order, resort):
    """Sort permutation `order` by keys (insertion sort unless resort or too many moves)."""
    k = keys.shape[0]
    if not resort:
        moves = 0
        limit = 16 * k + 64
        for i in range(1, k):
            o = order[i]
            key = keys[o]
            j = i - 1
            while j >= 0 and keys[order[j]] > key:
                order[j + 1] = order[j]
                j -= 1
                moves += 1
            order[j + 1] = o
            if moves > limit:
                resort = True
                break
    if resort:
        argsort_stable(keys, order)


@njit(cache=True)
def _slab_index(x, lo, w, nslab):
    t = (x - lo) / w
    if not t > 0.0:     # also NaN: an index is never taken from a value that is not finite
        return 0
    if t >= nslab - 1:
        return nslab - 1
    return int(t)


@njit(cache=True)
def sweep_and_prune(aabb_min, aabb_max, order, state, shape_body, body_static, shape_group,
                    shape_mask, excluded_keys, n_bodies, pair_a, pair_b):
    """Overlapping, allowed shape pairs. order (k,) int64 is the sort permutation kept
    between calls, state (1,) int64 the sweep axis (-1 at start). Writes at most
    len(pair_a) pairs and returns the number found (grow and call again if larger).

    The sweep runs in slabs: space is cut across a second axis into slabs as wide as the
    widest finite box (at most 64); each box is listed, in sweep order, in every slab it
    touches, and a pair is reported only in the slab holding the larger of the two box
    minima on that axis, so exactly once. In a pile this divides the sweep work by about
    half the number of slabs.

    A static (fixed or sleeping) box looks ahead only at the moving boxes after it (each
    slab keeps, per entry, the next moving entry): static pairs never collide, and a
    sleeping pile's boxes would otherwise each scan every neighbour along the sweep (10 000
    sleeping cubes in a grid: 1 M box tests a step). The pairs come sorted (sort_pairs)."""
    k = aabb_min.shape[0]
    axis = _choose_axis(aabb_min, aabb_max, state[0])
    resort = axis != state[0]
    state[0] = axis
    keys = aabb_min[:, axis].copy()
    _sort_order(keys, order, resort)
    # slab axis: the other axis with the larger spread of finite boxes
    ax1 = (axis + 1) % 3
    ax2 = (axis + 2) % 3
    r1 = _finite_range(aabb_min, aabb_max, ax1)
    r2 = _finite_range(aabb_min, aabb_max, ax2)
    if r2[1] - r2[0] > r1[1] - r1[0]:
        ax1, ax2 = ax2, ax1
        r1 = r2
    lo = r1[0]
    w = r1[2]
    nslab = 1
    if w > 0.0 and r1[1] > lo:
        q = (r1[1] - lo) / w
        nslab = int(q) + 1 if q < 63.0 else 64
        w = max(w, (r1[1] - lo) / nslab)
    else:
        w = 1.0
    # boxes in sweep order: columns sweep min/max, slab-axis min/max, third-axis min/max
    box = np.empty((k, 6))
    cnt = np.zeros(nslab + 1, dtype=np.int64)
    for ii in range(k):
        i = order[ii]
        box[ii, 0] = aabb_min[i, axis]
        box[ii, 1] = aabb_max[i, axis]
        box[ii, 2] = aabb_min[i, ax1]
        box[ii, 3] = aabb_max[i, ax1]
        box[ii, 4] = aabb_min[i, ax2]
        box[ii, 5] = aabb_max[i, ax2]
        s0 = _slab_index(box[ii, 2], lo, w, nslab)
        s1 = _slab_index(box[ii, 3], lo, w, nslab)
        for sl in range(s0, s1 + 1):
            cnt[sl + 1] += 1
    for sl in range(nslab):
        cnt[sl + 1] += cnt[sl]
    ent = np.empty(cnt[nslab], dtype=np.int64)
    fill = cnt[:nslab].copy()
    for ii in range(k):
        s0 = _slab_index(box[ii, 2], lo, w, nslab)
        s1 = _slab_index(box[ii, 3], lo, w, nslab)
        for sl in range(s0, s1 + 1):
            ent[fill[sl]] = ii
            fill[sl] += 1
    # per entry: the next entry of its slab (itself included) whose box moves, else the
    # slab's end
    moving = np.empty(cnt[nslab] + 1, dtype=np.int64)
    for sl in range(nslab):
        e1 = cnt[sl + 1]
        nxt = e1
        for e in range(e1 - 1, cnt[sl] - 1, -1):
            if not body_static[shape_body[order[ent[e]]]]:
                nxt = e
            moving[e] = nxt
    moving[cnt[nslab]] = cnt[nslab]
    cap = pair_a.shape[0]
    n = 0
    for sl in range(nslab):
        e1 = cnt[sl + 1]
        for e in range(cnt[sl], e1):
            ii = ent[e]
            hi = box[ii, 1]
            lo1 = box[ii, 2]
            hi1 = box[ii, 3]
            lo2 = box[ii, 4]
            hi2 = box[ii, 5]
            static = body_static[shape_body[order[ii]]]
            f = e + 1
            while f < e1:
                if static:
                    f = moving[f]                # only moving boxes can pair with it
                    if f >= e1:
                        break
                jj = ent[f]
                f += 1
                if box[jj, 0] > hi:
                    break
                if box[jj, 2] > hi1 or lo1 > box[jj, 3] or box[jj, 4] > hi2 \
                        or lo2 > box[jj, 5]:
                    continue
                if nslab > 1 and _slab_index(max(lo1, box[jj, 2]), lo, w, nslab) != sl:
                    continue                    # reported in another slab
                i = order[ii]
                j = order[jj]
                if not pair_allowed(i, j, shape_body, body_static, shape_group, shape_mask,
                                    excluded_keys, n_bodies):
                    continue
                if n < cap:
                    pair_a[n] = min(i, j)
                    pair_b[n] = max(i, j)
                n += 1
    if n <= cap:
        sort_pairs(pair_a, pair_b, n, k)
    return n


@njit(cache=True)
def sort_pairs(pair_a, pair_b, n, k):
    """The first n pairs (shape indices < k) sorted by (pair_a, pair_b): two stable
    counting sorts, by the second index and then by the first (O(n + k), no comparisons)."""
    tmp_a = np.empty(n, dtype=np.int64)
    tmp_b = np.empty(n, dtype=np.int64)
    count = np.empty(k + 1, dtype=np.int64)
    for by_first in (False, True):
        src = pair_a if by_first else pair_b
        count[:] = 0
        for p in range(n):
            count[src[p] + 1] += 1
        for i in range(k):
            count[i + 1] += count[i]
        for p in range(n):
            q = count[src[p]]
            count[src[p]] += 1
            tmp_a[q] = pair_a[p]
            tmp_b[q] = pair_b[p]
        pair_a[:n] = tmp_a
        pair_b[:n] = tmp_b


@njit(cache=True)
def _finite_range(aabb_min, aabb_max, ax):
    """(lowest min, highest max, widest extent) of the finite boxes along ax."""
    lo = 1e300
    hi = -1e300
    w = 0.0
    for i in range(aabb_min.shape[0]):
        e = aabb_max[i, ax] - aabb_min[i, ax]
        if e > 1e29:
            continue
        lo = min(lo, aabb_min[i, ax])
        hi = max(hi, aabb_max[i, ax])
        w = max(w, e)
    return lo, hi, w


@njit(cache=True)
def brute_force_pairs(aabb_min, aabb_max, shape_body, body_static, shape_group, shape_mask,
                      excluded_keys, n_bodies):
    """All allowed overlapping pairs (i < j) by testing every pair: the O(k^2) reference."""
    k = aabb_min.shape[0]
    out = []
    for i in range(k):
        for j in range(i + 1, k):
            ok = True
            for r in range(3):
                if aabb_min[j, r] > aabb_max[i, r] or aabb_min[i, r] > aabb_max[j, r]:
                    ok = False
            if ok and pair_allowed(i, j, shape_body, body_static, shape_group, shape_mask,
                                   excluded_keys, n_bodies):
                out.append((i, j))
    return out
