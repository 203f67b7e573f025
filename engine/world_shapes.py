"""Shapes and contacts by stable handles (handles.ShapeId, handles.ContactId), mixed into
World: a body's shapes, one shape's definition, pose and edits; the last step's contacts,
one contact's bodies, point, normal, depth and impulse.

    for shape in world.shape_ids("crate"):
        print(world.shape_def(shape).type, world.shape_pose(shape)[0])
    for contact in world.contact_ids():
        info = world.contact(contact)           # ContactInfo, or StaleHandle once it is gone
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .definitions import ShapeDef, changes_to, from_entry, shape_entries, to_entry
from .handles import ContactId, ShapeId, StaleHandle
from .sleeping import waking


@dataclass(frozen=True)
class ContactInfo:
    """One contact of the last step: its bodies, the world point midway between the two
    surfaces, the unit normal from B to A, the depth (> 0 overlapping) at detection, and the
    normal impulse [N s] the step gave it."""
    body_a: object          # BodyId
    body_b: object
    point: np.ndarray
    normal: np.ndarray
    depth: float
    impulse: float


class ShapeAccess:
    """World's shape and contact methods (World keeps `_shape_lists`: body slot -> the
    generation of its shape list)."""

    # ---- shapes ------------------------------------------------------------------------
    def _shape_generation(self, body_id):
        return self._shape_lists.get(body_id.slot, 0)

    def _new_shape_list(self, body):
        """The body's shapes were replaced (edit_body): its old ShapeIds become stale."""
        slot = self.body_id(body).slot
        self._shape_lists[slot] = self._shape_lists.get(slot, 0) + 1

    def shape_ids(self, body):
        """Handles of a body's shapes (name, index or BodyId), in the body's order."""
        bid = self.body_id(body)
        gen = self._shape_generation(bid)
        return [ShapeId(bid, k, gen) for k in range(len(self.models[self._body_arg(bid)].shapes))]

    def _shape_ref(self, shape):
        """(body index, shape's place) of a ShapeId; StaleHandle where its body was removed
        or its shape list replaced."""
        if not isinstance(shape, ShapeId):
            raise TypeError(f"not a ShapeId: {shape!r}")
        b = self._body_arg(shape.body)                    # StaleHandle for a removed body
        if shape.generation != self._shape_generation(shape.body) or \
                not 0 <= shape.index < len(self.models[b].shapes):
            raise StaleHandle(f"the shape of handle {shape} was replaced")
        return b, shape.index

    def shape_owner(self, shape):
        """The BodyId of a shape's body."""
        self._shape_ref(shape)
        return shape.body

    def shape_def(self, shape):
        """A shape as its typed definition (definitions.ShapeDef, in its body's scene
        frame)."""
        b, k = self._shape_ref(shape)
        return from_entry(ShapeDef, shape_entries(self.body_entry(b))[k])

    def shape_pose(self, shape):
        """(position (3,), rotation (3, 3)) of a shape in the world now."""
        b, k = self._shape_ref(shape)
        s = self._shape_index(b, k)
        t = self.collision.tables()
        R = self.B.rot[b]
        return self.B.pos[b] + R @ t.shape_local_pos[s], R @ t.shape_local_rot[s]

    def _shape_index(self, b, k):
        """The row of body b's k-th shape in the collision tables (body after body)."""
        t = self.collision.tables()
        return int(np.searchsorted(t.shape_body, b)) + k

    @waking
    def edit_shape(self, shape, changes):
        """Set keys of one shape's entry (a dict, None removing a key, or a whole ShapeDef),
        through edit_body: mass properties follow; the body's shape handles stay valid."""
        b, k = self._shape_ref(shape)
        entry = self.body_entry(b)
        shapes = shape_entries(entry)
        new = dict(shapes[k])
        for key, value in changes_to(new, changes).items():
            if value is None:
                new.pop(key, None)
            else:
                new[key] = to_entry(value) if hasattr(value, "__dataclass_fields__") else value
        shapes[k] = new
        edit = {"shape": shapes[0], "shapes": shapes[1:] or None} if "shape" in entry \
            else {"shapes": shapes}
        self._edit_body(b, edit, keep_shape_ids=True)

    # ---- contacts ----------------------------------------------------------------------
    def _shape_id_at(self, s):
        """The ShapeId of collision-table row s."""
        t = self.collision.tables()
        b = int(t.shape_body[s])
        k = s - int(np.searchsorted(t.shape_body, b))
        bid = self.body_id(b)
        return ShapeId(bid, k, self._shape_generation(bid))

    def contact_ids(self):
        """Handles of the last step's contacts (rows as in world.contacts)."""
        cs = self.contacts
        if not len(cs):
            return []
        return [ContactId(self._shape_id_at(int(a)), self._shape_id_at(int(b)), int(f))
                for a, b, f in zip(cs.shape_a, cs.shape_b, cs.feature, strict=True)]

    def contact(self, contact):
        """A contact of the last step as ContactInfo; StaleHandle where the step had no
        such contact (the shapes no longer touch there, or one was removed)."""
        if not isinstance(contact, ContactId):
            raise TypeError(f"not a ContactId: {contact!r}")
        cs = self.contacts
        if len(cs):
            rows = self._shape_ref(contact.shape_a), self._shape_ref(contact.shape_b)
            sa, sb = (self._shape_index(*r) for r in rows)
            hit = np.flatnonzero((cs.shape_a == sa) & (cs.shape_b == sb)
                                 & (cs.feature == contact.feature))
            if len(hit):
                c = int(hit[0])
                impulse = self.contact_impulse
                return ContactInfo(
                    contact.shape_a.body, contact.shape_b.body, cs.world[c].copy(),
                    cs.normal[c].copy(), float(cs.depth[c]),
                    float(impulse[c]) if impulse is not None and c < len(impulse) else 0.0)
        raise StaleHandle(f"no contact of handle {contact} in the last step")
