"""The "View" panel: frame rate with a frame-time plot, simulation clock, render toggles."""
from __future__ import annotations

import numpy as np
from imgui_bundle import imgui, implot

TOGGLES = (("Shadows", "shadows"), ("Grid", "grid"), ("Wireframe", "wireframe"),
           ("Joints", "show_joints"), ("Contact points and normals", "show_contacts"),
           ("Centres of mass", "show_com"), ("Velocities", "show_velocity"),
           ("External loads (forces, torques)", "show_loads"),
           ("Gizmos through bodies", "gizmo_xray"), ("Tint sleeping bodies", "tint_sleeping"),
           ("Visual meshes (imported models)", "show_visuals"))


def _frame_plot(frame_times) -> None:
    ms = np.asarray(frame_times, dtype=np.float64) * 1000.0
    if len(ms) < 2:
        return
    if implot.begin_plot("##frame_ms", imgui.ImVec2(-1, 90), implot.Flags_.no_legend):
        implot.setup_axes("", "ms", implot.AxisFlags_.no_tick_labels, implot.AxisFlags_.auto_fit)
        implot.setup_axis_limits(implot.ImAxis_.x1, 0, len(ms), implot.Cond_.always)
        implot.plot_line("frame", ms)
        implot.end_plot()


def _loop_controls(loop) -> None:
    imgui.separator()
    imgui.text(f"sim t = {loop.sim_time:.3f} s   h = {loop.h * 1000:.2f} ms")
    imgui.text(f"real-time factor {loop.real_time_factor:.2f}   dropped {loop.dropped_total:.2f} s")
    if imgui.button("Run" if loop.paused else "Pause"):
        loop.toggle_pause()
    imgui.same_line()
    if imgui.button("Step"):
        loop.request_step()
    changed, exponent = imgui.slider_float("speed", float(np.log2(loop.speed)), -3.0, 3.0,
                                           f"x{loop.speed:.3g}")
    if changed:
        loop.speed = 2.0 ** exponent


def draw_view_panel(viewer, loop=None) -> None:
    """Panel for a Viewer (and its FixedStepLoop, if any)."""
    imgui.set_next_window_pos(imgui.ImVec2(10, 10), imgui.Cond_.first_use_ever)
    imgui.set_next_window_size(imgui.ImVec2(300, 0), imgui.Cond_.first_use_ever)
    imgui.begin("View")
    fps = viewer.fps
    imgui.text(f"{fps:6.1f} fps   {1000.0 / fps if fps else 0.0:6.1f} ms/frame")
    _frame_plot(viewer.frame_times)
    if loop is not None:
        _loop_controls(loop)
    imgui.separator()
    opts = viewer.options
    for label, field in TOGGLES:
        _, value = imgui.checkbox(label, getattr(opts, field))
        setattr(opts, field, value)
    if imgui.button("Reset view (Home)"):
        viewer.camera.reset()
    imgui.same_line()
    if imgui.button("Focus (F)"):
        viewer.focus_selection()
    if viewer.world is not None and opts.selected:
        b = opts.selected[0]
        names = getattr(viewer.world, "body_names", None)
        name = names[b] if names is not None and b < len(names) else str(b)
        imgui.text(f"selected: {name}")
    imgui.end()
