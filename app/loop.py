"""Fixed-step simulation clock: advances a `step()` callable in steps of h from wall time,
either inside the frame or on a physics thread, so that a frame never waits for a step.

`advance(wall_dt)` once per rendered frame, on the UI thread:
- speed factor in [1/8, 8] scales wall time into simulated time;
- the steps owed go out as one batch (app/batch.py): at most `max_steps` steps, and the
  batch stops once it has stepped for `budget_s`; time beyond is dropped and reported (no
  spiral of death);
- pause, and single steps (also while paused);
- the real-time factor is simulated time over wall time over the last `rtf_window` seconds.

Threaded (`threaded=True`, the app): the batch runs on a worker thread and advance() returns
at once. While it runs, advance() only adds the frame's time to the accumulator and the
frame shows the last state (app/scene_view.py copies it at the hand-over). The first
advance() after the batch finished collects it (its steps count from then) and hands out
the next one. During a batch the worker owns the world; the UI thread may read it (arrays
are written in place, never resized, during a step) but never changes it:
- `sync()` waits for the running batch: call it before changing the world;
- `when_idle(fn)` runs fn now if no batch runs, else right before the next batch starts
  (for per-frame inputs such as the drag target, which must not make a frame wait).
Synchronous (`threaded=False`, the default; tests and scripts): advance() runs the batch
itself. Either way the steps run one after another on one world: the same steps give
bit-identical states (only the wall-clock budgets may cut batches at other places).

The physics thread runs at a lower OS priority (nice +PHYSICS_NICE, Linux): where cores
are few, the frames (and the renderer's threads) come first and the simulation takes the
rest; its real-time factor shows what it gets.
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np

from impulse.app.batch import Batch, run_batch

MIN_SPEED, MAX_SPEED = 1.0 / 8.0, 8.0
EPS = 1e-9  # relative tolerance so 0.03 / 0.01 counts as 3 steps despite rounding
PHYSICS_NICE = 10


@dataclass
class FrameReport:
    """What one `advance` call did."""

    steps: int              # steps completed since the last report (batches collected)
    dropped: float          # simulated seconds thrown away since the last report
    alpha: float            # accumulator / h after stepping, in [0, 1): for interpolation
    busy: bool = False      # a batch is still running on the physics thread


class FixedStepLoop:
    """Accumulator loop around a step callable (see the module doc)."""

    def __init__(self, step: Callable[[], object], h: float, speed: float = 1.0,
                 max_steps: int = 8, budget_s: float | None = None,
                 clock: Callable[[], float] = time.perf_counter, rtf_window: float = 1.0,
                 threaded: bool = False):
        if h <= 0:
            raise ValueError(f"time step h must be positive, got {h}")
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.step_fn = step
        self.h = float(h)
        self.speed = speed
        self.max_steps = int(max_steps)
        self.budget_s = budget_s
        self.clock = clock
        self.rtf_window = rtf_window
        self.paused = False
        self.accumulator = 0.0
        self.sim_time = 0.0
        self.total_steps = 0
        self.dropped_total = 0.0
        self.last_batch: Batch | None = None
        self.on_handoff: list[Callable[[], None]] = []        # before a batch leaves
        self.on_collect: list[Callable[[Batch], None]] = []   # after a batch is counted
        self._threaded = bool(threaded)
        self._executor: ThreadPoolExecutor | None = None
        self._running: tuple[Batch, Future] | None = None
        self._idle_jobs: deque[Callable[[], None]] = deque()
        self._pending_steps = 0
        self._unreported = (0, 0.0)                # (steps, dropped s) not yet in a report
        self._history: deque[tuple[float, float]] = deque()  # (wall dt, sim dt) per frame

    # ------------------------------------------------------------ settings
    @property
    def speed(self) -> float:
        return self._speed

    @speed.setter
    def speed(self, value: float) -> None:
        self._speed = float(min(max(value, MIN_SPEED), MAX_SPEED))

    @property
    def threaded(self) -> bool:
        return self._threaded

    @threaded.setter
    def threaded(self, value: bool) -> None:
        self.sync()
        self._threaded = bool(value)
        if not value:
            self._shutdown()

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self.accumulator = 0.0

    def toggle_pause(self) -> None:
        self.resume() if self.paused else self.pause()

    def request_step(self, n: int = 1) -> None:
        """Queue n single steps; they go out with the next batch, also while paused."""
        self._pending_steps += int(n)

    # ------------------------------------------------------------ the world's owner
    @property
    def busy(self) -> bool:
        """A batch was handed to the physics thread and not yet collected (changes only in
        advance() and sync(), so it is constant while a frame renders)."""
        return self._running is not None

    def sync(self) -> None:
        """Wait for the running batch (if any), count it, and run the jobs waiting for the
        world. Afterwards the caller owns the world until the next advance()."""
        if self._running is not None:
            self._collect()
        self._run_idle_jobs()

    def when_idle(self, fn: Callable[[], None]) -> None:
        """Run fn (which changes the world) now if no batch runs, else on the UI thread
        once the running batch is collected (by advance(), before the next batch starts,
        or by sync()); jobs run in the order given."""
        if self._running is None and not self._idle_jobs:
            fn()
        else:
            self._idle_jobs.append(fn)

    def close(self) -> None:
        """Finish the running batch and stop the physics thread."""
        self.sync()
        self._shutdown()

    # ------------------------------------------------------------ per frame
    def advance(self, wall_dt: float, budget_s: float | None = None,
                step_context: Callable[[], AbstractContextManager] | None = None) -> FrameReport:
        """Hand out (or, synchronously, run) the steps this frame owes, unless a batch is
        still running; report the steps completed and the time dropped since the last call.
        budget_s overrides the loop's budget for this batch; step_context (VR: the solver's
        per-step budget) is entered by the stepping thread around the batch's steps."""
        wall_dt = max(float(wall_dt), 0.0)
        if not self.paused:
            self.accumulator += wall_dt * self.speed
        if self._running is not None and self._running[1].done():
            self._collect()
        if self._running is None:
            self._run_idle_jobs()
            batch = self._plan(self.budget_s if budget_s is None else budget_s, step_context)
            if batch is not None:
                self._start(batch)
        steps, dropped = self._unreported
        self._unreported = (0, 0.0)
        self._record(wall_dt, steps * self.h)
        return FrameReport(steps, float(dropped), min(self.accumulator / self.h, 1.0 - EPS),
                           self.busy)

    def _plan(self, budget_s, step_context) -> Batch | None:
        """The next batch: the single steps, then the whole steps owed up to max_steps (the
        rest of them is dropped now; the fraction of a step stays in the accumulator)."""
        single, self._pending_steps = self._pending_steps, 0
        whole = 0 if self.paused else int(np.floor(self.accumulator / self.h + EPS))
        self.accumulator = max(self.accumulator - whole * self.h, 0.0)
        owed = min(whole, max(self.max_steps - single, 0))
        self._report(0, (whole - owed) * self.h)
        if single + owed == 0:
            return None
        return Batch(single, owed, budget_s, step_context)

    def _start(self, batch: Batch) -> None:
        if not self._threaded:
            self._running = (batch, _done_future(self.step_fn, batch, self.clock))
            self._collect()
            return
        for fn in self.on_handoff:
            fn()
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="physics",
                                                initializer=_lower_priority)
        self._running = (batch, self._executor.submit(run_batch, self.step_fn, batch, self.clock))

    def _collect(self) -> None:
        """Wait for the running batch, count its steps (re-raising a step's error)."""
        batch, future = self._running
        self._running = None
        try:
            future.result()
        finally:
            self.sim_time += batch.done * self.h
            self.total_steps += batch.done
            self._report(batch.done, batch.cut * self.h)
            self.last_batch = batch
        for fn in self.on_collect:
            fn(batch)

    def _run_idle_jobs(self) -> None:
        while self._idle_jobs:
            self._idle_jobs.popleft()()

    def _report(self, steps: int, dropped: float) -> None:
        s, d = self._unreported
        self._unreported = (s + steps, d + dropped)
        self.dropped_total += dropped

    def _shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def _record(self, wall_dt: float, sim_dt: float) -> None:
        self._history.append((wall_dt, sim_dt))
        wall = sum(w for w, _ in self._history)
        while len(self._history) > 1 and wall - self._history[0][0] >= self.rtf_window:
            wall -= self._history.popleft()[0]

    @property
    def real_time_factor(self) -> float:
        """Simulated seconds per wall second over the recent window (0 before any frame)."""
        wall = sum(w for w, _ in self._history)
        return sum(s for _, s in self._history) / wall if wall > 0 else 0.0


def _lower_priority() -> None:
    """Run on the physics thread: nice it (a Linux thread has its own nice value)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(),
                       os.getpriority(os.PRIO_PROCESS, 0) + PHYSICS_NICE)
    except (AttributeError, OSError):       # no per-thread priority here: run as is
        pass


def _done_future(step, batch: Batch, clock) -> Future:
    """Run the batch here and now; its outcome (or error) as a finished Future."""
    future: Future = Future()
    try:
        future.set_result(run_batch(step, batch, clock))
    except BaseException as e:  # noqa: BLE001 - re-raised by _collect, as on the thread
        future.set_exception(e)
    return future
