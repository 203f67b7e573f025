"""JSON Schema (draft 2020-12) of the scene file format, version 1.

Unknown keys are errors everywhere (additionalProperties: false). Every physical magnitude
has bounds (README "Limits", like MuJoCo's documented limits): beyond them the engine's
double-precision arithmetic, its tolerances or its step would not mean anything.
"""
from .joints import W_SIZE
from .shape_kinds import KIND_NAMES, SIZE_KEYS

VERSION = 1

# Bounds (SI units). Coordinates: positions, anchors, camera; sizes: shape dimensions.
COORD = 1e6          # |x| [m]
SIZE = (1e-4, 1e4)   # shape dimensions [m]
SPEED = 1e4          # |v| [m/s], |omega| [rad/s]
MASS = (1e-6, 1e9)   # [kg]
DENSITY = (1e-3, 1e6)    # [kg/m^3]
INERTIA = 1e15       # principal moments [kg m^2]
STIFFNESS = 1e9      # spring stiffness [N/m] (and torsion [N m/rad])
DAMPING = 1e7        # [N s/m]
FRICTION = 10.0      # coefficient of friction
ROLLING = 1.0        # torsional / rolling friction coefficient [m]
FORCE = 1e9          # motor force [N] or torque [N m], brake, external loads
GRAVITY = 1e4        # |g| component [m/s^2]
INT64 = 2 ** 63 - 1  # collision group / mask bits


def _num(lo=None, hi=None, exclusive_lo=False):
    d = {"type": "number"}
    if lo is not None:
        d["exclusiveMinimum" if exclusive_lo else "minimum"] = lo
    if hi is not None:
        d["maximum"] = hi
    return d


def _int(lo, hi):
    return {"type": "integer", "minimum": lo, "maximum": hi}


def _vec(n, item):
    return {"type": "array", "items": item, "minItems": n, "maxItems": n}


_coord = _num(-COORD, COORD)
_vec3 = _vec(3, _coord)
_quat = _vec(4, _num(-1e3, 1e3))
_size = _num(SIZE[0], SIZE[1])
_speed3 = _vec(3, _num(-SPEED, SPEED))
_name = {"type": "string", "minLength": 1, "maxLength": 200}
_color = {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1},
          "minItems": 3, "maxItems": 4}


def _shape(kind, props):
    required = list(SIZE_KEYS[kind])
    assert sorted(required) == sorted(props), kind     # shape_kinds.SIZE_KEYS: one table
    return {
        "type": "object",
        "properties": {"type": {"const": kind}, "position": _vec3, "orientation": _quat,
                       **props},
        "required": ["type", *required],
        "additionalProperties": False,
    }


SHAPE = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"enum": list(KIND_NAMES)}},
    "allOf": [
        {"if": {"properties": {"type": {"const": k}}}, "then": s} for k, s in [
            ("plane", _shape("plane", {})),
            ("sphere", _shape("sphere", {"radius": _size})),
            ("box", _shape("box", {"size": _vec(3, _size)})),
            ("capsule", _shape("capsule",
                               {"radius": _size, "length": _num(0, SIZE[1])})),
            ("cylinder", _shape("cylinder",
                                {"radius": _size, "height": _size})),
            ("hull", _shape("hull", {"points": {
                "type": "array", "items": _vec(3, _num(-SIZE[1], SIZE[1])), "minItems": 4,
                "maxItems": 10000}})),
        ]
    ],
}

MATERIAL = {
    "type": "object",
    "properties": {"restitution": _num(0, 1),
                   "static_friction": _num(0, FRICTION),
                   "dynamic_friction": _num(0, FRICTION),
                   "torsional_friction": _num(0, ROLLING),
                   "rolling_friction": _num(0, ROLLING)},
    "additionalProperties": False,
}

BODY = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": _name,
        "description": {"type": "string", "maxLength": 100000},
        "shape": SHAPE,
        "shapes": {"type": "array", "items": SHAPE, "maxItems": 10000},
        "mass": _num(*MASS),
        "density": _num(*DENSITY),
        "inertia": _vec(3, _num(0, INERTIA)),
        "center_of_mass": _vec(3, _num(-SIZE[1], SIZE[1])),
        "position": _vec3,
        "orientation": _quat,
        "velocity": _speed3,
        "angular_velocity": _speed3,
        "fixed": {"type": "boolean"},
        "material": MATERIAL,
        "color": _color,
        "collision": {
            "type": "object",
            "properties": {"group": _int(0, INT64),
                           "mask": _int(0, INT64),
                           "enabled": {"type": "boolean"}},
            "additionalProperties": False,
        },
    },
    "not": {"required": ["mass", "density"]},
    "additionalProperties": False,
}

_limits = {
    "type": "object",
    "properties": {"lower": _coord, "upper": _coord},
    "additionalProperties": False,
}

_sequence = {
    "type": "object",
    "required": ["times", "values"],
    "properties": {"times": {"type": "array", "items": _num(0, 1e9), "minItems": 1,
                             "maxItems": 100000},
                   "values": {"type": "array", "items": _coord, "minItems": 1,
                              "maxItems": 100000},
                   "repeat": {"type": "boolean"}},
    "additionalProperties": False,
}

# an external load's force or torque: constant, or a time sequence of 3-vectors
_load_sequence = {
    "type": "object",
    "required": ["times", "values"],
    "properties": {"times": {"type": "array", "items": _num(0, 1e9), "minItems": 1,
                             "maxItems": 100000},
                   "values": {"type": "array", "items": _vec(3, _num(-FORCE, FORCE)),
                              "minItems": 1, "maxItems": 100000},
                   "interpolation": {"enum": ["linear", "step"]},
                   "repeat": {"type": "boolean"}},
    "additionalProperties": False,
}
_load_vector = {"oneOf": [_vec(3, _num(-FORCE, FORCE)), _load_sequence]}
_effort_sequence = {**_load_sequence, "properties": {
    **_load_sequence["properties"],
    "values": {"type": "array", "items": _num(-FORCE, FORCE), "minItems": 1,
               "maxItems": 100000}}}

LOAD = {   # engine/loads.py: a body load (force, torque) or a joint load (effort)
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": _name,
        "body": _name,
        "force": _load_vector,
        "torque": _load_vector,
        "frame": {"enum": ["world", "body"]},
        "point": _vec3,
        "joint": _name,
        "effort": {"oneOf": [_num(-FORCE, FORCE), _effort_sequence]},
    },
    "additionalProperties": False,
}

JOINT_TYPES = ["ball", "hinge", "slider", "universal", "cylindrical", "rail", "planar", "fixed",
               "generic", "spring"]

JOINT = {
    "type": "object",
    "required": ["name", "type", "bodies"],
    "properties": {
        "name": _name,
        "type": {"enum": JOINT_TYPES},
        "axis": _vec3,
        "ref": _vec3,
        "axis2": _vec3,
        "local_axes": {"type": "array", "items": _vec3, "minItems": 2, "maxItems": 2},
        "local_refs": {"type": "array", "items": _vec3, "minItems": 2, "maxItems": 2},
        "locked": {"type": "array", "uniqueItems": True,
                   "items": {"enum": ["x", "y", "z", "rx", "ry", "rz"]}},
        "limits": _limits,
        "limits2": _limits,
        "motor": {
            "type": "object",
            "required": ["mode"],
            "properties": {"mode": {"enum": ["velocity", "position"]},
                           "target": {"oneOf": [_coord, _sequence]},
                           "max_force": _num(0, FORCE, exclusive_lo=True),
                           "brake": _num(0, FORCE)},
            "additionalProperties": False,
        },
        "spring": {
            "type": "object",
            "properties": {"stiffness": _num(0, STIFFNESS),
                           "damping": _num(0, DAMPING),
                           "rest": _coord},
            "additionalProperties": False,
        },
        "bodies": {"type": "array", "items": _name, "minItems": 2, "maxItems": 2},
        "anchor": _vec3,
        "anchors": {"type": "array", "items": _vec3, "minItems": 2, "maxItems": 2},
        "local_anchors": {"type": "array", "items": _vec3, "minItems": 2, "maxItems": 2},
        "stiffness": _num(0, STIFFNESS),
        "damping": _num(0, DAMPING),
        "rest_length": _num(0, COORD),
        "collide": {"type": "boolean"},
    },
    "oneOf": [{"required": ["anchor"]}, {"required": ["anchors"]},
              {"required": ["local_anchors"]}],
    "allOf": [{"if": {"properties": {"type": {"const": "spring"}}},
               "then": {"required": ["stiffness"]}}],
    "additionalProperties": False,
}

SETTINGS = {
    "type": "object",
    "properties": {
        "h": _num(1e-6, 1),
        "gravity": _vec(3, _num(-GRAVITY, GRAVITY)),
        "solver": {"enum": ["iterative", "linear", "tree"]},
        "eps_pos": _num(1e-12, 1),
        "eps_vel": _num(1e-12, 100),
        "max_cycles": _int(1, 1_000_000),
        "time_budget_ms": _num(0, 60_000),
        "taylor_order": _int(1, 12),
        "velocity_correction": {"type": "boolean"},
        "max_halvings": _int(0, 12),
        "spring_mode": {"enum": ["approximate", "iterated"]},
        "restitution_law": {"enum": ["newton", "poisson"]},
        "restitution_threshold": _num(0, SPEED),
        "contact_margin": _num(0, 10),
        "shock_passes": _int(-1, 100_000),
        "contact_cycles": _int(1, 100_000),
        "contact_tolerance": _num(1e-12, 1),
        "sleeping": {"type": "boolean"},
        "sleep_time": _num(0, 1e6),
        "sleep_speed": _num(0, SPEED),
        "sleep_drift": _num(0, 1e6),
        "extrapolate": {"type": "boolean"},
        "relaxation": _num(0, 1.95),
        "warm_start": {"type": "boolean"},
        "islands": {"type": "boolean"},
    },
    "additionalProperties": False,
}

_numbers = {"type": "array", "items": {"type": "number"}, "maxItems": 10_000_000}
STATE = {   # exact resume (engine/resume.py): written by saves, never needed by hand
    "type": "object",
    "required": ["time", "h_prev", "bodies"],
    "properties": {
        "time": _num(-1e9, 1e9),
        "h_prev": _num(0, 1),
        "relax_prev": _num(0, 2),
        "bodies": {"type": "object", "additionalProperties": {
            "type": "object",
            "required": ["pos", "rot", "vel", "omega"],
            "properties": {"pos": _vec3, "rot": _vec(9, _num(-2, 2)),
                           "vel": _vec(3, _num(-1e10, 1e10)),
                           "omega": _vec(3, _num(-1e10, 1e10)), "stopped": {"type": "boolean"},
                           "asleep": _int(0, 2**53), "still": _num(0, 1e12),
                           "still_from": _vec(12, _coord)},
            "additionalProperties": False}},
        "joints": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["anchors", "frames"],
            "properties": {"anchors": _vec(6, _coord), "frames": _vec(18, _num(-2, 2)),
                           "angles": _vec(2, _num(-1e9, 1e9)),
                           "warm": _vec(W_SIZE, _num(-1e30, 1e30))},
            "additionalProperties": False}},
        "springs": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["force_prev", "anchors"],
            "properties": {"force_prev": _vec(3, _num(-1e30, 1e30)),
                           "anchors": _vec(6, _coord)},
            "additionalProperties": False}},
        "contacts": {"type": "object", "additionalProperties": {
            "type": "array", "maxItems": 10_000_000,
            "items": {"oneOf": [{"type": "number"}, _numbers]}}},
    },
    "additionalProperties": False,
}

SCENE = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["format", "version", "bodies"],
    "properties": {
        "format": {"const": "impulse-scene"},
        "version": {"type": "integer", "minimum": 1, "maximum": VERSION},
        "name": {"type": "string", "maxLength": 1000},
        "description": {"type": "string", "maxLength": 100000},
        "settings": SETTINGS,
        "camera": {
            "type": "object",
            "properties": {"eye": _vec3, "target": _vec3,
                           "fov_deg": {"type": "number", "exclusiveMinimum": 0,
                                       "exclusiveMaximum": 180}},
            "additionalProperties": False,
        },
        "bodies": {"type": "array", "items": BODY, "maxItems": 100_000},
        "joints": {"type": "array", "items": JOINT, "maxItems": 100_000},
        "loads": {"type": "array", "items": LOAD, "maxItems": 100_000},
        "state": STATE,
        "visuals": {   # engine/visual_meshes.py: the viewer's meshes, in an archive beside
            "type": "object",                      # the scene file
            "required": ["file"],
            "properties": {"file": {"type": "string", "minLength": 1, "maxLength": 1000,
                                    "pattern": r"^[^/\\]+$"}},
            "additionalProperties": False,
        },
        "contacts": {
            "type": "object",
            "properties": {
                "enabled": {"type": "boolean"},
                "disabled_pairs": {"type": "array", "items": {
                    "type": "array", "items": _name, "minItems": 2, "maxItems": 2}},
            },
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}
