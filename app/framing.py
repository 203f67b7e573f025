"""Framing: place a camera, keeping its direction, so that a set of points fills the view."""
from __future__ import annotations

import numpy as np


def box_corners(box) -> np.ndarray:
    """The 8 corners (8,3) of an axis-aligned box given as (lower, upper) corners."""
    lo, hi = np.asarray(box, dtype=np.float64)
    pick = np.array([[i >> k & 1 for k in range(3)] for i in range(8)], dtype=bool)
    return np.where(pick, hi, lo)


def fit_points(camera, points, aspect: float, margin: float = 1.12) -> None:
    """Aim the camera at the points' middle (as seen from its direction) and move it back
    just far enough that every point lies inside its view at this aspect (width / height),
    with `margin` to spare."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    right, up, forward = camera.basis()
    lo, hi = points.min(axis=0), points.max(axis=0)
    centre = (lo + hi) / 2.0
    across = (points - centre) @ np.column_stack([right, up])
    centre = centre + right * (across[:, 0].max() + across[:, 0].min()) / 2.0 \
        + up * (across[:, 1].max() + across[:, 1].min()) / 2.0
    rel = points - centre
    tan_y = np.tan(np.radians(camera.fov_deg) / 2.0)
    towards_eye = -(rel @ forward)
    need = np.maximum(np.abs(rel @ right) / (tan_y * aspect), np.abs(rel @ up) / tan_y)
    camera.target = centre
    camera.distance = max(float((towards_eye + need * margin).max()), 0.05)
