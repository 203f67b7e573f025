"""One entry per solver visit, switching on the joint family (numba has no virtual calls)."""
from numba import njit

from . import BALL, ball


@njit(cache=True)
def prepare(B, J, j):
    if J.kind[j] == BALL:
        ball.prepare(B, J, j)


@njit(cache=True, inline='always')
def correct_position(B, J, j, h, eps, order, gravity, scratch_a, scratch_x):
    if J.kind[j] == BALL:
        return ball.correct_position(B, J, j, h, eps, order, gravity, scratch_a, scratch_x)
    return 0.0, False


@njit(cache=True, inline='always')
def correct_velocity(B, J, j, eps):
    if J.kind[j] == BALL:
        return ball.correct_velocity(B, J, j, eps)
    return 0.0, False


@njit(cache=True)
def gap(B, J, j):
    if J.kind[j] == BALL:
        return ball.gap(B, J, j)
    return 0.0
