"""When a correction loop stops: the rules both drivers share, the iterative Gauss-Seidel
cycles (solvers/iterative.py) and the global solvers' rounds (solvers/rounds.py).

- Converged: a whole sweep needed no correction (each driver counts that itself).
- Diverging (only where the step may still be halved): the largest error of a sweep is not
  finite, or, once the contacts have settled, it rose above eps in GROWING_CYCLES sweeps in
  a row; single rises are normal Gauss-Seidel behaviour.
- Capped: the sweep cap was reached; where the step may still be halved that counts as
  diverging, else the loop ends there and the step records a budget stop.
- Out of time: the position loop's time budget from its own start, or the step's deadline
  for the contact stages after it (one budget stop per step).
"""
import numpy as np
from numba import njit

from ..clock import monotonic_ns
from ..jitopts import NO_REFCOUNT
from ..state import T_BUDGET_HIT
from . import GROWING_CYCLES


@njit(cache=True, **NO_REFCOUNT)
def rising_sweeps(rising, settled, sweep_max, prev_max, eps):
    """The count of sweeps in a row whose largest error (above eps) rose, after this one."""
    return rising + 1 if (settled and sweep_max > prev_max and sweep_max >= eps) else 0


@njit(cache=True, **NO_REFCOUNT)
def diverging(sweep_max, rising):
    return not np.isfinite(sweep_max) or rising >= GROWING_CYCLES


@njit(cache=True, **NO_REFCOUNT)
def capped_ok(may_abort, stats):
    """At the sweep cap: False (diverging: halve the step) where it may still be halved,
    else True with a budget stop recorded."""
    if may_abort:
        return False
    stats[T_BUDGET_HIT] += 1
    return True


@njit(cache=True, **NO_REFCOUNT)
def out_of_time(t0, budget, stats):
    """True (and a budget stop recorded) once more than `budget` ns have passed since t0."""
    if budget > 0 and monotonic_ns() - t0 > budget:
        stats[T_BUDGET_HIT] += 1
        return True
    return False


@njit(cache=True, **NO_REFCOUNT)
def past_deadline(deadline, stats):
    """True (one budget stop for the step) once monotonic time passed `deadline` (0: none)."""
    if deadline > 0 and monotonic_ns() > deadline:
        stats[T_BUDGET_HIT] = max(stats[T_BUDGET_HIT], 1.0)
        return True
    return False
