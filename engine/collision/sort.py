"""Small sorting/searching kernels (own code: numba's np.argsort/np.searchsorted
implementations cost seconds of compile time each)."""
import numpy as np
from numba import njit


@njit(cache=True)
def argsort_stable(keys, order):
    """Write into order (n,) int64 the stable ascending permutation of keys (n,)
    (bottom-up merge sort, O(n log n))."""
    n = keys.shape[0]
    for i in range(n):
        order[i] = i
    tmp = np.empty(n, dtype=np.int64)
    width = 1
    src = order
    dst = tmp
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if keys[src[j]] < keys[src[i]]:
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        width *= 2
    if src is not order:
        for i in range(n):
            order[i] = src[i]


@njit(cache=True)
def lower_bound(sorted_keys, key):
    """First index i with sorted_keys[i] >= key (len if none)."""
    lo = 0
    hi = sorted_keys.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo
