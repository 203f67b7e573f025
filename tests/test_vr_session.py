"""VR session tests against the real Monado runtime (simulated headset, null compositor).

The runtime comes from ``bash .ci/install-monado`` (or XR_RUNTIME_JSON). These tests never
skip: without a runtime or pyopenxr they fail and say how to get them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from impulse.app.vr import runtime

REPO = Path(__file__).resolve().parents[1]
FRAMES = 10

os.environ.setdefault("XR_RUNTIME_JSON", str(runtime.MONADO_JSON))
runtime.use_simulated_headset()
os.environ.setdefault("SIMULATED_LEFT", "simple")  # static simulated controllers
os.environ.setdefault("SIMULATED_RIGHT", "simple")


def _require_vr():
    """Fail (not skip) with instructions when the runtime or pyopenxr is missing."""
    if runtime.find_runtime() is None:
        pytest.fail(runtime.missing_runtime_message(), pytrace=False)
    try:
        import xr  # noqa: F401
    except ImportError:
        pytest.fail("pyopenxr is not installed: pip install pyopenxr (or .[vr])", pytrace=False)


@pytest.fixture(scope="module")
def vr():
    """One focused session with the demo scene, shared by the tests of this module."""
    _require_vr()
    import xr

    from impulse.app.vr.demo_scene import DemoScene
    from impulse.app.vr.session import VRSession

    session = VRSession()
    session.scene = DemoScene(session.ctx)
    assert session.wait_for_state(xr.SessionState.FOCUSED, 15.0, _Recorder(session)), \
        f"session stuck in {session.state.name}"
    yield session
    session.scene.release()
    session.close()


class _Recorder:
    """render_eye callback: draws the demo scene, keeps each eye's image (top row first)."""

    def __init__(self, session):
        self.session, self.images, self.calls = session, {}, []

    def __call__(self, eye, fbo, view, proj):
        self.session.scene.render(fbo, view, proj)
        data = np.frombuffer(fbo.read(components=3), np.uint8)
        self.images[eye] = data.reshape(fbo.height, fbo.width, 3)[::-1]
        self.calls.append(eye)


def _frame(session):
    recorder = _Recorder(session)
    assert session.run_frame(recorder)
    return recorder


def _red_centroid(image):
    """(x, y) pixel centroid of the red cube, and its pixel count."""
    r, g, b = (image[..., i].astype(int) for i in range(3))
    ys, xs = np.nonzero((r > 100) & (g < 70) & (b < 70))
    return np.array([xs.mean(), ys.mean()]) if len(xs) else None, len(xs)


def _project(eye, point):
    """Pixel (x, y), top row first, of a world point seen by ``eye``."""
    clip = eye.proj @ eye.view @ np.append(point, 1.0)
    ndc = clip[:3] / clip[3]
    w, h = eye.size
    return np.array([(ndc[0] + 1) / 2 * w, (1 - ndc[1]) / 2 * h])


RED_CENTER = np.array([0.0, 1.5, -1.5])


@pytest.mark.gui
def test_session_reaches_focused(vr):
    import xr
    assert vr.state == xr.SessionState.FOCUSED
    assert "Monado" in vr.runtime_name and "Simulated" in vr.system_name
    assert vr.binding.kind == "egl"


@pytest.mark.gui
def test_frames_submitted_with_both_eyes(vr):
    before = vr.frames_submitted
    for _ in range(FRAMES):
        assert _frame(vr).calls == [0, 1]
        assert vr.last_layer_views == 2
    assert vr.frames_submitted - before == FRAMES


@pytest.mark.gui
def test_display_period_is_exposed(vr):
    assert 0.005 < vr.display_period < 0.1


@pytest.mark.gui
def test_reference_space_is_floor_level(vr):
    _frame(vr)
    heights = [eye.pose[1, 3] for eye in vr.eyes]
    assert all(1.4 < y < 1.8 for y in heights), heights  # Monado's nominal 1.6 m head


@pytest.mark.gui
def test_eye_images_not_blank_and_differ_by_eye_offset(vr):
    rec = _frame(vr)
    left, right = rec.images[0], rec.images[1]
    for image in (left, right):
        assert len(np.unique(image.reshape(-1, 3), axis=0)) >= 5  # background, floor, cubes
    ipd = np.linalg.norm(vr.eyes[1].pose[:3, 3] - vr.eyes[0].pose[:3, 3])
    assert 0.05 < ipd < 0.08, ipd
    centroids = []
    for eye, image in zip(vr.eyes, (left, right), strict=True):
        centroid, count = _red_centroid(image)
        assert count > 50, "red cube not visible"
        assert np.allclose(centroid, _project(eye, RED_CENTER), atol=3.0)
        centroids.append(centroid)
    # The left eye sits further left, so a cube in front appears further right in it.
    assert centroids[0][0] - centroids[1][0] > 2.0
    assert not np.array_equal(left, right)


@pytest.mark.gui
def test_simulated_head_offset_moves_camera(vr):
    from impulse.app.vr.xrmath import rigid_inverse, translation
    rec = _frame(vr)
    before_pos = vr.eyes[0].pose[:3, 3].copy()
    before_x = _red_centroid(rec.images[0])[0][0]
    vr.sim_head_offset = translation(0.3, 0.0, 0.0)
    try:
        rec = _frame(vr)
    finally:
        vr.sim_head_offset = np.eye(4)
    eye = vr.eyes[0]
    assert np.allclose(eye.view, rigid_inverse(translation(0.3, 0, 0) @ eye.stage_pose))
    assert abs(eye.pose[0, 3] - before_pos[0] - 0.3) < 0.02  # the headset wobbles a little
    after, _ = _red_centroid(rec.images[0])
    assert np.allclose(after, _project(eye, RED_CENTER), atol=3.0)
    assert before_x - after[0] > 15.0  # head moved right, the cube moves left in the image


@pytest.mark.gui
def test_controllers_bound_and_tracked(vr):
    from impulse.app.vr.controls import LEFT, RIGHT
    assert "/interaction_profiles/khr/simple_controller" in vr.controls.bound_profiles
    assert len(vr.controls.bound_profiles) >= 2
    _frame(vr)
    assert vr.controls.current_profile(LEFT) == "/interaction_profiles/khr/simple_controller"
    for hand, x in ((LEFT, -0.2), (RIGHT, 0.2)):  # Monado's simulated controller centres
        state = vr.hands[hand]
        assert state.active
        assert np.allclose(state.grip[:3, 3], [x, 1.3, -0.5], atol=1e-3)
        assert not state.grabbing


@pytest.mark.gui
def test_simulated_grab_and_haptic_pulse(vr):
    from impulse.app.vr.controls import RIGHT
    from impulse.app.vr.xrmath import translation
    target = translation(0.1, 1.2, -0.4)
    vr.controls.simulate(RIGHT, squeeze=1.0, grip=target, linear_velocity=[0.0, 0.0, -2.0])
    try:
        _frame(vr)
        hand = vr.hands[RIGHT]
        assert hand.grabbing and hand.grab_started
        assert np.allclose(hand.grip, target) and hand.linear_velocity[2] == -2.0
        vr.pulse(RIGHT, 0.5, 0.02)
        assert vr.controls.haptics_sent[-1] == (RIGHT, 0.5, 0.02)
        _frame(vr)
        assert hand.grabbing and not hand.grab_started
        vr.controls.simulate(RIGHT, squeeze=0.5)  # inside the hysteresis band: still held
        _frame(vr)
        assert hand.grabbing
        vr.controls.simulate(RIGHT, squeeze=0.0)
        _frame(vr)
        assert hand.grab_released and not hand.grabbing
    finally:
        vr.controls.clear_simulation()
    _frame(vr)
    assert not vr.hands[RIGHT].grabbing
    assert np.allclose(vr.hands[RIGHT].grip[:3, 3], [0.2, 1.3, -0.5], atol=1e-3)


@pytest.mark.gui
def test_render_error_leaves_session_usable(vr):
    def broken(eye, fbo, view, proj):
        raise ValueError("renderer bug")

    with pytest.raises(ValueError, match="renderer bug"):
        vr.run_frame(broken)
    before = vr.frames_submitted
    _frame(vr)
    assert vr.frames_submitted == before + 1


@pytest.mark.gui
def test_ending_the_session_returns_cleanly(vr):
    import xr
    vr.request_exit()
    frames = 0
    while vr.run_frame() and frames < 100:
        frames += 1
    assert not vr.running
    assert vr.state == xr.SessionState.EXITING
    vr.scene.release()
    vr.scene.release = lambda: None
    vr.close()
    vr.close()  # a second close is a no-op
    assert vr.session is None and vr.instance is None


@pytest.mark.gui
def test_glx_window_binding_under_xvfb():
    """The desktop mirror case: a pyglet GLX window's context drives the session."""
    _require_vr()
    xvfb = shutil.which("xvfb-run")
    assert xvfb, "xvfb-run is missing: bash .ci/install-system-deps"
    code = textwrap.dedent("""
        import numpy as np, pyglet, moderngl, xr
        window = pyglet.window.Window(160, 120)
        ctx = moderngl.create_context()
        from impulse.app.vr.session import VRSession
        from impulse.app.vr.demo_scene import DemoScene
        with VRSession(ctx) as vr:
            scene = DemoScene(ctx)
            sums = []
            def render(eye, fbo, view, proj):
                scene.render(fbo, view, proj)
                sums.append(int(np.frombuffer(fbo.read(components=3), np.uint8).sum()))
            assert vr.wait_for_state(xr.SessionState.FOCUSED, 15.0, render), vr.state
            for _ in range(3):
                vr.run_frame(render)
                window.switch_to(); ctx.screen.use(); ctx.clear(0.1, 0.1, 0.1); window.flip()
            scene.release()
            print("OK", vr.binding.kind, vr.frames_submitted, min(sums[-6:]) > 0)
        window.close()
    """)
    result = subprocess.run(
        [xvfb, "-a", "-s", "-screen 0 640x480x24", sys.executable, "-c", code],
        cwd=REPO, capture_output=True, text=True, timeout=60)
    last = result.stdout.strip().splitlines()[-1:] or [""]
    assert result.returncode == 0 and last[0].startswith("OK xlib"), result.stderr[-2000:]
    assert last[0].endswith("True")


@pytest.mark.slow
def test_missing_runtime_says_how_to_install_in_one_line():
    env = dict(os.environ, XR_RUNTIME_JSON="/nonexistent/openxr_runtime.json")
    result = subprocess.run([sys.executable, "-m", "impulse.app.vr", "--frames", "1"], cwd=REPO,
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0]
    assert "bash .ci/install-monado" in lines[0] and "XR_RUNTIME_JSON" in lines[0]


def test_find_runtime_order(tmp_path):
    manifest = tmp_path / "runtime.json"
    manifest.write_text("{}")
    assert runtime.find_runtime({"XR_RUNTIME_JSON": str(manifest)}) == manifest
    assert runtime.find_runtime({"XR_RUNTIME_JSON": str(tmp_path / "missing.json")}) is None
    with pytest.raises(runtime.RuntimeNotFound, match="install-monado"):
        runtime.require_runtime({"XR_RUNTIME_JSON": str(tmp_path / "missing.json")})
    env = {"XR_RUNTIME_JSON": str(manifest)}
    assert runtime.require_runtime(env) == manifest
