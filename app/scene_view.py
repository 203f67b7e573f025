"""What the renderer reads, for an engine World: the body arrays pass through; the shape
table (shape_body, shape_kind, shape_size, shape_local_pos/rot, hull_vertex, shape_hull_*)
is built from `world.models` and rebuilt only when the set of body models changes.

A World that already has shape-table attributes (the collision engine adds them) is used as
is. `gizmo_lines` is (k, 2, 3) extra segments (the mouse drag) drawn by the gizmo pass;
`joint_drawing` what the joint gizmos show (app/joint_drawing.py), `joint_preview` the joint
tool's joint-to-be (a JointDrawing, or None).
While the physics thread steps the world, the renderer reads a copy (SceneView.freeze).
"""
from __future__ import annotations

import numpy as np

from impulse.app.joint_drawing import joint_drawing

SHAPE_TABLE = ("shape_body", "shape_kind", "shape_size", "shape_local_pos", "shape_local_rot",
               "hull_vertex", "shape_hull_start", "shape_hull_count")


def shape_table(models) -> dict[str, np.ndarray]:
    """Flat shape arrays of a list of BodyModel (shape poses in the principal frame)."""
    body, kind, size, pos, rot, starts, counts, hulls = [], [], [], [], [], [], [], []
    n_hull = 0
    for b, m in enumerate(models):
        for s in m.shapes:
            body.append(b)
            kind.append(int(s["kind"]))
            size.append(np.asarray(s["size"], dtype=np.float64))
            pos.append(np.asarray(s["pos"], dtype=np.float64))
            rot.append(np.asarray(s["rot"], dtype=np.float64))
            pts = s.get("points")
            if pts is not None and len(pts):
                pts = np.asarray(pts, dtype=np.float64)
                starts.append(n_hull)
                counts.append(len(pts))
                hulls.append(pts)
                n_hull += len(pts)
            else:
                starts.append(0)
                counts.append(0)
    k = len(body)
    return {"shape_body": np.asarray(body, dtype=np.int64),
            "shape_kind": np.asarray(kind, dtype=np.int64),
            "shape_size": np.asarray(size, dtype=np.float64).reshape(k, 3),
            "shape_local_pos": np.asarray(pos, dtype=np.float64).reshape(k, 3),
            "shape_local_rot": np.asarray(rot, dtype=np.float64).reshape(k, 3, 3),
            "hull_vertex": np.vstack(hulls) if hulls else np.zeros((0, 3)),
            "shape_hull_start": np.asarray(starts, dtype=np.int64),
            "shape_hull_count": np.asarray(counts, dtype=np.int64)}


PER_STEP = ("body_pos", "body_rot", "body_vel", "body_static", "body_asleep",
            "contact_world", "contact_normal", "contact_impulse")
NO_CONTACTS = {"contact_world": np.zeros((0, 3)), "contact_normal": np.zeros((0, 3)),
               "contact_impulse": np.zeros(0)}
METHODS = ("joint_anchor_world", "joint_axis_world",      # values copied, called as before
           "load_arrows")


class SceneView:
    """Adapter World -> the renderer's scene contract.

    With a loop (app/loop.py) it takes a copy of everything the renderer reads at each
    hand-over of a batch to the physics thread, and shows that copy while the batch runs
    (so a frame never sees a half-stepped world, nor contacts of one step with impulses of
    another); when no batch runs it passes the world through."""

    def __init__(self, world, loop=None):
        self.world = world
        self.loop = loop
        self.gizmo_lines = np.zeros((0, 2, 3))
        self.joint_preview = None
        self.shown: dict | None = None      # the copy taken at the last hand-over
        self._key = None
        self._held = []
        self._table: dict[str, np.ndarray] = {}
        self._colors = np.zeros((0, 3))
        if loop is not None:
            loop.on_handoff.append(self.freeze)

    def _refresh(self) -> None:
        models = self.world.models
        # every edit removes and (re-)appends models, so count + first + last identify the set;
        # holding the previous models keeps their ids from being reused by new ones
        key = (len(models), id(models[0]), id(models[-1])) if models else (0,)
        if key != self._key:
            self._table = shape_table(models)
            self._colors = np.array([m.color for m in models], dtype=np.float64).reshape(-1, 3)
            self._key, self._held = key, list(models)

    def freeze(self) -> None:
        """Copy what the renderer reads; call only while no batch runs. The shape table and
        colours are kept by reference: edits replace those arrays, steps never touch them."""
        shown = {name: np.array(self._live(name)) for name in PER_STEP}
        for name in SHAPE_TABLE + ("body_color",):
            shown[name] = self._live(name)
        for name in METHODS:
            fn = getattr(self.world, name, None)
            if fn is not None:
                value = np.array(fn())
                shown[name] = lambda value=value: value
        shown["joint_drawing"] = joint_drawing(self.world)
        self.shown = shown

    def _live(self, name):
        if name in SHAPE_TABLE and not hasattr(self.world, name):
            self._refresh()
            return self._table[name]
        if name == "body_color":
            self._refresh()
            return self._colors
        if name == "body_asleep" and not hasattr(self.world, name):
            return np.zeros(len(self.world.body_pos), dtype=bool)
        if name in NO_CONTACTS:
            return getattr(self.world, name, NO_CONTACTS[name])
        if name == "joint_drawing":
            return joint_drawing(self.world)
        return getattr(self.world, name)

    def __getattr__(self, name):
        if name.startswith("_") or name in ("world", "loop", "shown"):
            raise AttributeError(name)
        shown = self.shown
        if shown is not None and name in shown and self.loop is not None and self.loop.busy:
            return shown[name]
        return self._live(name)
