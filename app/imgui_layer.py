"""ImGui (+ implot) over a pyglet window via imgui-bundle's pyglet backend, with fixes:
delta time from perf_counter (the backend feeds pyglet.clock.tick() as a timestamp), mouse y
= height - 1 - y, and the cursor position sent before every button event.
"""
from __future__ import annotations

import time

from imgui_bundle import imgui, implot
from imgui_bundle.python_backends.pyglet_backend import PygletProgrammablePipelineRenderer

from impulse.app.userdirs import config_dir


class FixedPygletRenderer(PygletProgrammablePipelineRenderer):
    """The stock backend with correct delta time and mouse coordinates."""

    def process_inputs(self) -> None:
        now = time.perf_counter()
        last = self._gui_time
        self.io.delta_time = max(now - last, 1e-4) if last else 1.0 / 60.0
        self._gui_time = now

    def on_mouse_motion(self, x, y, dx, dy):
        self.io.add_mouse_pos_event(x, self.io.display_size.y - 1 - y)

    def on_mouse_press(self, x, y, button, modifiers):
        self.on_mouse_motion(x, y, 0, 0)
        super().on_mouse_press(x, y, button, modifiers)

    def on_mouse_release(self, x, y, button, modifiers):
        self.on_mouse_motion(x, y, 0, 0)
        super().on_mouse_release(x, y, button, modifiers)


class ImGuiLayer:
    """Owns the ImGui/implot contexts and the backend; `frame(draw_ui)` builds and draws one
    frame."""

    def __init__(self, window):
        self.context = imgui.create_context()
        self.plot_context = implot.create_context()
        io = imgui.get_io()
        io.config_flags |= imgui.ConfigFlags_.docking_enable   # drag a panel onto another
        self.ini_path = config_dir() / "layout.ini"            # the user's arrangement, kept
        self.ini_path.parent.mkdir(parents=True, exist_ok=True)
        io.set_ini_filename(str(self.ini_path))
        imgui.style_colors_dark()
        self.impl = FixedPygletRenderer(window)
        self.window = window
        self.rects: list[tuple[float, float, float, float]] = []   # drawn windows, last frame
        self.popup_open = False

    @property
    def want_mouse(self) -> bool:
        return bool(imgui.get_io().want_capture_mouse)

    def owns_press(self, x: float, y: float) -> bool:
        """Whether a mouse press at pyglet (x, y) is the UI's. ImGui's want_capture_mouse is
        last frame's answer (a click right after pressing a tool button, before a frame saw
        the mouse leave the panel, would be swallowed), so the press goes to the UI only
        where last frame drew a window there, or while a popup or modal is open."""
        if not self.want_mouse:
            return False
        if self.popup_open:
            return True
        iy = self.window.height - 1 - y
        return any(x0 <= x <= x1 and y0 <= iy <= y1 for x0, y0, x1, y1 in self.rects)

    @property
    def want_keyboard(self) -> bool:
        return bool(imgui.get_io().want_capture_keyboard)

    def frame(self, draw_ui) -> None:
        """New ImGui frame, call draw_ui(), render into the bound framebuffer."""
        self.impl.process_inputs()
        imgui.new_frame()
        if draw_ui is not None:
            draw_ui()
        self.popup_open = imgui.is_popup_open(
            "", imgui.PopupFlags_.any_popup_id | imgui.PopupFlags_.any_popup_level)
        self.rects = [(w.pos.x, w.pos.y, w.pos.x + w.size.x, w.pos.y + w.size.y)
                      for w in imgui.get_current_context().windows
                      if w.active and not w.hidden and not w.name.startswith("Debug##")]
        imgui.render()
        self.impl.render(imgui.get_draw_data())

    def redraw(self) -> None:
        """Draw the last frame's UI again (into whatever framebuffer is bound)."""
        self.impl.render(imgui.get_draw_data())

    def shutdown(self) -> None:
        self.impl.shutdown()
        implot.destroy_context(self.plot_context)
        imgui.destroy_context(self.context)

