"""Small 3-vector helpers on float tuples for numba kernels (no heap allocation).

Vectors are ``(x, y, z)`` tuples; rotations are 3x3 array views ``R`` whose columns are
the local axes in world, so ``world = p + R @ local`` and ``local = R.T @ (world - p)``.
"""
import math

from numba import njit


@njit(cache=True, _nrt=False)
def v3(a, i):
    """Row i of an (n,3) array as a tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@njit(cache=True, _nrt=False)
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True, _nrt=False)
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True, _nrt=False)
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@njit(cache=True, _nrt=False)
def madd(a, b, s):
    """a + s*b."""
    return (a[0] + b[0] * s, a[1] + b[1] * s, a[2] + b[2] * s)


@njit(cache=True, _nrt=False)
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, _nrt=False)
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True, _nrt=False)
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@njit(cache=True, _nrt=False)
def neg(a):
    return (-a[0], -a[1], -a[2])


@njit(cache=True, _nrt=False)
def normalize(a):
    """Unit vector of a; (0,1,0) for a zero vector."""
    n = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if n < 1e-300:
        return (0.0, 1.0, 0.0)
    return (a[0] / n, a[1] / n, a[2] / n)


@njit(cache=True, _nrt=False)
def col(R, j):
    """Column j of a 3x3 rotation: local axis j in world."""
    return (R[0, j], R[1, j], R[2, j])


@njit(cache=True, _nrt=False)
def rot(R, v):
    """R @ v."""
    return (R[0, 0] * v[0] + R[0, 1] * v[1] + R[0, 2] * v[2],
            R[1, 0] * v[0] + R[1, 1] * v[1] + R[1, 2] * v[2],
            R[2, 0] * v[0] + R[2, 1] * v[1] + R[2, 2] * v[2])


@njit(cache=True, _nrt=False)
def rot_t(R, v):
    """R.T @ v."""
    return (R[0, 0] * v[0] + R[1, 0] * v[1] + R[2, 0] * v[2],
            R[0, 1] * v[0] + R[1, 1] * v[1] + R[2, 1] * v[2],
            R[0, 2] * v[0] + R[1, 2] * v[1] + R[2, 2] * v[2])


@njit(cache=True, _nrt=False)
def to_world(p, R, v):
    """p + R @ v."""
    return add(p, rot(R, v))


@njit(cache=True, _nrt=False)
def to_local(p, R, w):
    """R.T @ (w - p)."""
    return rot_t(R, sub(w, p))


@njit(cache=True, _nrt=False)
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@njit(cache=True, _nrt=False)
def any_perp(n):
    """A unit vector perpendicular to unit n."""
    if abs(n[0]) < 0.57:
        return normalize(cross(n, (1.0, 0.0, 0.0)))
    return normalize(cross(n, (0.0, 1.0, 0.0)))


@njit(cache=True, _nrt=False)
def tget(t, i):
    """t[i] for a runtime index i without spilling the tuple to memory."""
    if i == 0:
        return t[0]
    if i == 1:
        return t[1]
    return t[2]
