"""Helpers for render and GUI tests: a tiny fake world, a GL context, an Xvfb server."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from types import SimpleNamespace

import numpy as np

PLANE, SPHERE, BOX, CAPSULE, CYLINDER, HULL = range(6)


class FakeWorld:
    """The World's array contract, filled from a list of (kind, size, pos, rot, color)."""

    def __init__(self, shapes, hull_vertex=None, hull_ranges=None, static=None):
        n = len(shapes)
        self.body_pos = np.array([s[2] for s in shapes], dtype=float).reshape(n, 3)
        self.body_rot = np.array([s[3] if s[3] is not None else np.identity(3) for s in shapes],
                                 dtype=float).reshape(n, 3, 3)
        self.body_vel = np.zeros((n, 3))
        self.body_omega = np.zeros((n, 3))
        self.body_static = np.zeros(n, bool) if static is None else np.asarray(static, bool)
        self.body_color = np.array([s[4] for s in shapes], dtype=float).reshape(n, 3)
        self.body_names = [f"b{i}" for i in range(n)]
        self.shape_body = np.arange(n, dtype=np.int64)
        self.shape_kind = np.array([s[0] for s in shapes], dtype=np.int64)
        self.shape_size = np.array([s[1] for s in shapes], dtype=float).reshape(n, 3)
        self.shape_local_pos = np.zeros((n, 3))
        self.shape_local_rot = np.tile(np.identity(3), (n, 1, 1))
        self.hull_vertex = (np.zeros((0, 3)) if hull_vertex is None
                            else np.asarray(hull_vertex, float))
        ranges = hull_ranges or [(0, 0)] * n
        self.shape_hull_start = np.array([r[0] for r in ranges], dtype=np.int64)
        self.shape_hull_count = np.array([r[1] for r in ranges], dtype=np.int64)
        self.contact_world = np.zeros((0, 3))
        self.contact_normal = np.zeros((0, 3))
        self.contact_impulse = np.zeros(0)
        self.anchors = np.zeros((0, 2, 3))
        self.time = 0.0
        self.settings = SimpleNamespace(h=0.01)

    def joint_anchor_world(self):
        return self.anchors


def gl_context():
    """Headless OpenGL 3.3+ context (EGL); raises (so tests fail) when GL is unavailable."""
    import moderngl

    ctx = moderngl.create_standalone_context(backend="egl")
    assert ctx.version_code >= 330, f"OpenGL 3.3 needed, got {ctx.version_code}"
    return ctx


def release_gl_context(ctx) -> None:
    """Release a headless context and unbind EGL from this thread: with libglvnd a thread
    whose EGL context stays current cannot make a GLX (pyglet window) context current."""
    import ctypes

    ctx.release()
    ctypes.CDLL("libEGL.so.1").eglReleaseThread()


def start_xvfb(size=(1280, 720)):
    """Start Xvfb on a free display; returns (process, display string)."""
    exe = shutil.which("Xvfb")
    assert exe, "Xvfb is not installed (run .ci/install-system-deps)"
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [exe, "-displayfd", str(write_fd), "-screen", "0", f"{size[0]}x{size[1]}x24",
         "-nolisten", "tcp"],
        pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        number = f.readline().strip()
    assert number, "Xvfb did not report a display number"
    return proc, f":{number}"


def xdotool(display: str, *args: str) -> None:
    """Run one xdotool command against the given display."""
    subprocess.run(["xdotool", *args], check=True, env={**os.environ, "DISPLAY": display},
                   timeout=10)


def wait_until(predicate, pump, timeout: float = 5.0) -> bool:
    """Call pump() until predicate() is true or timeout seconds pass."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        pump()
        if predicate():
            return True
    return False


def release_glx_context() -> None:
    """Unbind the GLX context pyglet leaves current after its window closes (with libglvnd a
    thread with a current GLX context cannot make an EGL context current)."""
    import ctypes

    gl = ctypes.CDLL("libGL.so.1")
    gl.glXGetCurrentDisplay.restype = ctypes.c_void_p
    display = gl.glXGetCurrentDisplay()
    if display:
        gl.glXMakeCurrent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_void_p]
        gl.glXMakeCurrent(display, 0, None)
