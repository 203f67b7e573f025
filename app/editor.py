"""Editor commands: every change of the world is a Command with do/undo, kept on an
undo/redo stack with a dirty flag (relative to the last save).

Bodies and joints are addressed by name. The engine's live edits (engine/world_edits.py) do
the work: an edit keeps the row where it is (so an edit that does not touch the physics, a
colour say, leaves the trajectory exactly as it was), a body edit keeps the body's motion
state and its joints at the same body points, and undoing a removal puts the body, its joints
and its contact filters back at the same rows. Every command checks its input before
changing anything, so a rejected edit (ValueError naming the problem) leaves the world as it
was.
"""
from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from impulse.engine.world_edits import check_body_entry, check_joint_entry, validate_entries


class _Missing:
    """Marks a key that was absent (undo deletes it again); survives deepcopy as itself."""

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        return "MISSING"


MISSING = _Missing()


def unique_name(taken, base: str) -> str:
    taken = set(taken)
    if base not in taken:
        return base
    stem = base.rstrip("0123456789").rstrip("_") or base
    i = 2
    while f"{stem}_{i}" in taken:
        i += 1
    return f"{stem}_{i}"


class Command(ABC):
    """One undoable change of the world."""
    label = "edit"
    structural = True          # changes which bodies/joints exist (history snapshots go stale)

    @abstractmethod
    def do(self, world) -> None:
        """Apply the change."""

    @abstractmethod
    def undo(self, world) -> None:
        """Take the change back exactly."""


# ---------------------------------------------------------------- bodies
class ChangeCommand(Command):
    """A command that applies `changes` and undoes by applying what they replaced:
    subclasses define _apply(world, values) -> previous values."""

    def do(self, world):
        self.previous = self._apply(world, self.changes)

    def undo(self, world):
        self._apply(world, self.previous)


class AddBody(Command):
    def __init__(self, spec: dict):
        self.spec = copy.deepcopy(spec)
        self.label = f"add body {spec['name']}"

    def do(self, world):
        if self.spec["name"] in world.body_names:
            raise ValueError(f"body name {self.spec['name']!r} is already taken")
        check_body_entry(self.spec)
        world.add_body(self.spec)

    def undo(self, world):
        world.remove_body(self.spec["name"])


def _pairs(world) -> list:
    spec = world.contacts_spec or {}
    return spec.get("disabled_pairs", [])


class RemoveBody(Command):
    """Removes the body, its joints and its contact filters; undo restores all three at the
    same rows (engine World.remove_body / restore_body)."""

    def __init__(self, name: str):
        self.name = name
        self.label = f"remove body {name}"
        self.removal = None

    def do(self, world):
        self.removal = world.remove_body(self.name)

    def undo(self, world):
        world.restore_body(self.removal)


def _engine_changes(values: dict) -> dict:
    """Editor values (MISSING: remove the key) as the engine's (None: remove the key)."""
    return {k: None if v is MISSING else copy.deepcopy(v) for k, v in values.items()}


class EditEntry(ChangeCommand):
    """Set keys of an object's scene entry through the World's edit method (`write`), read
    back by `read`; keys not in `changes` keep their values, and undo puts the previous
    values of the changed keys back. A value of MISSING deletes the key."""
    read = write = what = ""

    def __init__(self, name: str, changes: dict):
        self.name = name
        self.changes = copy.deepcopy(changes)
        self.previous: dict = {}
        self.label = f"edit {self.what}{name}: {', '.join(changes)}"

    def _apply(self, world, values: dict) -> dict:
        spec = getattr(world, self.read)(self.name)
        old = {k: copy.deepcopy(spec.get(k, MISSING)) for k in values}
        getattr(world, self.write)(self.name, _engine_changes(values))
        return old


class EditBody(EditEntry):
    """Set scene-entry keys of a body (shape, mass, colour, fixed, pose, velocity...); its
    motion is kept unless `changes` names it."""
    read, write = "body_entry", "edit_body"

    def _apply(self, world, values: dict) -> dict:
        if "name" in values and values["name"] != self.name:
            raise ValueError("bodies are renamed with RenameBody")
        return super()._apply(world, values)


class RenameBody(Command):
    """A body's new name; its joints, springs and contact filters follow (World.rename_body)."""

    structural = False         # the rows stay where they are

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new
        self.label = f"rename {old} to {new}"

    def do(self, world):
        world.rename_body(self.old, self.new)

    def undo(self, world):
        world.rename_body(self.new, self.old)


class SetMotion(ChangeCommand):
    """Pose and velocities of a body in place (no rebuild): the inspector's live pose edit."""

    structural = False

    def __init__(self, name: str, changes: dict):
        self.name = name
        self.changes = copy.deepcopy(changes)
        self.previous: dict = {}
        self.label = f"move {name}"

    def _apply(self, world, values):
        spec = world.body_entry(self.name)
        old = {k: spec.get(k) for k in values}
        spec.update(copy.deepcopy(values))
        world.set_body_motion(self.name, spec)
        return old


def duplicate_spec(world, name: str, offset=(0.0, 0.0, 0.0)) -> dict:
    """A copy of a body's current entry under a new name, shifted by `offset`, at rest."""
    spec = world.body_entry(name)
    spec["name"] = unique_name(world.body_names, name)
    spec["position"] = [float(a + b) for a, b in zip(spec["position"], offset, strict=True)]
    spec.pop("velocity", None)
    spec.pop("angular_velocity", None)
    return spec


class Duplicate(AddBody):
    def __init__(self, world, name: str, offset=(0.5, 0.0, 0.0)):
        super().__init__(duplicate_spec(world, name, offset))
        self.label = f"duplicate {name}"


# ---------------------------------------------------------------- joints
class AddJoint(Command):
    def __init__(self, spec: dict):
        self.spec = copy.deepcopy(spec)
        self.label = f"add {spec['type']} joint {spec['name']}"

    def do(self, world):
        if self.spec["name"] in world.scene_joint_names:
            raise ValueError(f"joint name {self.spec['name']!r} is already taken")
        check_joint_entry(self.spec, world.body_names)
        world.add_joint(self.spec)

    def undo(self, world):
        world.remove_joint(self.spec["name"])


class RemoveJoint(Command):
    def __init__(self, name: str):
        self.name = name
        self.spec = None
        self.label = f"remove joint {name}"

    def do(self, world):
        self.spec = world.joint_entry(self.name)
        world.remove_joint(self.name)

    def undo(self, world):
        world.add_joint(self.spec)


class EditJoint(EditEntry):
    """Set keys of a joint entry (anchors as `local_anchors`, spring parameters...)."""
    read, write, what = "joint_entry", "edit_joint", "joint "


class EditLoad(EditEntry):
    """Set keys of an external load's entry (force, torque, effort, point, frame)."""
    read, write, what = "load_entry", "edit_load", "load "
    structural = False


# ---------------------------------------------------------------- settings, contacts
class EditSettings(ChangeCommand):
    structural = False

    def __init__(self, changes: dict):
        self.changes = copy.deepcopy(changes)
        self.previous: dict = {}
        self.label = f"settings: {', '.join(changes)}"

    def _apply(self, world, values):
        from impulse.engine.scene_schema import SETTINGS

        validate_entries({"bodies": [], "settings": {**world.settings.to_dict(), **values}})
        old = {k: copy.deepcopy(getattr(world.settings, k)) for k in values}
        for k, v in values.items():
            if k not in SETTINGS["properties"]:
                raise ValueError(f"unknown setting {k!r}")
            setattr(world.settings, k, copy.deepcopy(v))
        return old


def _ensure_pairs(world) -> list:
    if world.contacts_spec is None:
        world.contacts_spec = {}
    return world.contacts_spec.setdefault("disabled_pairs", [])


def _same_pair(p, q) -> bool:
    return sorted(p) == sorted(q)


class AddContactFilter(Command):
    """Switch collision off between two bodies (contacts.disabled_pairs)."""

    structural = False

    def __init__(self, a: str, b: str):
        self.pair = [a, b]
        self.label = f"no contact {a} / {b}"

    def do(self, world):
        for n in self.pair:
            world.body_index(n)
        if self.pair[0] == self.pair[1]:
            raise ValueError("a contact filter needs two different bodies")
        if any(_same_pair(p, self.pair) for p in _pairs(world)):
            raise ValueError(f"contacts {self.pair[0]} / {self.pair[1]} are already off")
        _ensure_pairs(world).append(list(self.pair))

    def undo(self, world):
        pairs = _pairs(world)
        pairs[:] = [p for p in pairs if not _same_pair(p, self.pair)]


class RemoveContactFilter(Command):
    structural = False

    def __init__(self, a: str, b: str):
        self.pair = [a, b]
        self.index = None
        self.label = f"contact on {a} / {b}"

    def do(self, world):
        pairs = _pairs(world)
        for i, p in enumerate(pairs):
            if _same_pair(p, self.pair):
                self.index = i
                self.pair = list(p)
                del pairs[i]
                return
        raise ValueError(f"no contact filter {self.pair[0]} / {self.pair[1]}")

    def undo(self, world):
        _ensure_pairs(world).insert(self.index, list(self.pair))


# ---------------------------------------------------------------- the stack
class Editor:
    """Runs commands on a world; undo/redo; `dirty` since the last `mark_saved`.
    `before_change()` runs before any command touches the world (the session: wait for the
    physics thread's running batch)."""

    def __init__(self, world, on_change: Callable[[Command], None] | None = None,
                 limit: int = 500, before_change: Callable[[], None] | None = None):
        self.world = world
        self.on_change = on_change
        self.before_change = before_change
        self.limit = limit
        self.undo_stack: list[Command] = []
        self.redo_stack: list[Command] = []
        self._saved_at: int | None = 0
        self._dropped = 0

    def run(self, cmd: Command) -> Command:
        """Do a command and push it; on ValueError/KeyError nothing changes and it re-raises."""
        self._before()
        cmd.do(self.world)
        self.undo_stack.append(cmd)
        self.redo_stack.clear()
        if self._saved_at is not None and self._saved_at > len(self.undo_stack) - 1:
            self._saved_at = None          # the saved state can no longer be reached by redo
        if len(self.undo_stack) > self.limit:
            self.undo_stack.pop(0)
            self._saved_at = None if self._saved_at in (None, 0) else self._saved_at - 1
        self._changed(cmd)
        return cmd

    def undo(self) -> Command | None:
        if not self.undo_stack:
            return None
        self._before()
        cmd = self.undo_stack.pop()
        cmd.undo(self.world)
        self.redo_stack.append(cmd)
        self._changed(cmd)
        return cmd

    def redo(self) -> Command | None:
        if not self.redo_stack:
            return None
        self._before()
        cmd = self.redo_stack.pop()
        cmd.do(self.world)
        self.undo_stack.append(cmd)
        self._changed(cmd)
        return cmd

    def _before(self) -> None:
        if self.before_change is not None:
            self.before_change()

    def _changed(self, cmd) -> None:
        if self.on_change is not None:
            self.on_change(cmd)

    @property
    def can_undo(self) -> bool:
        return bool(self.undo_stack)

    @property
    def can_redo(self) -> bool:
        return bool(self.redo_stack)

    @property
    def dirty(self) -> bool:
        return self._saved_at != len(self.undo_stack)

    def mark_saved(self) -> None:
        self._saved_at = len(self.undo_stack)


def body_at_rest_spec(world, kind: str, position, size: float = 0.3, color=None) -> dict:
    """A new dynamic body of one shape kind (palette), 1 kg, at rest, standing on `position`."""
    half = size / 2.0
    shapes = {"box": {"type": "box", "size": [size, size, size]},
              "sphere": {"type": "sphere", "radius": half},
              "capsule": {"type": "capsule", "radius": half * 0.6, "length": size},
              "cylinder": {"type": "cylinder", "radius": half, "height": size}}
    lift = {"box": half, "sphere": half, "capsule": half + half * 0.6, "cylinder": half}[kind]
    p = np.asarray(position, dtype=np.float64) + np.array([0.0, lift, 0.0])
    spec = {"name": unique_name(world.body_names, kind), "shape": shapes[kind], "mass": 1.0,
            "position": [float(x) for x in p]}
    if color is not None:
        spec["color"] = [float(c) for c in color]
    return spec


def joint_types() -> list[str]:
    """The joint types the editor can add: the engine's joints and springs."""
    from impulse.engine.joints import KIND_NAMES

    return list(KIND_NAMES) + ["spring"]


AXIS_TYPES = {"hinge", "slider", "cylindrical", "universal", "rail", "planar", "generic"}


def new_joint_spec(world, kind: str, a: str, b: str, pa, pb, axis,
                   stiffness: float = 100.0, damping: float = 1.0) -> dict:
    """A new joint of `kind` between bodies a and b ("world" allowed) picked at world points
    pa and pb: the anchor is pb (a spring spans pa..pb); `axis` for the types that have one."""
    name = unique_name(world.scene_joint_names, f"{kind}_{a}_{b}")
    if kind == "spring":
        return {"name": name, "type": "spring", "bodies": [a, b],
                "anchors": [[float(x) for x in pa], [float(x) for x in pb]],
                "stiffness": float(stiffness), "damping": float(damping)}
    spec = {"name": name, "type": kind, "bodies": [a, b], "anchor": [float(x) for x in pb]}
    if kind in AXIS_TYPES:
        spec["axis"] = [float(x) for x in axis]
    return spec
