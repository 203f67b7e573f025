"""Ring buffer of World.get_state() snapshots over the last `seconds` of simulated time, for
the timeline slider: scrub to any kept snapshot and resume from there (later ones are
dropped when the simulation goes on from an earlier point).

A snapshot is taken every `every` steps, chosen so the buffer stays under `max_bytes`.
With the physics thread, `take` runs there after each step and `keep` on the UI thread after
the batch (app/session.py), so only the UI thread ever changes the buffer.
"""
from __future__ import annotations

import math
from collections import deque


def snapshot_bytes(state: dict) -> int:
    return sum(getattr(v, "nbytes", 8) for v in state.values())


class History:
    def __init__(self, seconds: float = 10.0, max_bytes: int = 64 * 1024 * 1024,
                 max_snapshots: int = 2000):
        self.seconds = float(seconds)
        self.max_bytes = max_bytes
        self.max_snapshots = max_snapshots
        self.snapshots: deque[dict] = deque()
        self.every = 1
        self._capacity: int | None = None
        self.cursor: int | None = None     # index being viewed while scrubbing, else None
        self._count = 0

    def clear(self) -> None:
        self.snapshots.clear()
        self.cursor = None
        self._count = 0

    def configure(self, h: float, state: dict) -> None:
        """Pick the snapshot interval for step h and the size of one state."""
        steps = max(int(math.ceil(self.seconds / h)), 1)
        cap = max(min(self.max_snapshots, self.max_bytes // max(snapshot_bytes(state), 1)), 2)
        self.every = max(int(math.ceil(steps / cap)), 1)
        self._capacity = max(int(math.ceil(steps / self.every)), 2)

    def record(self, world, force: bool = False) -> None:
        """Call after every step; keeps every `every`-th state (or this one if `force`)."""
        if self._capacity is None:
            self.configure(world.settings.h, world.get_state())
        state = self.take(world)
        if state is None and force:
            state = world.get_state()
        self.keep([] if state is None else [state])

    def take(self, world) -> dict | None:
        """After a step: the state to keep if this is an `every`-th step, else None."""
        self._count += 1
        return None if self._count % self.every else world.get_state()

    def keep(self, states: list[dict]) -> None:
        """After steps: keep the states taken. Once the simulation goes on from a scrubbed
        point, the states later than that point go."""
        if self.cursor is not None:
            while len(self.snapshots) > self.cursor + 1:
                self.snapshots.pop()
            self.cursor = None
        for state in states:
            self.snapshots.append(state)
            while self._capacity is not None and len(self.snapshots) > self._capacity:
                self.snapshots.popleft()

    @property
    def span(self) -> tuple[float, float]:
        if not self.snapshots:
            return 0.0, 0.0
        return self.snapshots[0]["time"], self.snapshots[-1]["time"]

    def index_at(self, t: float) -> int:
        """Index of the last snapshot at or before time t."""
        best = 0
        for i, s in enumerate(self.snapshots):
            if s["time"] <= t + 1e-12:
                best = i
        return best

    def scrub(self, world, t: float) -> float:
        """Put the world into the kept state nearest before t; returns its time."""
        if not self.snapshots:
            return world.time
        i = self.index_at(t)
        world.set_state(self.snapshots[i])
        self.cursor = i
        return self.snapshots[i]["time"]
