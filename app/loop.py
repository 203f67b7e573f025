"""Fixed-step simulation clock: advances a `step()` callable in steps of h from wall time.

Pure Python, no window: `advance(wall_dt)` once per rendered frame.
- speed factor in [1/8, 8] scales wall time into simulated time;
- at most `max_steps` steps per frame; time beyond that is dropped and reported (no spiral
  of death), as is time dropped by the optional per-frame work budget;
- pause, and single steps while paused;
- the real-time factor is simulated time over wall time over the last `rtf_window` seconds.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Callable

import numpy as np

MIN_SPEED, MAX_SPEED = 1.0 / 8.0, 8.0
EPS = 1e-9  # relative tolerance so 0.03 / 0.01 counts as 3 steps despite rounding


@dataclass
class FrameReport:
    """What one `advance` call did."""

    steps: int
    dropped: float          # simulated seconds thrown away this frame
    alpha: float            # accumulator / h after stepping, in [0, 1): for interpolation


class FixedStepLoop:
    """Accumulator loop around a step callable."""

    def __init__(self, step: Callable[[], object], h: float, speed: float = 1.0,
                 max_steps: int = 8, budget_s: float | None = None,
                 clock: Callable[[], float] = time.perf_counter, rtf_window: float = 1.0):
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
        self._pending_steps = 0
        self._history: deque[tuple[float, float]] = deque()  # (wall dt, sim dt) per frame

    @property
    def speed(self) -> float:
        return self._speed

    @speed.setter
    def speed(self, value: float) -> None:
        self._speed = float(min(max(value, MIN_SPEED), MAX_SPEED))

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self.accumulator = 0.0

    def toggle_pause(self) -> None:
        self.resume() if self.paused else self.pause()

    def request_step(self, n: int = 1) -> None:
        """Queue n single steps; they run on the next advance, also while paused."""
        self._pending_steps += int(n)

    def _run_step(self) -> None:
        self.step_fn()
        self.sim_time += self.h
        self.total_steps += 1

    def advance(self, wall_dt: float) -> FrameReport:
        """Run the steps this frame owes; return how many ran and what was dropped."""
        wall_dt = max(float(wall_dt), 0.0)
        steps, dropped = 0, 0.0
        start = self.clock()
        while self._pending_steps > 0:
            self._pending_steps -= 1
            self._run_step()
            steps += 1
        if not self.paused:
            self.accumulator += wall_dt * self.speed
            while self.accumulator >= self.h * (1.0 - EPS):
                if steps >= self.max_steps or (
                        self.budget_s is not None and self.clock() - start > self.budget_s):
                    dropped = np.floor(self.accumulator / self.h + EPS) * self.h
                    self.accumulator = max(self.accumulator - dropped, 0.0)
                    break
                self._run_step()
                self.accumulator = max(self.accumulator - self.h, 0.0)
                steps += 1
        self.dropped_total += dropped
        self._record(wall_dt, steps * self.h)
        return FrameReport(steps, float(dropped), min(self.accumulator / self.h, 1.0 - EPS))

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
