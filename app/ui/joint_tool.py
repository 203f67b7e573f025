"""Joint tool: pick a type, click the first body, click the second (anchor = the clicked
point on the second body; clicking empty space attaches to the world at the first point)."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui

from app.editor import AddJoint, joint_types, new_joint_spec
from app.ui import widgets as W


class JointTool:
    def __init__(self, app):
        self.app = app
        self.kind = "ball"
        self.first = None            # (body name, world point)
        self.active = False
        self.stiffness = 100.0
        self.damping = 1.0

    def start(self) -> None:
        self.active, self.first = True, None
        if self.app.grab is not None:
            self.app.grab.enabled = False

    def cancel(self) -> None:
        self.active, self.first = False, None
        if self.app.grab is not None:
            self.app.grab.enabled = True

    @property
    def hint(self) -> str:
        if not self.active:
            return ""
        return "click the second body (empty space: the world)" if self.first else \
            "click the first body"

    def click(self, body: int, point) -> None:
        w = self.app.session.world
        if self.first is None:
            if body >= 0:
                self.first = (w.body_names[body], np.asarray(point, dtype=np.float64))
                self.app.viewer.options.selected = (body,)
            return
        a, pa = self.first
        if body >= 0 and w.body_names[body] == a:
            return
        b, pb = (w.body_names[body], np.asarray(point, dtype=np.float64)) if body >= 0 else ("world", pa)
        spec = self.spec(a, b, pa, pb)
        self.cancel()
        if self.app.run(AddJoint(spec)):
            self.app.select("joint", spec["name"])

    def spec(self, a: str, b: str, pa, pb) -> dict:
        """The new joint; its axis (if it has one) along the view direction, editable later."""
        return new_joint_spec(self.app.session.world, self.kind, a, b, pa, pb,
                              -self.app.viewer.camera.direction, self.stiffness, self.damping)


def draw_joint_tool(app) -> None:
    """Joint type and the pick button (inside the Tools window)."""
    tool = app.joint_tool
    imgui.text("New joint:")
    types = joint_types()
    changed, i = imgui.combo("type", types.index(tool.kind) if tool.kind in types else 0, types)
    if changed:
        tool.kind = types[i]
    if tool.kind == "spring":
        _, tool.stiffness = imgui.input_double("stiffness", tool.stiffness, 0.0, 0.0, "%.6g")
        _, tool.damping = imgui.input_double("damping", tool.damping, 0.0, 0.0, "%.6g")
    if app.grab is not None:
        imgui.set_next_item_width(120)
        _, app.grab.force_factor = imgui.slider_float("drag cap x weight",
                                                      app.grab.force_factor, 0.5, 50.0, "%.1f",
                                                      imgui.SliderFlags_.logarithmic)
    if tool.active:
        imgui.text_colored(imgui.ImVec4(1, 0.85, 0.3, 1), tool.hint)
        if W.button("Cancel (Esc)", "joint.cancel"):
            tool.cancel()
    elif W.button("Add joint: pick two bodies", "joint.start"):
        tool.start()
