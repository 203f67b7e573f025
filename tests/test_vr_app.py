"""The app's VR mode against the real Monado runtime (simulated headset and controllers,
null compositor), with the desktop window (GLX under Xvfb) as the mirror.

One App with one VR session for the module, on a bundled scene (hinge_chain: six plates
hanging from hinges, 2 m up). The controllers are driven with Controls.simulate. These
tests never skip: without a runtime or pyopenxr they fail and say how to get them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from impulse.app.vr.locomotion import head_pose

from vr_util import REPO, SCENE, pump, pump_until, require_vr, vr_app  # noqa: F401

pytestmark = pytest.mark.gui   # Monado VR with the app's window under Xvfb (test lanes)


@pytest.fixture(scope="module")
def app(xvfb, tmp_path_factory):
    yield from vr_app(tmp_path_factory, (800, 500))


def look_from(origin, target) -> np.ndarray:
    """Pose (4, 4) at origin whose -Z (the aim ray) points at target."""
    from impulse.app.mathutil import look_at

    pose = np.linalg.inv(look_at(origin, target))
    return pose


def head(app) -> np.ndarray:
    from impulse.app.vr.locomotion import head_pose

    return head_pose(app.vr.vr)


def stand_at(app, x, z):
    """Put the play area so the head stands at (x, z) looking down -Z."""
    from impulse.app.vr.locomotion import place_head

    vr = app.vr.vr
    vr.world_from_stage = place_head(vr.world_from_stage, head(app), (x, z), 0.0)
    pump(app, 2)


def project(eye, point):
    clip = eye.proj @ eye.view @ np.append(point, 1.0)
    ndc = clip[:3] / clip[3]
    w, h = eye.size
    return np.array([(ndc[0] + 1) / 2 * w, (1 - ndc[1]) / 2 * h])


def body_pixels(image, background):
    diff = np.abs(image.astype(int) - (np.asarray(background) * 255).round().astype(int)).sum(-1)
    ys, xs = np.nonzero(diff > 12)
    return xs, ys


def eye_frame(app):
    """One frame with the eye images kept; bodies only (no floor, grid, gizmos, rays)."""
    opts = app.viewer.options
    saved = opts.grid, opts.show_joints, opts.shadows
    opts.grid, opts.show_joints, opts.shadows = False, False, False
    app.vr.keep_images, app.vr.show_hud = True, False
    try:
        pump(app)
    finally:
        app.vr.keep_images, app.vr.show_hud = False, True
        opts.grid, opts.show_joints, opts.shadows = saved
    return app.vr.eye_images[0], app.vr.eye_images[1]


def press_trigger(app, hand, aim):
    """Point `hand` along `aim` and pull its trigger for one frame, then let go."""
    controls = app.vr.vr.controls
    controls.simulate(hand, aim=aim, trigger=1.0)
    pump(app)
    controls.simulate(hand, trigger=0.0)
    pump(app)


def press_wrist(app, key):
    """Press a wrist menu button the way a user does: right ray at it, trigger."""
    from impulse.app.vr.controls import LEFT, RIGHT
    from impulse.app.vr.wrist_menu import KEYS, button_centers

    grip = look_from(head(app)[:3, 3] + [-0.2, -0.4, -0.4], head(app)[:3, 3] + [-0.2, -0.4, -1.4])
    app.vr.vr.controls.simulate(LEFT, grip=grip, active=True)
    pump(app)
    target = button_centers(grip)[KEYS.index(key)]
    aim = look_from(target + [0.05, 0.35, 0.25], target)      # from above, as a user would
    app.vr.vr.controls.simulate(RIGHT, aim=aim)
    pump(app)
    assert app.vr.hovered_button == key
    press_trigger(app, RIGHT, aim)


@pytest.fixture(autouse=True)
def clean_controls(app):
    yield
    if app.vr is not None:
        app.vr.vr.controls.clear_simulation()
        app.vr.vr.sim_head_offset = np.eye(4)


def test_vr_mode_reaches_focused_on_the_window_context(app):
    import xr

    mode = app.vr
    assert mode.vr.state == xr.SessionState.FOCUSED
    assert mode.vr.binding.kind == "xlib"                  # the mirror window's GLX context
    assert mode.renderer is app.viewer.renderer              # the desktop's renderer
    assert mode.vr.ctx is app.viewer.ctx
    eye = head(app)[:3, 3]
    assert eye[1] > 1.4 and eye[1] < 1.8  # a metre is a metre, floor y = 0
    assert np.allclose(eye[[0, 2]], [1.5, 6.0], atol=0.05)    # recentred at the scene camera


def test_frames_submitted_with_projection_layers_for_both_eyes(app):
    vr = app.vr.vr
    before, n = vr.frames_submitted, 8
    pump(app, n)
    assert vr.frames_submitted - before == n
    assert vr.last_layer_views == 2 and len(vr.eyes) == 2


def test_eye_images_not_blank_and_differ_by_the_eye_offset(app, tmp_path):
    from impulse.app.screenshot import save_png

    # the plates held level, as the scene starts: the pixel centroid's disparity is compared
    # with the body centres', which agree to 1.5 px only where the plates stay in view at
    # one depth (a swinging chain, caught at a random moment, sometimes did not)
    loop = app.session.loop
    loop.pause()
    app.reset()
    try:
        stand_at(app, 1.5, 3.0)                      # 3 m in front of the plates
        left, right = eye_frame(app)
    finally:
        loop.resume()
    save_png(left, tmp_path / "left.png")
    bg = app.viewer.options.background
    eyes = app.vr.vr.eyes
    plates = app.world.body_pos
    centroids, expected = [], []
    for eye, image in zip(eyes, (left, right), strict=True):
        xs, ys = body_pixels(image, bg)
        assert len(xs) > 200, "the plates are not visible"
        assert len(np.unique(image.reshape(-1, 3), axis=0)) > 5       # shaded faces, not flat
        centroids.append(xs.mean())
        expected.append(np.mean([project(eye, p)[0] for p in plates]))
    ipd = np.linalg.norm(eyes[1].pose[:3, 3] - eyes[0].pose[:3, 3])
    assert 0.05 < ipd < 0.08
    disparity = centroids[0] - centroids[1]
    assert expected[0] - expected[1] > 3.0
    assert disparity == pytest.approx(expected[0] - expected[1], abs=1.5)
    assert not np.array_equal(left, right)


def test_simulated_head_pose_moves_the_camera(app):
    app.session.loop.pause()      # the bodies hold still: only the head moves the image
    app.session.loop.sync()
    stand_at(app, 1.5, 3.0)
    left, _ = eye_frame(app)
    x0 = body_pixels(left, app.viewer.options.background)[0].mean()
    pos0 = app.vr.vr.eyes[0].pose[:3, 3].copy()
    mirror0 = app.viewer.camera.eye.copy()
    head0 = head_pose(app.vr.vr)[:3, 3].copy()
    from impulse.app.vr.xrmath import translation

    app.vr.vr.sim_head_offset = translation(0.4, 0.0, 0.0)
    left, _ = eye_frame(app)
    pos1 = app.vr.vr.eyes[0].pose[:3, 3]
    assert pos1[0] - pos0[0] == pytest.approx(0.4, abs=0.05)   # (+ the head's own drift)
    x1 = body_pixels(left, app.viewer.options.background)[0].mean()
    assert x0 - x1 > 10                                   # head right: the scene moves left
    pump(app)
    # the mirror's camera sits at the head of the frame it shows. Monado's simulated head
    # also wanders by itself between frames (2 cm on a slow CI machine), so the camera is
    # held to the head it followed, and the head's move to the offset within 5 cm
    head1 = head_pose(app.vr.vr)[:3, 3]
    assert np.allclose(app.viewer.camera.eye, head1, atol=1e-6)
    assert head1[0] - head0[0] == pytest.approx(0.4, abs=0.05)
    assert app.viewer.camera.eye[0] - mirror0[0] == pytest.approx(0.4, abs=0.05)


def test_mirror_window_shows_the_left_eye(app, tmp_path):
    stand_at(app, 1.5, 3.0)
    app.vr.keep_images = True
    pump(app)
    app.vr.keep_images = False
    eye = app.vr.eye_images[0]
    shot = app.viewer.screenshot(tmp_path / "mirror.png", with_ui=False)
    h, w = shot.shape[:2]
    eh, ew = eye.shape[:2]
    scale = min(w / ew, h / eh)
    x0 = (w - int(ew * scale)) // 2
    inner = shot[:, x0:x0 + int(ew * scale)]              # the letterboxed eye image
    small = inner[::int(round(scale)), ::int(round(scale))][:eh, :ew].astype(int)
    assert np.abs(small - eye.astype(int)).mean() < 12     # the same picture, scaled
    app.vr.mirror_follows_head = False                     # the desktop camera renders again
    try:
        free = app.viewer.screenshot(with_ui=False)
    finally:
        app.vr.mirror_follows_head = True
    assert np.abs(free.astype(int) - shot.astype(int)).mean() > 3


def test_squeeze_grabs_lifts_and_throws_a_body(app):
    from impulse.app.vr.controls import RIGHT

    app.reset()
    app.session.loop.resume()
    stand_at(app, 1.5, 3.0)
    world = app.world
    b = world.body_index("plate6")
    start = app.scene_view.body_pos[b].copy()             # where the eyes show it
    origin = head(app)[:3, 3] + [0.2, -0.3, 0.0]
    aim = look_from(origin, start)
    controls = app.vr.vr.controls
    pulses = len(controls.haptics_sent)
    app.vr.grab.force_factor = 20.0     # the plate carries the chain: 20x its own weight
    controls.simulate(RIGHT, aim=aim, squeeze=1.0, active=True)
    pump(app)
    assert app.vr.grab.body == b and world.drag_active
    assert len(controls.haptics_sent) > pulses and controls.haptics_sent[-1][0] == RIGHT
    lifted = aim.copy()
    lifted[1, 3] += 0.5                                   # raise the hand by 0.5 m
    controls.simulate(RIGHT, aim=lifted)
    sim0 = world.time
    assert pump_until(app, lambda: world.time > sim0 + 0.3, 200)
    # let go it would fall; held by the capped soft joint it rises towards the hand
    assert world.body_pos[b][1] > start[1] + 0.3, world.body_pos[b] - start
    assert np.linalg.norm(world.body_pos[b] - app.vr.grab.target) < 0.3
    from impulse.app.vr.hand_grab import IMPACT_PULSE

    impacts = app.vr.grab.impacts
    assert impacts == 0                                   # a smooth lift is no impact
    app.session.loop.sync()                               # the physics thread is idle
    world.body_vel[b] += [0.0, 0.0, 4.0]                 # a knock that no step explains
    assert pump_until(app, lambda: controls.haptics_sent[-1] == (RIGHT, *IMPACT_PULSE), 20)
    assert app.vr.grab.impacts == impacts + 1
    controls.simulate(RIGHT, squeeze=0.0, linear_velocity=[0.0, 3.0, 0.0],
                      angular_velocity=[0.0, 0.0, 0.0])
    app.session.loop.pause()                              # the throw before any step
    pump(app)
    app.session.loop.sync()                               # the batch running at release
    assert not app.vr.grab.active and not world.drag_active
    assert world.body_vel[b][1] == pytest.approx(3.0)
    app.session.loop.resume()


def test_add_and_remove_joints_from_vr_with_undo(app):
    from impulse.app.vr.controls import RIGHT

    app.reset()
    app.session.loop.pause()
    stand_at(app, 1.5, 3.0)
    world = app.world

    def names():
        return [j.name for j in world.joint_models]

    before = names()
    press_wrist(app, "joint")
    assert app.vr.edit.mode == "joint" and app.vr.edit.kind == "ball"
    origin = head(app)[:3, 3] + [0.2, -0.3, 0.0]
    for body in ("plate2", "plate5"):
        press_trigger(app, RIGHT, look_from(origin, world.body_pos[world.body_index(body)]))
    added = [n for n in names() if n not in before]
    assert added == ["ball_plate2_plate5"], names()
    assert app.session.editor.undo_stack[-1].label == "add ball joint ball_plate2_plate5"
    press_wrist(app, "undo")
    assert names() == before
    press_wrist(app, "remove")
    assert app.vr.edit.mode == "remove"
    anchor = world.joint_anchors("hinge3")[0]
    press_trigger(app, RIGHT, look_from(origin, anchor))
    assert "hinge3" not in names() and len(names()) == len(before) - 1
    app.undo()
    assert sorted(names()) == sorted(before)
    press_wrist(app, "remove")
    assert app.vr.edit.mode is None


def test_wrist_menu_pause_step_reset(app):
    loop, world = app.session.loop, app.world
    loop.resume()
    press_wrist(app, "play")
    assert loop.paused
    loop.sync()                                           # a batch handed out before the pause
    t = world.time
    press_wrist(app, "step")
    loop.sync()
    assert world.time == pytest.approx(t + world.settings.h)
    press_wrist(app, "reset")
    assert world.time == 0.0
    press_wrist(app, "play")
    assert not loop.paused


def test_thumbstick_locomotion_snap_turn_and_recentre(app):
    from impulse.app.vr.controls import LEFT, RIGHT
    from impulse.app.vr.locomotion import yaw_of

    controls = app.vr.vr.controls
    start = app.vr.vr.world_from_stage.copy()
    controls.simulate(LEFT, thumbstick=[0.0, 1.0])          # forward
    pump(app, 6)
    controls.simulate(LEFT, thumbstick=[0.0, 0.0])
    pump(app)
    moved = app.vr.vr.world_from_stage[:3, 3] - start[:3, 3]
    # the play area moved along the head's facing (-Z; the simulated head wobbles a little)
    assert moved[2] < -0.2 and abs(moved[0]) < 0.2 * abs(moved[2]) and moved[1] == 0.0
    # the turn is measured on the play area: the simulated head keeps turning a little
    # by itself between frames, more on a slow machine
    yaw0 = yaw_of(app.vr.vr.world_from_stage)
    controls.simulate(RIGHT, thumbstick=[1.0, 0.0])         # snap right, once per push
    pump(app, 4)
    controls.simulate(RIGHT, thumbstick=[0.0, 0.0])
    pump(app)
    turn = np.degrees((yaw_of(app.vr.vr.world_from_stage) - yaw0 + np.pi) % (2 * np.pi) - np.pi)
    assert turn == pytest.approx(-30.0, abs=1e-6)
    press_wrist(app, "recentre")
    pump(app)
    assert np.allclose(head(app)[[0, 2], 3], [1.5, 6.0], atol=0.05)   # the scene camera's spot
    assert abs(yaw_of(head(app))) < np.radians(1.0)


def test_solver_budget_follows_the_display_period_and_the_mirror_shows_the_residual(app):
    from impulse.app.ui.vr_panel import vr_lines
    from impulse.app.ui.widgets import rects

    app.session.loop.resume()
    settings = app.world.settings
    app.session.loop.sync()                               # no batch with the VR budget runs
    own_budget = settings.time_budget_ms
    pump(app, 5)
    vr, budget = app.vr.vr, app.vr.budget
    assert 0.005 < vr.display_period < 0.1
    assert app.session.loop.threaded                      # physics beside the renderer
    assert budget.frame_s == pytest.approx(max(0.8 * vr.display_period, 0.001))
    steps = np.ceil(vr.display_period / settings.h - 1e-9)
    assert budget.step_ms == pytest.approx(budget.frame_s * 1e3 / steps)
    app.session.loop.sync()
    assert settings.time_budget_ms == own_budget          # restored after the batch
    assert app.vr.physics_s < budget.frame_s + 0.02       # the loop stops at the budget
    lines = vr_lines(app)
    assert any(line.startswith("residual x") for line in lines), lines
    assert "vr.play" in rects and "vr.exit_panel" in rects   # the VR panel is drawn


def test_ending_the_session_returns_cleanly_and_the_desktop_goes_on(app):
    mode = app.vr
    submitted = mode.vr.frames_submitted
    assert submitted > 20
    app.exit_vr()
    assert app.vr is None and mode.vr.session is None and mode.vr.instance is None
    assert "frames submitted" in app.status
    app.session.loop.resume()
    t = app.world.time
    pump(app, 5)
    assert app.world.time > t                             # the desktop loop steps again


def test_enter_vr_without_runtime_shows_the_message_in_the_ui(app, monkeypatch):
    from impulse.app.ui.widgets import rects

    from gui_util import xdotool

    monkeypatch.setenv("XR_RUNTIME_JSON", "/nonexistent/openxr_runtime.json")
    pump(app, 2)
    assert "vr.enter" in rects
    x0, y0, x1, y1 = rects["vr.enter"]
    wx, wy = app.viewer.window.get_location()
    display = os.environ["DISPLAY"]
    xdotool(display, "mousemove", str(int(wx + (x0 + x1) / 2)), str(int(wy + (y0 + y1) / 2)))
    pump(app, 2)
    xdotool(display, "click", "1")
    assert pump_until(app, lambda: app.errors, 20)
    assert app.vr is None
    assert "install-monado" in app.errors[0] and "/nonexistent" in app.errors[0]
    t = app.world.time                  # the desktop app is unaffected (within 20 frames: 3
    assert pump_until(app, lambda: app.world.time > t, 20)   # were too few on a busy CPU)


def _env_without_runtime():
    return dict(os.environ, XR_RUNTIME_JSON="/nonexistent/openxr_runtime.json")


def test_view_vr_without_runtime_prints_one_line():
    result = subprocess.run([sys.executable, "-m", "impulse.app", "view", SCENE, "--vr"], cwd=REPO,
                            env=_env_without_runtime(), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert "no OpenXR runtime found" in lines[0] and "bash .ci/install-monado" in lines[0]


def test_view_vr_runs_a_scene_in_the_headset(xvfb):
    require_vr()
    result = subprocess.run([sys.executable, "-m", "impulse.app", "view", SCENE, "--vr",
                             "--frames", "25", "--size", "480x300"],
                            cwd=REPO, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("vr:"))
    submitted = int(line.split("VR: ")[1].split()[0])
    assert submitted >= 15, line


def test_bench_vr_json(xvfb):
    require_vr()
    result = subprocess.run([sys.executable, "-m", "impulse.app", "bench", "vr", "--json",
                             "--seconds", "1.5", "--scenes", "pendulum", "no_such_scene"],
                            cwd=REPO, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    doc = json.loads(result.stdout)
    row, missing = doc["rows"]
    assert row["scene"] == "pendulum" and row["eye"] == "320x240"
    assert 5 < row["fps"] <= 1.2 / (row["period_ms"] / 1e3)
    assert row["frames"] >= 5 and isinstance(row["missed"], int) and row["missed"] >= 0
    assert 0 <= row["physics_ms_max"] <= row["budget_ms"] + 20
    assert row["rtf"] > 0.3
    assert missing == {"scene": "no_such_scene", "note": "no_such_scene not in scenes/"}
