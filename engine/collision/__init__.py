"""Collision detection: shapes, broad phase, narrow phase (contact manifolds), ray casts.

Public face (all arrays float64 / int64, world frame, Y up):

    det = CollisionDetector(shape_body, shape_kind, shape_size, shape_local_pos,
                            shape_local_rot, hull_vertex, shape_hull_start, shape_hull_count,
                            shape_group, shape_mask, excluded_keys, margin=0.01)
    cs = det.detect(body_pos, body_rot, body_vel, body_omega, body_static, h)  # ContactSet
    rows = cs.match(previous_cs)       # warm start: previous row or -1 per contact
    hit = det.raycast(origin, direction, body_pos, body_rot)            # RayHit or None

Kinds: PLANE=0 (static, half space below local +Y), SPHERE=1 (r), BOX=2 (half extents),
CAPSULE=3 (r, half segment length along Y), CYLINDER=4 (r, half height along Y), HULL=5
(convex hull of hull_vertex rows). Contact normals point from B to A; depth > 0 means
overlap; A is the shape with the larger kind code (ties: lower shape index).
Modules: shapes (codes, poses, AABBs), polytope (hull/box/cylinder topology), obj (OBJ
points), broadphase (sweep and prune + filters), narrow_basic / narrow_boxbox /
narrow_polytope / gjk (contacts), manifold (output rows, clipping, 4-point reduction),
dispatch (pair table), pipeline (one compiled detection pass), persist (matching),
raycast, detector (Python wrapper), bench (timing of resting cubes).
Editing a kernel: the compiled kernels are cached in a folder keyed by every engine source
(engine/kernel_cache.py), so an edit anywhere compiles afresh and nothing stale runs.
"""
from .detector import CollisionDetector, ContactSet, RayHit, excluded_pair_keys, ray_plane_hit
from .obj import load_obj_points
from .polytope import hull_polytope
from .shapes import BOX, CAPSULE, CYLINDER, HULL, KIND_NAMES, PLANE, SPHERE

__all__ = ["PLANE", "SPHERE", "BOX", "CAPSULE", "CYLINDER", "HULL", "KIND_NAMES",
           "CollisionDetector", "ContactSet", "RayHit", "excluded_pair_keys",
           "ray_plane_hit", "load_obj_points", "hull_polytope"]
