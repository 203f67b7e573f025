"""Orbit / pan / zoom / fly camera with view and projection matrices and picking rays.

Screen coordinates follow OpenGL and pyglet: x right, y up, pixel (0, 0) bottom-left.
"""
from __future__ import annotations

import numpy as np

from impulse.app.mathutil import look_at, normalize, perspective

UP = np.array([0.0, 1.0, 0.0])
PITCH_LIMIT = np.radians(89.0)


class Camera:
    """Looks at `target` from `distance` along the direction given by yaw and pitch."""

    def __init__(self, eye=(6.0, 4.0, 8.0), target=(0.0, 0.5, 0.0), fov_deg: float = 45.0):
        self.home = {"eye": list(map(float, eye)), "target": list(map(float, target)),
                     "fov_deg": float(fov_deg)}
        self.orbit_speed = 0.006      # radians per pixel
        self.zoom_factor = 0.88       # distance factor per scroll step
        self.look_at_points(eye, target)
        self.fov_deg = float(fov_deg)

    # ---------------------------------------------------------------- state
    def look_at_points(self, eye, target) -> None:
        """Place the camera at eye, looking at target."""
        self.target = np.asarray(target, dtype=np.float64).copy()
        offset = np.asarray(eye, dtype=np.float64) - self.target
        self.distance = max(float(np.linalg.norm(offset)), 1e-6)
        d = offset / self.distance
        self.pitch = float(np.arcsin(np.clip(d[1], -1.0, 1.0)))
        self.pitch = float(np.clip(self.pitch, -PITCH_LIMIT, PITCH_LIMIT))
        self.yaw = float(np.arctan2(d[0], d[2]))

    def set_from_dict(self, cam: dict, make_home: bool = True) -> None:
        """Apply a scene's camera dict {"eye": [...], "target": [...], "fov_deg": 45}."""
        eye = cam.get("eye", self.eye)
        target = cam.get("target", self.target)
        self.look_at_points(eye, target)
        self.fov_deg = float(cam.get("fov_deg", self.fov_deg))
        if make_home:
            self.home = {"eye": list(map(float, eye)), "target": list(map(float, target)),
                         "fov_deg": self.fov_deg}

    def to_dict(self) -> dict:
        return {"eye": self.eye.tolist(), "target": self.target.tolist(), "fov_deg": self.fov_deg}

    def reset(self) -> None:
        """Back to the home view (the scene's camera)."""
        self.set_from_dict(self.home, make_home=False)

    @property
    def direction(self) -> np.ndarray:
        """Unit vector from target to eye."""
        cp = np.cos(self.pitch)
        return np.array([cp * np.sin(self.yaw), np.sin(self.pitch), cp * np.cos(self.yaw)])

    @property
    def eye(self) -> np.ndarray:
        return self.target + self.direction * self.distance

    def basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Camera right, up, forward (world)."""
        fwd = -self.direction
        right = normalize(np.cross(fwd, UP))
        return right, np.cross(right, fwd), fwd

    # ---------------------------------------------------------------- matrices
    def clip_planes(self) -> tuple[float, float]:
        near = float(np.clip(self.distance * 0.002, 0.002, 0.5))
        return near, self.distance * 20.0 + 800.0

    def view_matrix(self) -> np.ndarray:
        """World -> camera (float32)."""
        return look_at(self.eye, self.target).astype(np.float32)

    def projection_matrix(self, aspect: float) -> np.ndarray:
        """Perspective projection (float32) for width / height = aspect."""
        near, far = self.clip_planes()
        return perspective(self.fov_deg, aspect, near, far).astype(np.float32)

    # ---------------------------------------------------------------- motion
    def orbit(self, dx_px: float, dy_px: float) -> None:
        """Rotate the eye around the target (mouse drag in pixels)."""
        self.yaw -= dx_px * self.orbit_speed
        self.pitch = float(np.clip(self.pitch - dy_px * self.orbit_speed,
                                   -PITCH_LIMIT, PITCH_LIMIT))

    def pan(self, dx_px: float, dy_px: float, viewport_height: int) -> None:
        """Move target and eye so the point under the cursor follows it."""
        half_height = self.distance * np.tan(np.radians(self.fov_deg) / 2.0)
        per_px = 2.0 * half_height / max(viewport_height, 1)
        right, up, _ = self.basis()
        self.target = self.target - (right * dx_px + up * dy_px) * per_px

    def zoom(self, steps: float) -> None:
        """Scroll: positive steps move closer."""
        self.distance = float(np.clip(self.distance * self.zoom_factor ** steps, 1e-3, 1e5))

    def look(self, dx_px: float, dy_px: float) -> None:
        """Fly-mode look: rotate the view around the eye (the eye stays put)."""
        eye = self.eye
        self.orbit(-dx_px, -dy_px)
        self.target = eye - self.direction * self.distance

    def fly(self, forward: float, right: float, up: float) -> None:
        """Fly-mode move by metres along the view axes (eye and target together)."""
        r, _, f = self.basis()
        self.target = self.target + f * forward + r * right + UP * up

    def focus(self, point, radius: float | None = None) -> None:
        """Look at point; with radius, also frame a sphere of that size."""
        self.target = np.asarray(point, dtype=np.float64).copy()
        if radius is not None and radius > 0:
            self.distance = float(radius / np.sin(np.radians(self.fov_deg) / 2.0) * 1.1)

    # ---------------------------------------------------------------- screen <-> world
    def ray(self, x: float, y: float, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
        """World ray (origin at the eye, unit direction) through screen point (x, y)."""
        inv = np.linalg.inv(self.projection_matrix(width / height).astype(np.float64)
                            @ self.view_matrix().astype(np.float64))
        nx, ny = 2.0 * x / width - 1.0, 2.0 * y / height - 1.0
        far = inv @ np.array([nx, ny, 1.0, 1.0])
        near = inv @ np.array([nx, ny, -1.0, 1.0])
        far, near = far[:3] / far[3], near[:3] / near[3]
        return self.eye.copy(), normalize(far - near)

    def project(self, point, width: int, height: int) -> np.ndarray:
        """Screen position (x, y) and NDC depth of a world point."""
        clip = (self.projection_matrix(width / height).astype(np.float64)
                @ self.view_matrix().astype(np.float64) @ np.append(np.asarray(point, float), 1.0))
        ndc = clip[:3] / clip[3]
        return np.array([(ndc[0] + 1.0) / 2.0 * width, (ndc[1] + 1.0) / 2.0 * height, ndc[2]])
