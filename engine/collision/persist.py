"""Contact persistence: match this step's contacts to last step's.

Two contacts are the same when they have the same (shape A, shape B, feature). Feature
ids are built from the touching features (face, edge, vertex and clip-plane numbers), so
they repeat while the same features touch, and warm-start impulses can carry over.
"""
import numpy as np
from numba import njit

from .sort import argsort_stable, lower_bound


@njit(cache=True, nogil=True)
def match_contacts(prev_shape_a, prev_shape_b, prev_feature, shape_a, shape_b, feature,
                   n_shapes):
    """For each new contact the row of the equal old contact, or -1 (new contact).

    Old rows are sorted by the pair key a*n_shapes + b (stable), then each new contact
    binary-searches its pair and scans that pair's few rows for its feature.
    """
    m = prev_shape_a.shape[0]
    pk = prev_shape_a * n_shapes + prev_shape_b
    order = np.empty(m, dtype=np.int64)
    argsort_stable(pk, order)
    sk = np.empty(m, dtype=np.int64)
    for i in range(m):
        sk[i] = pk[order[i]]
    res = np.empty(shape_a.shape[0], dtype=np.int64)
    for i in range(shape_a.shape[0]):
        key = shape_a[i] * n_shapes + shape_b[i]
        res[i] = -1
        j = lower_bound(sk, key)
        while j < m and sk[j] == key:
            if prev_feature[order[j]] == feature[i]:
                res[i] = order[j]
                break
            j += 1
    return res
