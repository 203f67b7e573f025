"""Bottom bar: play/pause/step/reset, speed, real-time factor, and the history slider."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui

from impulse.app.ui import widgets as W
from impulse.app.ui.layout import place


def draw_timeline(app) -> None:
    place("timeline", imgui.Cond_.always)
    flags = (imgui.WindowFlags_.no_title_bar | imgui.WindowFlags_.no_resize
             | imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_collapse)
    imgui.begin("Timeline", None, flags)
    ses = app.session
    loop = ses.loop
    if W.button("Play " if loop.paused else "Pause", "timeline.play", imgui.ImVec2(60, 0)):
        loop.toggle_pause()
    imgui.same_line()
    if W.button("Step", "timeline.step"):
        app.single_step()
    imgui.same_line()
    if W.button("Reset", "timeline.reset"):
        app.reset()
    imgui.same_line()
    imgui.set_next_item_width(150)
    changed, e = imgui.slider_int("##speed", int(round(np.log2(loop.speed))), -3, 3,
                                  f"speed x{loop.speed:g}" if loop.speed >= 1 else
                                  f"speed x1/{round(1 / loop.speed)}")
    if changed:
        loop.speed = 2.0 ** e
    imgui.same_line()
    imgui.text(f"t = {ses.world.time:8.3f} s   RTF {loop.real_time_factor:5.2f}"
               f"{'   (paused)' if loop.paused else ''}   dropped {loop.dropped_total:.2f} s")
    lo, hi = ses.history.span
    imgui.set_next_item_width(-1)
    t = float(ses.world.time)
    changed, t_new = imgui.slider_float("##history", min(max(t, lo), hi) if hi > lo else t,
                                        lo, max(hi, lo + 1e-9), "history %.3f s")
    W.record_rect("timeline.history")
    if changed and hi > lo:
        ses.scrub(t_new)
    imgui.end()
