"""Default window placement (first use only: the user may move, resize and dock them; the
arrangement is kept in <config>/impulse/layout.ini, View > Reset layout goes back to this).
Columns grow with the window: 20 % and 25 % of its width, at least 250 and 320 px."""
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
    left_w = max(LEFT_W, 0.2 * width)
    right_w = max(RIGHT_W, 0.25 * width)
    right_x = width - right_w
    tree_h = mid_h * 0.22
    table = {
        "tree": (0, MENU_H, left_w, tree_h),
        "tools": (0, MENU_H + tree_h, left_w, TOOLS_H),
        "stats": (0, MENU_H + tree_h + TOOLS_H, left_w, mid_h - tree_h - TOOLS_H),
        "inspector": (right_x, MENU_H, right_w, mid_h * 0.5),
        "solver": (right_x, MENU_H + mid_h * 0.5, right_w, mid_h * 0.5),
        "contacts": (left_w + 350, MENU_H + 10, 380, 220),
        "vr": (left_w + 10, MENU_H + 30, 330, 300),
        "timeline": (0, height - TIMELINE_H, width, TIMELINE_H),
        "help": (width / 2 - 200, height / 2 - 150, 400, 300),
        "problems": (width / 2 - 300, MENU_H + 40, 600, 160),
    }
    return table[name]


_reset = {"frames": 0}


def reset_layout() -> None:
    """Put every panel back where `rect` says (View > Reset layout)."""
    _reset["frames"] = 2


def end_frame() -> None:
    _reset["frames"] = max(_reset["frames"] - 1, 0)


def place(name: str, cond=imgui.Cond_.first_use_ever) -> None:
    if _reset["frames"]:
        cond = imgui.Cond_.always
    size = imgui.get_io().display_size
    x, y, w, h = rect(name, size.x, size.y)
    imgui.set_next_window_pos(imgui.ImVec2(x, y), cond)
    imgui.set_next_window_size(imgui.ImVec2(w, h), cond)
