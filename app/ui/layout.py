"""Default window placement (first use only; the user may move and resize them)."""
from __future__ import annotations

from imgui_bundle import imgui

MENU_H = 22
LEFT_W = 250
RIGHT_W = 320
TIMELINE_H = 92
TOOLS_H = 206             # palette, joint tool (type, anchor, drag cap, button), Enter VR


def rect(name: str, width: float, height: float) -> tuple[float, float, float, float]:
    """(x, y, w, h) of a panel in a window of the given size."""
    mid_h = height - MENU_H - TIMELINE_H
    right_x = width - RIGHT_W
    table = {
        "tree": (0, MENU_H, LEFT_W, mid_h * 0.3),
        "tools": (0, MENU_H + mid_h * 0.3, LEFT_W, TOOLS_H),
        "stats": (0, MENU_H + mid_h * 0.3 + TOOLS_H, LEFT_W, mid_h * 0.7 - TOOLS_H),
        "inspector": (right_x, MENU_H, RIGHT_W, mid_h * 0.55),
        "solver": (right_x, MENU_H + mid_h * 0.55, RIGHT_W, mid_h * 0.45),
        "contacts": (LEFT_W + 350, MENU_H + 10, 300, 200),
        "vr": (LEFT_W + 10, MENU_H + 30, 330, 300),
        "timeline": (0, height - TIMELINE_H, width, TIMELINE_H),
        "help": (width / 2 - 200, height / 2 - 150, 400, 300),
        "problems": (width / 2 - 300, MENU_H + 40, 600, 160),
    }
    return table[name]


def place(name: str, cond=imgui.Cond_.first_use_ever) -> None:
    size = imgui.get_io().display_size
    x, y, w, h = rect(name, size.x, size.y)
    imgui.set_next_window_pos(imgui.ImVec2(x, y), cond)
    imgui.set_next_window_size(imgui.ImVec2(w, h), cond)
