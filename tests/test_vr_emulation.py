"""Desktop controller emulation (app/vr/emulation.py) against the real Monado runtime
(simulated headset, null compositor), driven the way a user drives it: xdotool moves the
X pointer over the mirror window (GLX under Xvfb), turns the wheel and holds keys.

One App in VR for the module on hinge_chain (six plates hanging from hinges, 2 m up). These
tests never skip: without a runtime or pyopenxr they fail and say how to get them.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from impulse.app.vr import runtime

from vr_util import REPO, SCENE, pump, pump_until, require_vr, vr_app  # noqa: F401

pytestmark = pytest.mark.gui   # Monado VR with the app's window under Xvfb (test lanes)

SIZE = (960, 600)


@pytest.fixture(scope="module")
def app(xvfb, tmp_path_factory):
    yield from vr_app(tmp_path_factory, SIZE)


@pytest.fixture(autouse=True)
def fresh(app):
    """Panels hidden (the pointer is over the 3D view), nothing held, after each test too."""
    saved = dict(app.panels)
    app.panels.update(dict.fromkeys(app.panels, False))
    pump(app, 2)
    yield
    for k in ("g", "t", "i", "j", "k", "l", "u", "o"):
        x("keyup", k)
    pump(app, 2)
    app.panels.update(saved)


def x(*args):
    from gui_util import xdotool

    xdotool(os.environ["DISPLAY"], *args)




def stand_at(app, x_, z):
    """The play area placed so that the head stands at (x, z) looking down -Z."""
    from impulse.app.vr.locomotion import head_pose, place_head

    vr = app.vr.vr
    vr.world_from_stage = place_head(vr.world_from_stage, head_pose(vr), (x_, z), 0.0)
    pump(app, 3)


def mirror_pixel(app, world_point):
    """Window pixel (X: y down) of a world point in the mirror: the left eye's image,
    scaled into the window with its aspect kept (letterboxed)."""
    eye = app.vr.vr.eyes[0]
    clip = eye.proj @ eye.view @ np.append(world_point, 1.0)
    ndc = clip[:2] / clip[3]
    (ew, eh), (w, h) = app.vr.mirror.size, app.viewer.size
    scale = min(w / ew, h / eh)
    x0, y0 = (w - ew * scale) / 2, (h - eh * scale) / 2
    px = x0 + (ndc[0] + 1) / 2 * ew * scale
    py = y0 + (ndc[1] + 1) / 2 * eh * scale                   # from the bottom
    return px, h - py


def aim(app, world_point) -> bool:
    """Move the X pointer onto the mirror window's image of a world point, as the current
    eye sees it (Monado's simulated head keeps turning, so the image moves between frames).
    Returns True, for use inside pump_until predicates."""
    px, py = mirror_pixel(app, world_point)
    wx, wy = app.viewer.window.get_location()
    x("mousemove", str(int(round(wx + px))), str(int(round(wy + py))))
    return True


def point_at(app, world_point):
    """The X pointer onto a world point's image, and two frames to take it in."""
    aim(app, world_point)
    pump(app, 2)


def controller(app) -> np.ndarray:
    """The right hand's aim pose (world) as the grab and the pointer see it."""
    from impulse.app.vr.controls import RIGHT

    return app.vr.vr.hands[RIGHT].aim


def pointed_body(app) -> int:
    """The body the right controller's aim ray hits (the grab's own pick)."""
    from impulse.app.vr.pointer import aim_ray, pick_body

    return pick_body(app.vr.renderer, *aim_ray(controller(app)))[0]


def test_emulation_is_on_for_the_simulated_runtime_and_drives_the_right_hand(app):
    from impulse.app.vr.controls import RIGHT
    from impulse.app.vr.emulation import emulation_wanted

    emu = app.vr.emulation
    assert "Simulated" in app.vr.vr.system_name and emu.enabled
    assert app.vr.vr.controls.emulation is emu
    hand = app.vr.vr.hands[RIGHT]
    assert hand.active
    np.testing.assert_allclose(hand.aim, emu.world_pose(app.vr.vr.world_from_stage), atol=1e-9)
    assert emulation_wanted("Valve Index") is False
    assert emulation_wanted("Monado: Simulated HMD", {"IMPULSE_VR_EMULATE": "0"}) is False
    assert emulation_wanted("Valve Index", {"IMPULSE_VR_EMULATE": "1"}) is True


def test_mouse_wheel_and_keys_move_the_controller(app):
    app.session.loop.pause()
    stand_at(app, 1.5, 3.0)
    eye = app.vr.vr.eyes[0].pose                    # the mirror shows the left eye
    right, up, back = eye[:3, 0], eye[:3, 1], eye[:3, 2]
    target = eye[:3, 3] - back * 2.0 + right * 0.3 + up * 0.2
    point_at(app, target)
    aim = controller(app)
    origin, d = aim[:3, 3], -aim[:3, 2]
    # the ray through the pointer, from the eye of the frame that placed the controller
    # (the simulated head wobbles a little from frame to frame, more on a slow machine)
    ray_origin, ray_d = app.vr.emulation.cursor_ray
    assert np.linalg.norm(ray_origin - app.vr.vr.eyes[0].pose[:3, 3]) < 0.05
    to_target = (target - ray_origin) / np.linalg.norm(target - ray_origin)
    assert ray_d @ to_target > 0.9995                # the pointer's ray goes through the target
    assert d @ ray_d > 0.99999                       # the controller points along it
    assert np.linalg.norm(np.cross(origin - ray_origin, ray_d)) < 1e-6  # and sits on it
    depth = np.linalg.norm(origin - ray_origin)
    assert depth == pytest.approx(app.vr.emulation.depth, abs=1e-6)
    x("click", "4")                                  # wheel up: further along the ray
    x("click", "4")
    pump(app, 2)
    eye = app.vr.vr.eyes[0].pose[:3, 3]
    assert np.linalg.norm(controller(app)[:3, 3] - eye) == pytest.approx(depth * 1.15 ** 2,
                                                                       rel=0.05)
    before = controller(app)[:3, 3].copy()
    x("keydown", "l")                                # L: right in the view plane
    pump(app, 6)
    x("keyup", "l")
    pump(app)
    moved = controller(app)[:3, 3] - before
    assert moved @ right > 0.05 and abs(moved @ up) < 0.02, moved
    before = controller(app)[:3, 3].copy()
    x("keydown", "i")                                # I: up
    pump(app, 6)
    x("keyup", "i")
    pump(app)
    moved = controller(app)[:3, 3] - before
    assert moved @ up > 0.05 and abs(moved @ right) < 0.02, moved


def test_move_onto_a_body_squeeze_key_grabs_it_and_the_body_follows(app, tmp_path):
    from impulse.app.vr.controls import RIGHT

    loop = app.session.loop
    app.reset()
    loop.pause()                        # the chain waits, horizontal, until the grab holds it
    loop.sync()
    stand_at(app, 1.5, 3.0)
    world, grab = app.world, app.vr.grab
    b = world.body_index("plate6")
    start = app.scene_view.body_pos[b].copy()
    point_at(app, start)                             # the pointer over the bottom plate
    assert pointed_body(app) == b                    # its ray hits the plate
    grab.force_factor = 20.0            # the plate carries the chain: 20x its own weight
    pulses = len(app.vr.vr.controls.haptics_sent)
    x("keydown", "g")                                # squeeze
    assert pump_until(app, lambda: grab.active, 10)
    loop.resume()
    assert grab.body == b and grab.hand == RIGHT and world.drag_active
    assert app.vr.vr.hands[RIGHT].squeeze == 1.0
    assert app.vr.vr.controls.haptics_sent[-1][0] == RIGHT
    assert len(app.vr.vr.controls.haptics_sent) > pulses
    point_at(app, start + [0.0, 0.5, 0.0])           # the pointer (the controller) up 0.5 m
    target = grab.target.copy()
    assert target[1] > start[1] + 0.4                # the grab's target went with it
    sim0 = world.time
    assert pump_until(app, lambda: world.time > sim0 + 0.4, 200)
    pos = world.body_pos[b].copy()
    # let go it would fall; held by the drag it rises towards the controller's target
    assert pos[1] > start[1] + 0.3, pos - start
    assert np.linalg.norm(pos - grab.target) < 0.3
    app.viewer.screenshot(tmp_path / "emulated_grab.png")
    x("keyup", "g")                                  # release
    assert pump_until(app, lambda: not grab.active, 10)
    app.session.loop.sync()
    assert not world.drag_active
    assert app.vr.vr.hands[RIGHT].squeeze == 0.0
    sim1 = world.time
    assert pump_until(app, lambda: world.time > sim1 + 0.5, 200)
    assert world.body_pos[b][1] < pos[1] - 0.1       # free again: it swings back down


def test_trigger_key_presses_the_wrist_button_under_the_pointer(app):
    from impulse.app.vr.controls import LEFT, RIGHT
    from impulse.app.vr.wrist_menu import KEYS, button_centers

    loop = app.session.loop
    loop.resume()
    stand_at(app, 1.5, 3.0)
    assert app.vr.vr.hands[LEFT].active              # Monado's still left controller
    button = button_centers(app.vr.vr.hands[LEFT].grip)[KEYS.index("play")]
    px, py = mirror_pixel(app, button)
    assert 0 < px < SIZE[0] and 0 < py < SIZE[1]     # the wrist menu is in the mirror
    # the pointer follows the button's image while the simulated head turns
    assert pump_until(app, lambda: aim(app, button) and app.vr.hovered_button == "play", 10)
    x("keydown", "t")
    assert pump_until(app, lambda: aim(app, button) and loop.paused, 5)   # pressed: paused
    assert app.vr.vr.hands[RIGHT].pressing
    pump(app, 3)
    assert loop.paused                                # once per press, not per frame
    x("keyup", "t")
    pump(app, 2)
    assert not app.vr.vr.hands[RIGHT].pressing
    x("keydown", "t")
    assert pump_until(app, lambda: aim(app, button) and not loop.paused, 5)
    x("keyup", "t")
    pump(app)


def test_velocity_from_the_pointer_motion_reaches_the_hand_state():
    """A pointer sweep gives the controller the velocity a release throws with, turned
    into the world by world_from_stage as the runtime's velocities are."""
    from types import SimpleNamespace

    from impulse.app.vr.controls import RIGHT, HandState
    from impulse.app.vr.emulation import ControllerEmulation
    from impulse.app.vr.xrmath import rotation_y

    viewer = SimpleNamespace(ui=None, controller=SimpleNamespace(mode=None))
    eye = np.zeros(3)

    def ray(px, py):                                  # 1 px = 1 mrad about the eye
        d = np.array([np.tan(px * 1e-3), 0.0, -1.0])
        return eye.copy(), d / np.linalg.norm(d)

    frame = (eye, np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    emu = ControllerEmulation(viewer, True, ray=ray, view_frame=lambda: frame)
    emu.depth = 1.0
    w_from_s = rotation_y(np.pi / 2)                  # the play area turned a quarter
    for i in range(8):                                # 100 px/s: 0.1 rad/s, 0.1 m/s at 1 m
        emu.on_mouse_motion(i * 2.0, 0.0, 2.0, 0.0)
        emu.update(0.02, w_from_s, None, now=i * 0.02)
    state = HandState()
    emu.apply(RIGHT, state, w_from_s)
    assert state.active and state.squeeze == 0.0
    np.testing.assert_allclose(state.aim[:3, 3], ray(14.0, 0)[1], atol=1e-9)   # on the ray
    np.testing.assert_allclose(-state.aim[:3, 2], ray(14.0, 0)[1], atol=1e-9)  # along it
    v = state.linear_velocity                         # world (kept in the stage frame)
    assert v[0] == pytest.approx(0.1, rel=0.02) and abs(v[1]) < 1e-9 and abs(v[2]) < 0.01
    np.testing.assert_allclose(v, w_from_s[:3, :3] @ emu.linear_velocity)
    assert state.angular_velocity[1] == pytest.approx(-0.1, rel=0.02)   # turning right
    emu.update(0.02, w_from_s, None, now=0.5)         # held still: no velocity left
    assert np.allclose(emu.linear_velocity, 0.0)
    emu.on_key_press(key_g(), 0)
    emu.apply(RIGHT, state, w_from_s)
    assert state.squeeze == 1.0
    emu.on_deactivate()                               # focus lost: nothing stays held
    emu.apply(RIGHT, state, w_from_s)
    assert state.squeeze == 0.0
    emu.apply(0, state, w_from_s)                     # the left hand is not emulated


def key_g():
    from pyglet.window import key

    return key.G


def test_typing_into_a_field_does_not_squeeze(app, monkeypatch):
    from impulse.app.vr.controls import RIGHT

    monkeypatch.setattr(type(app.viewer.ui), "want_keyboard", property(lambda self: True))
    x("keydown", "g")
    pump(app, 2)
    assert app.vr.vr.hands[RIGHT].squeeze == 0.0 and not app.vr.grab.active
    x("keyup", "g")


def test_quiet_monado_logs_for_the_simulated_runtime():
    env = {"XR_RUNTIME_JSON": str(runtime.MONADO_JSON), "SIMULATED_ENABLE": "1",
           "XRT_LOG": "debug"}
    assert runtime.quiet_simulated_runtime(env)
    assert env["XRT_LOG"] == "debug"                 # the user's own setting stays
    assert env["PROBER_LOG"] == env["XRT_COMPOSITOR_LOG"] == "error"
    assert env["OXR_NO_PRINTING"] == "1"
    other = {"XR_RUNTIME_JSON": str(runtime.MONADO_JSON)}    # Monado with real hardware
    assert not runtime.quiet_simulated_runtime(other) and "XRT_LOG" not in other


def test_view_vr_with_the_simulated_runtime_keeps_the_terminal_quiet(xvfb):
    require_vr()
    env = {k: v for k, v in os.environ.items()
           if k not in runtime.QUIET_MONADO_ENV and not k.endswith("_LOG")}
    env.update(XR_RUNTIME_JSON=str(runtime.MONADO_JSON), SIMULATED_ENABLE="1",
               XRT_COMPOSITOR_NULL="1", SIMULATED_LEFT="simple", SIMULATED_RIGHT="simple")
    result = subprocess.run([sys.executable, "-m", "impulse.app", "view", SCENE, "--vr",
                             "--frames", "30", "--size", "480x300"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = (result.stdout + result.stderr).strip().splitlines()
    noise = [line for line in lines if not line.startswith(("vr:", "impulse:"))]
    # before: about 120 lines (start-up report, banner, "Frame late" warnings)
    assert len(noise) <= 2, noise
