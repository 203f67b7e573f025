"""Mouse drag of bodies through the engine's drag API (World.drag_start / drag_to /
drag_stop / drag_force / drag_active: the soft, impulse-capped joint of
engine/interaction.py).

`DragAdapter` calls that API when the World has it and does nothing otherwise.
`MouseGrab` is the viewer's grab handler: the target moves on the plane through the picked
point facing the camera; the mouse wheel (while dragging) moves that plane in depth. Plain
release lets go and the body keeps whatever velocity the physics gave it. Shift+release
throws: the body's linear velocity is set to the cursor target's velocity over the last
0.1 s (a direct, predictable throw; the joints' velocity correction in the next step makes it
consistent with any joints). Fixed bodies are not grabbed (they stay selectable).

With the physics thread (app/loop.py) the drag's changes of the world wait for the end of
the running batch (`defer` = the loop's when_idle), so a drag never makes a frame wait; a
grab holds the body point the user clicked on the body as shown (`shown`, the SceneView).
"""
from __future__ import annotations

import time
from collections import deque

import numpy as np

MOD_SHIFT = 1                  # pyglet.window.key.MOD_SHIFT (importing pyglet.window needs X)

THROW_WINDOW_S = 0.1
DEPTH_STEP = 0.1               # fraction of the eye distance per wheel notch


def _now(fn) -> None:
    fn()


class DragAdapter:
    """The engine's drag API if the World has it, else no-ops. Changes of the world go
    through `defer` (default: now); grabbed points are taken on the bodies as `shown`
    (default: the world itself)."""

    def __init__(self, world, defer=None, shown=None):
        self.world = world
        self.defer = defer or _now
        self.shown = world if shown is None else shown

    @property
    def supported(self) -> bool:
        return hasattr(self.world, "drag_start")

    def body_point(self, body: int, point) -> np.ndarray:
        """A world point on a body as shown -> the same point in the body's frame."""
        point = np.asarray(point, dtype=np.float64)
        return self.shown.body_rot[body].T @ (point - self.shown.body_pos[body])

    def start(self, body: int, point, max_force=None) -> None:
        """Grab `body` at `point` (on the body as shown): the body point, wherever the
        physics has moved it by the time the grab starts."""
        if not self.supported:
            return
        local = self.body_point(body, point)
        if not np.isfinite(local).all():
            return

        def go():
            w = self.world
            w.drag_start(body, w.body_pos[body] + w.body_rot[body] @ local, max_force)
        self.defer(go)

    def to(self, point, rot=None) -> None:
        """Move the target (and, for a VR grab, its orientation)."""
        if not self.supported:
            return
        point = np.array(point, dtype=np.float64)
        rot = None if rot is None else np.array(rot, dtype=np.float64)
        if not np.isfinite(point).all() or (rot is not None and not np.isfinite(rot).all()):
            return   # a ray parallel to the drag plane, a lost controller pose: keep the target

        def go():
            if self.world.drag_active:
                self.world.drag_to(point, rot)
        self.defer(go)

    def stop(self) -> None:
        if self.supported:
            self.defer(self.world.drag_stop)

    def set_velocity(self, body: int, velocity, angular_velocity=None) -> None:
        """A throw: the body's linear (and angular) velocity."""
        v = np.array(velocity, dtype=np.float64)
        w = None if angular_velocity is None else np.array(angular_velocity, dtype=np.float64)
        if not np.isfinite(v).all() or (w is not None and not np.isfinite(w).all()):
            return

        def go():
            self.world.body_vel[body] = v
            if w is not None:
                self.world.body_omega[body] = w
        self.defer(go)

    @property
    def active(self) -> bool:
        return bool(getattr(self.world, "drag_active", False))

    def force(self) -> np.ndarray:
        if self.supported and self.active:
            return np.asarray(self.world.drag_force(), dtype=np.float64)
        return np.zeros(3)


def weight_cap(world, b: int, factor: float) -> float | None:
    """Drag force cap of body b: `factor` times its weight (None for fixed bodies)."""
    mass = world.body_mass(b) if hasattr(world, "body_mass") else float("inf")
    if not np.isfinite(mass):
        return None
    g = float(np.linalg.norm(world.settings.gravity)) or 9.81
    return factor * g * mass


def ray_plane(origin, direction, point, normal):
    """Intersection of a ray with a plane, or None if parallel / behind."""
    denom = float(np.dot(direction, normal))
    if abs(denom) < 1e-9:
        return None
    t = float(np.dot(np.asarray(point) - origin, normal)) / denom
    return None if t <= 0 else origin + t * np.asarray(direction)


class MouseGrab:
    """Grab handler for Viewer.grab: begin(body, point, ray) -> bool, move(ray),
    scroll(steps), end(modifiers)."""

    def __init__(self, viewer, world, force_factor: float = 5.0, clock=time.perf_counter,
                 defer=None, shown=None):
        self.viewer = viewer
        self.world = world
        self.adapter = DragAdapter(world, defer, shown)
        self.force_factor = force_factor
        self.clock = clock
        self.body = -1
        self.local = np.zeros(3)
        self.plane_point = np.zeros(3)
        self.target = np.zeros(3)
        self.last_ray = None
        self.samples: deque = deque()
        self.enabled = True

    @property
    def active(self) -> bool:
        return self.body >= 0

    def _normal(self) -> np.ndarray:
        return self.viewer.camera.direction

    def max_force(self, b: int) -> float | None:
        return weight_cap(self.world, b, self.force_factor)

    def begin(self, body: int, point, ray) -> bool:
        if not self.enabled or body < 0 or bool(self.world.body_static[body]):
            return False
        self.body = body
        point = np.asarray(point, dtype=np.float64)
        self.local = self.adapter.body_point(body, point)
        self.plane_point = point.copy()
        self.target = point.copy()
        self.last_ray = ray
        self.samples.clear()
        self._sample()
        self.adapter.start(body, point, self.max_force(body))
        self.viewer.select(body)
        return True

    def _sample(self) -> None:
        now = self.clock()
        self.samples.append((now, self.target.copy()))
        while len(self.samples) > 2 and now - self.samples[1][0] > THROW_WINDOW_S:
            self.samples.popleft()

    def move(self, ray) -> None:
        if not self.active:
            return
        self.last_ray = ray
        hit = ray_plane(ray[0], ray[1], self.plane_point, self._normal())
        if hit is not None:
            self.target = hit
            self._sample()
            self.adapter.to(hit)

    def scroll(self, steps: float) -> None:
        """Wheel while dragging: move the target plane away from (+) or towards the eye."""
        if not self.active:
            return
        eye = self.viewer.camera.eye
        dist = float(np.linalg.norm(self.plane_point - eye))
        self.plane_point = self.plane_point - self._normal() * (steps * DEPTH_STEP * dist)
        if self.last_ray is not None:
            self.move(self.last_ray)

    def cursor_velocity(self) -> np.ndarray:
        if len(self.samples) < 2:
            return np.zeros(3)
        (t0, p0), (t1, p1) = self.samples[0], self.samples[-1]
        return (p1 - p0) / max(t1 - t0, 1e-3)

    def end(self, modifiers: int = 0) -> None:
        if not self.active:
            return
        if modifiers & MOD_SHIFT:
            self.adapter.set_velocity(self.body, self.cursor_velocity())
        self.cancel()

    def cancel(self) -> None:
        """Let go without throwing (also on edits and reset)."""
        if self.active:
            self.adapter.stop()
        self.body = -1
        self.samples.clear()

    def grabbed_point(self) -> np.ndarray:
        """The grabbed point on the body as shown."""
        b, shown = self.body, self.adapter.shown
        return shown.body_pos[b] + shown.body_rot[b] @ self.local

    def gizmo_lines(self) -> np.ndarray:
        if not self.active:
            return np.zeros((0, 2, 3))
        return np.array([[self.grabbed_point(), self.target]])

    def force(self) -> np.ndarray:
        return self.adapter.force()
