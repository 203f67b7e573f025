"""MuJoCo's Z-up world to ours (Y up), and rotations as our quaternions [w, x, y, z].

UP maps a MuJoCo world vector to ours: (x, y, z) -> (x, z, -y), a proper rotation about x by
-90 degrees, so MuJoCo's up (+z) is our up (+y). AXIS_Y_TO_Z turns a shape whose long axis is
our local Y (capsules, cylinders, planes' normals) into one along MuJoCo's local Z.
"""
import numpy as np
from scipy.spatial.transform import Rotation

UP = np.array([[1.0, 0.0, 0.0],
               [0.0, 0.0, 1.0],
               [0.0, -1.0, 0.0]])

AXIS_Y_TO_Z = np.array([[1.0, 0.0, 0.0],
                        [0.0, 0.0, -1.0],
                        [0.0, 1.0, 0.0]])


def quat(R):
    """[w, x, y, z] of a rotation matrix (w >= 0), as plain floats."""
    q = Rotation.from_matrix(R).as_quat(scalar_first=True)
    if q[0] < 0:
        q = -q
    return [float(x) for x in q]


def floats(v):
    return [float(x) for x in v]


def is_identity_quat(q, tol=1e-12):
    return abs(q[0] - 1.0) < tol and max(abs(x) for x in q[1:]) < tol
