"""Drawn over the 3D view: REC indicator with frame count, drag force, joint tool hint,
status line. The texts of the last frame are kept in app.overlay_lines."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui

from impulse.app.ui.layout import LEFT_W, MENU_H, RIGHT_W, TIMELINE_H
from impulse.engine import interpreted


def _text(app, x: float, y: float, rgba, text: str) -> None:
    imgui.get_foreground_draw_list().add_text(imgui.ImVec2(x, y),
                                              imgui.get_color_u32(imgui.ImVec4(*rgba)), text)
    app.overlay_lines.append(text)


def draw_overlay(app) -> None:
    app.overlay_lines = []
    size = imgui.get_io().display_size
    x0, y0 = LEFT_W + 12, MENU_H + 8
    if app.recorder.active:
        x = size.x - RIGHT_W - 190
        if int(imgui.get_time() * 2) % 2 == 0:
            imgui.get_foreground_draw_list().add_circle_filled(
                imgui.ImVec2(x, y0 + 9), 8, imgui.get_color_u32(imgui.ImVec4(1, 0.1, 0.1, 1)))
        _text(app, x + 14, y0 + 1, (1, 0.3, 0.3, 1), f"REC  {app.recorder.frames} frames")
    if app.grab is not None and app.grab.active:
        mouse = imgui.get_io().mouse_pos
        text = f"{np.linalg.norm(app.grab.force()):.1f} N" if app.grab.adapter.supported else \
            "drag: this engine build has no drag API"
        _text(app, mouse.x + 16, mouse.y - 18, (1, 1, 0.4, 1), text)
    if interpreted.active():
        c = app.compile                # (None after a failed compile: it stays Python)
        _text(app, x0, y0 + 20 if app.joint_tool.active else y0, (1, 0.75, 0.35, 1),
              f"physics as Python (slow) while its kernels compile: {c.share_done()}"
              if c is not None else "physics as Python (slow): its kernels did not compile")
    if app.joint_tool.active:
        _text(app, x0, y0, (1, 0.85, 0.3, 1),
              f"{app.joint_tool.kind} joint: {app.joint_tool.hint}  (Esc cancels)")
    if app.status:
        _text(app, x0, size.y - TIMELINE_H - 22, (0.85, 0.9, 1, 0.9), app.status)
