"""When a correction loop stops: the rules both drivers share, the iterative Gauss-Seidel
cycles (solvers/iterative.py) and the global solvers' rounds (solvers/rounds.py).

- Converged: a whole sweep needed no correction (each driver counts that itself).
- Diverging (only where the step may still be halved): the largest error of a sweep is not
  finite, or, once the contacts have settled, the largest error of each block of BLOCK
  sweeps grew past GROWTH times the block before's (and eps) in GROWING_BLOCKS blocks in a
  row. Closed loops and floating chains converge slowly, with bumps from sweep to sweep and
  single sweeps far below the rest (slider_crank: 7e-4 -> 1.3e-3 -> ... -> 1e-6 in 150
  sweeps); counting three rising sweeps in a row as divergence halved 37 % of its steps
  (issue 22). A block's maximum follows the trend, not the bumps.
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
from . import BLOCK, GROWING_BLOCKS, GROWTH


@njit(cache=True, **NO_REFCOUNT)
def growth(rising, block_max, prev_block, sweeps, settled, sweep_max, eps):
    """The divergence trend, block by block: the largest error of each BLOCK sweeps (once
    settled) against the block before. Returns (rising, block_max, prev_block): rising
    counts the blocks in a row that grew past GROWTH times the one before (and eps)."""
    if not settled:
        return 0, 0.0, np.inf
    block_max = max(block_max, sweep_max)
    if sweeps % BLOCK != 0:
        return rising, block_max, prev_block
    grew = block_max > GROWTH * max(prev_block, eps) if np.isfinite(prev_block) else False
    return (rising + 1 if grew else 0), 0.0, block_max


@njit(cache=True, **NO_REFCOUNT)
def diverging(sweep_max, rising):
    return not np.isfinite(sweep_max) or rising >= GROWING_BLOCKS


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
