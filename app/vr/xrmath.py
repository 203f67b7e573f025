"""Matrices from OpenXR poses and fields of view.

Conventions: numpy float64 (4, 4) matrices acting on column vectors (p' = M @ p), OpenGL
clip space (x right, y up, camera looks down -z, depth -1..1). Upload to a GLSL mat4 with
``m.T.astype("f4").tobytes()`` (GLSL is column-major).
"""

from __future__ import annotations

import numpy as np


def quat_to_matrix(x: float, y: float, z: float, w: float) -> np.ndarray:
    """Rotation matrix (3, 3) of a unit quaternion given as x, y, z, w."""
    n = x * x + y * y + z * z + w * w
    s = 2.0 / n if n > 0.0 else 0.0
    return np.array([
        [1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)],
        [s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)],
        [s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)],
    ])


def pose_to_matrix(pose) -> np.ndarray:
    """Rigid transform (4, 4) of an ``xr.Posef`` (or anything with .orientation/.position)."""
    q, p = pose.orientation, pose.position
    m = np.eye(4)
    m[:3, :3] = quat_to_matrix(q.x, q.y, q.z, q.w)
    m[:3, 3] = (p.x, p.y, p.z)
    return m


def rigid_inverse(m: np.ndarray) -> np.ndarray:
    """Inverse of a rigid transform (rotation + translation) without a general inverse."""
    inv = np.eye(4)
    rt = m[:3, :3].T
    inv[:3, :3] = rt
    inv[:3, 3] = -rt @ m[:3, 3]
    return inv


def translation(x: float, y: float, z: float) -> np.ndarray:
    """Translation matrix (4, 4)."""
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


def rotation_y(angle: float) -> np.ndarray:
    """Rotation (4, 4) by ``angle`` radians about the world up axis (+y)."""
    c, s = np.cos(angle), np.sin(angle)
    m = np.eye(4)
    m[0, 0], m[0, 2], m[2, 0], m[2, 2] = c, s, -s, c
    return m


def projection_from_fov(fov, near: float, far: float) -> np.ndarray:
    """OpenGL projection (4, 4) for an asymmetric ``xr.Fovf`` (angles in radians)."""
    left, right = np.tan(fov.angle_left), np.tan(fov.angle_right)
    down, up = np.tan(fov.angle_down), np.tan(fov.angle_up)
    w, h = right - left, up - down
    return np.array([
        [2.0 / w, 0.0, (right + left) / w, 0.0],
        [0.0, 2.0 / h, (up + down) / h, 0.0],
        [0.0, 0.0, -(far + near) / (far - near), -2.0 * far * near / (far - near)],
        [0.0, 0.0, -1.0, 0.0],
    ])
