"""Per-frame series for the Stats panel: energy, step cost, iterations, residuals."""
from __future__ import annotations

from collections import deque

import numpy as np

FIELDS = ("t", "kinetic", "potential", "total", "step_ms", "cycles", "pos_err", "vel_err",
          "halvings", "contacts")


class StatsSeries:
    def __init__(self, length: int = 600):
        self.data = {f: deque(maxlen=length) for f in FIELDS}
        self.last: dict = {}

    def clear(self) -> None:
        for d in self.data.values():
            d.clear()

    def record(self, world) -> None:
        """Append the world's current time, energies and last-step statistics."""
        k, p = world.energy()
        s = world.last_step()
        row = {"t": world.time, "kinetic": k, "potential": p, "total": k + p,
               "step_ms": s["solve_ms"], "cycles": s["cycles"],
               "pos_err": s["max_position_error"], "vel_err": s["max_velocity_error"],
               "halvings": s["step_halvings"], "contacts": int(getattr(world, "contact_count", 0))}
        if self.data["t"] and row["t"] < self.data["t"][-1]:
            self.clear()                       # reset or scrub went back in time
        for f in FIELDS:
            self.data[f].append(row[f])
        self.last = {**s, **row}

    def array(self, name: str) -> np.ndarray:
        return np.asarray(self.data[name], dtype=np.float64)
