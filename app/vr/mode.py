"""The app in the headset: one VRSession on the desktop window's GL context, each eye
drawn by the desktop's Renderer into the runtime's swapchain, the desktop window kept as
the mirror with the UI.

Per VR frame (App.update calls ``frame``): the runtime's frame wait, then within the frame
(``VRSession.run_frame``'s on_frame): wrist menu and editing by the right trigger, grab by
squeeze, locomotion, the fixed-step physics under the frame budget, the renderer's
view-independent preparation; then both eyes (renderer.draw + controller rays and the wrist
menu on top); the mirror window renders after. Controls: squeeze grabs (either hand);
right trigger presses the wrist button it points at, else acts for the edit mode; left
menu button plays / pauses; left stick moves, right stick snap-turns. With a simulated
runtime the mirror window's mouse and keys drive the right controller instead
(``app/vr/emulation.py``: mouse moves it, G squeezes, T triggers).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from impulse.app.vr.controls import LEFT, RIGHT
from impulse.app.vr.edit_tool import VREditTool
from impulse.app.vr.emulation import ControllerEmulation, emulation_wanted
from impulse.app.vr.flat_boxes import FlatBoxes, box_matrix
from impulse.app.vr.frame_budget import FrameBudget
from impulse.app.vr.hand_grab import HandGrab
from impulse.app.vr.locomotion import Locomotion, head_pose, place_head
from impulse.app.vr.mirror import EyeMirror
from impulse.app.vr.pointer import aim_ray, pick_body
from impulse.app.vr.session import VRSession
from impulse.app.vr.wrist_menu import hit_button, menu_boxes
from impulse.app.vr.xrmath import translation

RAY_LENGTH = 2.0
RAY_WIDTH = 0.004
RAY_COLORS = {LEFT: (0.5, 0.8, 1.0), RIGHT: (1.0, 0.7, 0.3)}
NOMINAL_HEAD = translation(0.0, 1.6, 0.0)


class VRMode:
    def __init__(self, app, resolution_scale: float = 1.0):
        """Start the session on the app window's context (RuntimeNotFound without a runtime)."""
        self.app = app
        viewer = app.viewer
        viewer.window.switch_to()
        self.renderer = viewer.renderer
        self.vr = VRSession(viewer.ctx, resolution_scale=resolution_scale)
        # the mirror window's mouse and keys as the right controller (simulated runtimes)
        self.emulation = ControllerEmulation(viewer, emulation_wanted(self.vr.system_name),
                                             ray=self.window_ray, view_frame=self.window_view)
        self.vr.controls.emulation = self.emulation
        self.hud = FlatBoxes(viewer.ctx)
        self.mirror = EyeMirror(viewer.ctx)
        viewer.scene_override = self._show_mirror
        self.budget = FrameBudget()
        self.edit = VREditTool(app, self.renderer)
        self.mirror_follows_head = True
        self.show_hud = True                # controller rays and the wrist menu
        self.eye_options = viewer.options
        self.keep_images = False            # tests: keep each eye's image in eye_images
        self.eye_images: dict[int, np.ndarray] = {}
        self.hovered_button: str | None = None
        self.physics_s = 0.0
        self.frames = 0
        self.grab = None
        self.on_session(app.session)
        self._hud: list = []
        self._centred = False
        self._eyes_s = 0.0
        self._frame_end = None
        viewer.window.push_handlers(self.emulation)

    # ------------------------------------------------------------ scene
    def on_session(self, session) -> None:
        """A (new) scene: grab and locomotion for its world, play area at its camera."""
        self._drop_grab()
        self.session = session
        self.grab = HandGrab(session.world, self.renderer, self.vr.pulse,
                             defer=session.loop.when_idle, shown=session.view)
        session.step_hooks.append(self.grab.before_step)
        camera = session.world.camera
        self.locomotion = Locomotion(camera if isinstance(camera, dict) else None)
        self.vr.world_from_stage = place_head(np.eye(4), NOMINAL_HEAD, self.locomotion.home_spot,
                                              self.locomotion.home_yaw)
        self._centred = False

    # ------------------------------------------------------------ per frame
    def frame(self, dt: float):
        """One VR frame; returns the loop's FrameReport (None if the session has ended)."""
        start = time.perf_counter()
        if self._frame_end is not None:      # mirror window, UI, events since the last frame
            self.budget.add_render_time(self._eyes_s + start - self._frame_end)
        self._report, self._eyes_s = None, 0.0
        self.emulation.update(dt, self.vr.world_from_stage, head_pose(self.vr))
        alive = self.vr.run_frame(self._render_eye, lambda vr: self._in_frame(vr, dt))
        if alive and self._report is None:   # not running yet (or not focused): plain loop
            self._report = self.session.loop.advance(dt)
        if alive and self.mirror_follows_head:
            self._follow_head()
        self.frames += 1
        self._frame_end = time.perf_counter()
        return self._report if alive else None

    def _in_frame(self, vr, dt: float) -> None:
        if not self._centred and self.locomotion.recentre(vr):
            self._centred = True
        left, right = vr.hands[LEFT], vr.hands[RIGHT]
        ray = aim_ray(right.aim)
        self.hovered_button = hit_button(left.grip, *ray) if left.active and right.active else None
        if right.press_started:
            if self.hovered_button:
                self.press(self.hovered_button)
            else:
                self.edit.trigger(right.aim)
        if left.menu_started:
            self.press("play")
        self.grab.update(vr.hands)
        self.locomotion.update(vr, dt)
        self._step_physics(vr, dt)
        self.app.viewer.options.hovered = pick_body(self.renderer, *ray)[0] if right.active else -1
        self.app.scene_view.gizmo_lines = self.grab.gizmo_lines()
        # the desktop's options, less the see-through joint gizmos (a second gizmo pass:
        # on llvmpipe that halves the eyes' cost for tree_255's 254 joints)
        self.eye_options = dataclasses.replace(self.app.viewer.options, gizmo_xray=False)
        self.renderer.prepare(self.app.scene_view, self.eye_options)
        self._hud = self._hud_boxes(vr)

    def _step_physics(self, vr, dt: float) -> None:
        """Hand the frame's steps to the loop under this frame's budget. physics_s: the
        wall time of the last batch (on the physics thread it runs beside the frame)."""
        loop, world = self.session.loop, self.session.world
        self.budget.plan(vr.display_period, loop.h, loop.speed, beside_render=loop.threaded)
        self._report = loop.advance(dt, budget_s=self.budget.frame_s,
                                    step_context=self.budget.solver_budget(world.settings))
        if loop.last_batch is not None:
            self.physics_s = loop.last_batch.wall_s

    def _render_eye(self, eye: int, fbo, view, proj) -> None:
        t0 = time.perf_counter()
        self.renderer.draw(fbo, view, proj, self.eye_options, self.vr.eye_sizes[eye])
        if self.show_hud:
            fbo.use()
            self.hud.draw(self._hud, view, proj, depth_test=False)
        if eye == 0:
            self.mirror.keep(fbo, self.vr.eye_sizes[0])
        if self.keep_images:
            data = np.frombuffer(fbo.read(components=3), np.uint8)
            self.eye_images[eye] = data.reshape(fbo.height, fbo.width, 3)[::-1].copy()
        self._eyes_s += time.perf_counter() - t0

    def _hud_boxes(self, vr) -> list:
        boxes = []
        for h, state in enumerate(vr.hands):
            if state.active:
                origin, d = aim_ray(state.aim)
                size = (RAY_WIDTH, RAY_WIDTH, RAY_LENGTH)
                boxes.append((box_matrix(origin + d * RAY_LENGTH / 2, size, state.aim[:3, :3]),
                              RAY_COLORS[h]))
        right = vr.hands[RIGHT]
        if right.active:
            boxes += self.emulation.reticle(right.aim, right.grabbing, right.pressing)
        if vr.hands[LEFT].active:
            lit = {"play"} if not self.session.loop.paused else set()
            if self.edit.mode:
                lit.add(self.edit.mode)
            boxes += menu_boxes(vr.hands[LEFT].grip, self.hovered_button, lit)
        return boxes

    def _follow_head(self) -> None:
        """The desktop camera at the head (mouse picks in the mirror match its image)."""
        head = head_pose(self.vr)
        if head is not None:
            eye, camera = head[:3, 3], self.app.viewer.camera
            camera.look_at_points(eye, eye - head[:3, 2])
            camera.fov_deg = float(np.degrees(2 * np.arctan(1 / self.vr.eyes[0].proj[1, 1])))

    def _mirror_rect(self):
        """(x, y, w, h) of the left eye's image in the window's framebuffer, or None when
        the window does not show it."""
        if not (self.mirror_follows_head and self.mirror.ready and self.vr.eyes):
            return None
        (sw, sh), (dw, dh) = self.mirror.size, self.app.viewer.size
        scale = min(dw / sw, dh / sh)
        w, h = int(sw * scale), int(sh * scale)
        return (dw - w) // 2, (dh - h) // 2, w, h

    def window_ray(self, x: float, y: float):
        """World ray (origin, unit direction) through window point (x, y) (pyglet
        coordinates) of what the window shows: the left eye's image (EyeMirror.show's
        letterbox) while the mirror follows the head, else the desktop camera's view."""
        viewer, rect = self.app.viewer, self._mirror_rect()
        if rect is None:
            return viewer.ray(x, y)
        x0, y0, w, h = rect
        scale = viewer.size[0] / max(viewer.window.width, 1)
        nx = 2.0 * (x * scale + 0.5 - x0) / w - 1.0
        ny = 2.0 * (y * scale + 0.5 - y0) / h - 1.0
        eye = self.vr.eyes[0]
        inv = np.linalg.inv(eye.proj @ eye.view)
        near, far = inv @ [nx, ny, -1.0, 1.0], inv @ [nx, ny, 1.0, 1.0]
        d = far[:3] / far[3] - near[:3] / near[3]
        return eye.pose[:3, 3].copy(), d / np.linalg.norm(d)

    def window_view(self):
        """(eye, right, up) in the world of the view window_ray casts from."""
        if self._mirror_rect() is None:
            right, up, _ = self.app.viewer.camera.basis()
            return self.app.viewer.camera.eye, right, up
        pose = self.vr.eyes[0].pose
        return pose[:3, 3].copy(), pose[:3, 0].copy(), pose[:3, 1].copy()

    def _show_mirror(self, fb, size) -> bool:
        """Viewer.scene_override: the left eye's image while the mirror follows the head."""
        if not (self.mirror_follows_head and self.mirror.ready):
            return False
        self.mirror.show(fb, size, self.app.viewer.options.background)
        return True

    # ------------------------------------------------------------ wrist menu
    def press(self, key: str) -> None:
        """A wrist menu button (also the mirror window's VR panel)."""
        app, loop = self.app, self.session.loop
        if key == "play":
            loop.toggle_pause()
        elif key == "step":
            app.single_step()
        elif key == "reset":
            self.grab.cancel()
            app.reset()
        elif key == "joint":
            self.edit.press_joint_button()
        elif key == "remove":
            self.edit.press_remove_button()
        elif key == "undo":
            app.undo()
        elif key == "recentre":
            self.locomotion.recentre(self.vr)
        else:
            raise ValueError(f"no wrist button {key!r}")

    # ------------------------------------------------------------ status
    @property
    def running(self) -> bool:
        return self.vr.session is not None

    def _drop_grab(self) -> None:
        if self.grab is not None:
            self.session.loop.sync()           # the grab's step hook is not running
            self.grab.cancel()
            if self.grab.before_step in self.session.step_hooks:
                self.session.step_hooks.remove(self.grab.before_step)
            self.grab = None

    def close(self) -> None:
        """End the session cleanly and give the desktop its loop back."""
        self._drop_grab()
        viewer = self.app.viewer
        viewer.scene_override = None
        viewer.window.remove_handlers(self.emulation)
        viewer.window.switch_to()
        self.vr.close()
        self.hud.release()
        self.mirror.release()
