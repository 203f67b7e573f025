"""Stats and plots: fps, step cost, cycles, residuals, halvings, contacts, energy."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

from impulse.app.ui.layout import place

PLOT_H = 140          # px: the plots under "Cycles and errors"
PLOT_MIN_H = 120      # px: the energy plot shrinks to this to leave room for the header
                      # below it (at 1280x720); it keeps two y ticks (nice_ticks) and its legend
plot_heights: dict[str, float] = {}   # last frame's height of each plot (tests read it)


def _plot(title: str, series, t: np.ndarray, height: float = PLOT_H,
          log: bool = False) -> None:
    """A line plot at least PLOT_MIN_H high. Log plots get decade limits from the data (a
    flat or empty series would otherwise give ticks like 1e-150)."""
    if len(t) < 2:
        return
    height = max(height, PLOT_MIN_H)
    plot_heights[title] = height
    if implot.begin_plot(title, imgui.ImVec2(-1, height)):
        implot.setup_axes("", "", implot.AxisFlags_.auto_fit, 0)
        implot.setup_legend(implot.Location_.north, implot.LegendFlags_.horizontal
                            | implot.LegendFlags_.outside)
        if log:
            implot.setup_axis_scale(implot.ImAxis_.y1, implot.Scale_.log10)
        lo, hi = (decades if log else padded)([y for _, y in series])
        implot.setup_axis_limits(implot.ImAxis_.y1, lo, hi, implot.Cond_.always)
        if not log:           # as many ticks as the plot's height holds labels
            implot.setup_axis_ticks(implot.ImAxis_.y1, nice_ticks(lo, hi, _ticks_for(height)))
        for label, y in series:
            implot.plot_line(label, t, y)
        implot.end_plot()


TICK_SPACING = 18     # px: a y tick label's height and a gap
PLOT_FRAME_H = 75     # px of a plot's height that are not its data area (legend, title,
                      # x tick labels, paddings)


def _ticks_for(height: float) -> int:
    return int(min(max((height - PLOT_FRAME_H) // TICK_SPACING, 2), 8))


def nice_ticks(lo: float, hi: float, most: int) -> list[float]:
    """The most round values in [lo, hi], at most `most` of them, a step of 1, 2, 2.5 or 5
    times a power of ten apart (implot's own ticks overlapped on a short plot of a wide
    range: five labels in 30 px)."""
    span = hi - lo
    if not np.isfinite(span) or span <= 0.0:
        return [lo]
    power = 10.0 ** (np.floor(np.log10(span / max(most, 1))) - 1)
    for step in (m * power * 10.0 ** k for k in range(4) for m in (1.0, 2.0, 2.5, 5.0)):
        ticks = step * np.arange(np.ceil(lo / step), np.floor(hi / step) + 1)
        if len(ticks) <= most:
            digits = max(0, 2 - int(np.floor(np.log10(step))))   # 3.3, not 3.3000000000000003
            return [round(float(v), digits) + 0.0 for v in ticks
                    if lo <= round(float(v), digits) <= hi] or [lo]
    return [lo, hi]


def padded(arrays, margin: float = 0.08) -> tuple[float, float]:
    """Limits around the finite values of `arrays` with a margin of `margin` of their span
    (of their size where they are flat), so a line at the extremes or a constant one shows
    inside the plot rather than on its edge."""
    values = np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in arrays])
    values = values[np.isfinite(values)]
    if values.size == 0:
        return 0.0, 1.0
    lo, hi = float(values.min()), float(values.max())
    pad = margin * (hi - lo) if hi > lo else margin * max(abs(hi), 1.0)
    return lo - pad, hi + pad


def decades(arrays, floor: float = 1e-16) -> tuple[float, float]:
    """Whole-decade limits around the positive values of `arrays` (at least one decade)."""
    values = np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in arrays])
    values = values[np.isfinite(values) & (values > floor)]
    if values.size == 0:
        return floor, floor * 100
    lo = 10.0 ** np.floor(np.log10(values.min()))
    hi = 10.0 ** np.ceil(np.log10(values.max()))
    return (lo, hi * 10) if hi <= lo else (lo, hi)


def _tolerance_tooltip(tally) -> None:
    if imgui.is_item_hovered():
        imgui.set_tooltip(f"{tally.line()}\n\nevery step since the scene was opened or "
                          "reset: a step misses when a joint gap stays above eps_pos or a "
                          "joint velocity error above eps_vel, or its loop stopped on the "
                          "cycle cap or time budget\n(Solver panel: more cycles, a smaller h, "
                          "or the tree solver)")


def draw_stats_panel(app) -> None:
    place("stats")
    opened, app.panels["stats"] = imgui.begin("Stats", app.panels["stats"])
    if opened:
        v, s, loop = app.viewer, app.stats, app.session.loop
        last = s.last
        fps = v.fps
        imgui.text(f"{fps:4.1f} fps ({1000 / fps if fps else 0:4.1f} ms)  "
                   f"RTF {loop.real_time_factor:.2f}")
        batch = loop.last_batch
        if batch is not None and imgui.is_item_hovered():   # the loop's last batch of steps
            imgui.set_tooltip(f"frames per second and real-time factor; the physics "
                              f"{'thread' if loop.threaded else 'in the frame'} ran its last "
                              f"batch of {batch.done} steps in {batch.wall_s * 1e3:.1f} ms")
        imgui.text(f"step {app.session.step_ms:.3f} ms  cycles {last.get('cycles', 0)}")
        imgui.text(f"halvings {last.get('halvings', 0)}  contacts {last.get('contacts', 0)}")
        tally = app.session.tolerance
        if tally.missed:                       # (only then: the panel fits 720p without it)
            imgui.text_colored(imgui.ImVec4(1.0, 0.7, 0.3, 1.0), tally.short())
            _tolerance_tooltip(tally)
        imgui.text(f"awake {last.get('awake_bodies', 0)} ({last.get('islands', 0)} islands)  "
                   f"asleep {last.get('asleep_bodies', 0)}")
        if imgui.is_item_hovered():
            solved = last.get("islands_solved", 0)
            apart = (f"the last step solved {solved} parts apart, on up to "
                     f"{app.session.world.threads} threads" if solved else
                     "the last step solved the world whole")
            imgui.set_tooltip("bodies awake and asleep\n"
                              "islands: groups of awake bodies joined by contacts, joints or "
                              "springs\n(an island at rest for the sleep time sleeps; contacts "
                              "among sleeping bodies are not counted)\n" + apart)
        t = s.array("t")
        _plot("energy [J]", [("kinetic", s.array("kinetic")), ("potential", s.array("potential")),
                             ("total", s.array("total"))], t,
              imgui.get_content_region_avail().y - imgui.get_frame_height_with_spacing()
              - imgui.get_style().window_padding.y)
        if imgui.collapsing_header("Cycles and errors"):
            imgui.text_wrapped(tally.line())
            _tolerance_tooltip(tally)
            imgui.text(f"residual {last.get('pos_err', 0):.1e} m, "
                       f"{last.get('vel_err', 0):.1e} m/s")
            if imgui.is_item_hovered():
                imgui.set_tooltip("largest joint gap and joint velocity error after the last "
                                  "step")
            _plot("cycles per step", [("cycles", s.array("cycles"))], t)
            eps = 1e-16
            _plot("residuals", [("position", np.maximum(s.array("pos_err"), eps)),
                                ("velocity", np.maximum(s.array("vel_err"), eps))], t, log=True)
    imgui.end()
