"""The one conversion between a running World and scene-file entries, both ways.

A body's scene entry places its scene frame (`position`, `orientation`) and gives the
velocity of that frame's origin; the World keeps the centre of mass and the principal axes
(BodyModel.com, BodyModel.frame: scene frame -> principal axes). So, with R_s the scene
frame's rotation and p_s its origin,
    R = R_s F,   x = p_s + R_s c,   v = v_origin + w x (x - p_s),
and back. A joint's anchors and axes are written in each body's scene frame
(`local_anchors`, `local_axes`, `local_refs`), which hold whatever the bodies have done
since the joint was made; world-frame `anchor`/`axis` keys hold only at load time.

engine/scene.py (whole documents) and the World's live edits use these; nothing else
converts.
"""
import copy

import numpy as np

from .joint_specs import scene_frame_axes
from .rotations import matrix_to_quat, quat_to_matrix

MOTION_KEYS = ("position", "orientation", "velocity", "angular_velocity")
WORLD_FRAME_KEYS = ("anchor", "anchors", "axis", "ref", "axis2")


def _floats(x):
    return [float(v) for v in x]


def motion_from_entry(model, entry):
    """(x, R, v, w): the exact centre, principal rotation and velocities of a body that its
    scene entry places (velocities zero for a fixed body)."""
    rot_scene = quat_to_matrix(entry.get("orientation", [1.0, 0.0, 0.0, 0.0]))
    pos_scene = np.asarray(entry.get("position", [0.0, 0.0, 0.0]), dtype=np.float64)
    rot = rot_scene @ model.frame
    pos = pos_scene + rot_scene @ model.com
    if model.static:
        return pos, rot, np.zeros(3), np.zeros(3)
    w = np.asarray(entry.get("angular_velocity", [0.0, 0.0, 0.0]), dtype=np.float64)
    v = np.asarray(entry.get("velocity", [0.0, 0.0, 0.0]), dtype=np.float64)
    return pos, rot, v + np.cross(w, pos - pos_scene), w


def scene_pose(model, pos, rot):
    """(origin, quaternion [w, x, y, z]) of the scene frame of a body at centre pos, axes rot."""
    rot_scene = rot @ model.frame.T
    origin = pos - rot_scene @ model.com
    return origin, matrix_to_quat(rot_scene)


def body_entry(world, b):
    """Body b's scene entry with its current pose and velocities."""
    m = world.models[b]
    entry = copy.deepcopy(m.spec)
    origin, quat = scene_pose(m, world.B.pos[b], world.B.rot[b])
    entry["position"] = _floats(origin)
    entry["orientation"] = _floats(quat)
    if m.static:
        entry.pop("velocity", None)
        entry.pop("angular_velocity", None)
    else:
        w = world.B.omega[b]
        entry["velocity"] = _floats(world.B.vel[b] - np.cross(w, world.B.pos[b] - origin))
        entry["angular_velocity"] = _floats(w)
    return entry


def principal_to_scene(model, p):
    """A point in a body's principal frame -> its scene frame (model None: the world)."""
    return np.asarray(p, dtype=np.float64) if model is None else model.com + model.frame @ p


def scene_to_principal(model, u):
    """A point in a body's scene frame -> its principal frame (model None: the world)."""
    u = np.asarray(u, dtype=np.float64)
    return u if model is None else model.frame.T @ (u - model.com)


def joint_entry(world, jm, arrays, i, is_spring):
    """The entry of joint row i (of world.J, or world.Sp for a spring): anchors and axes in
    the bodies' scene frames, a spring's rest length as it is now."""
    entry = copy.deepcopy(jm.spec)
    for key in WORLD_FRAME_KEYS:
        entry.pop(key, None)
    sides = [int(b) for b in arrays.const.body[i]]
    entry["local_anchors"] = [
        _floats(principal_to_scene(world.models[b] if b >= 0 else None, arrays.const.anchor[i, s]))
        for s, b in enumerate(sides)]
    if is_spring:
        entry["rest_length"] = float(arrays.const.rest[i])
    elif entry["type"] != "ball":
        axes = [scene_frame_axes(world, b, arrays.const.frame[i, s]) for s, b in enumerate(sides)]
        entry["local_axes"] = [_floats(x) for x, _ in axes]
        entry["local_refs"] = [_floats(y) for _, y in axes]
    return entry
