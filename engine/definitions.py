"""Typed definitions of what a scene holds: the dataclasses a scene file is read into and
written from (`SceneDef.read`, `SceneDef.write`), and what `World.add_body`, `add_joint`
and `add_load` take and `World.body_def`, `joint_def` and `load_def` give back.

Field names are the scene file's keys (README "Scene files"). A field left None is a key the
entry does not give: the engine's default applies, and the key is not written. Values are
plain numbers, strings, booleans and lists (tuples and numpy arrays are taken and written
as lists). `scene_schema.py` validates documents against the limits; the dataclasses name
the same keys, the same required ones and the same kinds, which
tests/test_definitions.py checks object by object, so the two cannot drift apart.

    from impulse.engine.definitions import BodyDef, JointDef, ShapeDef
    world.add_body(BodyDef("ball", shape=ShapeDef.sphere(0.1), mass=1.0,
                           position=[0, 1, 0]))
"""
from __future__ import annotations

import dataclasses
import functools
import typing
from dataclasses import dataclass, field, fields

from .settings import Settings

Vec3 = list[float]


@dataclass
class ShapeDef:
    """A collision shape in its body's frame: `type` is plane, sphere, box (`size`: full
    edge lengths), capsule (`radius`, `length` of the segment along local Y), cylinder
    (`radius`, `height` along local Y) or hull (`points`)."""
    type: str
    position: Vec3 | None = None
    orientation: list[float] | None = None     # quaternion [w, x, y, z]
    radius: float | None = None
    size: Vec3 | None = None
    length: float | None = None
    height: float | None = None
    points: list[Vec3] | None = None

    @classmethod
    def plane(cls, **place):
        return cls("plane", **place)

    @classmethod
    def sphere(cls, radius, **place):
        return cls("sphere", radius=radius, **place)

    @classmethod
    def box(cls, size, **place):
        return cls("box", size=size, **place)

    @classmethod
    def capsule(cls, radius, length, **place):
        return cls("capsule", radius=radius, length=length, **place)

    @classmethod
    def cylinder(cls, radius, height, **place):
        return cls("cylinder", radius=radius, height=height, **place)

    @classmethod
    def hull(cls, points, **place):
        return cls("hull", points=points, **place)


@dataclass
class MaterialDef:
    restitution: float | None = None
    static_friction: float | None = None
    dynamic_friction: float | None = None
    torsional_friction: float | None = None    # [m]
    rolling_friction: float | None = None      # [m]


@dataclass
class CollisionDef:
    group: int | None = None
    mask: int | None = None
    enabled: bool | None = None


@dataclass
class BodyDef:
    """A rigid body: a shape (or shapes) with a mass or density, or an explicit inertia; a
    pose and velocity in the world (orientation as a quaternion [w, x, y, z])."""
    name: str
    description: str | None = None
    shape: ShapeDef | None = None
    shapes: list[ShapeDef] | None = None
    mass: float | None = None
    density: float | None = None
    inertia: Vec3 | None = None
    center_of_mass: Vec3 | None = None
    position: Vec3 | None = None
    orientation: list[float] | None = None
    velocity: Vec3 | None = None
    angular_velocity: Vec3 | None = None
    fixed: bool | None = None
    material: MaterialDef | None = None
    color: list[float] | None = None
    collision: CollisionDef | None = None


@dataclass
class LimitsDef:
    lower: float | None = None
    upper: float | None = None


@dataclass
class TargetSequence:
    """A motor target over time: values at times, held or interpolated linearly."""
    times: list[float]
    values: list[float]
    repeat: bool | None = None


@dataclass
class MotorDef:
    mode: str                                   # "velocity" or "position"
    target: float | TargetSequence | None = None
    max_force: float | None = None
    brake: float | None = None


@dataclass
class JointSpringDef:
    stiffness: float | None = None
    damping: float | None = None
    rest: float | None = None


@dataclass
class JointDef:
    """A joint between two bodies ("world" for the fixed world), or a spring (`type`
    "spring" with `stiffness`). Its anchor is one world point (`anchor`), one per body
    (`anchors`) or one in each body's frame (`local_anchors`)."""
    name: str
    type: str
    bodies: list[str]
    axis: Vec3 | None = None
    ref: Vec3 | None = None
    axis2: Vec3 | None = None
    local_axes: list[Vec3] | None = None
    local_refs: list[Vec3] | None = None
    locked: list[str] | None = None
    limits: LimitsDef | None = None
    limits2: LimitsDef | None = None
    motor: MotorDef | None = None
    spring: JointSpringDef | None = None
    anchor: Vec3 | None = None
    anchors: list[Vec3] | None = None
    local_anchors: list[Vec3] | None = None
    stiffness: float | None = None
    damping: float | None = None
    rest_length: float | None = None
    collide: bool | None = None


@dataclass
class LoadSequence:
    """An external load over time: values (3-vectors, or numbers for an effort) at times."""
    times: list[float]
    values: list[Vec3] | list[float]
    interpolation: str | None = None            # "linear" or "step"
    repeat: bool | None = None


@dataclass
class LoadDef:
    """A force and/or torque on a body (constant or a LoadSequence), or an `effort` on a
    joint's coordinate."""
    name: str
    body: str | None = None
    force: Vec3 | LoadSequence | None = None
    torque: Vec3 | LoadSequence | None = None
    frame: str | None = None                    # "world" or "body"
    point: Vec3 | None = None
    joint: str | None = None
    effort: float | LoadSequence | None = None


@dataclass
class CameraDef:
    eye: Vec3 | None = None
    target: Vec3 | None = None
    fov_deg: float | None = None


@dataclass
class ContactsDef:
    enabled: bool | None = None
    disabled_pairs: list[list[str]] | None = None


@dataclass
class VisualsDef:
    """The viewer's visual meshes: an archive beside the scene file (visual_meshes.py)."""
    file: str


@dataclass
class SceneDef:
    """A whole scene file. `state` is the exact-resume block that saves write (a cache of
    exact values, engine/resume.py), kept as the file gives it."""
    bodies: list[BodyDef] = field(default_factory=list)
    joints: list[JointDef] | None = None
    loads: list[LoadDef] | None = None
    name: str | None = None
    description: str | None = None
    settings: Settings | None = None
    camera: CameraDef | None = None
    contacts: ContactsDef | None = None
    visuals: VisualsDef | None = None
    state: dict | None = None

    FORMAT: typing.ClassVar[str] = "impulse-scene"

    @classmethod
    def from_document(cls, doc, source="<scene>"):
        """A scene document (a parsed file) -> SceneDef; SceneError (every problem, with its
        place) where it is not valid."""
        from .scene import upgrade_document, validate
        upgrade_document(doc, source)
        validate(doc, source)
        return from_entry(cls, {k: v for k, v in doc.items() if k not in ("format",
                                                                          "version")})

    def to_document(self):
        """The scene document (format header first, keys in the file's usual order)."""
        from . import scene_schema
        doc = {"format": self.FORMAT, "version": scene_schema.VERSION}
        body = to_entry(self)
        for key in ("name", "description", "settings", "camera", "bodies", "joints",
                    "loads", "contacts", "visuals", "state"):
            if key in body:
                doc[key] = body[key]
        return doc

    @classmethod
    def read(cls, path):
        """Read and validate a scene file (SceneError naming the file and the place)."""
        from .scene import read_document
        return cls.from_document(read_document(path), str(path))

    def write(self, path):
        """Validate and write the scene file durably (the old file stays on failure)."""
        from .scene import write_document
        write_document(self.to_document(), path)


# ---- entries <-> definitions ---------------------------------------------------------------

def _plain(value):
    """Lists for tuples and arrays, Python numbers for numpy scalars (JSON's kinds)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def to_entry(definition):
    """A definition as its scene entry: the fields that are not None, nested ones as
    entries, Settings as its whole `settings` object."""
    if isinstance(definition, Settings):
        return definition.to_dict()
    out = {}
    for f in fields(definition):
        value = getattr(definition, f.name)
        if value is None:
            continue
        if dataclasses.is_dataclass(value):
            value = to_entry(value)
        elif isinstance(value, (list, tuple)) and value and dataclasses.is_dataclass(value[0]):
            value = [to_entry(v) for v in value]
        else:
            value = _plain(value)
        out[f.name] = value
    return out


def _classes(hint):
    """The dataclasses a field's type names (through unions, lists and None)."""
    if dataclasses.is_dataclass(hint):
        return [hint]
    return [c for arg in typing.get_args(hint) for c in _classes(arg)]


def _convert(hint, value):
    if value is None:
        return None
    if hint is Settings or Settings in typing.get_args(hint):
        return value if isinstance(value, Settings) else Settings.from_dict(value)
    classes = _classes(hint)
    if not classes:
        return value
    if isinstance(value, dict):
        return from_entry(classes[0], value)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [from_entry(classes[0], v) for v in value]
    return value


@functools.cache
def _fields_of(cls):
    return typing.get_type_hints(cls), frozenset(f.name for f in fields(cls))


def from_entry(cls, entry):
    """A scene entry (a dict with the file's keys) as the dataclass cls; entries already
    typed are returned as they are. KeyError for a key cls does not have."""
    if isinstance(entry, cls):
        return entry
    hints, names = _fields_of(cls)
    unknown = sorted(set(entry) - names)
    if unknown:
        raise KeyError(f"{cls.__name__} has no field {unknown[0]!r}")
    return cls(**{k: _convert(hints[k], v) for k, v in entry.items()})


def shape_entries(body_entry):
    """A body entry's shape entries in the order of its shapes: "shape", then "shapes"."""
    return ([body_entry["shape"]] if "shape" in body_entry else []) + \
        list(body_entry.get("shapes", []))


def changes_to(entry, changes):
    """What an edit method applies to `entry`: `changes` as given (a dict of keys, None
    removing one), or for a whole definition the keys in which it differs from entry (keys
    it leaves None are removed)."""
    if not (dataclasses.is_dataclass(changes) and not isinstance(changes, type)):
        return changes
    new = to_entry(changes)
    return {k: new.get(k) for k in [*entry, *(k for k in new if k not in entry)]
            if entry.get(k) != new.get(k)}


def entry_of(definition_or_entry):
    """What the world's edit methods take: an entry dict as it is, a definition as its
    entry."""
    if dataclasses.is_dataclass(definition_or_entry) and \
            not isinstance(definition_or_entry, type):
        return to_entry(definition_or_entry)
    return definition_or_entry

