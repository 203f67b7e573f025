"""Scene-file joint entries -> joint table rows (kind, anchors, frames, parameters).

A joint's frame (columns x, y, z) is given in world coordinates at load time by `axis` (x),
`ref` or, for the universal joint, `axis2` (y), or in each body's scene frame by
`local_axes`/`local_refs` (what saving writes). Each body stores the frame in its principal
frame, so the frames coincide in the world as long as the joint holds.
"""
import numpy as np

from .joints import (
    COORD_NONE,
    COORDS,
    GENERIC,
    KIND_NAMES,
    LOCKS,
    MOTOR_POSITION,
    MOTOR_VELOCITY,
    P_BRAKE,
    P_COORD1,
    P_COORD2,
    P_HI1,
    P_HI2,
    P_LIM1,
    P_LIM2,
    P_LO1,
    P_LO2,
    P_MAX,
    P_MOTOR,
    P_RLOCK,
    P_SEQ_LEN,
    P_SEQ_REPEAT,
    P_SIZE,
    P_SPRING_C,
    P_SPRING_K,
    P_SPRING_REST,
    P_TARGET,
    P_TLOCK,
    UNIVERSAL,
)

AXIS_BITS = {"x": 1, "y": 2, "z": 4}


def _unit(v, what):
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v)
    if not n > 1e-12:
        raise ValueError(f"{what} has zero length")
    return v / n


def perpendicular(x):
    """A unit vector perpendicular to the unit vector x."""
    e = np.eye(3)[int(np.argmin(np.abs(x)))]
    y = e - np.dot(e, x) * x
    return y / np.linalg.norm(y)


def frame_from(x, y_hint):
    """Orthonormal frame with first column x and second column the part of y_hint normal to x."""
    y = y_hint - np.dot(y_hint, x) * x
    if np.linalg.norm(y) < 1e-9:
        raise ValueError("'ref'/'axis2' must not be parallel to 'axis'")
    y /= np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def world_frame(spec):
    """The joint frame in world coordinates from axis / ref / axis2 (defaults: world axes)."""
    if "axis" not in spec:
        return np.eye(3)
    x = _unit(spec["axis"], "'axis'")
    hint = spec.get("axis2") if spec["type"] == "universal" else spec.get("ref")
    y = _unit(hint, "'axis2'" if spec["type"] == "universal" else "'ref'") if hint is not None \
        else perpendicular(x)
    return frame_from(x, y)


def local_frames(world, spec, idx):
    """(2,3,3) joint frames in the bodies' principal frames."""
    if "local_axes" in spec:
        out = []
        for side, b in enumerate(idx):
            x = _unit(spec["local_axes"][side], "'local_axes'")
            y = _unit(spec["local_refs"][side], "'local_refs'") if "local_refs" in spec \
                else perpendicular(x)
            f_scene = frame_from(x, y)
            out.append(f_scene if b < 0 else world.models[b].frame.T @ f_scene)
        return np.array(out)
    f0 = world_frame(spec)
    return np.array([f0 if b < 0 else world.B.rot[b].T @ f0 for b in idx])


def scene_frame_axes(world, b, frame):
    """(x, y) of a stored joint frame in body b's scene frame (for saving)."""
    f = frame if b < 0 else world.models[b].frame @ frame
    return f[:, 0], f[:, 1]


def parameters(spec):
    """(kind code, parameter row, target sequence rows) of a joint entry."""
    kind = KIND_NAMES[spec["type"]]
    param = np.zeros(P_SIZE)
    if kind == GENERIC:
        locked = spec.get("locked", [])
        param[P_TLOCK] = sum(AXIS_BITS[a] for a in locked if len(a) == 1)
        param[P_RLOCK] = sum(AXIS_BITS[a[1]] for a in locked if len(a) == 2)
    else:
        param[P_TLOCK], param[P_RLOCK] = LOCKS[kind]
    param[P_COORD1], param[P_COORD2] = COORDS[kind]
    # motors, limits and springs act on a joint coordinate: a joint without one would
    # silently ignore them (a ball joint has three free rotations and no angle to drive)
    for key, coord in (("motor", 0), ("limits", 0), ("spring", 0), ("limits2", 1)):
        if key in spec and COORDS[kind][coord] == COORD_NONE:
            raise ValueError(
                f"{key} needs a second joint coordinate, and a {spec['type']} joint has one"
                if coord else f"{key} needs a joint coordinate, and a {spec['type']} joint "
                f"has none (hinge, slider, universal, cylindrical, rail and planar have)")
    for key, lo, hi, on in (("limits", P_LO1, P_HI1, P_LIM1), ("limits2", P_LO2, P_HI2, P_LIM2)):
        if key in spec:
            lim = spec[key]
            param[lo] = lim.get("lower", -np.inf)
            param[hi] = lim.get("upper", np.inf)
            if param[lo] > param[hi]:
                raise ValueError(f"'{key}': lower is above upper")
            param[on] = 1.0
    seq = np.zeros((0, 2))
    if "motor" in spec:
        motor = spec["motor"]
        param[P_MOTOR] = MOTOR_VELOCITY if motor["mode"] == "velocity" else MOTOR_POSITION
        param[P_MAX] = motor.get("max_force", np.inf)
        param[P_BRAKE] = motor.get("brake", 0.0)
        target = motor.get("target", 0.0)
        if isinstance(target, dict):
            times = np.asarray(target["times"], dtype=np.float64)
            values = np.asarray(target["values"], dtype=np.float64)
            if len(times) != len(values) or np.any(np.diff(times) < 0):
                raise ValueError("'motor.target': times must rise and match the values")
            seq = np.column_stack([times, values])
            param[P_SEQ_LEN] = len(times)
            param[P_SEQ_REPEAT] = 1.0 if target.get("repeat", False) else 0.0
        else:
            param[P_TARGET] = target
    if "spring" in spec:
        param[P_SPRING_K] = spec["spring"].get("stiffness", 0.0)
        param[P_SPRING_C] = spec["spring"].get("damping", 0.0)
        param[P_SPRING_REST] = spec["spring"].get("rest", 0.0)
    if kind == UNIVERSAL and "axis" in spec and "axis2" in spec:
        x, y = _unit(spec["axis"], "'axis'"), _unit(spec["axis2"], "'axis2'")
        if abs(np.dot(x, y)) > 1e-6:
            raise ValueError("a universal joint's 'axis' and 'axis2' must be perpendicular")
    return kind, param, seq
