"""Controller grab: squeeze grabs the body the hand's aim ray hits; the grabbed point is
pulled towards the controller (position and orientation) by the engine's soft,
impulse-capped drag joint, the same as the mouse drag (app/drag.py); releasing throws the
body with the controller's velocity.

The grabbed point keeps its place in the controller's frame, so the body follows the hand
as if held on a rigid stick of the ray's length. Haptics: a pulse on grab, and a short
pulse on an impact of the held body. Each step's velocity change that gravity and the drag
do not explain (joints, contacts) is compared with the step before's: an impact is a change
between the two larger than IMPACT_DV and than IMPACT_RATIO times the previous step's
change. Joints pulling steadily against the hand (a chain hanging from the held body, even
a swinging one) are no impact, nor is the grab's first pull (no pulse within IMPACT_GAP_S
of the grab); at most one pulse per IMPACT_GAP_S.
Impacts are found by a step hook on the stepping thread; their pulses go out from update(),
on the frame's thread (OpenXR calls stay on one thread). Changes of the world go through
the drag adapter (app/drag.py: between two batches of the physics thread).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from impulse.app.drag import DragAdapter, weight_cap
from impulse.app.vr.pointer import aim_ray, pick_body

FORCE_FACTOR = 5.0        # drag cap: this many times the body's weight (as the mouse drag)
IMPACT_DV = 1.0           # m/s: the unexplained velocity change jumps by this = an impact
IMPACT_RATIO = 3.0
IMPACT_GAP_S = 0.1        # simulated seconds between two impact pulses
GRAB_PULSE = (0.8, 0.05)  # amplitude, seconds
IMPACT_PULSE = (1.0, 0.02)


class HandGrab:
    """At most one held body (the engine has one drag joint); the first hand to squeeze wins."""

    def __init__(self, world, renderer, pulse, force_factor: float = FORCE_FACTOR,
                 defer=None, shown=None):
        self.world = world
        self.renderer = renderer
        self.pulse = pulse                  # callable(hand, amplitude, duration_s)
        self.adapter = DragAdapter(world, defer, shown)
        self.force_factor = force_factor
        self.hand = -1
        self.body = -1
        self.local = np.zeros(4)            # grabbed point in the aim frame (homogeneous)
        self.body_local = np.zeros(3)       # grabbed point in the body frame
        self.target = np.zeros(3)           # where the hand wants that point now
        self.impacts = 0
        self._v_before = None
        self._unexplained = None            # last step's unexplained velocity change
        self._jolt = 0.0                    # how much that differed from the step before's
        self._last_impact = -np.inf
        self._pulses: deque = deque()       # (hand, amplitude, s) found by before_step

    @property
    def active(self) -> bool:
        return self.body >= 0

    def update(self, hands) -> None:
        """Start, move or end the grab from this frame's hand states."""
        while self._pulses:
            hand, amplitude, seconds = self._pulses.popleft()
            if hand >= 0:
                self.pulse(hand, amplitude, seconds)
        if self.active:
            state = hands[self.hand]
            if state.grab_released or not state.grabbing:
                self.release(state)
            else:
                self._follow(state)
            return
        for h, state in enumerate(hands):
            if state.grab_started and self.begin(h, state):
                return

    def begin(self, hand: int, state) -> bool:
        origin, direction = aim_ray(state.aim)
        body, point = pick_body(self.renderer, origin, direction)
        if body < 0 or bool(self.world.body_static[body]):
            return False
        self.hand, self.body = hand, body
        self.local = np.linalg.inv(state.aim) @ np.append(point, 1.0)
        self.body_local = self.adapter.body_point(body, point)
        self.adapter.start(body, point, weight_cap(self.world, body, self.force_factor))
        self._follow(state)
        # the grab's own first pull is no impact (its target is the point where the body
        # was shown, which the physics thread may have moved on from by a batch): no pulse
        # within IMPACT_GAP_S of the grab
        self._v_before, self._unexplained, self._jolt = None, None, np.inf
        self._last_impact = float(self.world.time)
        self.pulse(hand, *GRAB_PULSE)
        return True

    def _follow(self, state) -> None:
        self.target = (state.aim @ self.local)[:3]
        self.adapter.to(self.target, state.aim[:3, :3])

    def release(self, state) -> None:
        """Let go; the body takes the controller's linear and angular velocity (a throw)."""
        b = self.body
        w = np.asarray(state.angular_velocity, float)
        lever = self.adapter.shown.body_pos[b] - state.aim[:3, 3]
        v = np.asarray(state.linear_velocity, float) + np.cross(w, lever)
        self.adapter.set_velocity(b, v, w)
        self.cancel()

    def cancel(self) -> None:
        """Let go without throwing (edits, reset, leaving VR)."""
        if self.active:
            self.adapter.stop()
        self.hand, self.body, self._v_before, self._jolt = -1, -1, None, 0.0
        self._unexplained = None

    def before_step(self) -> None:
        """Session step hook (stepping thread): a pulse when the held body's velocity jumped
        in the last step."""
        b, w = self.body, self.world
        if not self.active or w.drag is None:  # the drag starts between two batches
            self._v_before = self._unexplained = None
            return
        v = np.array(w.body_vel[b])
        if self._v_before is not None:
            drag = w.drag_force() * w.settings.h / w.body_mass(b)
            gravity = np.asarray(w.settings.gravity, float) * w.settings.h
            unexplained = v - self._v_before - drag - gravity
            if self._unexplained is not None:
                jolt = float(np.linalg.norm(unexplained - self._unexplained))
                if (jolt > max(IMPACT_DV, IMPACT_RATIO * self._jolt)
                        and w.time - self._last_impact >= IMPACT_GAP_S):
                    self.impacts += 1
                    self._last_impact = w.time
                    self._pulses.append((self.hand, *IMPACT_PULSE))
                self._jolt = jolt
            self._unexplained = unexplained
        self._v_before = v

    def gizmo_lines(self) -> np.ndarray:
        """Grabbed point -> controller target, as the mouse drag draws it."""
        if not self.active:
            return np.zeros((0, 2, 3))
        shown, b = self.adapter.shown, self.body
        point = shown.body_pos[b] + shown.body_rot[b] @ self.body_local
        return np.array([[point, self.target]])
