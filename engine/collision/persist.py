"""Contact persistence: match this step's contacts to last step's.

Two contacts are the same when they have the same (shape A, shape B, feature). Feature
ids are built from the touching features (face, edge, vertex and clip-plane numbers), so
they repeat while the same features touch, and warm-start impulses can carry over.
Where two features meet exactly (a box resting across two others: their side faces flush),
the clipping's feature of a point flips with any micro-turn, every other step; a contact
whose feature is new is then matched to the nearest unclaimed old contact of the same pair
whose point on B (in B's frame) lies within MATCH_DISTANCE, as Bullet's manifold cache
does by distance. Without it the pyramid lost a patch's warm start every other step and
never settled (its loops ran to their caps).
"""
import numpy as np
from numba import njit

from .manifold import I_FEAT, I_SA, I_SB, R_LB
from .sort import argsort_stable, lower_bound

MATCH_DISTANCE = 1e-3   # [m] a new feature this close to an old contact's point is that one


@njit(cache=True, nogil=True)
def match_contacts(prev_ints, prev_reals, ints, reals, n_shapes):
    """For each new contact (the detector's tables ints, reals: detector.ContactSet) the row
    of the equal old contact (prev_ints, prev_reals), or -1 (new contact).

    Old rows are sorted by the pair key a*n_shapes + b (stable), then each new contact
    binary-searches its pair and scans that pair's few rows for its feature; contacts left
    unmatched then take, in row order, the nearest old row of their pair within
    MATCH_DISTANCE of their point on B that is still free (module docstring).
    """
    m = prev_ints.shape[0]
    n = ints.shape[0]
    if n == m and _same_rows(prev_ints, ints):
        return np.arange(n)         # a resting pile: every row where it was (the usual step)
    pk = prev_ints[:, I_SA] * n_shapes + prev_ints[:, I_SB]
    order = np.empty(m, dtype=np.int64)
    argsort_stable(pk, order)
    sk = np.empty(m, dtype=np.int64)
    for i in range(m):
        sk[i] = pk[order[i]]
    claimed = np.zeros(m, dtype=np.bool_)
    res = np.empty(n, dtype=np.int64)
    missing = 0
    for i in range(n):
        key = ints[i, I_SA] * n_shapes + ints[i, I_SB]
        res[i] = -1
        j = lower_bound(sk, key)
        while j < m and sk[j] == key:
            if prev_ints[order[j], I_FEAT] == ints[i, I_FEAT]:
                res[i] = order[j]
                claimed[order[j]] = True
                break
            j += 1
        if res[i] < 0:
            missing += 1
    if missing == 0:
        return res
    # by place, in row order: each unmatched row takes the nearest old row within
    # MATCH_DISTANCE that is still free (not the globally nearest pairing: where two rows
    # are about as near, a last-bit difference would move the warm start between them)
    for i in range(n):
        if res[i] >= 0:
            continue
        key = ints[i, I_SA] * n_shapes + ints[i, I_SB]
        j = lower_bound(sk, key)
        best = MATCH_DISTANCE * MATCH_DISTANCE
        while j < m and sk[j] == key:
            r = order[j]
            if not claimed[r]:
                d = 0.0
                for k in range(3):
                    d += (reals[i, R_LB + k] - prev_reals[r, R_LB + k]) ** 2
                if d <= best:
                    best = d
                    res[i] = r
            j += 1
        if res[i] >= 0:
            claimed[res[i]] = True
    return res


@njit(cache=True, nogil=True)
def _same_rows(prev_ints, ints):
    """True when row i of both tables is the same contact (shapes and feature) for every i,
    and within each run of rows of one shape pair no feature repeats: then the matching
    below pairs every row with itself (the detector lists each pair once, as one run)."""
    for i in range(ints.shape[0]):
        if ints[i, I_SA] != prev_ints[i, I_SA] or ints[i, I_SB] != prev_ints[i, I_SB] or \
                ints[i, I_FEAT] != prev_ints[i, I_FEAT]:
            return False
        j = i - 1
        while j >= 0 and ints[j, I_SA] == ints[i, I_SA] and ints[j, I_SB] == ints[i, I_SB]:
            if ints[j, I_FEAT] == ints[i, I_FEAT]:
                return False
            j -= 1
    return True
