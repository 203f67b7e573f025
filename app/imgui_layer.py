"""ImGui (+ implot) over a pyglet window via imgui-bundle's pyglet backend, with fixes:
delta time from perf_counter (the backend feeds pyglet.clock.tick() as a timestamp), mouse y
= height - 1 - y, and the cursor position sent before every button event.
"""
from __future__ import annotations

import time

from imgui_bundle import imgui, implot
from imgui_bundle.python_backends.pyglet_backend import PygletProgrammablePipelineRenderer


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
    """Owns the ImGui/implot contexts and the backend; `frame(draw_ui)` builds and draws one frame."""

    def __init__(self, window):
        self.context = imgui.create_context()
        self.plot_context = implot.create_context()
        imgui.get_io().set_ini_filename("")
        imgui.style_colors_dark()
        self.impl = FixedPygletRenderer(window)

    @property
    def want_mouse(self) -> bool:
        return bool(imgui.get_io().want_capture_mouse)

    @property
    def want_keyboard(self) -> bool:
        return bool(imgui.get_io().want_capture_keyboard)

    def frame(self, draw_ui) -> None:
        """New ImGui frame, call draw_ui(), render into the bound framebuffer."""
        self.impl.process_inputs()
        imgui.new_frame()
        if draw_ui is not None:
            draw_ui()
        imgui.render()
        self.impl.render(imgui.get_draw_data())

    def redraw(self) -> None:
        """Draw the last frame's UI again (into whatever framebuffer is bound)."""
        self.impl.render(imgui.get_draw_data())

    def shutdown(self) -> None:
        self.impl.shutdown()
        implot.destroy_context(self.plot_context)
        imgui.destroy_context(self.context)
