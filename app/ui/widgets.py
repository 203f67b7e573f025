"""Edit widgets that turn one user gesture into one editor command: the value shown while a
drag or text entry is in progress is kept locally and committed when the widget is left.
Numbers are doubles (drag_scalar_n / input_double), so a typed value reaches the model
exactly as typed (integers are ImGui's ints; colours its single-precision colour edit)."""
from __future__ import annotations

import ctypes

import numpy as np
from imgui_bundle import imgui

_pending: dict[str, object] = {}


def _finish(key: str, current, changed: bool, value):
    """(commit?, value) after an edit widget. The value of a drag or text entry in progress is
    kept here (the model changes only on commit) and committed once, on the first frame the
    widget is no longer active, if it differs from `current`. ImGui applies a typed value
    only on that frame (Return, Tab or a click elsewhere); Tab inside a vector moves to its
    next component, and the vector is committed when the user leaves it."""
    record_rect(key)
    if changed:
        _pending[key] = value
    if imgui.is_item_active():
        return False, value
    value = _pending.pop(key, current)
    return value != current, value


def _shown(key: str, current):
    return _pending.get(key, current)


_DOUBLE = int(imgui.DataType_.double)
_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                             ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))


def _pointer(a: np.ndarray):
    """A numpy array's data as the void* of imgui's *_scalar functions (imgui_bundle takes it
    as a capsule named "nb_handle", nanobind's void* caster); `a` must outlive the call."""
    return _capsule(a.ctypes.data, b"nb_handle", None)


def _drag_doubles(label: str, values, speed: float, lo: float, hi: float, fmt: str):
    """imgui.drag_scalar_n on doubles (lo >= hi: unbounded): (changed, list of floats)."""
    v, bounds = np.array(values, dtype=np.float64), np.array([lo, hi], dtype=np.float64)
    changed = imgui.drag_scalar_n(label, _DOUBLE, _pointer(v), len(v), speed,
                                  _pointer(bounds[:1]), _pointer(bounds[1:]), fmt)
    return changed, [float(x) for x in v]


def edit_float(label: str, key: str, current: float, speed: float = 0.01, lo: float = 0.0,
               hi: float = 0.0, fmt: str = "%.4g"):
    current = float(current)
    changed, v = _drag_doubles(label, [_shown(key, current)], speed, lo, hi, fmt)
    return _finish(key, current, changed, v[0])


def edit_text(label: str, key: str, current: str):
    """A one-line text field, committed once when left (Return, Tab or a click elsewhere)."""
    changed, v = imgui.input_text(label, str(_shown(key, current)))
    return _finish(key, current, changed, v.strip())


def edit_vec3(label: str, key: str, current, speed: float = 0.01, fmt: str = "%.3f"):
    current = [float(x) for x in current]
    changed, v = _drag_doubles(label, _shown(key, current), speed, 0.0, 0.0, fmt)
    return _finish(key, current, changed, v)


def edit_color(label: str, key: str, current):
    current = [float(x) for x in current][:3]
    changed, v = imgui.color_edit3(label, _shown(key, current))
    return _finish(key, current, changed, [float(x) for x in v])


def edit_int(label: str, key: str, current: int, lo: int, hi: int):
    current = int(current)
    changed, v = imgui.drag_int(label, _shown(key, current), 0.2, lo, hi)
    return _finish(key, current, changed, int(v))


def edit_sci(label: str, key: str, current: float):
    """A float typed in (scientific notation is fine)."""
    current = float(current)
    changed, v = imgui.input_double(label, _shown(key, current), 0.0, 0.0, "%.3e")
    return _finish(key, current, changed, float(v))


def checkbox(label: str, current: bool):
    """(commit?, value) for a checkbox: a click is the whole gesture."""
    changed, v = imgui.checkbox(label, bool(current))
    return changed, bool(v)


def combo(label: str, current: str, items: list[str]):
    idx = items.index(current) if current in items else 0
    changed, i = imgui.combo(label, idx, items)
    return changed, items[i]


HELP = " (?)"


def push_label_room(labels, help_marker_too: bool = False) -> None:
    """Widgets fill the window up to room for the longest of `labels` on their right (and a
    help marker after it): no label is cut, whatever the window's width. Pop with
    imgui.pop_item_width()."""
    style = imgui.get_style()
    longest = max(imgui.calc_text_size(label + (HELP if help_marker_too else "")).x
                  for label in labels)
    imgui.push_item_width(-(longest + style.item_inner_spacing.x + style.item_spacing.x + 4))


def help_marker(text: str) -> None:
    imgui.same_line()
    imgui.text_disabled("(?)")
    if imgui.is_item_hovered():
        imgui.set_tooltip(text)


# screen rectangles of named buttons and edit fields from the last frame (GUI tests click
# them with xdotool)
rects: dict[str, tuple[float, float, float, float]] = {}


def record_rect(key: str) -> None:
    lo, hi = imgui.get_item_rect_min(), imgui.get_item_rect_max()
    rects[key] = (lo.x, lo.y, hi.x, hi.y)


def button(label: str, key: str | None = None, size=None) -> bool:
    """imgui.button that remembers where it was drawn."""
    pressed = imgui.button(label, size) if size is not None else imgui.button(label)
    record_rect(key or label)
    return pressed
