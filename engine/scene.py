"""Scene files: JSON validated against engine/scene_schema.py, load -> World, World -> save.

Every problem is reported as a SceneError whose lines read "<file>: <json path>: <sentence>".
Saving goes through engine/durable.py (temporary file in the same folder, fsync, rename), so a
failed save never damages the file already on disk.
"""
import copy
import json
import math
import os
import stat

import jsonschema
import numpy as np

from . import scene_schema
from .durable import write_file
from .loads import load_model
from .scene_entries import body_entry
from .settings import Settings, upgrade_settings
from .visual_meshes import attach_visuals, load_visuals
from .world import WORLD, World

MAX_BYTES = 64 * 1024 * 1024
_VALIDATOR = jsonschema.Draft202012Validator(scene_schema.SCENE)


class SceneError(ValueError):
    """A scene file could not be used. `problems` holds (json_path, sentence) pairs."""

    def __init__(self, source, problems):
        self.source = source
        self.problems = problems
        path, msg = problems[0]
        more = f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})" \
            if len(problems) > 1 else ""
        super().__init__(f"{source}: {path}: {msg}{more}")

    def lines(self):
        return [f"{self.source}: {p}: {m}" for p, m in self.problems]


def _json_path(parts):
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _sentence(err):
    v = err.validator
    if v == "required":
        missing = [k for k in err.validator_value if k not in err.instance]
        return f"missing required key {missing[0]!r}" if missing else err.message
    if v == "additionalProperties":
        allowed = set(err.schema.get("properties", {}))
        extra = sorted(k for k in err.instance if k not in allowed)
        return f"unknown key {extra[0]!r}" if extra else err.message
    if v == "type":
        return f"must be of type {err.validator_value}, not {type(err.instance).__name__} " \
               f"({json.dumps(err.instance)[:40]})"
    if v in ("enum", "const"):
        allowed = err.validator_value if v == "enum" else [err.validator_value]
        return f"{json.dumps(err.instance)[:40]} is not one of {', '.join(map(repr, allowed))}"
    if v in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        words = {"minimum": "at least", "exclusiveMinimum": "greater than",
                 "maximum": "at most", "exclusiveMaximum": "less than"}[v]
        return f"must be {words} {err.validator_value}, got {err.instance}"
    if v in ("minItems", "maxItems"):
        return f"must have {'at least' if v == 'minItems' else 'at most'} " \
               f"{err.validator_value} items, got {len(err.instance)}"
    if v == "oneOf" and isinstance(err.instance, dict) and "bodies" in err.instance:
        return "give exactly one of 'anchor', 'anchors' or 'local_anchors'"
    if v == "not":
        return "give either 'mass' or 'density', not both"
    if v == "oneOf" and err.absolute_path and err.absolute_path[-1] == "effort":
        return "must be a number or a sequence {\"times\": [...], \"values\": [...]}"
    if v == "oneOf" and err.absolute_path and err.absolute_path[-1] in ("force", "torque"):
        return "must be [x, y, z] or a sequence {\"times\": [...], \"values\": [[x, y, z], ...]}"
    return err.message


def _non_finite(doc, parts=()):
    """Paths of NaN/inf numbers (Python's json accepts them; the format does not)."""
    if isinstance(doc, float) and not math.isfinite(doc):
        yield _json_path(parts)
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield from _non_finite(v, parts + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _non_finite(v, parts + (i,))


def validate(doc, source="<scene>", references=True):
    """Raise SceneError listing every problem of a parsed scene document (without
    `references`: its form only, not whether the names it refers to exist)."""
    problems = [(p, "must be a finite number") for p in _non_finite(doc)]
    if not problems:
        errs = sorted(_VALIDATOR.iter_errors(doc),
                      key=lambda e: (list(map(str, e.path)), e.validator))
        problems = [(_json_path(e.absolute_path), _sentence(e)) for e in errs]
        problems = list(dict.fromkeys(problems))  # dedupe, keep order
    if not problems and references:
        problems = _reference_problems(doc)
    if problems:
        raise SceneError(source, problems)


def _reference_problems(doc):
    problems = []
    names = {}
    for i, b in enumerate(doc.get("bodies", [])):
        if b["name"] == WORLD:
            problems.append((f"$.bodies[{i}].name", "'world' is reserved for the fixed world"))
        elif b["name"] in names:
            first = names[b["name"]]
            problems.append((f"$.bodies[{i}].name",
                             f"duplicate body name {b['name']!r} (also $.bodies[{first}])"))
        names.setdefault(b["name"], i)
        if "orientation" in b and sum(x * x for x in b["orientation"]) < 1e-12:
            problems.append((f"$.bodies[{i}].orientation", "quaternion has zero length"))
        if "inertia" in b:
            small, mid, large = sorted(b["inertia"])
            if large > (small + mid) * (1 + 1e-9):
                problems.append((f"$.bodies[{i}].inertia",
                                 "no rigid body has these principal moments: each must be at "
                                 "most the sum of the other two"))
        if not b.get("fixed", False) and "mass" not in b and "density" not in b:
            problems.append((f"$.bodies[{i}]", "a dynamic body needs 'mass' or 'density'"))
        if not b.get("fixed", False) and "shape" not in b and "shapes" not in b \
                and "inertia" not in b:
            problems.append((f"$.bodies[{i}]", "give a shape or an explicit 'inertia'"))
    jnames = {}
    for i, j in enumerate(doc.get("joints", [])):
        for k, bn in enumerate(j["bodies"]):
            if bn != WORLD and bn not in names:
                problems.append((f"$.joints[{i}].bodies[{k}]", f"no body named {bn!r}"))
        if j["bodies"][0] == j["bodies"][1]:
            problems.append((f"$.joints[{i}].bodies", "a joint needs two different bodies"))
        if j["name"] in jnames:
            problems.append((f"$.joints[{i}].name", f"duplicate joint name {j['name']!r}"))
        jnames.setdefault(j["name"], i)
    lnames = {}
    for i, load in enumerate(doc.get("loads", [])):
        if "body" in load and load["body"] not in names:
            problems.append((f"$.loads[{i}].body", f"no body named {load['body']!r}"))
        if "joint" in load and load["joint"] not in jnames:
            problems.append((f"$.loads[{i}].joint", f"no joint named {load['joint']!r}"))
        if load["name"] in lnames:
            problems.append((f"$.loads[{i}].name", f"duplicate load name {load['name']!r}"))
        lnames.setdefault(load["name"], i)
        try:
            load_model(load, where=f"$.loads[{i}]")
        except ValueError as e:
            path, _, msg = str(e).partition(": ")
            problems.append((path, msg))
    for i, pair in enumerate(doc.get("contacts", {}).get("disabled_pairs", [])):
        for k, bn in enumerate(pair):
            if bn not in names:
                problems.append((f"$.contacts.disabled_pairs[{i}][{k}]", f"no body named {bn!r}"))
    return problems


def upgrade_document(doc, source="<scene>"):
    """Bring a parsed document up to the current names (settings.RENAMED), in place."""
    if isinstance(doc, dict):
        upgrade_settings(doc.get("settings"), source)
    return doc


def read_document(path):
    """Parse a scene file into a dict, with SceneError for I/O, size and syntax problems.
    Only regular files are read (not devices, FIFOs or folders), at most MAX_BYTES."""
    source = str(path)
    try:
        with open(path, "rb", opener=_open_regular) as f:
            data = f.read(MAX_BYTES + 1)
    except _NotRegular as e:
        raise SceneError(source, [("$", f"not a regular file ({e})")]) from None
    except OSError as e:
        raise SceneError(source, [("$", f"cannot read file ({e.strerror or e})")]) from None
    if len(data) > MAX_BYTES:
        raise SceneError(source, [("$", f"file is larger than the limit of "
                                        f"{MAX_BYTES / 1e6:.0f} MB")])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SceneError(source, [("$", f"not UTF-8 text (byte {e.start})")]) from None
    return parse_document(text, source)


def parse_document(text, source="<scene>"):
    """JSON text -> dict, with SceneError for syntax, nesting and number problems; settings
    under an old name are renamed (settings.RENAMED, with a warning)."""
    try:
        return upgrade_document(json.loads(text), source)
    except json.JSONDecodeError as e:
        raise SceneError(source, [("$", f"invalid JSON at line {e.lineno} column {e.colno}: "
                                        f"{e.msg}")]) from None
    except RecursionError:
        raise SceneError(source, [("$", "nested too deeply")]) from None
    except ValueError as e:   # e.g. an integer of more than 4300 digits
        raise SceneError(source, [("$", f"invalid JSON: {e}".split(";")[0])]) from None


class _NotRegular(OSError):
    pass


def _open_regular(path, flags):
    """os.open that refuses anything but a regular file, without blocking on a FIFO."""
    fd = os.open(path, flags | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) \
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket"
            raise _NotRegular(f"it is {kind}")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def load_scene(path):
    """Read, validate and build a World from a scene file."""
    doc = read_document(path)
    world = scene_to_world(doc, str(path))
    world.meta["path"] = str(path)
    if "visuals" in doc:
        load_visuals(world, doc["visuals"], path)
    return world


def scene_to_world(doc, source="<scene>"):
    """Build a World from a scene document or a definitions.SceneDef (validated here)."""
    from .definitions import SceneDef
    if isinstance(doc, SceneDef):
        doc = doc.to_document()
    upgrade_document(doc, source)
    validate(doc, source)
    world = World(Settings.from_dict(doc.get("settings", {})))
    world.camera = copy.deepcopy(doc.get("camera"))
    world.contacts_spec = copy.deepcopy(doc.get("contacts"))
    world.meta = {k: doc[k] for k in ("name", "description") if k in doc}
    from .bodies import body_model
    models, specs = [], []
    for i, spec in enumerate(doc.get("bodies", [])):
        try:
            models.append(body_model(spec, where=f"$.bodies[{i}]"))
        except ValueError as e:
            path, _, msg = str(e).partition(": ")
            raise SceneError(source, [(path, msg)]) from None
        specs.append(spec)
    world._append_bodies(models, specs)
    for i, spec in enumerate(doc.get("joints", [])):
        try:
            world.add_joint(spec)
        except (ValueError, KeyError) as e:
            raise SceneError(source, [(f"$.joints[{i}]", str(e).strip("'\""))]) from None
    for i, spec in enumerate(doc.get("loads", [])):
        try:
            world.add_load(spec)
        except (ValueError, KeyError) as e:
            msg = str(e).strip("'\"").split(": ", 1)[-1]
            raise SceneError(source, [(f"$.loads[{i}]", msg)]) from None
    if "state" in doc and _state_agrees(world, doc["state"]):
        from .resume import from_document
        try:
            from_document(world, doc["state"])
        except ValueError as e:
            path, _, msg = str(e).partition(": ")
            raise SceneError(source, [(path, msg)]) from None
    return world


def _state_agrees(world, state, tol=1e-6):
    """The `state` block describes the bodies as the file places them (to tol): if someone
    edited a body's position, orientation or velocity by hand, the edit wins and the block
    (a cache of exact values) is not used."""
    bodies = state.get("bodies", {})
    for b, m in enumerate(world.models):
        entry = bodies.get(m.name)
        if entry is None:
            return False
        for key, now in (("pos", world.B.pos[b]), ("rot", world.B.rot[b]),
                         ("vel", world.B.vel[b]), ("omega", world.B.omega[b])):
            saved = np.asarray(entry.get(key, []), dtype=np.float64).reshape(-1)
            if saved.size != now.size or not (np.abs(saved - now.reshape(-1)) <= tol).all():
                return False
    return True


def world_to_scene(world, exact_state=False):
    """The current world (state, edits, settings) as a scene document; with exact_state
    also its `state` block (engine/resume.py), so that loading it continues the run
    bit for bit."""
    doc = {"format": "impulse-scene", "version": scene_schema.VERSION}
    for key in ("name", "description"):
        if key in world.meta:
            doc[key] = world.meta[key]
    doc["settings"] = world.settings.to_dict()
    if world.camera:
        doc["camera"] = copy.deepcopy(world.camera)
    doc["bodies"] = [body_entry(world, b) for b in range(len(world.models))]
    joints = [world.joint_entry(name) for name in world.scene_joint_names]
    if joints:
        doc["joints"] = joints
    if world.load_models:
        doc["loads"] = [world.load_entry(name) for name in world.load_names]
    if world.contacts_spec:
        doc["contacts"] = copy.deepcopy(world.contacts_spec)
    if exact_state:
        from .resume import to_document
        doc["state"] = to_document(world)
    return doc


def world_to_scene_def(world, exact_state=False):
    """world_to_scene as a typed definitions.SceneDef."""
    from .definitions import SceneDef, from_entry
    doc = world_to_scene(world, exact_state)
    return from_entry(SceneDef, {k: v for k, v in doc.items() if k not in ("format",
                                                                          "version")})


def save_scene(world, path):
    """Write the world as a scene file durably (engine/durable.py: never a partial file,
    the old file's mode kept, a symlink's target written), its visual meshes beside it."""
    write_document(world_to_scene(world, exact_state=True), path, world.meta.get("visuals"))


def write_document(doc, path, visuals=None):
    """Validate a scene document and write it durably (the old file stays on failure); with
    `visuals` (visual_meshes.VisualMesh list) their archive beside it, first."""
    write_archive = attach_visuals(doc, visuals, path)
    validate(doc, str(path))
    write_archive()
    write_file(path, json.dumps(doc, indent=2) + "\n")
