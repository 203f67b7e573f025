"""An OpenXR session (pyopenxr) that renders both eyes with moderngl.

Typical use::

    with VRSession() as vr:                  # headless EGL context unless one is given
        while vr.run_frame(render_eye):      # render_eye(eye, fbo, view, proj)
            step_physics(budget=vr.display_period)

Per frame ``run_frame`` polls events (driving IDLE -> READY -> SYNCHRONIZED -> VISIBLE ->
FOCUSED), waits for the runtime's frame timing, syncs the controllers, locates the eyes,
calls ``render_eye`` once per eye with a moderngl framebuffer (colour = the runtime's
swapchain image, plus a depth buffer) and the eye's view and projection matrices, and
submits one projection layer with both eyes.

World space: the reference space is STAGE (floor at y = 0, metres) when the runtime has it,
else LOCAL lowered by ``DEFAULT_EYE_HEIGHT``. ``world_from_stage`` moves the whole play
area in the world (locomotion); ``sim_head_offset`` moves only the head within the stage,
which is how tests simulate head motion. Matrices follow ``xrmath``'s conventions.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass

import moderngl
import numpy as np
import xr

from . import runtime
from .controls import Controls
from .glbinding import current_context_binding
from .xrmath import pose_to_matrix, projection_from_fov, rigid_inverse

DEFAULT_EYE_HEIGHT = 1.6
# Preferred swapchain colour formats: sRGB first (shader output shows as on the desktop).
GL_SRGB8_ALPHA8, GL_RGBA8 = 0x8C43, 0x8058


@dataclass
class EyeView:
    """One eye this frame: world-space pose, view and projection (4, 4), image size.

    ``stage_pose`` is the eye pose as the runtime located it in the reference space.
    """

    stage_pose: np.ndarray
    pose: np.ndarray
    view: np.ndarray
    proj: np.ndarray
    size: tuple[int, int]


class VRSession:
    """Instance, system, OpenGL session, swapchains, controls and the frame loop."""

    def __init__(self, ctx: moderngl.Context | None = None, *, reference: str = "stage",
                 near: float = 0.05, far: float = 100.0, resolution_scale: float = 1.0,
                 app_name: str = "impulse") -> None:
        """Open a session on ``ctx`` (current on this thread) or a new headless EGL context.

        ``resolution_scale`` scales the runtime's recommended per-eye image size.

        Raises runtime.RuntimeNotFound (one-line message) when no runtime can be used.
        """
        runtime.require_runtime()
        runtime.quiet_simulated_runtime()    # Monado's simulated headset: logs to errors
        self.near, self.far = near, far
        self._own_ctx = ctx is None
        self.ctx = ctx or moderngl.create_standalone_context(backend="egl")
        self.binding = current_context_binding()
        self.instance = self.session = self.space = self.controls = None
        self.swapchains: list = []
        self.framebuffers: list[list[moderngl.Framebuffer]] = []
        self._depth: list = []
        self.state = xr.SessionState.UNKNOWN
        self.running = False
        self.exit_requested = False
        self.display_period = 1.0 / 60.0
        self.display_time = 0
        self.frames_submitted = 0
        self.missed_frames = 0  # display slots skipped between consecutive frames
        self.frame_work_s = 0.0  # last frame: begin_frame .. end_frame (render + submit)
        self.last_layer_views = 0
        self.eyes: list[EyeView] = []
        self.world_from_stage = np.eye(4)
        self.sim_head_offset = np.eye(4)
        try:
            self._create_instance(app_name)
            self._create_session()
            self._create_space(reference)
            self.controls = Controls(self.instance, self.session)
            self._create_swapchains(resolution_scale)
        except BaseException:
            self.close()
            raise

    # --- setup -------------------------------------------------------------------------

    def _create_instance(self, app_name: str) -> None:
        try:
            available = {e.extension_name.decode() for e in
                         xr.enumerate_instance_extension_properties()}
        except xr.XrException as exc:
            raise runtime.RuntimeNotFound(
                f"the OpenXR runtime could not be loaded ({type(exc).__name__}); "
                + runtime.INSTALL_HINT) from None
        missing = [e for e in self.binding.extensions if e not in available]
        if missing:
            raise runtime.RuntimeNotFound(
                f"the OpenXR runtime lacks {', '.join(missing)} for this "
                f"{self.binding.kind.upper()} context; " + runtime.INSTALL_HINT)
        self.instance = xr.create_instance(xr.InstanceCreateInfo(
            application_info=xr.ApplicationInfo(
                application_name=app_name, engine_name="impulse",
                api_version=xr.Version(1, 0, 0)),
            enabled_extension_names=self.binding.extensions))
        try:
            self.system = xr.get_system(self.instance, xr.SystemGetInfo(
                form_factor=xr.FormFactor.HEAD_MOUNTED_DISPLAY))
        except xr.FormFactorUnavailableError:
            raise runtime.RuntimeNotFound(
                "the OpenXR runtime found no headset (is it connected and switched on?)") from None
        props = xr.get_instance_properties(self.instance)
        self.runtime_name = f"{props.runtime_name.decode()} {props.runtime_version}"
        self.system_name = xr.get_system_properties(self.instance, self.system).system_name.decode()

    def _create_session(self) -> None:
        # The runtime requires this query before a session is created.
        from xr.platform.linux import get_opengl_graphics_requirements_khr
        get_opengl_graphics_requirements_khr(self.instance, self.system)
        self.session = xr.create_session(self.instance, xr.SessionCreateInfo(
            system_id=self.system, next=self.binding.next_pointer))

    def _create_space(self, reference: str) -> None:
        kinds = set(xr.enumerate_reference_spaces(self.session))
        pose = xr.Posef()
        if reference == "stage" and xr.ReferenceSpaceType.STAGE.value in kinds:
            kind = xr.ReferenceSpaceType.STAGE
        else:
            kind = xr.ReferenceSpaceType.LOCAL
            pose.position = xr.Vector3f(0.0, -DEFAULT_EYE_HEIGHT, 0.0)
        self.reference = kind
        self.space = xr.create_reference_space(self.session, xr.ReferenceSpaceCreateInfo(
            reference_space_type=kind, pose_in_reference_space=pose))

    def _create_swapchains(self, scale: float) -> None:
        views = xr.enumerate_view_configuration_views(
            self.instance, self.system, xr.ViewConfigurationType.PRIMARY_STEREO)
        formats = list(xr.enumerate_swapchain_formats(self.session))
        fmt = next((f for f in (GL_SRGB8_ALPHA8, GL_RGBA8) if f in formats), formats[0])
        self.color_format = fmt
        self.eye_sizes = []
        for view in views:
            w = int(view.recommended_image_rect_width * scale)
            h = int(view.recommended_image_rect_height * scale)
            w = max(16, min(w, view.max_image_rect_width))
            h = max(16, min(h, view.max_image_rect_height))
            chain = xr.create_swapchain(self.session, xr.SwapchainCreateInfo(
                usage_flags=(xr.SwapchainUsageFlags.COLOR_ATTACHMENT_BIT
                             | xr.SwapchainUsageFlags.SAMPLED_BIT),
                format=fmt, sample_count=1, width=w, height=h,
                face_count=1, array_size=1, mip_count=1))
            self.swapchains.append(chain)
            self.eye_sizes.append((w, h))
            depth = self.ctx.depth_renderbuffer((w, h))
            self._depth.append(depth)
            images = xr.enumerate_swapchain_images(chain, xr.SwapchainImageOpenGLKHR)
            self.framebuffers.append([
                self.ctx.framebuffer(
                    color_attachments=[self.ctx.external_texture(img.image, (w, h), 4, 0, "f1")],
                    depth_attachment=depth)
                for img in images])

    # --- events and state --------------------------------------------------------------

    def poll_events(self) -> None:
        """Handle all pending runtime events (session state changes, loss, exit)."""
        while True:
            try:
                buffer = xr.poll_event(self.instance)
            except xr.EventUnavailable:
                return
            kind = xr.StructureType(buffer.type)
            if kind == xr.StructureType.EVENT_DATA_SESSION_STATE_CHANGED:
                event = ctypes.cast(ctypes.byref(buffer), ctypes.POINTER(
                    xr.EventDataSessionStateChanged)).contents
                self._on_state(xr.SessionState(event.state))
            elif kind == xr.StructureType.EVENT_DATA_INSTANCE_LOSS_PENDING:
                self.exit_requested = True

    def _on_state(self, state: xr.SessionState) -> None:
        self.state = state
        if state == xr.SessionState.READY:
            xr.begin_session(self.session, xr.SessionBeginInfo(
                primary_view_configuration_type=xr.ViewConfigurationType.PRIMARY_STEREO))
            self.running = True
        elif state == xr.SessionState.STOPPING:
            xr.end_session(self.session)
            self.running = False
        elif state in (xr.SessionState.EXITING, xr.SessionState.LOSS_PENDING):
            self.exit_requested = True

    @property
    def focused(self) -> bool:
        return self.state == xr.SessionState.FOCUSED

    def wait_for_state(self, state: xr.SessionState, timeout_s: float = 10.0,
                       render_eye=None) -> bool:
        """Run frames until the session reaches ``state``; False on timeout or exit."""
        deadline = time.monotonic() + timeout_s
        while self.state != state and time.monotonic() < deadline:
            if not self.run_frame(render_eye):
                return False
            if not self.running:
                time.sleep(0.005)
        return self.state == state

    # --- frames ------------------------------------------------------------------------

    def run_frame(self, render_eye=None, on_frame=None) -> bool:
        """Poll events and, while the session runs, render and submit one frame.

        ``on_frame(session)`` runs after the frame wait and the controller sync, before
        rendering: the place for input handling and physics within the frame.
        ``render_eye(eye_index, framebuffer, view, proj)`` draws one eye; the framebuffer
        is already bound with its viewport set. Returns False once the session has ended
        (exit requested by the runtime or by ``request_exit``).
        """
        self.poll_events()
        if self.exit_requested and not self.running:
            return False
        if not self.running:
            return True
        frame_state = xr.wait_frame(self.session, xr.FrameWaitInfo())
        started = time.perf_counter()
        xr.begin_frame(self.session, xr.FrameBeginInfo())
        self._count_missed(frame_state)
        self.display_time = frame_state.predicted_display_time
        if frame_state.predicted_display_period > 0:
            self.display_period = frame_state.predicted_display_period * 1e-9
        self.controls.update(self.space, self.display_time, self.world_from_stage, self.focused)
        layers = []
        try:
            if on_frame is not None:
                on_frame(self)
            if frame_state.should_render and render_eye is not None:
                layer = self._render_views(render_eye)
                if layer is not None:
                    layers.append(ctypes.byref(layer))
        finally:  # end the frame even when rendering raised, so the session stays usable
            xr.end_frame(self.session, xr.FrameEndInfo(
                display_time=self.display_time,
                environment_blend_mode=xr.EnvironmentBlendMode.OPAQUE, layers=layers))
        self.frame_work_s = time.perf_counter() - started
        if layers:
            self.frames_submitted += 1
        return True

    def _count_missed(self, frame_state) -> None:
        """Add the display slots between the last frame's and this frame's display time."""
        period = frame_state.predicted_display_period
        if self.display_time and period > 0:
            gap = frame_state.predicted_display_time - self.display_time
            self.missed_frames += max(int(round(gap / period)) - 1, 0)

    def _render_views(self, render_eye):
        """Locate both eyes, render them, and build the projection layer (or None)."""
        view_state, views = xr.locate_views(self.session, xr.ViewLocateInfo(
            view_configuration_type=xr.ViewConfigurationType.PRIMARY_STEREO,
            display_time=self.display_time, space=self.space))
        flags = view_state.view_state_flags
        if not (flags & xr.ViewStateFlags.ORIENTATION_VALID_BIT
                and flags & xr.ViewStateFlags.POSITION_VALID_BIT):
            return None
        world_from_head = self.world_from_stage @ self.sim_head_offset
        self.eyes = []
        projection_views = []
        for i, view in enumerate(views):
            stage_pose = pose_to_matrix(view.pose)
            pose = world_from_head @ stage_pose
            eye = EyeView(stage_pose, pose, rigid_inverse(pose),
                          projection_from_fov(view.fov, self.near, self.far), self.eye_sizes[i])
            self.eyes.append(eye)
            chain = self.swapchains[i]
            index = xr.acquire_swapchain_image(chain, xr.SwapchainImageAcquireInfo())
            xr.wait_swapchain_image(chain, xr.SwapchainImageWaitInfo(timeout=xr.INFINITE_DURATION))
            fbo = self.framebuffers[i][index]
            fbo.use()
            try:
                render_eye(i, fbo, eye.view, eye.proj)
            finally:
                xr.release_swapchain_image(chain, xr.SwapchainImageReleaseInfo())
            projection_views.append(xr.CompositionLayerProjectionView(
                pose=view.pose, fov=view.fov, sub_image=xr.SwapchainSubImage(
                    swapchain=chain, image_rect=xr.Rect2Di(extent=xr.Extent2Di(*eye.size)))))
        self.last_layer_views = len(projection_views)
        return xr.CompositionLayerProjection(space=self.space, views=projection_views)

    # --- input shortcuts -----------------------------------------------------------------

    @property
    def hands(self):
        """Both HandState objects, updated every frame (index LEFT=0, RIGHT=1)."""
        return self.controls.hands

    def pulse(self, hand: int, amplitude: float = 0.8, duration_s: float = 0.05) -> None:
        """Haptic pulse on a hand (e.g. when it grabs a body)."""
        self.controls.pulse(hand, amplitude, duration_s)

    # --- shutdown ------------------------------------------------------------------------

    def request_exit(self) -> None:
        """Ask the runtime to end the session; run_frame returns False once it has."""
        self.exit_requested = True
        if self.running:
            xr.request_exit_session(self.session)

    def close(self, timeout_s: float = 5.0) -> None:
        """End the session if it runs, then destroy every handle. Safe to call twice."""
        if self.session is not None and self.running:
            self.request_exit()
            deadline = time.monotonic() + timeout_s
            while self.running and time.monotonic() < deadline:
                self.run_frame()
        for fbos in self.framebuffers:
            for fbo in fbos:
                fbo.release()
        for depth in self._depth:
            depth.release()
        self.framebuffers, self._depth = [], []
        for chain in self.swapchains:
            xr.destroy_swapchain(chain)
        self.swapchains = []
        if self.controls is not None:
            self.controls.destroy()
            self.controls = None
        if self.space is not None:
            xr.destroy_space(self.space)
            self.space = None
        if self.session is not None:
            xr.destroy_session(self.session)
            self.session = None
        if self.instance is not None:
            xr.destroy_instance(self.instance)
            self.instance = None
        if self._own_ctx and self.ctx is not None:
            self.ctx.release()
            self.ctx = None

    def __enter__(self) -> VRSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
