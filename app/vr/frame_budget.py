"""The physics share of a VR frame.

The runtime predicts the display period P. Physics gets B = (1 - MARGIN) P per frame
(at least MIN_S); when it steps inside the frame (no physics thread) the rendering time R
(both eyes plus the mirror window, measured and smoothed) comes off: B = (1 - MARGIN) P - R.
The fixed-step loop's batch stops catching up after B (time beyond is dropped, never a
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

    def plan(self, period: float, h: float, speed: float = 1.0,
             beside_render: bool = False) -> None:
        """This frame's budget; `beside_render`: the physics thread steps while the frame
        renders, so the rendering time does not come off."""
        render = 0.0 if beside_render else self.render_s
        self.frame_s = max((1.0 - MARGIN) * period - render, MIN_S)
        steps = max(math.ceil(period * speed / h - 1e-9), 1)
        self.step_ms = self.frame_s / steps * 1e3

    def solver_budget(self, settings):
        """For the loop's batch (entered by the stepping thread around its steps): the
        solver's per-step budget is this frame's share; afterwards the scene's own value is
        back (so a save never writes the VR budget)."""
        step_ms = self.step_ms

        @contextmanager
        def applied():
            own = settings.time_budget_ms
            settings.time_budget_ms = step_ms
            try:
                yield
            finally:
                settings.time_budget_ms = own
        return applied
