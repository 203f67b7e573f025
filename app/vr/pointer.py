"""What a controller points at: the body hit by its aim ray (the renderer's GPU picker,
the same as the mouse pick) and the joint whose anchor lies nearest to the ray.

The aim pose follows OpenXR: the ray starts at the pose's origin and runs along its -Z.
"""

from __future__ import annotations

import numpy as np

from impulse.app.mathutil import look_at, perspective

RAY_FOV_DEG = 0.2         # the picker's one-pixel view around the ray
RAY_NEAR, RAY_FAR = 0.01, 100.0
JOINT_RADIUS = 0.08       # metres from the ray within which a joint anchor counts as hit


def aim_ray(aim: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(origin, unit direction) of an aim pose (4, 4)."""
    d = -np.asarray(aim)[:3, 2]
    return np.asarray(aim)[:3, 3].copy(), d / np.linalg.norm(d)


def pick_body(renderer, origin, direction) -> tuple[int, np.ndarray | None]:
    """(body, world hit point) of the prepared scene along the ray; (-1, None) if none."""
    view = look_at(origin, np.asarray(origin) + direction)
    proj = perspective(RAY_FOV_DEG, 1.0, RAY_NEAR, RAY_FAR)
    return renderer.pick(view, proj, 0.0, 0.0, (1, 1))


def pick_joint(world, origin, direction, radius: float = JOINT_RADIUS) -> str | None:
    """The joint (or spring) with an anchor within ``radius`` of the ray, nearest first."""
    best, best_t = None, np.inf
    for name in world.scene_joint_names:
        for point in world.joint_anchors(name):
            rel = point - origin
            t = float(rel @ direction)
            if t > 0 and np.linalg.norm(rel - t * direction) <= radius and t < best_t:
                best, best_t = name, t
    return best
