"""Stable handles for bodies, joints and loads: a slot and a generation, as Box2D's ids and
Rapier's handles. A handle stays valid while its object exists, whatever else is added or
removed (indices shift when an earlier body is removed; handles do not). Once its object is
removed the handle is stale: every use raises StaleHandle, also after its slot is reused.

Shapes and contacts (engine/world_shapes.py) are addressed through them: a ShapeId is its
body's handle, the shape's place in the body and the generation of the body's shape list
(an edit that replaces the list makes the old ShapeIds stale); a ContactId is the pair of
ShapeIds and the touching features (collision/manifold.py's persistence id), valid while
that contact is there, as the warm start matches it from step to step."""
from dataclasses import dataclass


class StaleHandle(KeyError):
    """A handle whose body or joint has been removed."""

    def __str__(self):
        return str(self.args[0])


@dataclass(frozen=True)
class BodyId:
    slot: int
    generation: int


@dataclass(frozen=True)
class JointId:
    slot: int
    generation: int


@dataclass(frozen=True)
class LoadId:
    slot: int
    generation: int


@dataclass(frozen=True)
class ShapeId:
    body: BodyId
    index: int           # the shape's place in its body ("shape" first, then "shapes")
    generation: int      # of the body's shape list


@dataclass(frozen=True)
class ContactId:
    shape_a: ShapeId
    shape_b: ShapeId
    feature: int         # the touching features of the two shapes


WHAT = {BodyId: "body", JointId: "joint", LoadId: "load"}


class Handles:
    """Slots of one kind of object (bodies, joints and springs, or loads), each holding the name of
    its object or None, with a generation that grows when the slot is freed."""

    def __init__(self, kind):
        self.kind = kind                 # BodyId, JointId or LoadId
        self.names = []                  # per slot: the object's name, or None
        self.generations = []
        self.free = []
        self.slot_of = {}                # name -> slot

    def add(self, name):
        if self.free:
            slot = self.free.pop()
        else:
            slot = len(self.names)
            self.names.append(None)
            self.generations.append(0)
        self.names[slot] = name
        self.slot_of[name] = slot
        return self.kind(slot, self.generations[slot])

    def remove(self, name):
        slot = self.slot_of.pop(name)
        self.names[slot] = None
        self.generations[slot] += 1
        self.free.append(slot)

    def rename(self, old, new):
        slot = self.slot_of.pop(old)
        self.names[slot] = new
        self.slot_of[new] = slot

    def of(self, name):
        slot = self.slot_of[name]
        return self.kind(slot, self.generations[slot])

    def name(self, handle):
        """The name of the object a handle stands for; StaleHandle if it was removed."""
        what = WHAT[self.kind]
        ok = (isinstance(handle, self.kind) and 0 <= handle.slot < len(self.names)
              and self.generations[handle.slot] == handle.generation
              and self.names[handle.slot] is not None)
        if not ok:
            raise StaleHandle(f"the {what} of handle {handle} was removed")
        return self.names[handle.slot]
