"""Ring buffer of World.get_state() snapshots over the last `seconds` of simulated time, for
the timeline slider: scrub to any kept snapshot and resume from there (later ones are
dropped when the simulation goes on from an earlier point).

A snapshot is taken every `every` steps, chosen so the buffer stays under `max_bytes`.
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
        if self.cursor is not None:            # resumed from a scrubbed point
            while len(self.snapshots) > self.cursor + 1:
                self.snapshots.pop()
            self.cursor = None
        self._count += 1
        if not force and self._count % self.every:
            return
        if not hasattr(self, "_capacity"):
            self.configure(world.settings.h, world.get_state())
        self.snapshots.append(world.get_state())
        while len(self.snapshots) > self._capacity:
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
