"""Joint angles past half a turn (issue 23: imported robots' hinge ranges beyond +-pi were cut
at +-160 degrees, since angles were read in (-pi, pi]). An angle is read on the branch nearest
its value at the step's start (J.angle, kept at the end of each step), so limits, position
servos and springs hold beyond +-pi, and a saved or snapshotted run resumes on that branch."""
import json

import numpy as np
import pytest

from impulse.engine.scene import load_scene, save_scene, scene_to_world, world_to_scene

ARM = 0.2                                   # the arm's centre from the hinge [m]
INERTIA = (0.4 ** 2 + 0.05 ** 2) / 12 + ARM ** 2     # about the hinge, 1 kg box [kg m^2]


def arm_world(h, omega=0.0, **joint):
    """A 1 kg arm on a hinge about z at the origin, no gravity, turning at `omega`."""
    doc = {"format": "impulse-scene", "version": 1,
           "settings": {"h": h, "gravity": [0, 0, 0]},
           "bodies": [{"name": "arm", "shape": {"type": "box", "size": [0.4, 0.05, 0.05]},
                       "mass": 1.0, "position": [ARM, 0, 0],
                       "velocity": [0, ARM * omega, 0], "angular_velocity": [0, 0, omega]}],
           "joints": [{"name": "h", "type": "hinge", "bodies": ["world", "arm"],
                       "anchor": [0, 0, 0], "axis": [0, 0, 1], **joint}],
           "contacts": {"enabled": False}}
    return scene_to_world(json.loads(json.dumps(doc)))


def angle(w):
    return w.joint_coordinates("h")[0]


def arm_direction_angle(w):
    """Where the arm points, from its body alone: the angle of its centre, in (-pi, pi]."""
    x, y = w.B.pos[0, 0], w.B.pos[0, 1]
    return np.arctan2(y, x)


def same_direction(a, b, tol):
    return abs((a - b + np.pi) % (2 * np.pi) - np.pi) < tol


STEPS = [1 / 30, 1 / 60, 0.01, 0.002]


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("stop", [3.6, 5.5, 8.0, -4.4, -7.0])
def test_a_hinge_stops_at_a_limit_beyond_half_a_turn(h, stop):
    """Turning at 4 rad/s into a stop past +-pi: it stops there, not at the wrap, and not
    through it (read in (-pi, pi], the angle jumped at pi and the stop was never met)."""
    sign = np.sign(stop)
    limits = {"lower": -9.5, "upper": stop} if sign > 0 else {"lower": stop, "upper": 9.5}
    w = arm_world(h, omega=4.0 * sign, limits=limits)
    beyond = 0.0
    for _ in range(int((abs(stop) / 4.0 + 0.6) / h)):
        w.step()
        beyond = max(beyond, sign * (angle(w) - stop))
    assert beyond < 2e-3, f"passed the stop by {beyond:.3g} rad"
    # at rest on it, to the velocity tolerance's drift (eps_vel: 1e-3 m/s at 0.2 m)
    assert angle(w) == pytest.approx(stop, abs=5e-3)
    assert abs(w.B.omega[0, 2]) < 0.05
    assert same_direction(arm_direction_angle(w), angle(w), 2e-3)   # the body is there too
    assert not w.problems


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("target", [5.0, -7.0, 2 * np.pi + 0.3])
def test_a_position_servo_turns_to_a_target_past_half_a_turn(h, target):
    w = arm_world(h, motor={"mode": "position", "target": float(target), "max_force": 2.0})
    for _ in range(int(6.0 / h)):
        w.step()
    assert angle(w) == pytest.approx(target, abs=2e-3)
    assert abs(w.B.omega[0, 2]) < 1e-2
    assert same_direction(arm_direction_angle(w), target, 2e-3)


@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 0.01, 0.001])
@pytest.mark.parametrize("amplitude", [2.0, 4.5, 8.0])
def test_a_hinge_spring_wound_past_half_a_turn_swings_back(h, amplitude):
    """A torsion spring (natural frequency 2 rad/s) from 0 at amplitude * 2 rad/s: it turns
    to +amplitude (energy: I w0^2 = k A^2) a quarter period on, and to -amplitude at three
    quarters, past pi both ways (read in (-pi, pi], the spring pulled the wrong way at pi)."""
    k = INERTIA * 2.0 ** 2
    w = arm_world(h, omega=2.0 * amplitude, spring={"stiffness": k})
    seen = []
    for _ in range(int(np.pi / 2.0 * 1.5 / h)):          # three quarters of a period
        w.step()
        seen.append(angle(w))
    assert max(seen) == pytest.approx(amplitude, rel=0.015)
    assert min(seen) == pytest.approx(-amplitude, rel=0.015)
    assert (int(np.argmax(seen)) + 1) * h == pytest.approx(np.pi / 4, abs=0.03)


def spinning(h):
    """A velocity motor against a soft torsion spring: the angle runs past 2 pi, and the
    spring's torque depends on which turn it is on."""
    return arm_world(h, motor={"mode": "velocity", "target": 6.0, "max_force": 3.0},
                     spring={"stiffness": 0.02})


def motion(w):
    return [w.time, angle(w), w.B.pos.copy(), w.B.rot.copy(), w.B.vel.copy(),
            w.B.omega.copy()]


def assert_same(a, b):
    assert a[0] == b[0] and a[1] == b[1]
    for x, y in zip(a[2:], b[2:], strict=True):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("h", [1 / 60, 0.01])
def test_a_snapshot_resumes_on_the_turn_it_was_taken(h):
    w = spinning(h)
    w.run(int(1.5 / h))
    assert angle(w) > 1.2 * np.pi
    snap = w.get_state()
    w.run(40)
    first = motion(w)
    w.run(int(1.0 / h))                    # a turn further, then back (a history scrub)
    w.set_state(snap)
    w.run(40)
    assert_same(first, motion(w))


@pytest.mark.parametrize("h", [1 / 60, 0.01])
def test_a_saved_run_continues_on_its_turn(h, tmp_path):
    w = spinning(h)
    w.run(int(1.5 / h))
    assert angle(w) > 1.2 * np.pi
    path = tmp_path / "spun.json"
    save_scene(w, path)
    saved = json.loads(path.read_text())["state"]["joints"]["h"]["angles"]
    assert saved[0] == angle(w)
    resumed = load_scene(path)
    assert angle(resumed) == angle(w)
    w.run(40)
    resumed.run(40)
    assert_same(motion(w), motion(resumed))
    # without its state block, a scene starts afresh from its bodies: angle in (-pi, pi]
    doc = world_to_scene(w)
    assert abs(angle(scene_to_world(doc))) <= np.pi
