"""Collision detection: shapes, broad phase, narrow phase (contact manifolds), ray casts."""
from .shapes import PLANE, SPHERE, BOX, CAPSULE, CYLINDER, HULL, KIND_NAMES
from .detector import (CollisionDetector, ContactSet, RayHit, excluded_pair_keys,
                       ray_plane_hit)
from .obj import load_obj_points
from .polytope import hull_polytope

__all__ = ["PLANE", "SPHERE", "BOX", "CAPSULE", "CYLINDER", "HULL", "KIND_NAMES",
           "CollisionDetector", "ContactSet", "RayHit", "excluded_pair_keys",
           "ray_plane_hit", "load_obj_points", "hull_polytope"]
