"""VR panel (mirror window): headset and frame timing, the physics budget, missed frames,
the solver's residual error, the wrist menu (with the button pointed at) and Exit VR."""
from __future__ import annotations

from imgui_bundle import imgui

from impulse.app.ui import widgets as W
from impulse.app.ui.layout import place


def vr_lines(app) -> list[str]:
    """The panel's status text (also used by tests)."""
    mode = app.vr
    vr, last = mode.vr, app.stats.last
    lines = [f"{vr.system_name}: {vr.state.name.lower()}",
             f"display {1.0 / vr.display_period:.0f} Hz ({vr.display_period * 1e3:.1f} ms), "
             f"{vr.frames_submitted} frames, {vr.missed_frames} missed",
             f"render {mode.budget.render_s * 1e3:.1f} ms  physics {mode.physics_s * 1e3:.1f} ms"
             f"{' (thread)' if app.session.loop.threaded else ''}",
             f"physics budget {mode.budget.frame_s * 1e3:.1f} ms/frame, "
             f"{mode.budget.step_ms:.2f} ms/step",
             f"residual x {last.get('pos_err', 0.0):.1e} m  v {last.get('vel_err', 0.0):.1e} m/s"
             f"  budget hits {last.get('budget_hit', 0)}"]
    if mode.edit.hint:
        lines.append(mode.edit.hint)
    if mode.edit.last_message:
        lines.append(mode.edit.last_message)
    return lines


def draw_vr_panel(app) -> None:
    if app.vr is None:
        return
    from impulse.app.vr.wrist_menu import BUTTONS

    place("vr")
    opened, app.panels["vr"] = imgui.begin("VR", app.panels["vr"])
    if opened:
        for line in vr_lines(app):
            imgui.text(line)
        _, app.vr.mirror_follows_head = imgui.checkbox("mirror follows the head",
                                                       app.vr.mirror_follows_head)
        _, app.vr.show_hud = imgui.checkbox("controller rays and wrist menu", app.vr.show_hud)
        emulation = app.vr.emulation
        _, emulation.enabled = imgui.checkbox("mouse and keys drive the right controller",
                                              emulation.enabled)
        if imgui.is_item_hovered():
            imgui.set_tooltip("Over this window: move the mouse, wheel or O/U for depth, "
                              "J/L/I/K to move, hold G to squeeze, hold T for the trigger")
        imgui.set_next_item_width(120)
        _, app.vr.grab.force_factor = imgui.slider_float(
            "grab cap x weight", app.vr.grab.force_factor, 0.5, 50.0, "%.1f",
            imgui.SliderFlags_.logarithmic)
        imgui.separator()
        imgui.text("Wrist menu (right ray + trigger):")
        for key, label, color in BUTTONS:
            imgui.color_button(f"##{key}", imgui.ImVec4(*color, 1.0), 0, imgui.ImVec2(14, 14))
            imgui.same_line()
            pointed = " <" if key == app.vr.hovered_button else ""
            if W.button(f"{label}{pointed}###vr.{key}", f"vr.{key}"):
                app.vr.press(key)
        imgui.separator()
        if W.button("Exit VR", "vr.exit_panel"):
            app.exit_vr()
    imgui.end()
