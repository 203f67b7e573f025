"""Shape kind codes, world poses of shapes and their (motion-enlarged) AABBs.

A shape s sits on body b = shape_body[s] with pose (shape_local_pos[s], shape_local_rot[s])
in b's frame, so its world pose is

    sh_pos = body_pos[b] + body_rot[b] @ shape_local_pos[s]
    sh_rot = body_rot[b] @ shape_local_rot[s]

Sizes (shape_size[s]): sphere (r,0,0); box half extents; capsule (r, half segment length, 0)
and cylinder (r, half height, 0) along local Y; plane: the half space below local +Y
through the local origin (static bodies only); hull: unused (vertices in hull_vertex).
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..shape_kinds import BOX, CAPSULE, CYLINDER, HULL, KIND_NAMES, PLANE, SPHERE  # noqa: F401
from .vec import add, col, dot, rot, v3

BIG = 1e30  # "infinite" AABB bound of a plane


@njit(cache=True, _nrt=False)
def shape_world_poses(body_pos, body_rot, shape_body, shape_local_pos, shape_local_rot,
                      sh_pos, sh_rot):
    """Fill sh_pos (k,3) and sh_rot (k,3,3) with the world poses of all shapes."""
    for s in range(shape_body.shape[0]):
        b = shape_body[s]
        R = body_rot[b]
        lp = shape_local_pos[s]
        for i in range(3):
            sh_pos[s, i] = (body_pos[b, i] + R[i, 0] * lp[0] + R[i, 1] * lp[1]
                            + R[i, 2] * lp[2])
            for j in range(3):
                sh_rot[s, i, j] = (R[i, 0] * shape_local_rot[s, 0, j]
                                   + R[i, 1] * shape_local_rot[s, 1, j]
                                   + R[i, 2] * shape_local_rot[s, 2, j])


def shape_local_radius(kind, size, hull_points=None):
    """Radius of the smallest origin-centred ball holding the shape (0 for a plane)."""
    if kind == SPHERE:
        return float(size[0])
    if kind == BOX:
        return float(np.linalg.norm(size))
    if kind in (CAPSULE,):
        return float(size[0] + size[1])
    if kind == CYLINDER:
        return float(math.hypot(size[0], size[1]))
    if kind == HULL:
        return float(np.max(np.linalg.norm(hull_points, axis=1))) if len(hull_points) else 0.0
    return 0.0


@njit(cache=True, _nrt=False)
def compute_aabbs(shape_kind, shape_size, shape_body, sh_pos, sh_rot, shape_radius,
                  poly_of_shape, poly_table, poly_vert,
                  body_pos, body_vel, body_omega, body_static, margin, h,
                  aabb_min, aabb_max, reach):
    """World AABBs of all shapes, enlarged by the margin and the motion over h.

    For a dynamic body with velocity v and angular velocity w, a shape point at distance
    at most rho from the centre of mass moves by at most |v| h + |w| rho h in the step,
    rho = |shape offset| + shape radius. The box is swept by v h per axis and grown by
    margin/2 + |w| rho h on every side (two boxes together cover the margin); reach[s] =
    |v| h + |w| rho h is the bound the narrow phase adds to the margin. A plane is the
    half space n.x <= n.p; its box is bounded only along an axis its normal is aligned with.
    """
    for s in range(shape_kind.shape[0]):
        k = shape_kind[s]
        p = v3(sh_pos, s)
        R = sh_rot[s]
        if k == PLANE:
            n = col(R, 1)
            for i in range(3):
                aabb_min[s, i] = -BIG
                aabb_max[s, i] = BIG
            for i in range(3):
                if abs(n[i]) > 1.0 - 1e-12:
                    if n[i] > 0.0:
                        aabb_max[s, i] = p[i] + 0.5 * margin
                    else:
                        aabb_min[s, i] = p[i] - 0.5 * margin
            reach[s] = 0.0
            continue
        if k == SPHERE:
            r = shape_size[s, 0]
            for i in range(3):
                aabb_min[s, i] = p[i] - r
                aabb_max[s, i] = p[i] + r
        elif k == BOX:
            for i in range(3):
                e = (abs(R[i, 0]) * shape_size[s, 0] + abs(R[i, 1]) * shape_size[s, 1]
                     + abs(R[i, 2]) * shape_size[s, 2])
                aabb_min[s, i] = p[i] - e
                aabb_max[s, i] = p[i] + e
        elif k == CAPSULE:
            r = shape_size[s, 0]
            hl = shape_size[s, 1]
            for i in range(3):
                e = abs(R[i, 1]) * hl + r
                aabb_min[s, i] = p[i] - e
                aabb_max[s, i] = p[i] + e
        elif k == CYLINDER:
            r = shape_size[s, 0]
            hh = shape_size[s, 1]
            for i in range(3):
                a = abs(R[i, 1])
                e = a * hh + r * math.sqrt(max(0.0, 1.0 - a * a))
                aabb_min[s, i] = p[i] - e
                aabb_max[s, i] = p[i] + e
        else:  # HULL: exact box of the transformed vertices
            q = poly_of_shape[s]
            v0 = poly_table[q, 0]
            for i in range(3):
                aabb_min[s, i] = BIG
                aabb_max[s, i] = -BIG
            for j in range(v0, v0 + poly_table[q, 1]):
                w = add(p, rot(R, v3(poly_vert, j)))
                for i in range(3):
                    if w[i] < aabb_min[s, i]:
                        aabb_min[s, i] = w[i]
                    if w[i] > aabb_max[s, i]:
                        aabb_max[s, i] = w[i]
        b = shape_body[s]
        grow = 0.5 * margin
        rs = 0.0
        if not body_static[b]:
            d = (p[0] - body_pos[b, 0], p[1] - body_pos[b, 1], p[2] - body_pos[b, 2])
            rho = math.sqrt(dot(d, d)) + shape_radius[s]
            vb = v3(body_vel, b)
            wb = v3(body_omega, b)
            rot_reach = math.sqrt(dot(wb, wb)) * rho * h
            rs = math.sqrt(dot(vb, vb)) * h + rot_reach
            grow += rot_reach
            for i in range(3):
                dv = vb[i] * h
                if dv < 0.0:
                    aabb_min[s, i] += dv
                else:
                    aabb_max[s, i] += dv
        reach[s] = rs
        for i in range(3):
            aabb_min[s, i] -= grow
            aabb_max[s, i] += grow


# World state of all shapes as seen by the narrow phase: kind (k,), size (k,3),
# pos (k,3) and rot (k,3,3) in world, poly (k,) polytope index or -1.
WorldShapes = namedtuple("WorldShapes", ["kind", "size", "pos", "rot", "poly"])
