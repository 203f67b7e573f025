"""The desktop viewer: a pyglet window, a moderngl context on it, the renderer, the camera,
an ImGui layer, and a render loop at the display rate with pluggable `update(dt)` and
`draw_ui()`.

Screenshots render into an offscreen framebuffer (reading the window's default framebuffer
leaves GL_INVALID_OPERATION behind on Mesa).
"""
from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable

import moderngl
import numpy as np
import pyglet

from impulse.app.camera import Camera
from impulse.app.camera_control import CameraController
from impulse.app.imgui_layer import ImGuiLayer
from impulse.app.render import ImageTarget, Renderer, RenderOptions
from impulse.app.screenshot import save_png

log = logging.getLogger(__name__)


class Viewer:
    """Window + renderer + camera + UI. Set `world`, `update`, `draw_ui`, `grab`, `loop`."""

    def __init__(self, world=None, width: int = 1280, height: int = 720, title: str = "impulse",
                 visible: bool = True, vsync: bool = True, samples: int | None = None,
                 shadow_size: int | None = None, show_ui: bool = True):
        config = pyglet.gl.Config(double_buffer=True, depth_size=24, major_version=3,
                                  minor_version=3)
        self.window = pyglet.window.Window(width, height, title, resizable=True, visible=visible,
                                           vsync=vsync, file_drops=True, config=config)
        self.ctx = moderngl.create_context()
        self.renderer = Renderer(self.ctx, samples=samples, shadow_size=shadow_size)
        self.camera = Camera()
        self.options = RenderOptions()
        self.world = None
        self.update: Callable[[float], None] | None = None
        self.draw_ui: Callable[[], None] | None = None
        self.on_files: Callable[[list[str]], None] | None = None
        self.on_select: Callable[[int], None] | None = None
        self.on_click = None        # callable(body, world point or None) for clicks
        self.on_quit: Callable[[], bool] | None = None   # False keeps the window open
        self.on_finish: Callable[[], None] | None = None  # before the last frame's screenshot
        # while this says True, frames do not count towards run(frames=...): a scene given
        # on the command line waits for its kernels (App.pending_open)
        self.hold_frames: Callable[[], bool] | None = None
        self.grab = None            # object with begin(body, point, ray), move(ray), end()
        self.loop = None            # FixedStepLoop, for the pause/step/speed keys
        self.scene_override = None  # callable(fb, size) -> True if it drew the 3D view (VR mirror)
        self.show_ui = show_ui
        self.ui = ImGuiLayer(self.window) if show_ui else None
        self.controller = CameraController(self)
        self.window.push_handlers(self.controller, on_file_drop=self._on_file_drop,
                                  on_close=self._on_close)
        self.frame_count = 0
        self.frame_times: deque[float] = deque(maxlen=240)
        self._running = False
        self._cap: float | None = None      # frames a second at most (set_frame_cap)
        self._last = None
        self._hover_xy = None
        self._prepared = False
        self._stop_after: int | None = None
        self._final_screenshot = None
        if world is not None:
            self.set_world(world)

    # ---------------------------------------------------------------- state
    @property
    def size(self) -> tuple[int, int]:
        """Framebuffer size in pixels."""
        return tuple(self.window.get_framebuffer_size())

    def set_world(self, world) -> None:
        """Show another world; takes its camera dict if it has one."""
        self.world = world
        self.options.selected, self.options.hovered = (), -1
        cam = getattr(world, "camera", None)
        if isinstance(cam, dict):
            self.camera.set_from_dict(cam)
        self._prepared = False

    @property
    def fps(self) -> float:
        """Frames per second over the recent frames."""
        if len(self.frame_times) < 2:
            return 0.0
        return len(self.frame_times) / max(sum(self.frame_times), 1e-9)

    def matrices(self) -> tuple[np.ndarray, np.ndarray]:
        w, h = self.size
        return self.camera.view_matrix(), self.camera.projection_matrix(w / max(h, 1))

    def ray(self, x: float, y: float):
        """World ray through window point (x, y) (pyglet coordinates, y up)."""
        sx, sy = self._to_pixels(x, y)
        return self.camera.ray(sx + 0.5, sy + 0.5, *self.size)

    def _to_pixels(self, x, y):
        scale = self.size[0] / max(self.window.width, 1)
        return x * scale, y * scale

    def pick(self, x: float, y: float):
        """(body, world point) under window point (x, y); (-1, None) if none."""
        if self.world is None or not self._prepared:
            return -1, None
        view, proj = self.matrices()
        sx, sy = self._to_pixels(x, y)
        return self.renderer.pick(view, proj, sx, sy, self.size)

    def click(self, x: float, y: float) -> None:
        """A click (no drag) on the 3D view: `on_click(body, point)` if set, else select."""
        body, point = self.pick(x, y)
        if self.on_click is not None:
            self.on_click(body, point)
        else:
            self.select(body)

    def select(self, body: int) -> None:
        self.options.selected = (body,) if body >= 0 else ()
        if self.on_select is not None:
            self.on_select(body)

    def focus_selection(self) -> None:
        """Frame the selected body (F), or the whole scene if nothing is selected."""
        if self.world is None:
            return
        if self.options.selected:
            b = self.options.selected[0]
            self.camera.focus(np.asarray(self.world.body_pos)[b])
        else:
            inst = self.renderer.instances
            self.camera.focus(inst.centre, inst.radius)

    # ---------------------------------------------------------------- frames
    def render_scene(self, fb, size) -> None:
        """The 3D view of the current world into fb (lower-left `size` pixels)."""
        if self.scene_override is not None and self.scene_override(fb, size):
            return
        view, proj = self.matrices()
        if self.world is None:
            fb.use()
            fb.clear(*self.options.background, 1.0)
            return
        self.renderer.render(fb, view, proj, self.world, self.options, size=size)
        self._prepared = True

    def frame(self) -> None:
        """One frame: input, update(wall dt), hover, 3D view, UI, swap."""
        now = time.perf_counter()
        wall_dt = (now - self._last) if self._last is not None else 1.0 / 60.0
        self._last = now
        if self.frame_count >= 3:          # the first frames compile shaders: not representative
            self.frame_times.append(wall_dt)
        self.window.switch_to()
        self.controller.update(wall_dt)
        if self.update is not None:
            self.update(wall_dt)
        self._update_hover()
        screen = self.ctx.screen
        self.render_scene(screen, self.size)
        if self.ui is not None and self.show_ui:
            screen.use()
            self.ui.frame(self.draw_ui)
            self._reset_gl_state()
        self.window.flip()
        self.frame_count += 1
        if self._stop_after is not None:
            if self.hold_frames is not None and self.hold_frames():
                self._stop_after += 1              # (a frame the count does not take)
            elif self.frame_count >= self._stop_after:
                self._finish()

    def _update_hover(self) -> None:
        """Pick under the cursor when it moved (or every 10th frame: bodies move too)."""
        hover = self.controller.hover_point()
        if hover is None:
            self.options.hovered, self._hover_xy = -1, None
        elif hover != self._hover_xy or self.frame_count % 10 == 0:
            self.options.hovered, self._hover_xy = self.pick(*hover)[0], hover

    def _reset_gl_state(self) -> None:
        """Undo what ImGui's PyOpenGL renderer leaves on (scissor, blend)."""
        from OpenGL import GL

        GL.glDisable(GL.GL_SCISSOR_TEST)
        self.ctx.disable(moderngl.BLEND)

    def screenshot(self, path=None, with_ui: bool = True) -> np.ndarray:
        """Render the current view (and the last UI frame) offscreen; optionally save PNG."""
        target = ImageTarget(self.ctx, self.size)
        try:
            self.render_scene(target.fbo, self.size)
            if with_ui and self.ui is not None and self.show_ui and self.ui_ready:
                target.fbo.use()
                self.ui.redraw()
                self._reset_gl_state()
            image = target.read_rgb()
        finally:
            target.release()
        if path is not None:
            save_png(image, path)
        return image

    @property
    def ui_ready(self) -> bool:
        return self.frame_count > 0

    # ---------------------------------------------------------------- loop
    def run(self, frames: int | None = None, screenshot=None,
            fps_limit: float | None = None) -> None:
        """Run the event loop; with frames, stop after that many (saving `screenshot`)."""
        self._stop_after = frames
        self._final_screenshot = screenshot
        if fps_limit:
            self._cap = fps_limit
        self._running = True
        self._schedule()
        try:
            pyglet.app.run(None)
        finally:
            self._running = False
            pyglet.clock.unschedule(self._tick)

    def set_frame_cap(self, fps: float | None) -> None:
        """At most `fps` frames a second from now on (None: as fast as the display takes
        them). Where vsync does nothing (a virtual display, software GL) the loop otherwise
        draws without pause and takes a whole core: the app caps it while kernels compile
        beside it."""
        if fps == self._cap:
            return
        self._cap = fps
        if self._running:
            pyglet.clock.unschedule(self._tick)
            self._schedule()

    @property
    def frame_cap(self) -> float | None:
        return self._cap

    def _schedule(self) -> None:
        if self._cap:
            pyglet.clock.schedule_interval(self._tick, 1.0 / self._cap)
        else:
            pyglet.clock.schedule(self._tick)

    def _tick(self, dt: float) -> None:
        if not self.window.has_exit:
            self.frame()

    def _finish(self) -> None:
        if self.on_finish is not None:
            self.on_finish()
        if self._final_screenshot is not None:
            self.screenshot(self._final_screenshot)
        pyglet.app.exit()

    def _on_file_drop(self, x, y, paths):
        """Files dropped on the window go to `on_files`; a bad drop never kills the loop."""
        try:
            if self.on_files is not None:
                self.on_files(list(paths))
        except Exception:  # noqa: BLE001 - a failing handler must not end the event loop
            log.exception("file drop handler failed for %s", paths)

    def _on_close(self):
        """A close request (window button, Quit, a dialog's Save or Discard, maybe in the
        middle of a frame): `on_quit` may keep the window open; else the loop ends after this
        frame and `close()` releases the GL objects while the context is still alive. Always
        handled: pyglet's default handler would destroy the context at once."""
        if self.on_quit is None or self.on_quit():
            self.window.has_exit = True
            pyglet.app.exit()
        return True

    def close(self) -> None:
        """Release the GL objects with this window's context current (none once the context
        is gone), then the window."""
        if self.window.context is not None:
            self.window.switch_to()
            if self.ui is not None:
                self.ui.shutdown()
            self.renderer.release()
            # pyglet's own objects of the window, else deleted when the window is collected
            # through whatever context is current then (GLException in ShaderProgram.__del__)
            self.window.ubo.buffer.delete()
            self.window._default_program.delete()
        self.ui = None
        self.window.close()
