"""What the joint gizmos show, read from a scene: for every joint its kind, both anchors, the
centres of its two bodies (the links), its frame on each side (the axes), the limits of its
free coordinates, a servo's target now and a velocity motor's target rate; for every spring
its two anchors and centres.

`joint_drawing(scene)` takes an engine World's joint poses (World.joint_poses); any other
scene (a test's fake) gives its anchors (and axes, if it has `joint_axis_world`) only.
`JointDrawing.single(...)` describes a joint that does not exist yet (the joint tool's
preview)."""
from __future__ import annotations

import numpy as np

from impulse.engine.joint_poses import JointPoses
from impulse.engine.joints import (
    COORD_NONE,
    COORDS,
    HINGE,
    KIND_NAMES,
)

NO_KIND = -1               # a scene that gives anchors only: no axes, limits or targets
SPRING = len(KIND_NAMES)   # the preview of a spring (springs are no rows of the joint table)


class JointDrawing(JointPoses):
    """The engine's JointPoses (kind NO_KIND where a scene gives anchors only), and the joint
    tool's joint-to-be."""

    @staticmethod
    def single(kind: str, anchors, centres, attached, axis=None) -> JointDrawing:
        """One joint of type `kind` ("spring" included) that is not in the world yet:
        anchors and centres (2,3) of its sides, its axis (if its type has one) as frame x."""
        anchors = np.asarray(anchors, dtype=np.float64).reshape(1, 2, 3)
        centres = np.asarray(centres, dtype=np.float64).reshape(1, 2, 3)
        attached = np.asarray(attached, dtype=bool).reshape(1, 2)
        if kind == "spring":
            return _drawing(0, springs=(anchors, centres, attached))
        d = _drawing(1)
        d.kind[0] = KIND_NAMES[kind]
        d.anchor[0], d.centre[0], d.attached[0] = anchors[0], centres[0], attached[0]
        if axis is not None:
            d.frame[0] = frame_along(axis)
        d.coord[0] = COORDS[d.kind[0]]
        return d


def _drawing(m: int, springs=None) -> JointDrawing:
    """m joints at the origin with world frames, no coordinates, limits or targets."""
    s_anchor, s_centre, s_attached = springs if springs is not None else \
        (np.zeros((0, 2, 3)), np.zeros((0, 2, 3)), np.zeros((0, 2), dtype=bool))
    return JointDrawing(kind=np.full(m, NO_KIND, dtype=np.int64), anchor=np.zeros((m, 2, 3)),
                        centre=np.zeros((m, 2, 3)), attached=np.zeros((m, 2), dtype=bool),
                        frame=np.tile(np.identity(3), (m, 2, 1, 1)),
                        coord=np.full((m, 2), COORD_NONE, dtype=np.int64),
                        limits=np.tile([-np.inf, np.inf], (m, 2, 1)),
                        target=np.full(m, np.nan), rate=np.full(m, np.nan), spring_anchor=s_anchor,
                        spring_centre=s_centre, spring_attached=s_attached)


def frame_along(axis) -> np.ndarray:
    """A right-handed frame (columns) whose x is the unit `axis`."""
    x = np.asarray(axis, dtype=np.float64)
    x = x / max(float(np.linalg.norm(x)), 1e-12)
    helper = np.array([0.0, 1.0, 0.0]) if abs(x[1]) < 0.9 else np.array([1.0, 0.0, 0.0])
    y = helper - np.dot(helper, x) * x
    y /= np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def _world_drawing(world) -> JointDrawing:
    return JointDrawing(**vars(world.joint_poses()))


def _anchors_only(scene) -> JointDrawing:
    anchors = np.asarray(scene.joint_anchor_world(), dtype=np.float64).reshape(-1, 2, 3)
    d = _drawing(len(anchors))
    d.anchor[:] = anchors
    axes = getattr(scene, "joint_axis_world", None)
    if axes is not None and len(anchors):
        d.kind[:] = HINGE
        d.frame[:] = np.array([frame_along(a) for a in np.asarray(axes()).reshape(-1, 3)])[:, None]
    return d


def joint_drawing(scene) -> JointDrawing | None:
    """The joints and springs of an engine World, or the anchors of another scene (None if it
    has no joints at all)."""
    if hasattr(scene, "joint_poses"):
        return _world_drawing(scene)
    if hasattr(scene, "joint_anchor_world"):
        return _anchors_only(scene)
    return None
