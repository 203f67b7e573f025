"""What an impulse does to a body, and where a body point will be (Schmitt sec. 3-4).

K matrix (Schmitt's M(i, v, v), Mirtich's collision matrix): the change of a point's
velocity per unit impulse at that point,
    K_i(r) = E/m_i - [r]x A_i [r]x,   A_i = R J^-1 R^T (world inverse inertia),
so an impulse p at arm r changes v by p/m and w by A (r x p). A static body (or the world,
index -1) contributes 0 and never moves.
"""
import numpy as np
from numba import njit

from .motion import omega_series, rotation_over_step


@njit(cache=True, inline='always')
def is_dynamic(B, b):
    return b >= 0 and not B.static[b]


@njit(cache=True, inline='always')
def body_arm(B, b, local, out):
    """World arm R u of a body-frame point u (for the world: the world point itself)."""
    if b < 0:
        out[0], out[1], out[2] = local[0], local[1], local[2]
        return
    r = B.rot[b]
    for i in range(3):
        out[i] = r[i, 0] * local[0] + r[i, 1] * local[1] + r[i, 2] * local[2]


@njit(cache=True, inline='always')
def body_point(B, b, arm):
    """World position of the point with world arm `arm` (the world: arm is the point)."""
    if b < 0:
        return arm[0], arm[1], arm[2]
    return B.pos[b, 0] + arm[0], B.pos[b, 1] + arm[1], B.pos[b, 2] + arm[2]


@njit(cache=True, inline='always')
def point_velocity(B, b, arm):
    """u = v + w x r of a body point; 0 for the world and static bodies."""
    if not is_dynamic(B, b):
        return 0.0, 0.0, 0.0
    w = B.omega[b]
    v = B.vel[b]
    return (v[0] + w[1] * arm[2] - w[2] * arm[1],
            v[1] + w[2] * arm[0] - w[0] * arm[2],
            v[2] + w[0] * arm[1] - w[1] * arm[0])


@njit(cache=True, inline='always')
def predict_point(B, b, arm, h, order, gravity, scratch_a, scratch_x):
    """LookAhead: the body point with world arm `arm` at time t + h on the ballistic path.

    The per-body series is cached in B.pred_* until the body's velocity changes.
    """
    if not is_dynamic(B, b):
        return body_point(B, b, arm)
    if not B.pred_ok[b]:
        refresh_prediction(B, b, h, order, gravity, scratch_a, scratch_x)
    m = B.pred_rot[b]
    p = B.pred_pos[b]
    return (p[0] + m[0, 0] * arm[0] + m[0, 1] * arm[1] + m[0, 2] * arm[2],
            p[1] + m[1, 0] * arm[0] + m[1, 1] * arm[1] + m[1, 2] * arm[2],
            p[2] + m[2, 0] * arm[0] + m[2, 1] * arm[1] + m[2, 2] * arm[2])


@njit(cache=True)
def refresh_prediction(B, b, h, order, gravity, scratch_a, scratch_x):
    """Fill body b's look-ahead cache: omega series, M_rot over h, s(t+h)."""
    omega_series(B.inertia_w[b], B.inv_inertia_w[b], B.omega[b], h, order,
                 B.pred_series[b], scratch_a)
    rotation_over_step(B.pred_series[b], order, h, B.pred_rot[b], scratch_x)
    for i in range(3):
        B.pred_pos[b, i] = B.pos[b, i] + B.vel[b, i] * h + 0.5 * gravity[i] * h * h
    B.pred_ok[b] = True


@njit(cache=True, inline='always')
def apply_impulse(B, b, arm, px, py, pz):
    """Impulse p at world arm r: v += p/m, w += A (r x p). Invalidates the look-ahead cache."""
    if not is_dynamic(B, b):
        return
    im = B.inv_mass[b]
    B.vel[b, 0] += im * px
    B.vel[b, 1] += im * py
    B.vel[b, 2] += im * pz
    apply_angular_impulse(B, b, arm[1] * pz - arm[2] * py, arm[2] * px - arm[0] * pz,
                          arm[0] * py - arm[1] * px)


@njit(cache=True, inline='always')
def apply_angular_impulse(B, b, lx, ly, lz):
    """Angular impulse l: w += A l."""
    if not is_dynamic(B, b):
        return
    a = B.inv_inertia_w[b]
    for i in range(3):
        B.omega[b, i] += a[i, 0] * lx + a[i, 1] * ly + a[i, 2] * lz
    B.pred_ok[b] = False


@njit(cache=True)
def add_k_matrix(B, b, arm, k):
    """k += K_b(r) = E/m - [r]x A [r]x (nothing for the world or a static body)."""
    if not is_dynamic(B, b):
        return
    a = B.inv_inertia_w[b]
    rx, ry, rz = arm[0], arm[1], arm[2]
    # S = [r]x A ; K -= S [r]x  (column c of S[r]x is S (e_c x ... ) -> expand directly)
    s = np.empty((3, 3))
    for c in range(3):
        s[0, c] = ry * a[2, c] - rz * a[1, c]
        s[1, c] = rz * a[0, c] - rx * a[2, c]
        s[2, c] = rx * a[1, c] - ry * a[0, c]
    for i in range(3):
        # row i of S times [r]x: (S[r]x)[i,:] = S[i,:] x ... = (-(r x S[i,:]^T))^T
        si0, si1, si2 = s[i, 0], s[i, 1], s[i, 2]
        k[i, 0] -= si1 * rz - si2 * ry
        k[i, 1] -= si2 * rx - si0 * rz
        k[i, 2] -= si0 * ry - si1 * rx
        k[i, i] += B.inv_mass[b]


@njit(cache=True)
def invert3(m, out):
    """out = m^-1 for a 3x3 matrix; returns False (and zeros) if m is singular."""
    c00 = m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1]
    c01 = m[1, 2] * m[2, 0] - m[1, 0] * m[2, 2]
    c02 = m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]
    det = m[0, 0] * c00 + m[0, 1] * c01 + m[0, 2] * c02
    scale = 0.0
    for i in range(3):
        for j in range(3):
            scale = max(scale, abs(m[i, j]))
    if scale == 0.0 or abs(det) <= 1e-14 * scale * scale * scale:
        out[:, :] = 0.0
        return False
    inv = 1.0 / det
    out[0, 0] = c00 * inv
    out[1, 0] = c01 * inv
    out[2, 0] = c02 * inv
    out[0, 1] = (m[0, 2] * m[2, 1] - m[0, 1] * m[2, 2]) * inv
    out[1, 1] = (m[0, 0] * m[2, 2] - m[0, 2] * m[2, 0]) * inv
    out[2, 1] = (m[0, 1] * m[2, 0] - m[0, 0] * m[2, 1]) * inv
    out[0, 2] = (m[0, 1] * m[1, 2] - m[0, 2] * m[1, 1]) * inv
    out[1, 2] = (m[0, 2] * m[1, 0] - m[0, 0] * m[1, 2]) * inv
    out[2, 2] = (m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]) * inv
    return True
