"""One entry per solver visit, switching on the joint family (numba has no virtual calls).

Arguments are the flat joint and body arrays (see impulses.py for why not the tuples).
"""
from numba import njit

from . import BALL, ball


@njit(cache=True, inline='always')
def prepare(kind, j, body, arm, kinv, static, inv_mass, inv_inertia_w, k):
    if kind[j] == BALL:
        ball.prepare(j, body, arm, kinv, static, inv_mass, inv_inertia_w, k)


@njit(cache=True, inline='always')
def correct_position(kind, j, body, arm, kinv, h, eps, static, pos, inv_mass, vel, omega,
                     inv_inertia_w, pred_ok, pred_pos, pred_rot):
    """The joint's bodies must have fresh look-ahead caches (impulses.ensure_look_ahead)."""
    if kind[j] == BALL:
        return ball.correct_position(j, body, arm, kinv, h, eps, static, pos, inv_mass, vel,
                                     omega, inv_inertia_w, pred_ok, pred_pos, pred_rot)
    return 0.0, False


@njit(cache=True, inline='always')
def snapshot(kind, j, body, arm, static, pos, vel, omega, pred_pos, pred_rot, lin):
    """Exact look-ahead into lin (caches fresh); returns the gap |C0| (joints/ball.py)."""
    if kind[j] == BALL:
        return ball.snapshot(j, body, arm, static, pos, vel, omega, pred_pos, pred_rot, lin)
    return 0.0


@njit(cache=True, inline='always')
def correct_position_linear(kind, j, body, arm, kinv, h, eps, static, inv_mass, vel, omega,
                            inv_inertia_w, pred_ok, lin, relax):
    """On the linearised look-ahead of the last snapshot (joints/ball.py); relax: the
    over-relaxation factor (solvers/relaxation.py)."""
    if kind[j] == BALL:
        return ball.correct_position_linear(j, body, arm, kinv, h, eps, static, inv_mass, vel,
                                            omega, inv_inertia_w, pred_ok, lin, relax)
    return 0.0, False


@njit(cache=True, inline='always')
def correct_velocity(kind, j, body, arm, kinv, eps, static, inv_mass, vel, omega,
                     inv_inertia_w, pred_ok, relax, warm):
    """warm: Joints.warm, the velocity stage's sums (joints/warm_start.py)."""
    if kind[j] == BALL:
        return ball.correct_velocity(j, body, arm, kinv, eps, static, inv_mass, vel, omega,
                                     inv_inertia_w, pred_ok, relax, warm)
    return 0.0, False


@njit(cache=True, inline='always')
def gap(kind, j, body, arm, pos):
    if kind[j] == BALL:
        return ball.gap(j, body, arm, pos)
    return 0.0
