"""Rigid bodies from scene specs: mass properties, principal frame, shapes.

A body's scene frame (its `position` and `orientation`) need not be its principal frame.
The engine works in the principal frame (centre of mass, principal axes; Schmitt sec. 3):
    com    = the centre of mass in the scene frame,
    frame  = rotation scene frame -> principal frame (columns = principal axes),
so a scene-frame point u is the principal-frame point frame^T (u - com). Saving inverts this.
"""
from dataclasses import dataclass, field

import numpy as np

from .rotations import quat_to_matrix
from .shapes import HULL, KIND_BY_NAME, PLANE, shape_size, unit_mass_properties


@dataclass
class BodyModel:
    """Everything about one body that is not its motion state (Python side)."""
    name: str
    mass: float
    inertia: np.ndarray            # (3,) principal moments
    com: np.ndarray                # (3,) centre of mass in the scene frame
    frame: np.ndarray              # (3,3) scene frame -> principal axes
    static: bool
    shapes: list = field(default_factory=list)   # dicts: kind, size, pos, rot, points
    color: tuple = (0.7, 0.7, 0.7)
    material: dict = field(default_factory=dict)
    collision: dict = field(default_factory=dict)
    spec: dict = field(default_factory=dict)      # the scene entry it came from


def _shape_pose(spec):
    pos = np.asarray(spec.get("position", [0.0, 0.0, 0.0]), dtype=np.float64)
    rot = quat_to_matrix(spec.get("orientation", [1.0, 0.0, 0.0, 0.0]))
    return pos, rot


def body_model(spec, where="body"):
    """BodyModel from a validated scene body entry. Raises ValueError naming `where`."""
    shape_specs = list(spec.get("shapes", []))
    if "shape" in spec:
        shape_specs.insert(0, spec["shape"])
    static = bool(spec.get("fixed", False))
    shapes = []
    vol_total = 0.0
    first = np.zeros(3)
    second = np.zeros((3, 3))  # inertia about the scene origin, unit density
    for s in shape_specs:
        kind = KIND_BY_NAME[s["type"]]
        pos, rot = _shape_pose(s)
        points = None
        if kind == HULL:
            points = np.asarray(s["points"], dtype=np.float64)
        if kind == PLANE and not static:
            raise ValueError(f"{where}: a plane shape is only allowed on a fixed body")
        size = shape_size(s)
        shapes.append({"kind": kind, "size": size, "pos": pos, "rot": rot, "points": points,
                       "spec": s})
        if kind == PLANE:
            continue
        try:
            v, c, i_c = unit_mass_properties(kind, size, points)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        c_scene = pos + rot @ c
        vol_total += v
        first += v * c_scene
        i_scene = rot @ i_c @ rot.T
        second += i_scene + v * (np.dot(c_scene, c_scene) * np.eye(3) - np.outer(c_scene, c_scene))
    if static:
        return BodyModel(spec["name"], 0.0, np.zeros(3), np.zeros(3), np.eye(3), True, shapes,
                         tuple(spec.get("color", (0.55, 0.55, 0.58))), spec.get("material", {}),
                         spec.get("collision", {}), spec)
    if "mass" in spec:
        mass = float(spec["mass"])
        density = mass / vol_total if vol_total > 0 else None
    elif "density" in spec:
        if vol_total <= 0:
            raise ValueError(f"{where}: 'density' needs a shape with volume")
        density = float(spec["density"])
        mass = density * vol_total
    else:
        raise ValueError(f"{where}: give 'mass' or 'density'")
    com = first / vol_total if vol_total > 0 else np.zeros(3)
    if "inertia" in spec:
        moments = np.asarray(spec["inertia"], dtype=np.float64)
        frame = np.eye(3)
        if "center_of_mass" in spec:
            com = np.asarray(spec["center_of_mass"], dtype=np.float64)
    else:
        if density is None:
            raise ValueError(f"{where}: without shapes with volume, give 'inertia'")
        i_com = density * (second - vol_total * (np.dot(com, com) * np.eye(3) - np.outer(com, com)))
        moments, frame = principal_axes(i_com)
    if not static and not np.max(moments) > 0.0:
        # one zero moment is a thin rod (its spin about the rod is neither driven nor
        # changed: the report's 8-chain); all three, a point mass, cannot turn at all
        raise ValueError(f"{where}.inertia: a moving body needs a positive principal moment "
                         "(a point mass cannot rotate; give e.g. a small sphere's 2/5 m r^2)")
    for s in shapes:  # shape poses relative to the principal frame
        s["pos"] = frame.T @ (s["pos"] - com)
        s["rot"] = frame.T @ s["rot"]
    return BodyModel(spec["name"], mass, moments, com, frame, False, shapes,
                     tuple(spec.get("color", (0.8, 0.5, 0.2))), spec.get("material", {}),
                     spec.get("collision", {}), spec)


def principal_axes(inertia):
    """Principal moments and a right-handed rotation whose columns are the axes.

    Axes are kept as close to the scene axes as possible (no permutation when the tensor is
    already diagonal)."""
    off = abs(inertia[0, 1]) + abs(inertia[0, 2]) + abs(inertia[1, 2])
    if off <= 1e-12 * max(np.trace(inertia), 1e-300):
        return np.diag(inertia).copy(), np.eye(3)
    w, v = np.linalg.eigh(inertia)
    order = [int(np.argmax(np.abs(v[i, :]))) for i in range(3)]
    if sorted(order) == [0, 1, 2]:
        w, v = w[order], v[:, order]
    for c in range(3):
        if v[c, c] < 0:
            v[:, c] = -v[:, c]
    if np.linalg.det(v) < 0:
        v[:, 2] = -v[:, 2]
    return w, v
