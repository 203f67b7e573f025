"""Small 4x4 / 3x3 matrix helpers. Matrices act on column vectors (M @ v); upload with `gl_bytes`."""
from __future__ import annotations

import numpy as np


def normalize(v: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Unit vector(s) along the last axis; zero vectors stay zero."""
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, eps)


def look_at(eye, target, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """World -> camera matrix (camera looks down its -Z)."""
    eye = np.asarray(eye, dtype=np.float64)
    f = normalize(np.asarray(target, dtype=np.float64) - eye)
    up = np.asarray(up, dtype=np.float64)
    if abs(float(np.dot(f, normalize(up)))) > 0.999:
        up = np.array([0.0, 0.0, -1.0]) if f[1] < 0 else np.array([0.0, 0.0, 1.0])
    s = normalize(np.cross(f, up))
    u = np.cross(s, f)
    m = np.identity(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def perspective(fov_y_deg: float, aspect: float, near: float, far: float) -> np.ndarray:
    """OpenGL perspective projection (clip z in [-w, w])."""
    f = 1.0 / np.tan(np.radians(fov_y_deg) / 2.0)
    m = np.zeros((4, 4))
    m[0, 0] = f / aspect
    m[1, 1] = f
    m[2, 2] = (far + near) / (near - far)
    m[2, 3] = 2.0 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


def ortho(left, right, bottom, top, near, far) -> np.ndarray:
    """OpenGL orthographic projection."""
    m = np.identity(4)
    m[0, 0] = 2.0 / (right - left)
    m[1, 1] = 2.0 / (top - bottom)
    m[2, 2] = -2.0 / (far - near)
    m[0, 3] = -(right + left) / (right - left)
    m[1, 3] = -(top + bottom) / (top - bottom)
    m[2, 3] = -(far + near) / (far - near)
    return m


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
