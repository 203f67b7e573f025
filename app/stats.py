"""Per-frame series for the Stats panel: energy, step cost, cycles, residuals; and the
tally of every step that missed its tolerances."""
from __future__ import annotations

from collections import deque

import numpy as np

from impulse.engine.metrics import unmet_steps

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


class ToleranceTally:
    """Every step since the scene was opened (or reset), not only each frame's last: how many
    ended with a tolerance unmet (engine.metrics.unmet_steps: a joint gap above eps_pos, a
    joint velocity error above eps_vel, or a loop stopped by its cycle cap or time budget),
    and the worst errors those steps reached -- what `impulse sim` reports as
    tolerance_unmet_steps. Added to on the stepping thread, read by the Stats panel."""

    def __init__(self):
        self.clear()

    def clear(self) -> None:
        self.steps = 0
        self.missed = 0
        self.worst_pos = 0.0
        self.worst_vel = 0.0
        self.first_missed_t: float | None = None

    def add(self, world) -> None:
        row = world.stats[None, :]
        settings = world.settings
        self.steps += 1
        if not unmet_steps(row, settings.eps_pos, settings.eps_vel)[0]:
            return
        s = world.last_step()
        self.missed += 1
        self.worst_pos = max(self.worst_pos, float(s["max_position_error"]))
        self.worst_vel = max(self.worst_vel, float(s["max_velocity_error"]))
        if self.first_missed_t is None:
            self.first_missed_t = float(world.time)

    def short(self) -> str:
        """The Stats panel's top line (narrow at 720p); line() is in its tooltip."""
        return f"tol. missed {self.missed}/{self.steps} steps"

    def line(self) -> str:
        if not self.missed:
            return f"tolerances met in all {self.steps} steps"
        return (f"tolerances missed in {self.missed} of {self.steps} steps: worst "
                f"{self.worst_pos:.1e} m, {self.worst_vel:.1e} m/s")
