"""Small shared pieces of the generic joint: frame axes now and after the step, the
effective masses of rows, 3x3 solves, applying a row's impulse.

Notation (method-notes.md): an impulse p acts +p on A at r_a and -p on B at r_b, so the
relative point velocity u_b - u_a changes by -K p with K = K_A(r_a) + K_B(r_b); an angular
impulse l acts +l on A and -l on B, so w_b - w_a changes by -L l with L = A_A + A_B.
A static body and the world (index -1) contribute nothing and do not move.
"""
from numba import njit

from ..impulses import angular_impulse_to, dynamic, impulse_to
from ..jitopts import NO_REFCOUNT


@njit(cache=True, inline='always', **NO_REFCOUNT)
def axis_now(B, J, j, side, c):
    """World direction of column c of joint j's frame in body `side`, at time t."""
    b = J.const.body[j, side]
    f = J.const.frame[j, side]
    if b < 0:
        return f[0, c], f[1, c], f[2, c]
    r = B.rot[b]
    return (r[0, 0] * f[0, c] + r[0, 1] * f[1, c] + r[0, 2] * f[2, c],
            r[1, 0] * f[0, c] + r[1, 1] * f[1, c] + r[1, 2] * f[2, c],
            r[2, 0] * f[0, c] + r[2, 1] * f[1, c] + r[2, 2] * f[2, c])


@njit(cache=True, inline='always', **NO_REFCOUNT)
def axis_ahead(B, J, j, side, c):
    """The same direction at t + h: M_rot R f (the body's look-ahead cache must be fresh)."""
    x, y, z = axis_now(B, J, j, side, c)
    b = J.const.body[j, side]
    if not dynamic(B.static, b):
        return x, y, z
    m = B.pred_rot[b]
    return (m[0, 0] * x + m[0, 1] * y + m[0, 2] * z, m[1, 0] * x + m[1, 1] * y + m[1, 2] * z,
            m[2, 0] * x + m[2, 1] * y + m[2, 2] * z)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def axis_at(B, J, j, side, c, ahead):
    """axis_ahead (t + h) or axis_now (t) of column c of the joint frame of `side`."""
    if ahead:
        return axis_ahead(B, J, j, side, c)
    return axis_now(B, J, j, side, c)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def dot(ax, ay, az, bx, by, bz):
    return ax * bx + ay * by + az * bz


@njit(cache=True, inline='always', **NO_REFCOUNT)
def cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(cache=True, inline='always', **NO_REFCOUNT)
def quad(m, x, y, z, u, v, w):
    """x^T m u for a 3x3 m."""
    return x * (m[0, 0] * u + m[0, 1] * v + m[0, 2] * w) \
        + y * (m[1, 0] * u + m[1, 1] * v + m[1, 2] * w) \
        + z * (m[2, 0] * u + m[2, 1] * v + m[2, 2] * w)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def angular_mass(B, J, j, out):
    """out = L = A_A + A_B (3x3), the relative angular velocity change per angular impulse."""
    for r in range(3):
        for c in range(3):
            out[r, c] = 0.0
    for side in range(2):
        b = J.const.body[j, side]
        if dynamic(B.static, b):
            for r in range(3):
                for c in range(3):
                    out[r, c] += B.inv_inertia_w[b, r, c]


@njit(cache=True, inline='always', **NO_REFCOUNT)
def push_angular(B, J, j, lx, ly, lz):
    """+l on body A, -l on body B."""
    angular_impulse_to(B.static, B.omega, B.inv_inertia_w, B.pred_ok, J.const.body[j, 0],
                       lx, ly, lz)
    angular_impulse_to(B.static, B.omega, B.inv_inertia_w, B.pred_ok, J.const.body[j, 1],
                       -lx, -ly, -lz)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def push_linear(B, J, j, arm_a, arm_b, px, py, pz):
    """+p on body A at arm_a, -p on body B at arm_b."""
    impulse_to(B.static, B.inv_mass, B.vel, B.omega, B.inv_inertia_w, B.pred_ok, J.const.body[j, 0],
               arm_a[0], arm_a[1], arm_a[2], px, py, pz)
    impulse_to(B.static, B.inv_mass, B.vel, B.omega, B.inv_inertia_w, B.pred_ok, J.const.body[j, 1],
               arm_b[0], arm_b[1], arm_b[2], -px, -py, -pz)


@njit(cache=True, inline='always', **NO_REFCOUNT)
def angular_velocity_of(B, b):
    if not dynamic(B.static, b):
        return 0.0, 0.0, 0.0
    return B.omega[b, 0], B.omega[b, 1], B.omega[b, 2]
