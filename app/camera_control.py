"""Mouse and keyboard -> camera, selection, hover and grab, for a pyglet window.

Left drag on empty space (or with Alt) orbits; left drag on a body grabs it when a grab
handler is set and accepts it (`begin` returning False, e.g. for a fixed body, orbits
instead; the wheel then moves the grab target in depth; release passes the modifiers);
middle drag or Shift+left drag pans; right drag looks around (fly) and WASD/QE then move;
scroll zooms; click selects; F focuses; Home resets the view.
Handlers return None so ImGui's backend still sees every event; they act only when ImGui
does not want the mouse / keyboard.
"""
from __future__ import annotations

import time

from pyglet.window import key, mouse

CLICK_SLOP_PX = 3


class CameraController:
    """Event handlers for `window.push_handlers(controller)`; state lives in the viewer."""

    def __init__(self, viewer):
        self.viewer = viewer
        self.mode = None              # "orbit", "pan", "look", "grab" while a button is held
        self.press_xy = None
        self.moved = 0.0
        self.mouse_xy = None
        self.keys = key.KeyStateHandler()
        self.fly_speed = 2.0          # metres per second, scaled by the camera distance
        self.last_input = time.monotonic()   # the last mouse or key event (App: frame cap)

    # ---------------------------------------------------------------- helpers
    @property
    def camera(self):
        return self.viewer.camera

    def _ui_wants_mouse(self) -> bool:
        return self.viewer.ui is not None and self.viewer.ui.want_mouse

    def _ui_wants_keys(self) -> bool:
        return self.viewer.ui is not None and self.viewer.ui.want_keyboard

    # ---------------------------------------------------------------- pyglet events
    def on_mouse_motion(self, x, y, dx, dy):
        self.last_input = time.monotonic()
        self.mouse_xy = (x, y)

    def on_mouse_press(self, x, y, button, modifiers):
        self.last_input = time.monotonic()
        self.mouse_xy = (x, y)
        if self.viewer.ui is not None and self.viewer.ui.owns_press(x, y):
            return
        self.press_xy, self.moved = (x, y), 0.0
        if button == mouse.MIDDLE or (button == mouse.LEFT and modifiers & key.MOD_SHIFT):
            self.mode = "pan"
        elif button == mouse.RIGHT:
            self.mode = "look"
        elif button == mouse.LEFT:
            self.mode = "orbit"
            if not modifiers & key.MOD_ALT and self.viewer.grab is not None:
                body, point = self.viewer.pick(x, y)
                if body >= 0 and self.viewer.grab.begin(body, point, self.viewer.ray(x, y)) \
                        is not False:
                    self.mode = "grab"

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        self.last_input = time.monotonic()
        self.mouse_xy = (x, y)
        self.moved += abs(dx) + abs(dy)
        if self.mode == "orbit":
            self.camera.orbit(dx, dy)
        elif self.mode == "pan":
            self.camera.pan(dx, dy, self.viewer.size[1])
        elif self.mode == "look":
            self.camera.look(dx, dy)
        elif self.mode == "grab":
            self.viewer.grab.move(self.viewer.ray(x, y))

    def on_mouse_release(self, x, y, button, modifiers):
        self.last_input = time.monotonic()
        mode = self.mode
        clicked = self.press_xy is not None and self.moved <= CLICK_SLOP_PX
        self.mode, self.press_xy = None, None
        if mode == "grab":
            self.viewer.grab.end(modifiers)
        if clicked and mode in ("orbit", "grab"):
            self.viewer.click(x, y)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.last_input = time.monotonic()
        if self.mode == "grab" and hasattr(self.viewer.grab, "scroll"):
            self.viewer.grab.scroll(scroll_y)       # wheel while dragging: target depth
        elif not self._ui_wants_mouse():
            self.camera.zoom(scroll_y)

    def on_key_press(self, symbol, modifiers):
        self.last_input = time.monotonic()
        self.keys.on_key_press(symbol, modifiers)
        if self._ui_wants_keys():
            return
        v = self.viewer
        if symbol == key.F:
            v.focus_selection()
        elif symbol == key.HOME:
            self.camera.reset()
        elif v.loop is not None and symbol == key.SPACE:
            v.loop.toggle_pause()
        elif v.loop is not None and symbol == key.PERIOD:
            v.loop.request_step()
        elif v.loop is not None and symbol == key.BRACKETRIGHT:
            v.loop.speed *= 2.0
        elif v.loop is not None and symbol == key.BRACKETLEFT:
            v.loop.speed /= 2.0

    def on_key_release(self, symbol, modifiers):
        self.last_input = time.monotonic()
        self.keys.on_key_release(symbol, modifiers)

    # ---------------------------------------------------------------- per frame
    def update(self, dt: float) -> None:
        """Fly movement while looking around (right button held)."""
        if self.mode != "look" or self._ui_wants_keys():
            return
        k = self.keys
        step = self.fly_speed * max(self.camera.distance * 0.25, 0.5) * dt
        forward = (k[key.W] - k[key.S]) * step
        right = (k[key.D] - k[key.A]) * step
        up = (k[key.E] - k[key.Q]) * step
        if forward or right or up:
            self.camera.fly(forward, right, up)

    def hover_point(self):
        """Mouse position for hover picking, or None while dragging / over the UI."""
        if self.mode is not None or self.mouse_xy is None or self._ui_wants_mouse():
            return None
        return self.mouse_xy

