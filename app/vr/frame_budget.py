"""The physics share of a VR frame.

The runtime predicts the display period P. Rendering (both eyes plus the mirror window)
costs R, measured and smoothed. Physics gets B = (1 - MARGIN) P - R (at least MIN_S) per
frame: the fixed-step loop stops catching up after B (time beyond is dropped, never a
spiral), and each of the n = ceil(P speed / h) steps the frame owes gets B / n as the
solver's own time budget (the anytime correction loop stops there and reports its residual).
"""

from __future__ import annotations

import math
from contextlib import contextmanager

MARGIN = 0.2
MIN_S = 0.001
SMOOTHING = 0.2           # weight of the newest render time in the running average


class FrameBudget:
    def __init__(self):
        self.render_s = 0.0
        self.frame_s = 0.0        # this frame's physics budget
        self.step_ms = 0.0        # the solver budget per step

    def add_render_time(self, seconds: float) -> None:
        self.render_s += SMOOTHING * (seconds - self.render_s) if self.render_s else seconds

    def plan(self, period: float, h: float, speed: float = 1.0) -> None:
        self.frame_s = max((1.0 - MARGIN) * period - self.render_s, MIN_S)
        steps = max(math.ceil(period * speed / h - 1e-9), 1)
        self.step_ms = self.frame_s / steps * 1e3

    @contextmanager
    def applied(self, loop, settings):
        """Within the block the loop and the solver use this frame's budget; afterwards the
        scene's own settings are back (so a save never writes the VR budget)."""
        old_loop, old_step = loop.budget_s, settings.time_budget_ms
        loop.budget_s, settings.time_budget_ms = self.frame_s, self.step_ms
        try:
            yield
        finally:
            loop.budget_s, settings.time_budget_ms = old_loop, old_step
