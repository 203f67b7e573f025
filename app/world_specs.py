"""Scene-file entries of one body or joint of a live World, with its current motion state.

The same conversions as engine.scene.world_to_scene, for a single row, so an edit can
remove and re-add just that body or joint.
"""
from __future__ import annotations

import copy

import numpy as np

from impulse.engine.rotations import quat_to_matrix


def _floats(x) -> list[float]:
    return [float(v) for v in x]


def body_spec(world, b: int) -> dict:
    """Body b's scene entry with its current pose and velocities."""
    m = world.models[b]
    spec = copy.deepcopy(m.spec)
    pos, quat = world.body_scene_pose(b)
    spec["position"] = _floats(pos)
    spec["orientation"] = _floats(quat)
    if m.static:
        spec.pop("velocity", None)
        spec.pop("angular_velocity", None)
    else:
        w = np.asarray(world.body_omega[b], dtype=np.float64)
        spec["velocity"] = _floats(world.body_vel[b] - np.cross(w, world.body_pos[b] - pos))
        spec["angular_velocity"] = _floats(w)
    return spec


def joint_model(world, name: str):
    """(JointModel, arrays, row) of a joint or spring by name."""
    for models, arr in ((world.joint_models, world.J), (world.spring_models, world.Sp)):
        for i, jm in enumerate(models):
            if jm.name == name:
                return jm, arr, i
    raise KeyError(f"no joint named {name!r}")


def all_joint_names(world) -> list[str]:
    return [j.name for j in world.joint_models] + [s.name for s in world.spring_models]


def joint_spec(world, name: str) -> dict:
    """The joint's scene entry with its anchors as body-frame points (`local_anchors`)."""
    jm, arr, i = joint_model(world, name)
    spec = copy.deepcopy(jm.spec)
    spec.pop("anchor", None)
    spec.pop("anchors", None)
    spec["local_anchors"] = [_floats(world._principal_to_scene(arr.body[i, s], arr.anchor[i, s]))
                             for s in range(2)]
    if jm.kind == "spring":
        spec["rest_length"] = float(world.Sp.rest[i])
    return spec


def joint_world_anchors(world, name: str) -> np.ndarray:
    """(2, 3) world points of a joint's two anchors."""
    _, arr, i = joint_model(world, name)
    return np.array([world._world_point(arr.body[i, s], arr.anchor[i, s]) for s in range(2)])


def joints_of(world, body_name: str) -> list[str]:
    return [j.name for j in world.joint_models + world.spring_models if body_name in j.bodies]


def set_body_motion(world, b: int, spec: dict) -> None:
    """Put body b's state back to a spec's pose and velocities (as World.add_body would)."""
    m = world.models[b]
    rot_scene = quat_to_matrix(spec.get("orientation", [1.0, 0.0, 0.0, 0.0]))
    pos_scene = np.asarray(spec.get("position", [0.0, 0.0, 0.0]), dtype=np.float64)
    world.B.rot[b] = rot_scene @ m.frame
    world.B.pos[b] = pos_scene + rot_scene @ m.com
    if not m.static:
        w = np.asarray(spec.get("angular_velocity", [0.0, 0.0, 0.0]), dtype=np.float64)
        v = np.asarray(spec.get("velocity", [0.0, 0.0, 0.0]), dtype=np.float64)
        world.B.omega[b] = w
        world.B.vel[b] = v + np.cross(w, world.B.pos[b] - pos_scene)
