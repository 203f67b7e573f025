"""Stats and plots: fps, step cost, iterations, residuals, halvings, contacts, energy."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from app.ui.layout import place


def _plot(title: str, series, t: np.ndarray, height: float = 110, log: bool = False) -> None:
    if len(t) < 2:
        return
    if implot.begin_plot(title, imgui.ImVec2(-1, height)):
        implot.setup_axes("", "", implot.AxisFlags_.auto_fit, implot.AxisFlags_.auto_fit)
        implot.setup_legend(implot.Location_.north, implot.LegendFlags_.horizontal
                            | implot.LegendFlags_.outside)
        if log:
            implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
        for label, y in series:
            implot.plot_line(label, t, y)
        implot.end_plot()


def draw_stats_panel(app) -> None:
    place("stats")
    opened, app.panels["stats"] = imgui.begin("Stats", app.panels["stats"])
    if opened:
        v, s, loop = app.viewer, app.stats, app.session.loop
        last = s.last
        fps = v.fps
        imgui.text(f"{fps:5.1f} fps {1000 / fps if fps else 0:5.1f} ms/frame")
        imgui.text(f"real-time factor {loop.real_time_factor:.2f}")
        batch = loop.last_batch
        if batch is not None:                  # the last batch of steps the loop ran
            imgui.text(f"batch {batch.done} steps {batch.wall_s * 1e3:.0f} ms"
                       f"{' (thread)' if loop.threaded else ''}")
        imgui.text(f"step {app.session.step_ms:.3f} ms  cycles {last.get('cycles', 0)}")
        imgui.text(f"halvings {last.get('halvings', 0)}  contacts {last.get('contacts', 0)}")
        imgui.text(f"residual x {last.get('pos_err', 0):.1e} m")
        imgui.text(f"residual v {last.get('vel_err', 0):.1e} m/s")
        t = s.array("t")
        _plot("energy [J]", [("kinetic", s.array("kinetic")), ("potential", s.array("potential")),
                             ("total", s.array("total"))], t,
              max(imgui.get_content_region_avail().y - 30, 110))
        if imgui.collapsing_header("Iterations and errors"):
            _plot("cycles per step", [("cycles", s.array("cycles"))], t, 90)
            eps = 1e-16
            _plot("residuals", [("position", np.maximum(s.array("pos_err"), eps)),
                                ("velocity", np.maximum(s.array("vel_err"), eps))], t, 90, log=True)
    imgui.end()
