"""Small rotation helpers: quaternions [w,x,y,z] <-> matrices, skew, orthonormalisation."""
import numpy as np
from numba import njit


def quat_to_matrix(q):
    """Unit quaternion [w, x, y, z] -> 3x3 rotation matrix (normalises q first)."""
    w, x, y, z = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def matrix_to_quat(m):
    """3x3 rotation matrix -> unit quaternion [w, x, y, z] with w >= 0 (Shepperd's method)."""
    m = np.asarray(m, dtype=np.float64)
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0:
        s = 2.0 * np.sqrt(tr + 1.0)
        q = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return q if q[0] >= 0 else -q


@njit(cache=True)
def orthonormalise(m):
    """Schmitt's symmetric orthonormalisation of the columns of m, in place (sec. 3).

    v_i' = v_i/|v_i|; v_x = (v_x' + v_y' x v_z')/2 (and cyclic). Each pass squares the
    error; repeat until the columns are orthonormal to ~1e-14 (at most 4 passes).
    """
    for _ in range(4):
        err = 0.0
        for c in range(3):
            n = np.sqrt(m[0, c] ** 2 + m[1, c] ** 2 + m[2, c] ** 2)
            for r in range(3):
                m[r, c] /= n
        ax, ay, az = m[0, 0], m[1, 0], m[2, 0]
        bx, by, bz = m[0, 1], m[1, 1], m[2, 1]
        cx, cy, cz = m[0, 2], m[1, 2], m[2, 2]
        err = abs(ax * bx + ay * by + az * bz) + abs(bx * cx + by * cy + bz * cz) \
            + abs(ax * cx + ay * cy + az * cz)
        m[0, 0] = 0.5 * (ax + (by * cz - bz * cy))
        m[1, 0] = 0.5 * (ay + (bz * cx - bx * cz))
        m[2, 0] = 0.5 * (az + (bx * cy - by * cx))
        m[0, 1] = 0.5 * (bx + (cy * az - cz * ay))
        m[1, 1] = 0.5 * (by + (cz * ax - cx * az))
        m[2, 1] = 0.5 * (bz + (cx * ay - cy * ax))
        m[0, 2] = 0.5 * (cx + (ay * bz - az * by))
        m[1, 2] = 0.5 * (cy + (az * bx - ax * bz))
        m[2, 2] = 0.5 * (cz + (ax * by - ay * bx))
        if err < 1e-15:
            break
