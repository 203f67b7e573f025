"""Ray casts: the closest shape hit along origin + t d (t >= 0, |d| = 1).

Each test works in the shape's frame (o' = R^T (o - p), d' = R^T d):
  plane     t = (n.p - n.o) / (n.d) for rays coming from the front (n.d < 0)
  sphere    |o + t d - c| = r, smaller root
  box       slab intersection; the entering slab gives the normal
  capsule   infinite cylinder x^2 + z^2 = r^2 for |y| <= hl, else the end spheres
  cylinder  infinite cylinder for |y| <= hh, and the caps y = +-hh within radius r
  hull      Cyrus-Beck clipping against the face half spaces
A ray starting inside a shape does not hit that shape.
"""
import math

import numpy as np
from numba import njit

from .shapes import BOX, CAPSULE, CYLINDER, HULL, PLANE, SPHERE
from .vec import dot, madd, normalize, rot, rot_t, sub, v3

NO_HIT = 1e300


@njit(cache=True)
def ray_plane(origin, direction, point, normal):
    """Parameter t >= 0 where origin + t*direction meets the plane through point with
    the given normal (either side); inf when parallel or behind the origin."""
    den = dot(normal, direction)
    if abs(den) < 1e-300:
        return np.inf
    t = dot(normal, sub(point, origin)) / den
    if t < 0.0:
        return np.inf
    return t


@njit(cache=True)
def _ray_sphere(o, d, c, r):
    """Entering hit of a ray with a sphere: (t, outward normal)."""
    m = sub(o, c)
    b = dot(m, d)
    cc = dot(m, m) - r * r
    if cc <= 0.0:
        return NO_HIT, (0.0, 1.0, 0.0)
    disc = b * b - cc
    if b > 0.0 or disc < 0.0:
        return NO_HIT, (0.0, 1.0, 0.0)
    t = -b - math.sqrt(disc)
    return t, normalize(madd(m, d, t))


@njit(cache=True)
def _ray_side(o, d, r, hl):
    """Entering hit with the side x^2+z^2 = r^2 of a Y-axis cylinder, |y| <= hl."""
    a = d[0] * d[0] + d[2] * d[2]
    b = o[0] * d[0] + o[2] * d[2]
    cc = o[0] * o[0] + o[2] * o[2] - r * r
    if a < 1e-300 or cc <= 0.0:
        return NO_HIT, (0.0, 1.0, 0.0)
    disc = b * b - a * cc
    if b > 0.0 or disc < 0.0:
        return NO_HIT, (0.0, 1.0, 0.0)
    t = (-b - math.sqrt(disc)) / a
    y = o[1] + t * d[1]
    if abs(y) > hl:
        return NO_HIT, (0.0, 1.0, 0.0)
    q = madd(o, d, t)
    return t, normalize((q[0], 0.0, q[2]))


@njit(cache=True)
def ray_shape(kind, size, pos, R, P, q, o, d):
    """(t, world normal) of the ray's entry into one shape; t = NO_HIT for a miss."""
    miss = (NO_HIT, (0.0, 1.0, 0.0))
    if kind == PLANE:
        n = (R[0, 1], R[1, 1], R[2, 1])
        den = dot(n, d)
        if den >= 0.0:
            return miss
        t = dot(n, sub(pos, o)) / den
        if t < 0.0:
            return miss
        return t, n
    if kind == SPHERE:
        return _ray_sphere(o, d, pos, size[0])
    ol = rot_t(R, sub(o, pos))
    dl = rot_t(R, d)
    if kind == BOX:
        t0 = -1e300
        t1 = 1e300
        nl = (0.0, 1.0, 0.0)
        for i in range(3):
            if abs(dl[i]) < 1e-300:
                if abs(ol[i]) > size[i]:
                    return miss
                continue
            ta = (-size[i] - ol[i]) / dl[i]
            tb = (size[i] - ol[i]) / dl[i]
            sg = -1.0
            if ta > tb:
                ta, tb = tb, ta
                sg = 1.0
            if ta > t0:
                t0 = ta
                nl = (sg if i == 0 else 0.0, sg if i == 1 else 0.0, sg if i == 2 else 0.0)
            t1 = min(t1, tb)
        if t0 > t1 or t0 < 0.0:
            return miss
        return t0, rot(R, nl)
    if kind == CAPSULE or kind == CYLINDER:
        r = size[0]
        hl = size[1]
        t, nl = _ray_side(ol, dl, r, hl)
        for s in (-1.0, 1.0):
            if kind == CAPSULE:
                ts, ns = _ray_sphere(ol, dl, (0.0, s * hl, 0.0), r)
            else:
                ts = NO_HIT
                ns = (0.0, s, 0.0)
                if s * dl[1] < 0.0 and s * ol[1] > hl:
                    tc = (s * hl - ol[1]) / dl[1]
                    qc = madd(ol, dl, tc)
                    if qc[0] * qc[0] + qc[2] * qc[2] <= r * r:
                        ts = tc
            if ts < t:
                t = ts
                nl = ns
        if t >= NO_HIT:
            return miss
        return t, rot(R, nl)
    if kind == HULL and q >= 0:
        t0 = 0.0
        t1 = 1e300
        fbest = -1
        for f in range(P.table[q, 2], P.table[q, 2] + P.table[q, 3]):
            n = v3(P.face, f)
            den = dot(n, dl)
            num = P.face[f, 3] - dot(n, ol)
            if abs(den) < 1e-300:
                if num < 0.0:
                    return miss
                continue
            t = num / den
            if den < 0.0:
                if t > t0 or fbest < 0 and t >= t0:
                    t0 = t
                    fbest = f
            else:
                t1 = min(t1, t)
            if t0 > t1:
                return miss
        if fbest < 0:
            return miss
        return t0, rot(R, v3(P.face, fbest))
    return miss


@njit(cache=True)
def raycast_kernel(origin, direction, max_dist, shape_kind, shape_size, sh_pos, sh_rot,
                   poly_of_shape, P, shape_body, skip_body):
    """Closest hit over all shapes (bodies equal to skip_body are ignored).

    Returns (shape, t, world point, world normal); shape = -1 for no hit."""
    best = max_dist
    sb = -1
    nb = (0.0, 1.0, 0.0)
    for s in range(shape_kind.shape[0]):
        if shape_body[s] == skip_body:
            continue
        t, n = ray_shape(shape_kind[s], v3(shape_size, s), v3(sh_pos, s), sh_rot[s], P,
                         poly_of_shape[s], origin, direction)
        if t < best:
            best = t
            sb = s
            nb = n
    return sb, best, madd(origin, direction, best), nb
