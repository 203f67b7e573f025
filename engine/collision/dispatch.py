"""Pair dispatch: route an ordered shape pair (a, b) to its narrow-phase routine.

Routines are written for one order of kinds; ``flip`` makes every contact come out with
a as shape A and the normal pointing from b to a whatever the routine's own order.
Pair table (x = larger kind code, y = smaller):
  plane:    sphere, capsule, cylinder closed form; box and hull by their vertices
  sphere:   sphere, capsule closed form; box, cylinder exact; hull by GJK/SAT
  box:      box-box SAT + clipping; capsule by GJK/SAT; cylinder, hull by polytope SAT
  capsule:  capsule closed form; cylinder (as a prism), hull by GJK/SAT
  cylinder, hull: polytope SAT + clipping (cylinder as a 24-sided prism)
"""
from numba import njit

from .narrow_basic import (
    capsule_capsule,
    capsule_plane,
    cylinder_plane,
    poly_plane,
    sphere_box,
    sphere_capsule,
    sphere_cylinder,
    sphere_plane,
    sphere_sphere,
)
from .narrow_boxbox import box_box
from .narrow_polytope import capsule_poly, poly_poly
from .shapes import BOX, CAPSULE, CYLINDER, HULL, PLANE, SPHERE


@njit(cache=True, _nrt=False)
def canonical_order(kind, i, j):
    """The detector's pair order: A has the larger kind code, ties go to the lower index."""
    if kind[i] > kind[j] or (kind[i] == kind[j] and i < j):
        return i, j
    return j, i


@njit(cache=True, _nrt=False)
def collide_pair(S, P, a, b, thr, out, c, sc):
    """Append the contacts of shape a (as A) with shape b (as B); return the new count."""
    if S.kind[a] >= S.kind[b]:
        x = a
        y = b
    else:
        x = b
        y = a
    f = x != a        # a routine called as (x, y) must flip
    g = not f         # a routine called as (y, x) must flip
    kx = S.kind[x]
    ky = S.kind[y]
    if ky == PLANE:
        if kx == SPHERE:
            return sphere_plane(S, P, x, y, f, thr, out, c, sc)
        if kx == BOX or kx == HULL:
            return poly_plane(S, P, x, y, f, thr, out, c, sc)
        if kx == CAPSULE:
            return capsule_plane(S, P, x, y, f, thr, out, c, sc)
        if kx == CYLINDER:
            return cylinder_plane(S, P, x, y, f, thr, out, c, sc)
        return c
    if ky == SPHERE:
        if kx == SPHERE:
            return sphere_sphere(S, P, x, y, f, thr, out, c, sc)
        if kx == BOX:
            return sphere_box(S, P, y, x, g, thr, out, c, sc)
        if kx == CAPSULE:
            return sphere_capsule(S, P, y, x, g, thr, out, c, sc)
        if kx == CYLINDER:
            return sphere_cylinder(S, P, y, x, g, thr, out, c, sc)
        return capsule_poly(S, P, y, x, g, thr, out, c, sc)
    if ky == BOX:
        if kx == BOX:
            return box_box(S, P, x, y, f, thr, out, c, sc)
        if kx == CAPSULE:
            return capsule_poly(S, P, x, y, f, thr, out, c, sc)
        return poly_poly(S, P, x, y, f, thr, out, c, sc)
    if ky == CAPSULE:
        if kx == CAPSULE:
            return capsule_capsule(S, P, x, y, f, thr, out, c, sc)
        return capsule_poly(S, P, y, x, g, thr, out, c, sc)
    return poly_poly(S, P, x, y, f, thr, out, c, sc)
