"""One batch of fixed steps: what the loop (app/loop.py) hands to whoever steps the world,
the physics thread or the frame itself, and what comes back.

The single steps (N / Right arrow) always run; the steps owed by the clock stop once the
batch has stepped for more than `budget_s`, and those not run are `cut`
(the loop reports them as dropped time).
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass


@dataclass
class Batch:
    single: int                                   # requested single steps
    owed: int                                     # steps owed by the clock
    budget_s: float | None = None                 # wall time after which owed steps stop
    context: Callable[[], AbstractContextManager] | None = None   # entered around the steps
    done: int = 0                                 # steps completed (set while running)
    wall_s: float = 0.0                           # wall time the batch took

    @property
    def cut(self) -> int:
        """Owed steps the budget left out (once the batch has finished)."""
        return max(self.single + self.owed - self.done, 0)


def run_batch(step: Callable[[], object], batch: Batch, clock) -> Batch:
    """Run the batch's steps on this thread; returns the batch with done and wall_s set."""
    start = clock()
    try:
        with batch.context() if batch.context is not None else nullcontext():
            for _ in range(batch.single):
                step()
                batch.done += 1
            for _ in range(batch.owed):
                if batch.budget_s is not None and clock() - start > batch.budget_s:
                    break
                step()
                batch.done += 1
    finally:
        batch.wall_s = clock() - start
    return batch
