"""The desktop app: a Viewer plus a Session (scene, editor, clock), the UI panels, the
launcher, file handling with unsaved-change prompts, drag, joint tool, recording.

`App(viewer)` starts in the launcher; `open_path(path)` opens a scene (a bad file shows its
problems in the UI and the app keeps running). With `threaded=True` (the default) each
session steps its world on a physics thread (app/loop.py): a frame hands out the steps it
owes and draws the last finished state without waiting for them.
"""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import numpy as np
from pyglet.window import key

from impulse.app import editor as E
from impulse.app.drag import MouseGrab
from impulse.app.gallery import SCENES
from impulse.app.kernel_compile import features_for_path
from impulse.app.recent import add_recent
from impulse.app.recorder import Recorder, default_media_path
from impulse.app.session import Session
from impulse.app.stats import StatsSeries
from impulse.app.ui.contacts_panel import draw_contacts_panel
from impulse.app.ui.dialogs import Dialogs, draw_help, draw_problems
from impulse.app.ui.inspector import draw_inspector
from impulse.app.ui.joint_tool import JointTool
from impulse.app.ui.launcher import Launcher
from impulse.app.ui.layout import end_frame as end_layout_frame
from impulse.app.ui.menu import draw_menu
from impulse.app.ui.overlay import draw_overlay
from impulse.app.ui.scene_tree import draw_scene_tree
from impulse.app.ui.solver_panel import draw_solver_panel
from impulse.app.ui.stats_panel import draw_stats_panel
from impulse.app.ui.timeline import draw_timeline
from impulse.app.ui.tools_panel import draw_tools
from impulse.app.ui.vr_panel import draw_vr_panel
from impulse.app.userdirs import documents_dir, pictures_dir, videos_dir
from impulse.engine import SceneError, interpreted
from impulse.engine.formats import MODEL_SUFFIXES
from impulse.engine.warmup import FEATURES, warm_interaction

log = logging.getLogger(__name__)
NEW_SCENE = object()           # App.pending_open: a new empty scene
# frames a second at most while the kernels compile beside the window (a software-GL
# window without vsync would take a whole core of two from the compile): COMPILING_FPS while
# a scene runs, the user works in the launcher (a mouse or key event in the last
# COMPILING_IDLE_S) or the gallery has thumbnails to make, else COMPILING_IDLE_FPS. A
# launcher frame under llvmpipe at 1280x720 costs about 30 ms of a core: at 20 a second the
# idle launcher took 60 % of one of this machine's two (2026-11-30: `impulse view pendulum
# --time 0.5` from an empty cache 7 min 49 s at 20, 6 min 28 s at 4, as `impulse compile`).
COMPILING_FPS = 20
COMPILING_IDLE_FPS = 4
COMPILING_IDLE_S = 2.0


class App:
    def __init__(self, viewer, scenes_dir=SCENES, media_dir=None, threaded: bool = True,
                 frame_dt: float | None = None, open_paused: bool = False, compile=None,
                 interpret: bool = False):
        self.viewer = viewer
        self.compile = compile                 # app.kernel_compile.BackgroundCompile or None
        # run scenes with the kernels as Python while `compile` runs (engine/interpreted.py),
        # from the first frame on (rebinding the kernels takes 0.5-0.8 s)
        self.interpret = interpret
        self._compile_capped = False           # the viewer has a compiling frame cap
        self.pending_open = None               # a path (or NEW_SCENE) waiting for its kernels
        # `impulse view SCENE --frames N` on a first start: the N frames are the scene's
        viewer.hold_frames = lambda: self.pending_open is not None
        self.threaded = threaded               # physics on a thread beside the frames
        self.session: Session | None = None
        self.scene_view = None
        self.grab: MouseGrab | None = None
        self.errors: list[str] = []
        self.status = ""
        self.selection = None                  # ("body" | "joint", name)
        self.scroll_tree_to_selection = False
        self.panels = {"tree": True, "inspector": True, "solver": True, "stats": True,
                       "tools": True, "contacts": False,
                       "timeline": True, "help": False, "vr": False}
        self.stats = StatsSeries()
        self.recorder = Recorder()
        self.recording_panels = True
        self.media_dir = media_dir             # None: the user's pictures / videos folders
        self.capture_panels = True             # F12 and F9 take the panels too (View menu)
        self.frame_dt = frame_dt               # paced: each frame is this much simulated time
        self.open_paused = open_paused         # scenes open paused (Simulation menu, --paused)
        self.dialogs = Dialogs(self)
        self.joint_tool = JointTool(self)
        self.launcher = Launcher(self, scenes_dir)
        self.palette_drag = None
        self.overlay_lines: list[str] = []
        self.filter_pick = [0, 1]
        self.quitting = False
        self.vr = None                         # app.vr.mode.VRMode while in VR
        viewer.update = self.update
        viewer.draw_ui = self.draw_ui
        viewer.on_files = self.on_files
        viewer.on_quit = self.on_quit
        viewer.on_click = self.on_click
        viewer.on_select = self.on_select
        viewer.on_finish = self.sync_physics
        viewer.window.push_handlers(on_key_press=self.on_key_press)
        self._title = None
        self._update_title()

    # ================================================================ sessions
    @property
    def world(self):
        return self.session.world if self.session else None

    def set_session(self, session: Session) -> None:
        if self.grab is not None:
            self.grab.cancel()
        if self.recorder.active:
            self.toggle_recording()
        self.joint_tool.cancel()
        if self.session is not None and self.session is not session:
            self.session.close()
        self.session = session
        session.loop.threaded = self.threaded
        session.loop.paused = self.open_paused
        self.scene_view = session.view
        self.viewer.set_world(self.scene_view)
        self.viewer.options.grid = self._ground_visible(session.world)
        self.viewer.loop = session.loop
        self.grab = MouseGrab(self.viewer, session.world, defer=session.loop.when_idle,
                              shown=session.view)
        self.viewer.grab = self.grab
        session.listeners.append(self._on_edit)
        session.batch_listeners.append(lambda: self.stats.record(session.world))
        session.batch_listeners.append(lambda: self._report_stopped(session))
        if self.vr is not None:
            self.vr.on_session(session)
        self.stats.clear()
        self.stats.record(session.world)
        self.selection = None
        self.errors = []
        self._update_title()

    @staticmethod
    def _ground_visible(world) -> bool:
        """The y = 0 grid helps unless the scene (without a ground plane) hangs below it or
        is looked at from below."""
        if any(s["kind"] == 0 for m in world.models for s in m.shapes):
            return True
        cam = world.camera if isinstance(world.camera, dict) else {}
        below = float(world.body_pos[:, 1].min()) < -0.05 if len(world.body_pos) else False
        return not below and float(cam.get("eye", [0, 1, 0])[1]) > 0

    def show_launcher(self) -> None:
        def go():
            self.exit_vr()
            if self.session is not None:
                self.session.close()
            self.session = None
            self.viewer.set_world(None)
            self.viewer.grab = None
            self.viewer.loop = None
            self.grab = None
            self._update_title()
        self.confirm_discard(go)

    def confirm_discard(self, action) -> None:
        """Run `action` now, or after the user saved or discarded unsaved changes."""
        if self.session is not None and self.session.dirty:
            self.dialogs.ask_unsaved(action)
        else:
            action()

    def open_path(self, path) -> None:
        self.confirm_discard(lambda: self._open(path))

    def _open(self, path) -> bool:
        if self._waits_for_kernels(path):
            return True
        self.pending_open = None               # the latest choice wins over a waiting one
        try:
            session = Session.open(path)
        except SceneError as e:
            self.show_errors(e.lines())
            return False
        self.set_session(session)
        add_recent(path)
        self.status = f"opened {path}"
        return True

    def new_scene(self) -> None:
        self.confirm_discard(self._new)

    def _new(self) -> None:
        if not self._waits_for_kernels(NEW_SCENE):
            self.pending_open = None
            self.set_session(Session.new())

    def _waits_for_kernels(self, path) -> bool:
        """On a first start, keep the scene to open until its kernels are compiled."""
        c = self.compile
        if c is None or c.error is not None or interpreted.active():
            return False
        needs = FEATURES if path is NEW_SCENE else features_for_path(path)
        if c.has(needs):
            return False
        self.pending_open = path
        name = "a new scene" if path is NEW_SCENE else os.path.basename(str(path))
        self.status = f"{name} opens when its physics kernels are compiled"
        return True

    def _compiling_cap(self) -> float:
        """The frame cap while kernels compile (COMPILING_FPS's comment)."""
        idle = time.monotonic() - self.viewer.controller.last_input > COMPILING_IDLE_S
        busy = self.session is not None or self.launcher.thumbnails_to_make
        return COMPILING_FPS if busy or not idle else COMPILING_IDLE_FPS

    def _open_pending(self) -> None:
        """Per frame while compiling: open the waiting scene once its kernels are ready."""
        c, path = self.compile, self.pending_open
        if c.error is not None:
            self.pending_open = None
            self.show_errors([c.error])       # (an interpreted physics goes on as it is)
            self.compile = None
            return
        if path is not None and not self._waits_for_kernels(path):
            self.pending_open = None
            self._new() if path is NEW_SCENE else self._open(path)
        if c.finished:
            self.compile = None
            self.launcher.kernels_ready()
            if interpreted.active():
                if self.session is not None:
                    self.session.loop.when_idle(self._use_compiled)   # between two steps
                else:
                    self._use_compiled()

    def _use_compiled(self) -> None:
        """The first start's kernels are compiled: the physics leaves Python for them (each
        loads from the cache at its first call; the drag, edit and island kernels now)."""
        if not interpreted.active():
            return
        t = time.monotonic()
        interpreted.use_compiled()
        if self.session is not None:
            self.session.load_kernels()
        else:
            warm_interaction()
        log.info("the physics runs compiled from now on (kernels loaded in %.1f s)",
                 time.monotonic() - t)
        self.status = "physics kernels compiled: the simulation runs at full speed now"

    def _report_stopped(self, session) -> None:
        """Bodies the engine's finite-state guard stopped since the last batch: Problems."""
        problems = session.world.problems
        seen = session.problems_shown
        if len(problems) > seen:
            session.problems_shown = len(problems)
            self.show_errors(self.errors + [p.line() for p in problems[seen:]])

    def show_errors(self, lines) -> None:
        self.errors = list(lines)
        for line in self.errors:
            log.warning("%s", line)

    # ================================================================ saving
    def save(self, then=None) -> bool:
        """Save: the scene as edited with its initial state. A new scene, or one that ships
        with impulse (kept as it is), asks where to save a copy."""
        ses = self.session
        if ses is None:
            return False
        if not ses.path or ses.bundled:
            self.prompt_save_as(then)
            return False
        return self._save_to(ses.path, then)

    def _save_to(self, path, then=None) -> bool:
        try:
            target = self.session.save(path)
        except (OSError, SceneError, ValueError) as e:
            self.show_errors([f"Save failed, {path} was not changed: {e}"])
            return False
        add_recent(target)
        self.status = f"saved {target}"
        self._update_title()
        if then is not None:
            then()
        return True

    def _default_path(self, suffix="") -> str:
        """Where a Save as / Save state as dialog starts: next to the open file, or in the
        user's documents folder for a new or bundled scene."""
        ses = self.session
        name = Path(ses.path).stem if ses and ses.path else "untitled"
        if ses and ses.path and not ses.bundled:
            return str(Path(ses.path).with_name(name + suffix + ".json"))
        return str(documents_dir() / (name + suffix + ".json"))

    def prompt_save_as(self, then=None) -> None:
        self.dialogs.ask_path("Save scene as", self._default_path(),
                              lambda p: self._save_to(p, then))

    def prompt_save_state(self) -> None:
        self.dialogs.ask_path("Save state as", self._default_path("-state"),
                              self._save_state_to)

    def _save_state_to(self, path) -> bool:
        try:
            target = self.session.save_state(path)
        except (OSError, SceneError, ValueError) as e:
            self.show_errors([f"Save state failed, {path} was not changed: {e}"])
            return False
        self.status = f"saved the state at t = {self.session.world.time:.3f} s to {target}"
        return True

    def prompt_open(self) -> None:
        default = str(self.session.path if self.session and self.session.path else SCENES) + os.sep
        self.dialogs.ask_path("Open scene", os.path.dirname(default) + os.sep, self.open_path)

    def on_files(self, paths) -> None:
        """Files dropped on the window: open the first scene file or URDF/MJCF model."""
        scenes = [p for p in paths if str(p).lower().endswith((".json", *MODEL_SUFFIXES))] \
            or list(paths)
        if scenes:
            self.open_path(scenes[0])

    def quit(self) -> None:
        self.viewer.window.dispatch_event("on_close")

    def on_quit(self) -> bool:
        """Window close / Quit: ask about unsaved changes first."""
        if self.quitting or self.session is None or not self.session.dirty:
            if self.recorder.active:
                self.recorder.stop()
            return True

        def leave():
            self.quitting = True
            self.quit()
        self.dialogs.ask_unsaved(leave)
        return False

    # ================================================================ editing
    def run(self, cmd) -> bool:
        """Run an editor command; a rejected one shows why and changes nothing."""
        try:
            self.session.editor.run(cmd)
        except (ValueError, KeyError) as e:
            self.show_errors([f"{cmd.label}: {str(e).strip(chr(39))}"])
            return False
        return True

    def undo(self) -> None:
        if self.session and self.session.editor.undo():
            self.status = "undone"

    def redo(self) -> None:
        if self.session and self.session.editor.redo():
            self.status = "redone"

    def _on_edit(self, cmd) -> None:
        if isinstance(cmd, E.RenameBody) and self.selection and self.selection[0] == "body":
            names = self.world.body_names                # the selection follows a rename
            if self.selection[1] not in names:
                self.selection = ("body", cmd.new if cmd.new in names else cmd.old)
        if cmd.structural and self.grab is not None:
            self.grab.cancel()
        if cmd.structural and self.vr is not None:
            self.vr.grab.cancel()
        self._sync_selection()
        self._update_title()

    def delete_selection(self) -> None:
        if not self.selection or self.session is None:
            return
        kind, name = self.selection
        if kind == "load":             # loads are removed in the file or through the API
            return
        cmd = E.RemoveBody(name) if kind == "body" else E.RemoveJoint(name)
        if self.run(cmd):
            self.selection = None
            self._sync_selection()

    def duplicate_selection(self) -> None:
        if self.selection and self.selection[0] == "body":
            self.session.loop.sync()           # the copy takes the body's current state
            cmd = E.Duplicate(self.world, self.selection[1])
            if self.run(cmd):
                self.select("body", cmd.spec["name"])

    def drop_new_body(self, kind: str, mx: float, my: float) -> None:
        """A palette item released over the 3D view at ImGui position (mx, my)."""
        if self.session is None:
            return
        x, y = mx, self.viewer.window.height - 1 - my
        body, point = self.viewer.pick(x, y)
        if body < 0:
            origin, d = self.viewer.ray(x, y)
            if d[1] >= -1e-6:
                self.status = "drop onto a body or the ground"
                return
            point = origin + d * (-origin[1] / d[1])     # the ground plane y = 0
        rng = np.random.default_rng(len(self.world.body_names))
        spec = E.body_at_rest_spec(self.world, kind, point, color=rng.uniform(0.25, 0.9, 3))
        if self.run(E.AddBody(spec)):
            self.select("body", spec["name"])

    # ================================================================ selection
    def select(self, kind: str, name: str) -> None:
        self.selection = (kind, name)
        self._sync_selection()

    def _sync_selection(self) -> None:
        w = self.world
        sel = self.selection
        if w is None:
            return
        if sel and sel[0] == "body" and sel[1] not in w.body_names:
            sel = self.selection = None
        joints = w.joint_models + w.spring_models
        if sel and sel[0] == "joint" and sel[1] not in [j.name for j in joints]:
            sel = self.selection = None
        if sel and sel[0] == "load" and sel[1] not in w.load_names:
            sel = self.selection = None
        if sel and sel[0] == "load":
            spec = w.load_entry(sel[1])
            bodies = [spec["body"]] if "body" in spec else \
                [n for n in w.joint_model(spec["joint"]).bodies if n != "world"]
            self.viewer.options.selected = tuple(w.body_index(n) for n in bodies)
        elif sel and sel[0] == "body":
            self.viewer.options.selected = (w.body_index(sel[1]),)
        elif sel:
            jm = next(j for j in joints if j.name == sel[1])
            self.viewer.options.selected = tuple(w.body_index(n) for n in jm.bodies if n != "world")
        else:
            self.viewer.options.selected = ()

    def on_select(self, body: int) -> None:
        """Selection from the 3D view."""
        if self.world is None:
            return
        self.selection = ("body", self.world.body_names[body]) if body >= 0 else None
        self.scroll_tree_to_selection = True

    def on_click(self, body: int, point) -> None:
        if self.joint_tool.active:
            self.joint_tool.click(body, point)
        else:
            self.viewer.select(body)

    # ================================================================ clock
    def single_step(self) -> None:
        if self.session:
            self.session.loop.pause()
            self.session.loop.request_step()

    def sync_physics(self) -> None:
        """Wait for the running batch, so the world is the latest finished state (e.g. for
        the last frame of `impulse view --screenshot`)."""
        if self.session:
            self.session.loop.sync()

    def wake_all(self) -> None:
        """Wake every sleeping island (between batches of the physics thread)."""
        if self.session:
            world = self.session.world
            self.session.loop.when_idle(lambda: world.wake())

    def reset(self) -> None:
        if self.session:
            if self.grab:
                self.grab.cancel()
            self.session.reset()
            self.stats.clear()
            self.stats.record(self.world)

    # ================================================================ VR
    def enter_vr(self, resolution_scale: float = 1.0) -> bool:
        """Start VR mode (the headset shows the scene, this window stays as the mirror).
        Without a runtime the one-line reason is shown and the desktop goes on."""
        if self.vr is not None:
            return True
        if self.session is None:
            self.show_errors(["Enter VR: open a scene first"])
            return False
        from impulse.app.vr.runtime import RuntimeNotFound, unavailable_reason

        problem = unavailable_reason()
        if problem:
            self.show_errors([problem])
            return False
        try:
            from impulse.app.vr.mode import VRMode

            self.vr = VRMode(self, resolution_scale)
        except RuntimeNotFound as e:
            self.show_errors([str(e)])
            return False
        except Exception as e:  # noqa: BLE001 - any runtime failure: one line, desktop goes on
            self.show_errors([f"Enter VR failed: {type(e).__name__}: {e}"])
            return False
        self.panels["vr"] = True
        self.status = f"VR: {self.vr.vr.system_name}"
        return True

    def exit_vr(self) -> None:
        if self.vr is not None:
            vr, self.vr = self.vr, None
            vr.close()
            self.status = (f"left VR: {vr.vr.frames_submitted} frames submitted, "
                           f"{vr.vr.missed_frames} missed")

    # ================================================================ media
    def _media_path(self, kind: str, ext: str) -> Path:
        folder = self.media_dir or (pictures_dir() if ext == "png" else videos_dir()) / "impulse"
        return default_media_path(kind, ext, folder)

    def screenshot(self, path=None, panels: bool | None = None) -> Path | None:
        """F12 (with panels as View > Capture panels says), Shift+F12 (the other way)."""
        if self.session is None:
            return None
        panels = self.capture_panels if panels is None else panels
        path = Path(path) if path else self._media_path("shot", "png")
        try:
            self.viewer.screenshot(path, with_ui=panels)
        except OSError as e:
            self.show_errors([f"Screenshot failed: {e}"])
            return None
        self.status = f"screenshot {'with' if panels else 'without'} panels saved to {path}"
        return path

    def toggle_recording(self, path=None, panels: bool | None = None) -> None:
        """F9 / Shift+F9: start or stop an MP4 of the window (panels as for screenshots)."""
        if self.recorder.active:
            out = self.recorder.stop()
            self.status = f"video saved to {out} ({self.recorder.frames} frames)"
            return
        if self.session is None:
            return
        self.recording_panels = self.capture_panels if panels is None else panels
        path = Path(path) if path else self._media_path("video", "mp4")
        try:
            self.recorder.start(path)
        except Exception as e:  # noqa: BLE001 - ffmpeg missing or path not writable
            self.show_errors([f"cannot record to {path}: {e}"])
            return
        self.status = f"recording to {path}"

    # ================================================================ per frame
    def update(self, dt: float) -> None:
        if self.compile is not None:
            if self.compile.proc is None and self.viewer.frame_count >= 1:
                self.compile.start()               # the window is up: compile beside it
                if self.interpret:
                    interpreted.interpret()
            self._open_pending()
        if self.compile is not None:
            # while kernels compile beside the window, it leaves them the CPU it does not need
            cap = self._compiling_cap()
            if cap != self.viewer.frame_cap:
                self.viewer.set_frame_cap(cap)
            self._compile_capped = True
        elif self._compile_capped:
            self._compile_capped = False
            self.viewer.set_frame_cap(None)
        if self.session is None:
            if self.viewer.frame_count >= 1:   # the gallery drawn first: a thumbnail takes up
                self.launcher.update()         # to a second or two under software GL
            return
        if self.grab is not None:
            self.scene_view.gizmo_lines = self.grab.gizmo_lines()
        self.scene_view.joint_preview = self.joint_tool.preview()
        if self.vr is not None:
            report = self.vr.frame(dt)
            if report is None:                 # the runtime ended the session
                self.exit_vr()
                return
        elif self.frame_dt is not None:     # paced: exactly frame_dt of simulated time a frame
            loop = self.session.loop
            loop.max_steps = max(loop.max_steps, int(np.ceil(self.frame_dt / loop.h)) + 1)
            loop.advance(self.frame_dt, budget_s=float("inf"))
            loop.sync()
        else:
            self.session.loop.advance(dt)
        if self.recorder.active:
            self.recorder.add(self.viewer.screenshot(with_ui=self.recording_panels))
        self._update_title()

    def _update_title(self) -> None:
        title = self.session.title if self.session else "impulse"
        if title != self._title:
            self.viewer.window.set_caption(title)
            self._title = title

    def draw_ui(self) -> None:
        end_layout_frame()
        draw_menu(self)
        if self.session is None:
            self.launcher.draw()
        else:
            p = self.panels
            for flag, fn in (("tree", draw_scene_tree), ("inspector", draw_inspector),
                             ("solver", draw_solver_panel), ("stats", draw_stats_panel),
                             ("tools", draw_tools),
                             ("contacts", draw_contacts_panel), ("timeline", draw_timeline),
                             ("vr", draw_vr_panel)):
                if p[flag]:
                    fn(self)
            draw_overlay(self)
        draw_help(self)
        draw_problems(self)
        self.dialogs.draw()

    # ================================================================ keys
    def on_key_press(self, symbol, modifiers):
        ctrl = modifiers & key.MOD_CTRL
        shift = modifiers & key.MOD_SHIFT
        typing = self.viewer.ui is not None and self.viewer.ui.want_keyboard
        if symbol == key.ESCAPE:
            self.joint_tool.cancel()
            return True                # pyglet's default would close the window on Esc
        if self.dialogs.open or (typing and not ctrl):
            return None
        if ctrl:
            actions = {key.Z: self.redo if shift else self.undo, key.Y: self.redo,
                       key.S: self.prompt_save_state if modifiers & key.MOD_ALT
                       else self.prompt_save_as if shift else self.save,
                       key.O: self.prompt_open, key.N: self.new_scene, key.Q: self.quit,
                       key.D: self.duplicate_selection}
            fn = actions.get(symbol)
            if fn is not None and (self.session is not None or symbol in (key.O, key.N, key.Q)):
                fn()
            return None
        if self.session is None:
            return None
        plain = {key.RIGHT: self.single_step, key.N: self.single_step,
                 key.BACKSPACE: self.reset, key.DELETE: self.delete_selection,
                 key.F12: lambda: self.screenshot(panels=self.capture_panels != bool(shift)),
                 key.F9: lambda: self.toggle_recording(panels=self.capture_panels != bool(shift)),
                 key.F1: lambda: self.panels.__setitem__("help", not self.panels["help"])}
        fn = plain.get(symbol)
        if fn is not None:
            fn()
        return None

    # ================================================================ teardown
    def close(self) -> None:
        if self.compile is not None:
            self.compile.stop()
        self.exit_vr()
        if self.session is not None:
            self.session.close()
        if self.recorder.active:
            self.recorder.stop()
        self.launcher.release()
