"""Desktop controller emulation: the mirror window's mouse and keyboard move the right
controller, a key squeezes it. For a runtime whose controllers cannot be moved (Monado's
simulated headset: its controllers sit still), so the grab, the trigger and the wrist menu
can be tried without a headset.

The emulated controller sits on the ray from the eye the mirror window shows (the left eye
while the mirror follows the head, else the desktop camera) through the mouse cursor,
``depth`` metres out, and points along that ray: its aim ray hits what is under the cursor,
and a small cross (the HUD) marks it. Its pose is kept in the
stage frame, as a real controller's is (locomotion carries it along). Each frame
``Controls.update`` writes it into the right hand's HandState after the runtime's values,
so everything downstream (squeeze hysteresis, HandGrab, pointer picks, throws with the
controller's velocity, haptics) is the real controller's code path. Overrides of
``Controls.simulate`` (tests) still win over it.

Mirror window (not while a panel has the mouse or a text field the keyboard):

  mouse motion   the controller follows the cursor (in the view plane, at its depth)
  wheel, U / O   nearer / further along the cursor ray
  J / L, I / K   left / right, up / down in the view plane
  G (hold)       squeeze: grab what the controller points at; let go: release (a throw)
  T (hold)       trigger: wrist menu buttons, Add / Remove joint

Dragging with a mouse button is the desktop's (orbit, mouse grab): it does not move the
controller. On by default with a simulated runtime (the system name says "Simulated");
``IMPULSE_VR_EMULATE=1`` turns it on for any runtime, ``=0`` off.
"""

from __future__ import annotations

import os
import time
from collections import deque

import numpy as np
from pyglet.event import EVENT_HANDLED
from pyglet.window import key

from .controls import RIGHT
from .flat_boxes import box_matrix
from .xrmath import rigid_inverse

ENV = "IMPULSE_VR_EMULATE"
# metres from the eye along the cursor ray: nearer than the wrist menu (about 0.5 m), as
# the aim ray starts at the controller and hits only what lies beyond it
DEFAULT_DEPTH = 0.3
DEPTH_RANGE = (0.1, 50.0)
WHEEL_FACTOR = 1.15            # depth factor per wheel notch (up: further)
KEY_SPEED = 0.5                # m/s in the view plane and in depth (I/J/K/L, U/O)
VELOCITY_WINDOW_S = 0.1        # the controller's velocity: pose change over this long
# where the controller starts, in the head frame (right, below and in front of the eyes)
START_OFFSET = np.array([0.1, -0.12, -0.25])

# the reticle drawn around the controller (four bars, sizes x its depth: same size on screen)
RETICLE_GAP, RETICLE_LENGTH, RETICLE_WIDTH = 0.02, 0.03, 0.006
RETICLE_COLORS = {"idle": (1.0, 0.7, 0.3), "squeeze": (1.0, 1.0, 0.4), "trigger": (0.4, 1.0, 0.6)}

SQUEEZE_KEY, TRIGGER_KEY = key.G, key.T
MOVE_KEYS = {key.J: (-1, 0, 0), key.L: (1, 0, 0), key.I: (0, 1, 0), key.K: (0, -1, 0),
             key.U: (0, 0, -1), key.O: (0, 0, 1)}   # (right, up, further)


def emulation_wanted(system_name: str, environ=None) -> bool:
    """On for a simulated system (Monado's "Simulated HMD"), or as IMPULSE_VR_EMULATE says."""
    env = os.environ if environ is None else environ
    value = env.get(ENV, "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return "simulated" in system_name.lower()


def aim_pose(position, direction) -> np.ndarray:
    """Pose (4, 4) at ``position`` whose -Z is ``direction``, +Y as near world up as it goes."""
    z = -np.asarray(direction, float)
    z = z / np.linalg.norm(z)
    up = np.array([0.0, 1.0, 0.0]) if abs(z[1]) < 0.99 else np.array([0.0, 0.0, -1.0])
    x = np.cross(up, z)
    x /= np.linalg.norm(x)
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = x, np.cross(z, x), z, position
    return pose


def rotation_vector(r: np.ndarray) -> np.ndarray:
    """Axis * angle of a rotation matrix (3, 3)."""
    angle = np.arccos(np.clip((np.trace(r) - 1.0) / 2.0, -1.0, 1.0))
    axis = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
    s = np.linalg.norm(axis)
    if s < 1e-12:
        return np.zeros(3)   # no turn (a half turn between two frames cannot happen here)
    return axis / s * angle


class ControllerEmulation:
    """Pyglet handlers for the mirror window (push_handlers) plus the per-frame pose."""

    hand = RIGHT

    def __init__(self, viewer, enabled: bool = True, ray=None, view_frame=None):
        """``ray(x, y)``: world (origin, unit direction) through a window point (pyglet
        coordinates) of what the window shows; ``view_frame()``: that view's (eye, right,
        up). Both default to the desktop camera's."""
        self.viewer = viewer
        self.enabled = enabled
        self.ray = ray or viewer.ray
        self.view_frame = view_frame or self._camera_frame
        self.depth = DEFAULT_DEPTH
        self.stage_pose: np.ndarray | None = None   # aim (= grip) pose in the stage frame
        self.squeeze = 0.0
        self.trigger = 0.0
        self.linear_velocity = np.zeros(3)          # stage frame
        self.angular_velocity = np.zeros(3)
        self.held: set[int] = set()                 # movement keys down
        self._cursor = None                         # window (x, y) not applied yet
        self.cursor_ray = None                      # (origin, direction) last placed on
        self._wheel = 0.0                           # notches not applied yet
        self._history: deque = deque()              # (time, stage pose)

    def _camera_frame(self):
        camera = self.viewer.camera
        right, up, _ = camera.basis()
        return camera.eye, right, up

    # ------------------------------------------------------------ pyglet events
    def _ui_wants_mouse(self) -> bool:
        ui = self.viewer.ui
        return ui is not None and ui.want_mouse

    def _typing(self) -> bool:
        ui = self.viewer.ui
        return ui is not None and ui.want_keyboard

    def on_mouse_motion(self, x, y, dx, dy):
        if self.enabled and not self._ui_wants_mouse():
            self._cursor = (x, y)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        if (not self.enabled or self._ui_wants_mouse()
                or self.viewer.controller.mode is not None):   # the mouse grab's own wheel
            return None
        self._wheel += scroll_y
        return EVENT_HANDLED          # depth, not a camera zoom

    def on_key_press(self, symbol, modifiers):
        if not self.enabled or self._typing() or modifiers & (key.MOD_CTRL | key.MOD_ALT):
            return None
        if symbol == SQUEEZE_KEY:
            self.squeeze = 1.0
        elif symbol == TRIGGER_KEY:
            self.trigger = 1.0
        elif symbol in MOVE_KEYS:
            self.held.add(symbol)
        return None

    def on_key_release(self, symbol, modifiers):
        # always (also while typing or disabled): a key never sticks
        if symbol == SQUEEZE_KEY:
            self.squeeze = 0.0
        elif symbol == TRIGGER_KEY:
            self.trigger = 0.0
        self.held.discard(symbol)
        return None

    def on_deactivate(self):
        """The window lost the keyboard: nothing stays pressed."""
        self.squeeze = self.trigger = 0.0
        self.held.clear()

    # ------------------------------------------------------------ per frame
    def update(self, dt: float, world_from_stage: np.ndarray, head: np.ndarray | None,
               now: float | None = None) -> None:
        """Move the controller by this frame's mouse, wheel and keys (before the runtime's
        frame; ``head`` is the last frame's head pose in the world, None before the first)."""
        now = time.perf_counter() if now is None else now
        if not self.enabled:
            self._cursor, self._wheel = None, 0.0
            self._history.clear()
            return
        if self.stage_pose is None and self._cursor is None:
            if head is None:
                return
            start = head[:3, :3] @ START_OFFSET
            self.depth = float(np.linalg.norm(start))
            self._set(world_from_stage, head[:3, 3] + start, start)
        eye, right, up = self.view_frame()
        if self._cursor is not None:
            origin, direction = self.ray(*self._cursor)
            self._cursor = None
            self.cursor_ray = (origin, direction)
            self._set(world_from_stage, origin + direction * self.depth, direction)
        move = np.zeros(3)
        for symbol in self.held:
            move += MOVE_KEYS[symbol]
        if self._wheel or move.any():
            position = (world_from_stage @ self.stage_pose)[:3, 3]
            position = position + (right * move[0] + up * move[1]) * KEY_SPEED * dt
            offset = position - eye
            distance = max(float(np.linalg.norm(offset)), 1e-6)
            depth = distance * WHEEL_FACTOR ** self._wheel + move[2] * KEY_SPEED * dt
            self.depth = float(np.clip(depth, *DEPTH_RANGE))
            self._wheel = 0.0
            direction = offset / distance
            self._set(world_from_stage, eye + direction * self.depth, direction)
        self._track(now)

    def _set(self, world_from_stage, position, direction) -> None:
        self.stage_pose = rigid_inverse(world_from_stage) @ aim_pose(position, direction)

    def _track(self, now: float) -> None:
        """Velocities from the pose change over the last VELOCITY_WINDOW_S."""
        self._history.append((now, self.stage_pose.copy()))
        while len(self._history) > 2 and now - self._history[1][0] >= VELOCITY_WINDOW_S:
            self._history.popleft()
        t0, old = self._history[0]
        if now - t0 <= 1e-6:
            self.linear_velocity, self.angular_velocity = np.zeros(3), np.zeros(3)
            return
        new = self.stage_pose
        self.linear_velocity = (new[:3, 3] - old[:3, 3]) / (now - t0)
        self.angular_velocity = rotation_vector(new[:3, :3] @ old[:3, :3].T) / (now - t0)

    def apply(self, hand: int, state, world_from_stage: np.ndarray) -> None:
        """Controls.update: the emulated controller as this frame's state of ``hand``."""
        if not self.enabled or hand != self.hand or self.stage_pose is None:
            return
        pose = world_from_stage @ self.stage_pose
        rot = world_from_stage[:3, :3]
        state.active = True
        state.aim, state.grip = pose, pose.copy()
        state.linear_velocity = rot @ self.linear_velocity
        state.angular_velocity = rot @ self.angular_velocity
        state.squeeze, state.trigger = self.squeeze, self.trigger

    def world_pose(self, world_from_stage: np.ndarray) -> np.ndarray | None:
        return None if self.stage_pose is None else world_from_stage @ self.stage_pose

    def reticle(self, aim: np.ndarray, grabbing: bool, pressing: bool) -> list:
        """HUD boxes (matrix, colour): a cross around the controller, across its ray (its
        ray runs along the view, so it shows as a dot); yellow while squeezed, green while
        the trigger is held."""
        if not self.enabled or self.stage_pose is None:
            return []
        color = RETICLE_COLORS["squeeze" if grabbing else "trigger" if pressing else "idle"]
        scale, rot, centre = self.depth, aim[:3, :3], aim[:3, 3]
        offset = (RETICLE_GAP + RETICLE_LENGTH / 2) * scale
        long_, thin = RETICLE_LENGTH * scale, RETICLE_WIDTH * scale
        boxes = []
        for axis, sign in ((0, 1), (0, -1), (1, 1), (1, -1)):
            size = np.full(3, thin)
            size[axis] = long_
            boxes.append((box_matrix(centre + rot[:, axis] * sign * offset, size, rot), color))
        return boxes
