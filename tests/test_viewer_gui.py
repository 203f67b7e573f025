"""The real pyglet window under Xvfb, driven with xdotool (fails, not skips, without X/GL)."""
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gui_util import release_glx_context, wait_until, xdotool

REPO = Path(__file__).resolve().parent.parent
W, H = 800, 450
SCENE = "rolling_bodies.json"   # a sphere, a capsule and a cylinder on a slope


@pytest.fixture(scope="module")
def display(xvfb):
    return xvfb


def test_headless_screenshot_cli(display, tmp_path):
    """`impulse view SCENE --screenshot` with the panels shown (tests/test_app_cli.py takes
    every bundled scene without them)."""
    out = tmp_path / "shot.png"
    env = {**os.environ, "DISPLAY": display, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    res = subprocess.run([sys.executable, "-m", "impulse.app", "view", str(REPO / "scenes" / SCENE),
                          "--frames", "8", "--size", f"{W}x{H}", "--screenshot", str(out),
                          "--no-vsync"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    import imageio.v3 as iio

    img = iio.imread(out)
    assert img.shape[:2] == (H, W)
    colours = np.unique(img.reshape(-1, img.shape[2])[:, :3], axis=0)
    assert len(colours) > 200                       # a scene, not a clear colour
    assert f"screenshot: {out} (8 frames" in res.stdout


@pytest.fixture(scope="module")
def viewer(display):
    os.environ["DISPLAY"] = display
    from impulse.app.window import Viewer
    from impulse.engine import load_scene

    v = Viewer(load_scene(str(REPO / "scenes" / SCENE)), W, H, vsync=False)
    yield v
    v.close()
    release_glx_context()


def pump(v):
    v.window.dispatch_events()
    v.frame()


def to_screen(v, x, y):
    """pyglet window coordinates (y up) -> X screen coordinates (y down)."""
    wx, wy = v.window.get_location()
    return str(int(wx + x)), str(int(wy + v.window.height - 1 - y))


def test_click_selects_scroll_zooms_drag_orbits(viewer, tmp_path):
    v = viewer
    for _ in range(3):
        pump(v)
    sphere = v.world.body_names.index("sphere")
    x, y, _ = v.camera.project(v.world.body_pos[sphere], *v.size)
    xdotool(v_display(), "mousemove", *to_screen(v, x, y))
    pump(v)
    xdotool(v_display(), "click", "1")
    assert wait_until(lambda: v.options.selected == (sphere,), lambda: pump(v))

    xdotool(v_display(), "mousemove", *to_screen(v, W - 60, H - 30))   # sky
    pump(v)
    d0 = v.camera.distance
    xdotool(v_display(), "click", "4")                                # wheel up = zoom in
    assert wait_until(lambda: v.camera.distance < d0, lambda: pump(v))
    yaw0 = v.camera.yaw
    xdotool(v_display(), "mousedown", "1")
    pump(v)
    xdotool(v_display(), "mousemove_relative", "--", "-80", "0")
    pump(v)
    xdotool(v_display(), "mouseup", "1")
    assert wait_until(lambda: abs(v.camera.yaw - yaw0) > 0.2, lambda: pump(v))
    for _ in range(2):
        pump(v)
    assert v.options.selected == (sphere,)          # a drag on empty space is not a click

    img = v.screenshot(tmp_path / "selected.png")
    assert img.shape == (H, W, 3)
    orange = (img[..., 0] > 200) & (img[..., 1] > 110) & (img[..., 1] < 190) & (img[..., 2] < 80)
    assert orange.sum() > 30, "selection outline missing"
    assert (tmp_path / "selected.png").stat().st_size > 10_000


def test_imgui_gets_clicks_at_the_exact_bottom_row(viewer):
    """ImGui sees the click (handlers stacked, not replaced) with the mouse-y fix applied."""
    from imgui_bundle import imgui

    v = viewer
    state = {"clicks": 0, "rect": None}

    def ui():
        imgui.set_next_window_pos(imgui.ImVec2(20, 20))
        imgui.begin("test panel")
        if imgui.button("Press me"):
            state["clicks"] += 1
        state["rect"] = (imgui.get_item_rect_min(), imgui.get_item_rect_max())
        imgui.end()

    v.draw_ui = ui
    v.options.selected = (1,)
    pump(v)
    pump(v)
    lo, hi = state["rect"]
    x = (lo.x + hi.x) / 2
    bottom_row = math.ceil(hi.y) - 1                 # last pixel row inside the button
    wx, wy = v.window.get_location()
    xdotool(v_display(), "mousemove", str(int(wx + x)), str(int(wy + bottom_row)))
    pump(v)
    pump(v)
    xdotool(v_display(), "click", "1")
    selected = v.options.selected
    assert wait_until(lambda: state["clicks"] == 1, lambda: pump(v))
    for _ in range(3):
        pump(v)
    assert v.options.selected == selected           # the click went to ImGui, not the scene


def test_keys_reset_and_focus_and_bad_file_drop(viewer):
    v = viewer
    v.draw_ui = None
    home_eye = np.array(v.camera.home["eye"])
    v.camera.orbit(120, 40)
    xdotool(v_display(), "mousemove", *to_screen(v, W - 60, H - 30))
    pump(v)
    xdotool(v_display(), "key", "Home")
    assert wait_until(lambda: np.allclose(v.camera.eye, home_eye, atol=1e-6), lambda: pump(v))
    cylinder = v.world.body_names.index("cylinder")
    v.select(cylinder)
    xdotool(v_display(), "key", "f")
    assert wait_until(lambda: np.allclose(v.camera.target, v.world.body_pos[cylinder]),
                      lambda: pump(v))

    dropped = []

    def broken(paths):
        dropped.extend(paths)
        raise ValueError("not a scene")

    v.on_files = broken
    v.window.dispatch_event("on_file_drop", 10, 10, ["/nonexistent.json"])
    pump(v)                                          # the loop survives a failing handler
    assert dropped == ["/nonexistent.json"]


def v_display():
    return os.environ["DISPLAY"]


def test_closed_viewer_leaves_no_gl_object_to_delete_at_exit(display):
    """Viewer.close() deletes its window's GL objects, pyglet's own included, while the
    context is alive: none is left for interpreter exit to delete through whatever context
    is current then (here an EGL one, as after the EGL render tests)."""
    code = "\n".join(["import gc",
                      "from gui_util import gl_context, release_glx_context",
                      "from impulse.app.window import Viewer",
                      "v = Viewer(None, 320, 200, vsync=False)",
                      "v.window.dispatch_events()",
                      "v.frame()",
                      "v.close()",
                      "release_glx_context()",
                      "ctx = gl_context()",
                      "del v",
                      "gc.collect()"])
    env = {**os.environ, "DISPLAY": display,
           "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Exception ignored" not in res.stderr and "Traceback" not in res.stderr, res.stderr
