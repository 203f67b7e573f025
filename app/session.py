"""One open scene: its file, World, editor, initial state, history and simulation clock.

- reset() puts every body back to its initial pose and velocities (by name: bodies added
  later start where they were added; edits are kept) and the time to 0;
- save() writes the scene as edited with each body's initial pose and velocities (what
  Reset goes back to), never the mid-run state, and never over a bundled scene;
  save_state() writes the current moment exactly (engine.save_scene: the `state` block);
  both are durable: a failed save raises and leaves the file on disk as it was;
- structural edits clear the history (its snapshots no longer fit the arrays).

Threads: with `threaded=True` the loop steps the world on the physics thread (app/loop.py).
Everything here that changes or saves the world (edits through the editor, reset, scrub,
save, close) first waits for the running batch (`loop.sync()`); after each batch the UI
thread keeps the history states the batch took and tells `batch_listeners`.
"""
from __future__ import annotations

import copy
import time
from pathlib import Path

import numpy as np

from impulse.app.editor import Editor, RenameBody, SetMotion
from impulse.app.gallery import SCENES
from impulse.app.history import History
from impulse.app.loop import FixedStepLoop
from impulse.app.scene_view import SceneView
from impulse.app.stats import ToleranceTally
from impulse.engine import World, interpreted, load_scene, save_scene
from impulse.engine.islands import preload as preload_islands
from impulse.engine.scene import world_to_scene, write_document
from impulse.engine.warmup import warm_interaction, warm_one_call

MOTION_KEYS = ("position", "orientation", "velocity", "angular_velocity")


def new_world() -> World:
    """An empty scene: a fixed ground plane and default settings."""
    w = World()
    w.add_body({"name": "ground", "fixed": True, "shape": {"type": "plane"},
                "color": [0.62, 0.63, 0.62]})
    w.meta = {"name": "Untitled", "description": "A new scene."}
    w.camera = {"eye": [4.0, 3.0, 6.0], "target": [0.0, 0.5, 0.0], "fov_deg": 45.0}
    return w


class Session:
    def __init__(self, world: World, path: str | None = None, history_seconds: float = 10.0,
                 max_steps: int = 80, step_budget_s: float = 0.025, threaded: bool = False):
        self.world = world
        self.path = str(path) if path else None
        self.history = History(history_seconds)
        # catch-up per batch: at most max_steps steps and step_budget_s of stepping (enough
        # for x8 at 60 Hz with h = 0.01), never a spiral of death
        self.loop = FixedStepLoop(self._step, world.settings.h, max_steps=max_steps,
                                  budget_s=step_budget_s, threaded=threaded)
        self.loop.on_collect.append(self._after_batch)
        self.view = SceneView(world, self.loop)   # what the renderer reads
        self.editor = Editor(world, on_change=self._on_edit, before_change=self.loop.sync)
        self.listeners = []            # callables(cmd) after every edit, undo and redo
        self.step_hooks = []           # callables() before every step (on the stepping thread)
        self.batch_listeners = []      # callables() after every batch (UI thread, world idle)
        self.step_ms = 0.0             # wall time of the last step
        self.tolerance = ToleranceTally()   # steps that missed eps_pos / eps_vel
        self._taken: list[dict] = []   # history states the running batch took
        self.problems_shown = 0        # world.problems already listed in the Problems window
        self._capture_initial()
        if not interpreted.active():   # (a first start's Python kernels need no loading)
            self.load_kernels()
        self.history.configure(world.settings.h, world.get_state())
        self.history.record(world, force=True)

    def load_kernels(self) -> None:
        """Load now the kernels a drag, an edit or a split into islands will call, and the
        contact step's one call, so that the first of each does not stall the physics."""
        warm_interaction()
        preload_islands(self.world)
        if self.world.collision.enabled:
            warm_one_call()

    @classmethod
    def open(cls, path, **kw) -> Session:
        """Load a scene file, or import a URDF/MJCF model (engine/formats: it gets no file
        of its own, so Save asks for a name and never writes over the model); SceneError on
        a bad file."""
        from impulse.engine.formats import is_model_file, load_model_world
        if is_model_file(path):
            return cls(load_model_world(path), None, **kw)
        return cls(load_scene(path), path, **kw)

    @classmethod
    def new(cls, **kw) -> Session:
        return cls(new_world(), None, **kw)

    # ------------------------------------------------------------ naming
    @property
    def title(self) -> str:
        name = Path(self.path).name if self.path else "untitled"
        return f"{name}{' *' if self.dirty else ''} - impulse"

    @property
    def dirty(self) -> bool:
        return self.editor.dirty

    # ------------------------------------------------------------ stepping
    def _step(self) -> None:
        """One step, on the stepping thread (the loop's step callable)."""
        for hook in self.step_hooks:
            hook()
        t0 = time.perf_counter()
        self.world.step()
        self.step_ms = (time.perf_counter() - t0) * 1000.0
        self.tolerance.add(self.world)
        state = self.history.take(self.world)
        if state is not None:
            self._taken.append(state)

    def _after_batch(self, batch=None) -> None:
        """UI thread, the batch done: keep its history states, tell the listeners."""
        taken, self._taken = self._taken, []
        self.history.keep(taken)
        for fn in self.batch_listeners:
            fn()

    def step(self) -> None:
        """One step now, on this thread (tests, scripts; the app steps through the loop)."""
        self.loop.sync()
        self._step()
        self._after_batch()

    def scrub(self, t: float) -> None:
        self.loop.pause()
        self.loop.sync()
        self.loop.sim_time = self.history.scrub(self.world, t)

    def close(self) -> None:
        """Finish the running batch and stop the physics thread (the session is dropped)."""
        self.loop.close()

    # ------------------------------------------------------------ initial state
    def _capture_initial(self) -> None:
        self.initial = {}
        for b, name in enumerate(self.world.body_names):
            self._remember(b, name)
        self.initial_time = self.world.time

    def _remember(self, b: int, name: str) -> None:
        spec = self.world.body_entry(b)
        self.initial[name] = {k: copy.deepcopy(spec[k]) for k in MOTION_KEYS if k in spec}

    def reset(self) -> None:
        """Back to the initial state (Backspace)."""
        self.loop.sync()
        w = self.world
        for b, name in enumerate(w.body_names):
            if name in self.initial:
                w.set_body_motion(b, self.initial[name])
        w.restart_at(self.initial_time)
        self.loop.sim_time = w.time
        self.loop.accumulator = 0.0
        self.history.clear()
        self.history.record(w, force=True)
        self.tolerance.clear()

    # ------------------------------------------------------------ edits
    def _on_edit(self, cmd) -> None:
        w = self.world
        if isinstance(cmd, RenameBody):                # a rename (or its undo) keeps the start
            old, new = cmd.old, cmd.new
            if new in w.body_names and old in self.initial:
                self.initial[new] = self.initial.pop(old)
            elif old in w.body_names and new in self.initial:
                self.initial[old] = self.initial.pop(new)
        if isinstance(cmd, SetMotion) and cmd.name in w.body_names:   # the user's pose edit
            spec = w.body_entry(cmd.name)                # is the new start
            start = self.initial.setdefault(cmd.name, {})
            start.update({k: copy.deepcopy(spec[k]) for k in cmd.changes if k in spec})
        for b, name in enumerate(w.body_names):
            if name not in self.initial:
                self._remember(b, name)
        h_changed = self.loop.h != w.settings.h
        self.loop.h = float(w.settings.h)
        if getattr(cmd, "structural", True):
            self.history.clear()
        if getattr(cmd, "structural", True) or h_changed:
            self.history.configure(w.settings.h, w.get_state())
            self.history.record(w, force=True)
        for fn in self.listeners:
            fn(cmd)

    # ------------------------------------------------------------ saving
    @property
    def bundled(self) -> bool:
        """The open file is one of the scenes that ship with the program (read-only here)."""
        return is_bundled(self.path)

    def scene_document(self) -> dict:
        """The scene as edited, each body at its initial pose and velocities."""
        doc = world_to_scene(self.world)
        for spec in doc["bodies"]:
            start = self.initial.get(spec["name"])
            if start is not None:
                for k in MOTION_KEYS:
                    spec.pop(k, None)
                spec.update(copy.deepcopy(start))
        return doc

    def save(self, path=None) -> str:
        """Write the scene as edited with its initial state (durable). Raises OSError /
        SceneError / ValueError (no path; a bundled scene); the old file stays."""
        target = str(path or self.path or "")
        if not target:
            raise ValueError("no file name: use Save as")
        if is_bundled(target):
            raise ValueError(f"{target} ships with impulse and is kept as it is: "
                             f"save a copy with Save as")
        self.loop.sync()
        write_document(self.scene_document(), target, self.world.meta.get("visuals"))
        self.path = target
        self.world.meta["path"] = target
        self.editor.mark_saved()
        return target

    def save_state(self, path) -> str:
        """Write the current moment exactly (poses, velocities, time, contact memory: the
        `state` block), to continue from it later. The open file stays the session's."""
        target = str(path)
        if is_bundled(target):
            raise ValueError(f"{target} ships with impulse and is kept as it is")
        self.loop.sync()
        save_scene(self.world, target)
        return target


def is_bundled(path) -> bool:
    if not path:
        return False
    try:
        return Path(path).resolve().is_relative_to(SCENES.resolve())
    except OSError:
        return False


def states_equal(a: World, b: World, tol: float = 1e-9) -> bool:
    """Same bodies (by name) with the same pose and velocities."""
    if a.body_names != b.body_names:
        return False
    return all(np.allclose(getattr(a, f), getattr(b, f), atol=tol, rtol=0)
               for f in ("body_pos", "body_rot", "body_vel", "body_omega"))
