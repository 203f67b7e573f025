"""The first start in the window (issue 19): the launcher shows the compile's progress and
works meanwhile; scenes open at once and run as Python until the kernels are compiled, then
compiled (engine/interpreted.py); where the kernels cannot run as Python, a scene waits for
exactly the features it needs; thumbnails made before the kernels are made again, settled,
once they are ready."""
import json
import os
import subprocess
import sys
import time

import pytest

from impulse.app.kernel_compile import BackgroundCompile
from impulse.app.screenshot import save_png

from test_app_gui import app, display, pump  # noqa: F401
from test_first_start import fake_compiler

pytestmark = pytest.mark.gui
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOTS = os.environ.get("IMPULSE_TEST_SHOTS")      # a folder to keep the screenshots in


def pump_until(app, predicate, timeout=20.0):  # noqa: F811
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        pump(app, 1)
        if predicate():
            return True
        time.sleep(0.01)
    return False


def joints_only(tmp_path):
    doc = json.load(open(os.path.join(ROOT, "scenes", "pendulum.json")))
    doc["contacts"] = {"enabled": False}
    path = tmp_path / "pendulum_no_contacts.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_the_launcher_works_while_kernels_compile_and_scenes_wait_for_theirs(app, tmp_path):  # noqa: F811
    gate = tmp_path / "contacts-may-finish"
    app.compile = BackgroundCompile(fake_compiler(tmp_path, gate))
    assert pump_until(app, lambda: app.compile.has(("step", "interaction")))
    from impulse.app.app import COMPILING_FPS  # (pyglet wants the display first)
    assert app.viewer.frame_cap == COMPILING_FPS   # the window leaves the compile its CPU
    pump_until(app, lambda: app.launcher.thumbnails_done, timeout=60)
    from impulse.app.app import COMPILING_IDLE_FPS, COMPILING_IDLE_S
    # idle (no mouse or key event for COMPILING_IDLE_S, thumbnails done): fewer frames still
    app.viewer.controller.last_input -= COMPILING_IDLE_S
    pump(app, 2)
    assert app.viewer.frame_cap == COMPILING_IDLE_FPS
    app.viewer.window.dispatch_event("on_mouse_motion", 20, 20, 1, 1)    # the user is back
    pump(app, 2)
    assert app.viewer.frame_cap == COMPILING_FPS
    shot = app.viewer.screenshot(with_ui=True)
    save_png(shot, tmp_path / "launcher_compiling.png")
    if SHOTS:
        save_png(shot, os.path.join(SHOTS, "launcher_compiling.png"))
    assert app.launcher.still                  # thumbnails without simulating, for now
    assert shot[60:140, :, :].std() > 5        # the progress rows are drawn, not blank

    app.open_path(os.path.join(ROOT, "scenes", "box_stack.json"))    # needs detection
    pump(app, 5)
    assert app.session is None and app.pending_open.endswith("box_stack.json")
    assert "opens when its physics kernels are compiled" in app.status

    app.open_path(joints_only(tmp_path))       # contacts off: step + interaction suffice
    assert pump_until(app, lambda: app.session is not None)
    assert app.session.world.body_names and app.pending_open is None

    app.show_launcher()                        # back to the launcher, still compiling
    app.new_scene()
    pump(app, 3)
    assert app.session is None and app.pending_open is not None
    gate.write_text("")
    assert pump_until(app, lambda: app.session is not None)    # the new scene opened
    assert pump_until(app, lambda: app.compile is None)         # the child has ended
    assert not app.launcher.still
    assert app.viewer.frame_cap is None


@pytest.mark.parametrize("cap", [8, 15])
def test_a_frame_cap_paces_the_event_loop(app, cap):  # noqa: F811
    """Where vsync does nothing (Xvfb, software GL) only the cap keeps the loop from
    drawing without pause; the viewer's own loop then draws at most `cap` frames a second."""
    app.viewer.set_frame_cap(cap)
    try:
        frames = app.viewer.frame_count
        t = time.monotonic()
        app.viewer.run(frames=app.viewer.frame_count + 6)
        took = time.monotonic() - t
    finally:
        app.viewer.set_frame_cap(None)
    assert app.viewer.frame_count - frames >= 6
    assert took >= 5 / cap, f"{took:.3f} s for 6 frames at {cap} a second"


def test_the_window_opens_within_seconds_on_a_cold_cache(display, tmp_path):  # noqa: F811
    """A real first start: an empty kernel cache, `impulse --frames`: the launcher's frames
    come while the compile child works; closing the window ends the child."""
    env = {**os.environ, "IMPULSE_KERNEL_CACHE": str(tmp_path / "kernels"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "c")}
    shot = tmp_path / "first.png"
    t = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "impulse.app", "view", "--frames", "5",
                          "--screenshot", str(shot)], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    took = time.monotonic() - t
    assert out.returncode == 0, out.stderr
    assert shot.is_file() and "screenshot:" in out.stdout
    assert took < 30, f"{took:.1f} s to the launcher's frames on a cold cache"
    assert "compiling the physics kernels" in out.stderr
    left = subprocess.run(["pgrep", "-f", f"{tmp_path}"], capture_output=True, text=True)
    assert not left.stdout.strip()             # no compile child left behind


def test_the_gallery_is_drawn_before_its_first_thumbnail(display):  # noqa: F811
    """A thumbnail takes up to a second or two under software GL (a scene loaded, settled and
    rendered offscreen): the launcher's first frame makes none, so the window is not black
    while it waits (3.0 s to the first drawn frame before, 1.7-1.9 s after, with an empty
    thumbnail cache); from the next frame on, one thumbnail a frame."""
    from impulse.app.app import App
    from impulse.app.window import Viewer

    v = Viewer(None, 640, 400, vsync=False)
    a = App(v, media_dir=str(display[1]))
    try:
        pump(a)
        assert a.session is None and a.viewer.frame_count == 1
        assert not a.launcher.textures
        pump(a, 2)
        assert len(a.launcher.textures) == 2
    finally:
        a.close()
        v.close()


def test_a_scene_whose_load_runs_a_kernel_waits_for_the_compile(display, tmp_path):  # noqa: F811
    """While the kernels compile, the launcher makes thumbnails of the scenes whose load
    needs no kernel and keeps the others (joints: their angles are read by a kernel) back
    until the compile has the step feature; compiled in the window's thread, that kernel
    froze the window for 5-10 s (Ctrl+Q took 5.5 s at +6 s of a first start)."""
    from impulse.app.app import App
    from impulse.app.kernel_compile import load_features_for_path
    from impulse.app.window import Viewer

    scenes = os.path.join(ROOT, "scenes")
    assert load_features_for_path(os.path.join(scenes, "chain8.json")) == ("step",)
    assert load_features_for_path(os.path.join(scenes, "box_stack.json")) == ()
    compiling = BackgroundCompile(start=False)      # a first start: nothing ready
    v = Viewer(None, 640, 400, vsync=False)
    a = App(v, media_dir=str(display[1]), compile=compiling)
    try:
        launcher = a.launcher
        n = len(launcher.entries)
        plain = [e.path for e in launcher.entries if not launcher.load_needs[e.path]]
        for _ in range(n + 2):
            launcher.update()
        assert sorted(launcher.textures) == sorted(plain) and 0 < len(plain) < n
        compiling.ready.add("step")
        for _ in range(n + 2):
            launcher.update()
        assert launcher.thumbnails_done
    finally:
        a.close()
        v.close()


def test_frames_asked_for_a_scene_count_from_when_it_opens(app):  # noqa: F811
    """`impulse view SCENE --frames N --screenshot` on a first start: the frames the scene
    waits for its kernels (App.pending_open) do not count, so the screenshot shows the scene
    N frames in, not the launcher (it did, and said t = 0 s)."""
    assert app.viewer.hold_frames is not None and not app.viewer.hold_frames()
    app.pending_open = "waiting.json"
    assert app.viewer.hold_frames()
    app.pending_open = None
    held = []

    def hold():                                # the scene waits for its first 4 frames
        held.append(1)
        return len(held) <= 4

    saved = app.viewer.hold_frames
    app.viewer.hold_frames = hold
    app.viewer.set_frame_cap(200)
    try:
        start = app.viewer.frame_count
        app.viewer.run(frames=start + 3)
    finally:
        app.viewer.hold_frames = saved
        app.viewer.set_frame_cap(None)
    assert app.viewer.frame_count - start == 4 + 3


def test_a_first_start_runs_its_scene_at_once_as_python(display, tmp_path):  # noqa: F811
    """`impulse view pendulum --time 1` from an empty kernel cache: the pendulum has swung
    for a second of simulated time within seconds (7.2 s on this 2-core machine,
    2026-12-01; #19's goal: its first frame within 15 s), its kernels compiling meanwhile."""
    env = {**os.environ, "IMPULSE_KERNEL_CACHE": str(tmp_path / "kernels"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "c")}
    shot = tmp_path / "pendulum.png"
    t = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "impulse.app", "view", "pendulum", "--time", "1",
                          "--screenshot", str(shot)], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    took = time.monotonic() - t
    assert out.returncode == 0, out.stderr
    assert "t = 1.000 s" in out.stdout             # the scene's frames, not the launcher's
    assert "runs as Python" in out.stderr and "compiling the physics kernels" in out.stderr
    assert took < 30, f"{took:.1f} s to a second of the pendulum on a cold cache"
    import imageio.v3 as iio
    img = iio.imread(shot)
    if SHOTS:
        save_png(img, os.path.join(SHOTS, "first_start_pendulum.png"))
    assert img.std() > 5


def test_the_compiled_kernels_take_over_when_the_compile_ends(app, tmp_path):  # noqa: F811
    from impulse.engine import interpreted

    interpreted.interpret()
    try:
        gate = tmp_path / "contacts-may-finish"
        app.compile = BackgroundCompile(fake_compiler(tmp_path, gate))
        app.open_path(os.path.join(ROOT, "scenes", "box_stack.json"))   # needs detection
        assert app.session is not None and app.pending_open is None     # opened at once
        assert pump_until(app, lambda: app.compile.has(("step", "interaction")))
        pump(app, 5)
        assert interpreted.active() and app.session.world.time > 0     # stepping, as Python
        assert any("physics as Python" in line for line in app.overlay_lines)
        gate.write_text("")
        assert pump_until(app, lambda: app.compile is None)
        assert pump_until(app, lambda: not interpreted.active())       # between two steps
        t = app.session.world.time
        assert pump_until(app, lambda: app.session.world.time > t)      # and on, compiled
        world = app.session.world        # compiled: the step kernel's entry point, or the
        assert world._step_kernel._known or world.collision._one_call._known   # one call's
        assert "full speed" in app.status
        assert not any("physics as Python" in line for line in app.overlay_lines)
    finally:
        interpreted.use_compiled()
