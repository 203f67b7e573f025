"""Edit widgets that turn one user gesture into one editor command: the value shown while a
drag or text entry is in progress is kept locally and committed when the widget is released
(ImGui's "deactivated after edit")."""
from __future__ import annotations

from imgui_bundle import imgui

_pending: dict[str, object] = {}


def _finish(key: str, value, changed: bool):
    """(commit?, value): keeps the in-progress value; commit on release after an edit."""
    if imgui.is_item_active():
        _pending[key] = value
    if imgui.is_item_deactivated_after_edit():
        return True, _pending.pop(key, value)
    if not imgui.is_item_active():
        _pending.pop(key, None)
    return False, value


def _shown(key: str, current):
    return _pending.get(key, current)


def edit_float(label: str, key: str, current: float, speed: float = 0.01, lo: float = 0.0,
               hi: float = 0.0, fmt: str = "%.4g"):
    changed, v = imgui.drag_float(label, float(_shown(key, current)), speed, lo, hi, fmt)
    return _finish(key, float(v), changed)


def edit_vec3(label: str, key: str, current, speed: float = 0.01, fmt: str = "%.3f"):
    shown = [float(x) for x in _shown(key, current)]
    changed, v = imgui.drag_float3(label, shown, speed, 0.0, 0.0, fmt)
    return _finish(key, [float(x) for x in v], changed)


def edit_color(label: str, key: str, current):
    shown = [float(x) for x in _shown(key, current)][:3]
    changed, v = imgui.color_edit3(label, shown)
    return _finish(key, [float(x) for x in v], changed)


def edit_int(label: str, key: str, current: int, lo: int, hi: int):
    changed, v = imgui.drag_int(label, int(_shown(key, current)), 0.2, lo, hi)
    return _finish(key, int(v), changed)


def edit_sci(label: str, key: str, current: float):
    """A positive float typed in (scientific notation is fine)."""
    changed, v = imgui.input_float(label, float(_shown(key, current)), 0.0, 0.0, "%.3e")
    return _finish(key, float(v), changed)


def checkbox(label: str, current: bool):
    """(commit?, value) for a checkbox: a click is the whole gesture."""
    changed, v = imgui.checkbox(label, bool(current))
    return changed, bool(v)


def combo(label: str, current: str, items: list[str]):
    idx = items.index(current) if current in items else 0
    changed, i = imgui.combo(label, idx, items)
    return changed, items[i]


def help_marker(text: str) -> None:
    imgui.same_line()
    imgui.text_disabled("(?)")
    if imgui.is_item_hovered():
        imgui.set_tooltip(text)


# screen rectangles of named buttons from the last frame (GUI tests click them with xdotool)
rects: dict[str, tuple[float, float, float, float]] = {}


def record_rect(key: str) -> None:
    lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    rects[key] = (lo.x, lo.y, hi.x, hi.y)


def button(label: str, key: str | None = None, size=None) -> bool:
    """imgui.button that remembers where it was drawn."""
    pressed = imgui.button(label, size) if size is not None else imgui.button(label)
    record_rect(key or label)
    return pressed
