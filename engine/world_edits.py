"""Live edits of a World between steps: add, edit and remove bodies, joints and springs,
read them back as scene entries (engine/scene_entries.py), put a removed body back.

Bodies, joints and springs are addressed by name. An edit keeps the row where it is, so the
order the solver visits rows in, and with it the trajectory, does not change:
  - an edit that leaves a body's physics alone (its colour, say) changes no array at all;
  - an edit of its mass properties or shapes rebuilds its row in place, keeping its scene
    frame's pose and velocity, and re-expresses its joints' anchors and frames in the new
    principal frame (so they stay at the same body points);
  - a joint edit rebuilds its row in place and keeps the anchors and frames it has unless
    the edit gives new ones.
remove_body() returns a Removal that restore_body() puts back at the same rows; right
after the removal (no step between) the world is then exactly as before, contact memory
included. Every edit checks its input first: a rejected one (ValueError naming the
problem) leaves the world as it was.
"""
import copy
from dataclasses import dataclass, field

import numpy as np

from . import state as S
from .bodies import body_model
from .definitions import BodyDef, JointDef, changes_to, entry_of, from_entry, shape_entries
from .handles import BodyId, JointId
from .joint_specs import local_frames, parameters
from .joints import P_SEQ_START
from .joints.generic import store_angles_now
from .scene_entries import (
    MOTION_KEYS,
    WORLD_FRAME_KEYS,
    body_entry,
    joint_entry,
    motion_from_entry,
    principal_to_scene,
    scene_pose,
    scene_to_principal,
)
from .sleeping import waking

WORLD = "world"
JOINT_GEOMETRY_KEYS = WORLD_FRAME_KEYS + ("local_anchors", "local_axes", "local_refs")


@dataclass
class JointModel:
    name: str
    kind: str            # "ball", ..., or "spring"
    bodies: tuple        # two body names or "world"
    spec: dict


@dataclass
class Removal:
    """What remove_body() took out, for restore_body(): the body's entry and exact rows, its
    joints' and springs' entries and rows, its contact filters, and the world's state."""
    index: int
    entry: dict
    body_rows: tuple                                   # one row of each Bodies array
    joints: list = field(default_factory=list)         # (index, JointModel, rows but seq)
    springs: list = field(default_factory=list)
    filters: list = field(default_factory=list)        # (index, pair)
    loads: list = field(default_factory=list)          # (index, LoadModel) on the body
    state: dict = field(default_factory=dict)          # resume.capture() before the removal
    steps_taken: int = 0
    names: tuple = ()                                  # bodies' and joints' names before it


def _merge(entry, changes):
    """entry with `changes` applied; a value of None removes the key."""
    out = copy.deepcopy(entry)
    for k, v in changes.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = copy.deepcopy(v)
    return out


def check_body_entry(entry):
    """ValueError (naming the problem) unless `entry` is a valid scene body entry with
    possible mass properties."""
    validate_entries({"bodies": [entry]})
    body_model(entry, where=f"body {entry['name']!r}")


def check_joint_entry(entry, body_names):
    """ValueError unless `entry` is a valid scene joint entry between bodies that exist."""
    stubs = [{"name": n, "fixed": True} for n in dict.fromkeys(entry.get("bodies", []))
             if n != WORLD]
    validate_entries({"bodies": stubs, "joints": [entry]})
    for n in entry["bodies"]:
        if n != WORLD and n not in body_names:
            raise ValueError(f"no body named {n!r}")


def validate_entries(doc, references=True):
    """ValueError unless the scene-file parts in `doc` (bodies, joints, settings...) are
    valid, each problem named by its JSON path (without `references`: the schema only, not
    the names the entries refer to)."""
    from .scene import SceneError, validate
    try:
        validate({"format": "impulse-scene", "version": 1, **doc}, "edit", references)
    except SceneError as e:
        raise ValueError("; ".join(f"{p}: {m}" for p, m in e.problems)) from None


def _same_shapes(a, b):
    if len(a) != len(b):
        return False
    for s, t in zip(a, b, strict=True):
        if s.keys() != t.keys():
            return False
        for k in s:
            x, y = s[k], t[k]
            if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
                if x is None or y is None or not np.array_equal(np.asarray(x), np.asarray(y)):
                    return False
            elif x != y:
                return False
    return True


def same_physics(a, b):
    """True if two BodyModels move and collide alike (they may differ in name, colour and the
    scene entry they came from)."""
    return (a.static == b.static and a.mass == b.mass
            and np.array_equal(a.inertia, b.inertia) and np.array_equal(a.com, b.com)
            and np.array_equal(a.frame, b.frame) and a.material == b.material
            and a.collision == b.collision and _same_shapes(a.shapes, b.shapes))


class LiveEdits:
    """The World's live-edit methods (mixed into engine.world.World)."""

    # ---- reading back -----------------------------------------------------------------
    @property
    def scene_joint_names(self):
        """Names of every scene-file joint entry: joints, then springs."""
        return [j.name for j in self.joint_models] + [s.name for s in self.spring_models]

    def body_id(self, body):
        """The stable handle (handles.BodyId) of a body given by name or index."""
        return self._body_ids.of(self._name_of(body))

    def joint_id(self, name):
        """The stable handle (handles.JointId) of a joint or spring."""
        return self._joint_ids.of(self._joint_row(name)[0].name)

    def _name_of(self, body):
        """A body's name from its name, BodyId or index."""
        return self.models[self._body_arg(body)].name

    def joints_of(self, body_name):
        """Names of the joints and springs attached to a body (name or BodyId)."""
        body_name = self._name_of(body_name)
        return [j.name for j in self.joint_models + self.spring_models if body_name in j.bodies]

    def joint_model(self, name):
        """The JointModel (name, kind, bodies, the entry it came from) of a joint or spring."""
        return self._joint_row(name)[0]

    def _joint_row(self, name):
        """(JointModel, arrays, row, is_spring) of a joint or spring by name or JointId."""
        if isinstance(name, JointId):
            name = self._joint_ids.name(name)
        for i, jm in enumerate(self.joint_models):
            if jm.name == name:
                return jm, self.J, i, False
        for i, sm in enumerate(self.spring_models):
            if sm.name == name:
                return sm, self.Sp, i, True
        raise KeyError(f"no joint named {name!r}")

    def _body_arg(self, body):
        """A body index from a name, a BodyId or an index."""
        return self.body_index(body) if isinstance(body, (str, BodyId)) else self._body_ref(body)

    def body_entry(self, body):
        """The scene entry of a body (name or index) with its current pose and velocities."""
        return body_entry(self, self._body_arg(body))

    def body_def(self, body):
        """A body (name, index or BodyId) as a typed definition (definitions.BodyDef), with
        its current pose and velocities."""
        return from_entry(BodyDef, self.body_entry(body))

    def joint_def(self, name):
        """A joint or spring (name or JointId) as a typed definition (definitions.JointDef),
        anchors and axes as they are now."""
        return from_entry(JointDef, self.joint_entry(name))

    def joint_entry(self, name):
        """The scene entry of a joint or spring, anchors and axes in the bodies' scene frames
        as they are now."""
        jm, arrays, i, is_spring = self._joint_row(name)
        return joint_entry(self, jm, arrays, i, is_spring)

    def joint_anchors(self, name):
        """(2, 3) world points of a joint's or spring's two anchors."""
        _, arrays, i, _ = self._joint_row(name)
        return np.array([self._world_point(arrays.const.body[i, s], arrays.const.anchor[i, s])
                         for s in range(2)])

    def joint_poses(self):
        """Every joint's and spring's anchors, frames, limits and targets in the world now
        (engine/joint_poses.py: what the viewer's gizmos draw)."""
        from .joint_poses import joint_poses
        return joint_poses(self)

    def body_mass(self, body):
        """A body's mass [kg]; infinity for a fixed body."""
        b = self._body_arg(body)
        inv = float(self.B.inv_mass[b])
        return 1.0 / inv if inv > 0 else float("inf")

    def body_scene_pose(self, b):
        """(position, orientation quaternion) of body b's scene frame."""
        return scene_pose(self.models[b], self.B.pos[b], self.B.rot[b])

    # ---- motion -------------------------------------------------------------------------
    @waking
    def set_body_motion(self, body, entry):
        """Put a body's pose and velocities to those of a scene entry's `position`,
        `orientation`, `velocity` and `angular_velocity` (defaults where absent)."""
        b = self._body_arg(body)
        m = self.models[b]
        pos, rot, vel, omega = motion_from_entry(m, entry)
        self.B.pos[b], self.B.rot[b] = pos, rot
        if not m.static:
            self.B.vel[b], self.B.omega[b] = vel, omega
        self.B.pred_ok[b] = False

    @waking
    def restart_at(self, time):
        """Forget the step history: the clock at `time`, no previous step, no remembered
        spring forces (a reset to the start)."""
        self.time = float(time)
        self.h_prev = 0.0
        self.relax_prev = 0.0
        self.Sp.force_prev[:] = 0.0

    # ---- bodies ---------------------------------------------------------------------------
    @waking
    def add_body(self, spec):
        """Add a body from a definitions.BodyDef or a scene-file body entry; returns its
        BodyId."""
        spec = entry_of(spec)
        if spec["name"] == WORLD or spec["name"] in self.body_names:
            raise ValueError(f"body name {spec['name']!r} is already taken")
        model = body_model(spec, where=f"body {spec['name']!r}")
        return self._append_bodies([model], [spec])[0]

    def _body_rows(self, models, specs):
        new = S.empty_bodies(len(models), self._order)
        for i, (m, spec) in enumerate(zip(models, specs, strict=True)):
            new.pos[i], new.rot[i], new.vel[i], new.omega[i] = motion_from_entry(m, spec)
            self._set_mass_rows(new, i, m)
        return new

    @staticmethod
    def _set_mass_rows(B, i, m):
        """Body row i's constants from its BodyModel, and its mobility from them."""
        c = B.const
        if m.static:
            c.inv_mass[i] = c.inertia[i] = 0.0
            B.vel[i] = B.omega[i] = 0.0
        else:
            c.inv_mass[i] = 1.0 / m.mass
            c.inertia[i] = m.inertia
        S.release(B, i)

    def _append_bodies(self, models, specs):
        new = self._body_rows(models, specs)
        self.B = S.append_rows(self.B, new)
        self.collision.add_bodies(models, len(self.models))
        self.models.extend(models)
        return [self._body_ids.add(m.name) for m in models]

    @waking
    def remove_body(self, name):
        """Remove a body, every joint, spring and load attached to it and the contact filters
        that name it; returns a Removal for restore_body(). The body's handle and those of
        its joints and loads become stale."""
        from .resume import capture
        idx = self._body_arg(name)
        name = self.models[idx].name
        removal = Removal(idx, self.body_entry(idx), S.row_at(self.B, idx), state=capture(self),
                          steps_taken=self.steps_taken,
                          names=(self.body_names, self.scene_joint_names))
        for models, arrays, out in ((self.joint_models, "J", removal.joints),
                                    (self.spring_models, "Sp", removal.springs)):
            for i, jm in enumerate(models):
                if name in jm.bodies:
                    table = getattr(self, arrays)
                    out.append((i, jm, S.row_at(table, i)))
        gone = {jm.name for _, jm, _ in removal.joints + removal.springs}
        removal.loads = [(i, lm) for i, lm in enumerate(self.load_models)
                         if lm.body == name or lm.joint in gone]
        for _, lm in removal.loads:
            self.remove_load(lm.name)
        for _, jm, _ in removal.joints + removal.springs:
            self.remove_joint(jm.name)
        spec = self.contacts_spec or {}
        pairs = spec.get("disabled_pairs", [])
        removal.filters = [(i, p) for i, p in enumerate(pairs) if name in p]
        for i, _ in reversed(removal.filters):
            del pairs[i]
        if self.drag is not None and self.drag.body >= idx:
            self.drag = None if self.drag.body == idx else self.drag
            if self.drag is not None:
                self.drag.body -= 1
        self.B = S.delete_row(self.B, idx)
        self.collision.remove_body(idx)
        del self.models[idx]
        for arr in (self.J.const.body, self.Sp.const.body):
            arr[arr > idx] -= 1
        self._body_ids.remove(name)
        return removal

    @waking
    def restore_body(self, removal):
        """Put back what remove_body() took out, at the same rows. With no step and no other
        edit since, the world is then exactly as before the removal. Returns the body's new
        BodyId (the body and its joints get new handles; the old ones stay stale)."""
        idx = removal.index
        name = removal.entry["name"]
        if name in self.body_names:
            raise ValueError(f"body name {name!r} is already taken")
        for _, lm in removal.loads:
            if lm.name in self.load_names:
                raise ValueError(f"load name {lm.name!r} is already taken")
        model = body_model(removal.entry, where=f"body {name!r}")
        for arr in (self.J.const.body, self.Sp.const.body):
            arr[arr >= idx] += 1
        if self.drag is not None and self.drag.body >= idx:
            self.drag.body += 1
        self.B = S.insert_row(self.B, idx, removal.body_rows)
        self.collision.insert_body(idx, model)
        self.models.insert(idx, model)
        for i, jm, rows in removal.joints:
            self.J = S.insert_row(self.J, i, rows)
            self.joint_models.insert(i, jm)
        for i, sm, rows in removal.springs:
            self.Sp = S.insert_row(self.Sp, i, rows)
            self.spring_models.insert(i, sm)
        if removal.filters:
            if self.contacts_spec is None:
                self.contacts_spec = {}
            pairs = self.contacts_spec.setdefault("disabled_pairs", [])
            for i, p in removal.filters:
                pairs.insert(i, list(p))
        for _, jm, _ in removal.joints + removal.springs:
            self._joint_ids.add(jm.name)
        for i, lm in removal.loads:
            self.load_models.insert(i, lm)
            self._load_ids.add(lm.name)
        if self.steps_taken == removal.steps_taken and \
                (self.body_names, self.scene_joint_names) == removal.names:
            from .resume import restore
            restore(self, removal.state)
        return self._body_ids.add(name)

    @waking
    def edit_body(self, name, changes):
        """Set keys of a body's scene entry (None removes a key). Pose and velocity keys move
        the body; other keys keep its motion. A new mass, shape, material or fixed flag
        rebuilds its row in place; joints stay at the same points of the body. `changes`
        may be a whole BodyDef: the keys in which it differs are set."""
        self._edit_body(self._body_arg(name), changes)

    def _edit_body(self, b, changes, keep_shape_ids=False):
        """edit_body on body index b; a new shape list makes the body's ShapeIds stale
        unless keep_shape_ids (an edit of one shape: world_shapes.edit_shape)."""
        name = self.models[b].name
        before = self.body_entry(b)
        changes = changes_to(before, changes)
        entry = _merge(before, changes)
        if entry.get("name") != name:
            raise ValueError("a body's name is changed with rename_body")
        check_body_entry(entry)
        new = body_model(entry, where=f"body {name!r}")
        old = self.models[b]
        if not same_physics(old, new):
            self._rebuild_body(b, old, new)
        self.models[b] = new
        if any(k in changes for k in MOTION_KEYS) or new.static != old.static:
            self.set_body_motion(b, entry)
        if not keep_shape_ids and shape_entries(entry) != shape_entries(before):
            self._new_shape_list(b)

    def _rebuild_body(self, b, old, new):
        B = self.B
        origin, _ = scene_pose(old, B.pos[b], B.rot[b])
        rot_scene = B.rot[b] @ old.frame.T
        w = B.omega[b].copy()
        v_origin = B.vel[b] - np.cross(w, B.pos[b] - origin)
        B.rot[b] = rot_scene @ new.frame
        B.pos[b] = origin + rot_scene @ new.com
        B.vel[b] = v_origin + np.cross(w, B.pos[b] - origin)
        self._set_mass_rows(B, b, new)
        B.pred_ok[b] = False
        turn = new.frame.T @ old.frame           # old principal frame -> new principal frame
        for arrays in (self.J, self.Sp):
            for i, s in zip(*np.nonzero(arrays.const.body == b), strict=True):
                scene = principal_to_scene(old, arrays.const.anchor[i, s])
                arrays.const.anchor[i, s] = scene_to_principal(new, scene)
                if arrays is self.J:
                    arrays.const.frame[i, s] = turn @ arrays.const.frame[i, s]
        self.collision.replace_body(b, new)

    def rename_body(self, old, new):
        """Give a body a new name; its joints, springs, loads, contact filters, visual meshes
        and handle follow."""
        b = self._body_arg(old)
        old = self.models[b].name
        if new == WORLD or new in self.body_names:
            raise ValueError(f"body name {new!r} is already taken")
        entry = copy.deepcopy(self.models[b].spec)
        entry["name"] = new
        check_body_entry({**entry, **{k: v for k, v in self.body_entry(b).items()
                                      if k in MOTION_KEYS}})
        self.models[b].name = new
        self.models[b].spec = entry
        for jm in self.joint_models + self.spring_models:
            jm.bodies = tuple(new if n == old else n for n in jm.bodies)
            jm.spec["bodies"] = list(jm.bodies)
        for pair in (self.contacts_spec or {}).get("disabled_pairs", []):
            pair[:] = [new if n == old else n for n in pair]
        for lm in self.load_models:
            if lm.body == old:
                lm.body = lm.spec["body"] = new
        for mesh in self.meta.get("visuals") or []:
            if mesh.body == old:
                mesh.body = new
        self._body_ids.rename(old, new)

    # ---- joints and springs --------------------------------------------------------------
    @waking
    def add_joint(self, spec):
        """Add a joint or spring from a definitions.JointDef or a scene-file joint entry;
        returns its JointId."""
        spec = entry_of(spec)
        if spec["name"] in self.scene_joint_names:
            raise ValueError(f"joint name {spec['name']!r} is already taken")
        model, rows, seq = self._joint_rows(spec)
        if spec["type"] == "spring":
            self.Sp = S.append_rows(self.Sp, rows)
            self.spring_models.append(model)
        else:
            rows.const.param[0, P_SEQ_START] = self.J.const.seq.shape[0]
            self.J = S.with_seq(S.append_rows(self.J, rows),
                                np.concatenate([self.J.const.seq, seq]))
            self.joint_models.append(model)
            store_angles_now(self.B, self.J)     # its angles as they are (the others' unchanged)
        return self._joint_ids.add(model.name)

    def _joint_rows(self, spec):
        """(JointModel, one-row Joints or Springs, target sequence rows) of a joint entry."""
        a, b = spec["bodies"]
        ia, ib = self.body_index(a), self.body_index(b)
        if ia == ib:
            raise ValueError(f"joint {spec['name']!r} connects body {a!r} to itself")
        anchors = self._local_anchors(spec, (ia, ib))
        model = JointModel(spec["name"], spec["type"], (a, b), spec)
        if spec["type"] == "spring":
            row = S.empty_springs(1)
            row.const.body[0] = ia, ib
            row.const.anchor[0] = anchors
            p = [self._world_point(ia, anchors[0]), self._world_point(ib, anchors[1])]
            row.const.rest[0] = spec.get("rest_length", float(np.linalg.norm(p[1] - p[0])))
            row.const.stiff[0] = spec["stiffness"]
            row.const.damp[0] = spec.get("damping", 0.0)
            return model, row, None
        kind, param, seq = parameters(spec)
        row = S.empty_joints(1)
        row.const.kind[0] = kind
        row.const.body[0] = ia, ib
        row.const.anchor[0] = anchors
        row.const.frame[0] = local_frames(self, spec, (ia, ib))
        row.const.param[0] = param
        return model, row, seq

    @waking
    def remove_joint(self, name):
        """Remove a joint or spring, and the loads on it (a joint's target sequence rows stay
        unused in J.const.seq)."""
        jm, _, i, is_spring = self._joint_row(name)
        for lm in [lm for lm in self.load_models if lm.joint == jm.name]:
            self.remove_load(lm.name)
        self._joint_ids.remove(jm.name)
        if is_spring:
            self.Sp = S.delete_row(self.Sp, i)
            del self.spring_models[i]
        else:
            self.J = S.delete_row(self.J, i)
            del self.joint_models[i]

    @waking
    def edit_joint(self, name, changes):
        """Set keys of a joint's or spring's scene entry (None removes a key), in place. Its
        anchors and frames stay exactly as they are unless `changes` gives new ones (a whole
        JointDef: the keys in which it differs)."""
        jm, arrays, i, is_spring = self._joint_row(name)
        name = jm.name
        changes = changes_to(self.joint_entry(name), changes)
        entry = _merge(self.joint_entry(name), changes)
        if entry.get("name") != name:
            raise ValueError("a joint's name cannot be edited")
        if ("type" in changes and (entry["type"] == "spring") != is_spring):
            raise ValueError("a joint cannot become a spring or a spring a joint")
        if any(k in changes for k in WORLD_FRAME_KEYS):     # world-frame geometry wins
            for key in ("local_anchors", "local_axes", "local_refs"):
                if key not in changes:
                    entry.pop(key, None)
        check_joint_entry(entry, self.body_names)
        model, rows, seq = self._joint_rows(entry)
        if not any(k in changes for k in JOINT_GEOMETRY_KEYS + ("bodies",)):
            rows.const.anchor[0] = arrays.const.anchor[i]
            if not is_spring:
                rows.const.frame[0] = arrays.const.frame[i]
        if is_spring:
            for f in ("body", "anchor", "rest", "stiff", "damp"):
                getattr(arrays.const, f)[i] = getattr(rows.const, f)[0]
            self.spring_models[i] = model
        else:
            rows.const.param[0, P_SEQ_START] = arrays.const.seq.shape[0]
            for f in ("kind", "body", "anchor", "frame", "param"):
                getattr(arrays.const, f)[i] = getattr(rows.const, f)[0]
            self.J = S.with_seq(self.J, np.concatenate([arrays.const.seq, seq]))
            self.joint_models[i] = model
            if any(k in changes for k in JOINT_GEOMETRY_KEYS + ("bodies", "type")):
                self.J.angle[i] = 0.0        # new geometry: its angles read afresh
            self.J.warm[i] = 0.0             # its locks' impulses start afresh
            store_angles_now(self.B, self.J)

    def _world_point(self, b, local):
        if b < 0:
            return np.asarray(local, dtype=np.float64)
        return self.B.pos[b] + self.B.rot[b] @ local

    def _to_local(self, b, world_point):
        if b < 0:
            return np.asarray(world_point, dtype=np.float64)
        return self.B.rot[b].T @ (np.asarray(world_point, dtype=np.float64) - self.B.pos[b])

    def _local_anchors(self, spec, idx):
        if "anchor" in spec:
            return np.array([self._to_local(b, spec["anchor"]) for b in idx])
        if "anchors" in spec:   # world points, one per body (springs)
            return np.array([self._to_local(b, p)
                             for b, p in zip(idx, spec["anchors"], strict=False)])
        return np.array([scene_to_principal(self.models[b] if b >= 0 else None, p)
                         for b, p in zip(idx, spec["local_anchors"], strict=False)])
