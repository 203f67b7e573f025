"""Small 4x4 / 3x3 matrix helpers. Matrices act on column vectors (M @ v); upload with `gl_bytes`.

The view and projection matrices come from pyrr, which builds them for row vectors
(v @ M, its matrices are the transposes of ours): each is transposed here once, so callers
see the column-vector convention only.
"""
from __future__ import annotations

import numpy as np
from pyrr import matrix44


def normalize(v: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Unit vector(s) along the last axis; zero vectors stay zero (pyrr's give NaN)."""
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, eps)


def look_at(eye, target, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """World -> camera matrix (camera looks down its -Z). Looking along `up` (a shadow
    light straight above), up becomes -Z or +Z so the matrix stays defined."""
    eye = np.asarray(eye, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    up = np.asarray(up, dtype=np.float64)
    if abs(float(np.dot(normalize(target - eye), normalize(up)))) > 0.999:
        up = np.array([0.0, 0.0, -1.0]) if target[1] < eye[1] else np.array([0.0, 0.0, 1.0])
    return np.ascontiguousarray(matrix44.create_look_at(eye, target, up, dtype=np.float64).T)


def perspective(fov_y_deg: float, aspect: float, near: float, far: float) -> np.ndarray:
    """OpenGL perspective projection (clip z in [-w, w])."""
    m = matrix44.create_perspective_projection(fov_y_deg, aspect, near, far, dtype=np.float64)
    return np.ascontiguousarray(m.T)


def ortho(left, right, bottom, top, near, far) -> np.ndarray:
    """OpenGL orthographic projection."""
    m = matrix44.create_orthogonal_projection(left, right, bottom, top, near, far,
                                              dtype=np.float64)
    return np.ascontiguousarray(m.T)


def basis_from_y(d: np.ndarray) -> np.ndarray:
    """Rotations (n,3,3) whose local +Y column is the unit direction d (n,3)."""
    y = normalize(d)
    helper = np.where(np.abs(y[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]])
    x = normalize(np.cross(helper, y))
    z = np.cross(x, y)
    return np.stack([x, y, z], axis=-1)


def gl_bytes(m: np.ndarray) -> bytes:
    """Column-major float32 bytes of a matrix, as GLSL uniforms expect."""
    return np.ascontiguousarray(np.asarray(m, dtype=np.float32).T).tobytes()
