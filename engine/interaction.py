"""The user's drag: a soft, impulse-capped ball joint between a picked body point and a
kinematic target point (mouse or VR controller).

At the start of each step (before the joints are corrected, like an external push):
    p' = LookAhead(body, point, h)             predicted point without the drag
    d  = target - p'                           what the drag wants to close over h
    K  = E/m - [r]x A [r]x                     the body's K matrix at the arm r
    p  = beta K^-1 d / h                       soft: closes the fraction beta per step
    |p| <= F_max h,  F_max = force_factor m |g|  (cap proportional to the body's weight)
The joint corrections that follow in the same step keep every joint closed, so a dragged
chain link pulls its neighbours. beta < 1 makes the pull springy and damps it: the look-ahead
contains the body's velocity, so a body that already moves towards the target gets less.
The applied force is p/h. An optional orientation target (VR grab) works the same way with
angular impulses: l = beta A^-1 delta / h (delta the rotation vector to the target), capped at
T_max h with T_max = F_max times the body's size.
"""
from dataclasses import dataclass, field

import numpy as np

from .motion import look_ahead


@dataclass
class Drag:
    body: int
    local_point: np.ndarray            # picked point in the body's principal frame
    target: np.ndarray                 # world target point
    max_force: float                   # F_max [N]
    beta: float = 0.3                  # softness: fraction of the error closed per step
    target_rot: np.ndarray = None      # optional world orientation target (3x3)
    local_rot: np.ndarray = None       # body rotation relative to that target at grab time
    last_impulse: np.ndarray = field(default_factory=lambda: np.zeros(3))
    last_angular: np.ndarray = field(default_factory=lambda: np.zeros(3))


def skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def world_inverse_inertia(B, b):
    return B.rot[b] @ np.diag(B.inv_inertia[b]) @ B.rot[b].T


def apply_drag(world, drag, h):
    """Apply this step's drag impulse (and angular impulse) to the body; returns p."""
    B = world.B
    b = drag.body
    if B.static[b]:
        return np.zeros(3)
    r = B.rot[b] @ drag.local_point
    point = B.pos[b] + r
    ahead = look_ahead(B.pos[b], B.rot[b], B.vel[b], B.omega[b], B.const.inertia[b], point,
                       world.settings.gravity, h, world.settings.taylor_order)
    a_w = world_inverse_inertia(B, b)
    k = B.inv_mass[b] * np.eye(3) - skew(r) @ a_w @ skew(r)
    p = drag.beta * np.linalg.solve(k, (drag.target - ahead) / h)
    cap = drag.max_force * h
    n = np.linalg.norm(p)
    if n > cap:
        p *= cap / n
    B.vel[b] += B.inv_mass[b] * p
    B.omega[b] += a_w @ np.cross(r, p)
    drag.last_impulse = p
    if drag.target_rot is not None:
        want = drag.target_rot @ drag.local_rot
        err = want @ B.rot[b].T            # rotation that takes the body to the target
        delta = rotation_vector(err) - B.omega[b] * h
        inertia_w = B.rot[b] @ np.diag(B.const.inertia[b]) @ B.rot[b].T
        ang = drag.beta * inertia_w @ delta / h           # angular impulse
        size = max(np.linalg.norm(drag.local_point), 0.1)
        cap_l = drag.max_force * size * h
        nl = np.linalg.norm(ang)
        if nl > cap_l:
            ang *= cap_l / nl
        B.omega[b] += a_w @ ang
        drag.last_angular = ang
    return p


def rotation_vector(m):
    """Axis times angle of a rotation matrix."""
    c = np.clip((np.trace(m) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(c)
    v = np.array([m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1]])
    s = np.linalg.norm(v)
    if s < 1e-12:
        if c > 0:
            return 0.5 * v
        w, vecs = np.linalg.eigh(0.5 * (m + m.T))
        return np.pi * vecs[:, np.argmax(w)]
    return angle * v / s
