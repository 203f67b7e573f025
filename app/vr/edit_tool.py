"""Live editing in VR by pointing: the trigger adds a joint between the two bodies pointed
at (the second pick on empty space attaches the first body to the world), or removes the
joint pointed at. Every change goes through app/editor.py commands (undo works).

Modes: None (the trigger does nothing), "joint" (pressing the wrist button again cycles
the joint type) and "remove". The joint's anchor is the second picked point; its axis
(hinge, slider...) runs along the controller ray.
"""

from __future__ import annotations

import numpy as np

from impulse.app.editor import AddJoint, RemoveJoint, joint_types, new_joint_spec
from impulse.app.vr.pointer import aim_ray, pick_body, pick_joint


class VREditTool:
    def __init__(self, app, renderer):
        self.app = app                     # runs the commands (App.run shows rejections)
        self.renderer = renderer
        self.mode: str | None = None
        self.kind = "ball"
        self.first = None                  # (body name, world point)
        self.last_message = ""

    def press_joint_button(self) -> None:
        """First press: joint mode; further presses: the next joint type."""
        if self.mode == "joint":
            types = joint_types()
            self.kind = types[(types.index(self.kind) + 1) % len(types)]
        self.mode, self.first = "joint", None

    def press_remove_button(self) -> None:
        self.mode = None if self.mode == "remove" else "remove"
        self.first = None

    @property
    def hint(self) -> str:
        if self.mode == "joint":
            which = ("second body (or empty space: the world)" if self.first
                     else "first body")
            return f"{self.kind} joint: point at the {which}, trigger"
        if self.mode == "remove":
            return "remove joint: point at a joint anchor, trigger"
        return ""

    def trigger(self, aim: np.ndarray) -> None:
        """The trigger was pulled with the controller at `aim` (4, 4)."""
        origin, direction = aim_ray(aim)
        world = self.app.session.world
        if self.mode == "remove":
            name = pick_joint(world, origin, direction)
            if name is None:
                self.last_message = "no joint there"
            elif self.app.run(RemoveJoint(name)):
                self.last_message = f"removed {name}"
            return
        if self.mode != "joint":
            return
        body, point = pick_body(self.renderer, origin, direction)
        if self.first is None:
            if body >= 0:
                self.first = (world.body_names[body], np.asarray(point, float))
            return
        a, pa = self.first
        if body >= 0 and world.body_names[body] == a:
            return
        b, pb = (world.body_names[body], np.asarray(point, float)) if body >= 0 else ("world", pa)
        spec = new_joint_spec(world, self.kind, a, b, pa, pb, direction)
        self.first = None
        if self.app.run(AddJoint(spec)):
            self.last_message = f"added {spec['name']}"
