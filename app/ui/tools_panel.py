"""Tools window: the palette of new bodies and the joint tool."""
from __future__ import annotations

from imgui_bundle import imgui

from impulse.app.ui import widgets as W
from impulse.app.ui.joint_tool import draw_joint_tool
from impulse.app.ui.layout import place
from impulse.app.ui.palette import draw_palette, finish_palette_drag


def draw_tools(app) -> None:
    place("tools")
    opened, app.panels["tools"] = imgui.begin("Tools", app.panels["tools"])
    if opened:
        draw_palette(app)
        imgui.separator()
        W.push_label_room(["type", "anchor", "drag cap", "stiffness", "damping"])
        draw_joint_tool(app)
        imgui.pop_item_width()
        imgui.separator()
        if app.vr is None and W.button("Enter VR", "vr.enter"):
            app.enter_vr()
        elif app.vr is not None and W.button("Exit VR", "vr.exit"):
            app.exit_vr()
    imgui.end()
    finish_palette_drag(app)
