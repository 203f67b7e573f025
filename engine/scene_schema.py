"""JSON Schema (draft 2020-12) of the scene file format, version 1.

Unknown keys are errors everywhere (additionalProperties: false).
"""
VERSION = 1

_vec3 = {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3}
_quat = {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4}
_pos = {"type": "number", "exclusiveMinimum": 0}
_name = {"type": "string", "minLength": 1, "maxLength": 200}
_color = {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1},
          "minItems": 3, "maxItems": 4}


def _shape(kind, required, props):
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
    "properties": {"type": {"enum": ["plane", "sphere", "box", "capsule", "cylinder", "hull"]}},
    "allOf": [
        {"if": {"properties": {"type": {"const": k}}}, "then": s} for k, s in [
            ("plane", _shape("plane", [], {})),
            ("sphere", _shape("sphere", ["radius"], {"radius": _pos})),
            ("box", _shape("box", ["size"], {"size": {**_vec3, "items": _pos}})),
            ("capsule", _shape("capsule", ["radius", "length"],
                               {"radius": _pos, "length": {"type": "number", "minimum": 0}})),
            ("cylinder", _shape("cylinder", ["radius", "height"],
                                {"radius": _pos, "height": _pos})),
            ("hull", _shape("hull", ["points"], {"points": {
                "type": "array", "items": _vec3, "minItems": 4}})),
        ]
    ],
}

MATERIAL = {
    "type": "object",
    "properties": {"restitution": {"type": "number", "minimum": 0, "maximum": 1},
                   "static_friction": {"type": "number", "minimum": 0},
                   "dynamic_friction": {"type": "number", "minimum": 0}},
    "additionalProperties": False,
}

BODY = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": _name,
        "description": {"type": "string"},
        "shape": SHAPE,
        "shapes": {"type": "array", "items": SHAPE},
        "mass": _pos,
        "density": _pos,
        "inertia": {**_vec3, "items": {"type": "number", "minimum": 0}},
        "center_of_mass": _vec3,
        "position": _vec3,
        "orientation": _quat,
        "velocity": _vec3,
        "angular_velocity": _vec3,
        "fixed": {"type": "boolean"},
        "material": MATERIAL,
        "color": _color,
        "collision": {
            "type": "object",
            "properties": {"group": {"type": "integer", "minimum": 0},
                           "mask": {"type": "integer", "minimum": 0},
                           "enabled": {"type": "boolean"}},
            "additionalProperties": False,
        },
    },
    "not": {"required": ["mass", "density"]},
    "additionalProperties": False,
}

_limits = {
    "type": "object",
    "properties": {"lower": {"type": "number"}, "upper": {"type": "number"}},
    "additionalProperties": False,
}

_sequence = {
    "type": "object",
    "required": ["times", "values"],
    "properties": {"times": {"type": "array", "items": {"type": "number"}, "minItems": 1},
                   "values": {"type": "array", "items": {"type": "number"}, "minItems": 1},
                   "repeat": {"type": "boolean"}},
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
                           "target": {"oneOf": [{"type": "number"}, _sequence]},
                           "max_force": {"type": "number", "minimum": 0},
                           "brake": {"type": "number", "minimum": 0}},
            "additionalProperties": False,
        },
        "spring": {
            "type": "object",
            "properties": {"stiffness": {"type": "number", "minimum": 0},
                           "damping": {"type": "number", "minimum": 0},
                           "rest": {"type": "number"}},
            "additionalProperties": False,
        },
        "bodies": {"type": "array", "items": _name, "minItems": 2, "maxItems": 2},
        "anchor": _vec3,
        "anchors": {"type": "array", "items": _vec3, "minItems": 2, "maxItems": 2},
        "local_anchors": {"type": "array", "items": _vec3, "minItems": 2, "maxItems": 2},
        "stiffness": {"type": "number", "minimum": 0},
        "damping": {"type": "number", "minimum": 0},
        "rest_length": {"type": "number", "minimum": 0},
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
        "h": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "gravity": _vec3,
        "solver": {"enum": ["iterative", "linear", "tree"]},
        "eps_pos": _pos,
        "eps_vel": _pos,
        "max_iterations": {"type": "integer", "minimum": 1},
        "time_budget_ms": {"type": "number", "minimum": 0},
        "taylor_order": {"type": "integer", "minimum": 1, "maximum": 12},
        "velocity_correction": {"type": "boolean"},
        "max_halvings": {"type": "integer", "minimum": 0, "maximum": 12},
        "spring_mode": {"enum": ["approximate", "iterated"]},
        "restitution_law": {"enum": ["newton", "poisson"]},
        "restitution_threshold": {"type": "number", "minimum": 0},
        "contact_margin": {"type": "number", "minimum": 0},
        "shock_passes": {"type": "integer", "minimum": -1},
        "contact_sweeps": {"type": "integer", "minimum": 1},
        "contact_tolerance": _pos,
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
        "name": {"type": "string"},
        "description": {"type": "string"},
        "settings": SETTINGS,
        "camera": {
            "type": "object",
            "properties": {"eye": _vec3, "target": _vec3,
                           "fov_deg": {"type": "number", "exclusiveMinimum": 0,
                                       "exclusiveMaximum": 180}},
            "additionalProperties": False,
        },
        "bodies": {"type": "array", "items": BODY},
        "joints": {"type": "array", "items": JOINT},
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
