"""Matrices from OpenXR poses and fields of view.

Conventions: numpy float64 (4, 4) matrices acting on column vectors (p' = M @ p), OpenGL
clip space (x right, y up, camera looks down -z, depth -1..1). Upload to a GLSL mat4 with
``m.T.astype("f4").tobytes()`` (GLSL is column-major). pyrr builds its matrices for row
vectors (v @ M): the ones taken from it are transposed here.
"""

from __future__ import annotations

import numpy as np
from pyrr import matrix44
from scipy.spatial.transform import Rotation


def orientation_matrix(q) -> np.ndarray:
    """Rotation matrix (3, 3) of an OpenXR orientation (``xr.Quaternionf``, or anything with
    fields x, y, z, w), normalised first; a zero quaternion (no valid pose) gives the
    identity. Quaternions are [w, x, y, z] everywhere in this program (scene files, engine,
    inspector); OpenXR's struct names its fields, so no order is implied here."""
    wxyz = (q.w, q.x, q.y, q.z)
    if sum(c * c for c in wxyz) == 0.0:
        return np.eye(3)
    return Rotation.from_quat(wxyz, scalar_first=True).as_matrix()


def pose_to_matrix(pose) -> np.ndarray:
    """Rigid transform (4, 4) of an ``xr.Posef`` (or anything with .orientation/.position)."""
    p = pose.position
    m = np.eye(4)
    m[:3, :3] = orientation_matrix(pose.orientation)
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
    return np.ascontiguousarray(matrix44.create_from_translation((x, y, z), dtype=np.float64).T)


def rotation_y(angle: float) -> np.ndarray:
    """Rotation (4, 4) by ``angle`` radians about the world up axis (+y)."""
    m = np.eye(4)
    m[:3, :3] = Rotation.from_rotvec((0.0, angle, 0.0)).as_matrix()
    return m


def projection_from_fov(fov, near: float, far: float) -> np.ndarray:
    """OpenGL projection (4, 4) for an asymmetric ``xr.Fovf`` (angles in radians)."""
    m = matrix44.create_perspective_projection_from_bounds(
        np.tan(fov.angle_left) * near, np.tan(fov.angle_right) * near,
        np.tan(fov.angle_down) * near, np.tan(fov.angle_up) * near, near, far,
        dtype=np.float64)
    return np.ascontiguousarray(m.T)
