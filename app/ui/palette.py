"""Palette: drag a shape into the 3D view to add a body there (at rest), via AddBody."""
from __future__ import annotations

from imgui_bundle import imgui

from impulse.app.ui import widgets as W

KINDS = ("box", "sphere", "capsule", "cylinder")


def draw_palette(app) -> None:
    """The shape buttons (inside the Tools window)."""
    imgui.text("New body (drag into the view):")
    for i, kind in enumerate(KINDS):
        if i:
            imgui.same_line()
        W.button(kind.capitalize(), f"palette.{kind}")
        if imgui.is_item_active() and imgui.is_mouse_dragging(imgui.MouseButton_.left, 4.0):
            app.palette_drag = kind


def finish_palette_drag(app) -> None:
    """Tooltip while dragging; on release over the 3D view, add the body there."""
    if app.palette_drag is not None:
        io = imgui.get_io()
        if imgui.is_mouse_down(imgui.MouseButton_.left):
            imgui.set_tooltip(f"+ {app.palette_drag}")
        else:
            kind, app.palette_drag = app.palette_drag, None
            if not imgui.is_window_hovered(imgui.HoveredFlags_.any_window):
                app.drop_new_body(kind, io.mouse_pos.x, io.mouse_pos.y)
