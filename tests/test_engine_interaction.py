"""The user's drag (engine/interaction.py): soft, capped, follows the target, lets go."""
import numpy as np
import pytest

from impulse.engine import World, load_scene


def box_world(mass=1.0):
    w = World({"h": 0.01})
    w.add_body({"name": "box", "shape": {"type": "box", "size": [0.2, 0.2, 0.2]}, "mass": mass})
    return w


@pytest.mark.parametrize("mass", [0.1, 1.0, 50.0])
def test_drag_pulls_light_and_heavy_bodies_to_the_target(mass):
    w = box_world(mass)
    w.drag_start(0, [0.0, 0.0, 0.0])   # at the centre: no pendulum swing about the grab
    w.drag_to([0.5, 0.6, 0.0])
    for _ in range(300):
        w.step()
        assert np.linalg.norm(w.drag_force()) <= w.drag.max_force * (1 + 1e-12)
    tip = w.body_pos[0] + w.body_rot[0] @ w.drag.local_point
    assert np.linalg.norm(tip - [0.5, 0.6, 0.0]) < 0.01  # held against gravity
    assert w.drag_force()[1] == pytest.approx(mass * 9.81, rel=0.02)  # it carries the weight


def test_force_is_capped_at_a_multiple_of_the_weight():
    w = box_world(2.0)
    w.drag_start(0, [0.0, 0.0, 0.0])
    w.drag_to([100.0, 0.0, 0.0])
    w.step()
    assert np.linalg.norm(w.drag_force()) == pytest.approx(5.0 * 2.0 * 9.81, rel=1e-9)


def test_release_lets_it_fall():
    w = box_world()
    w.drag_start(0, [0.0, 0.0, 0.0])
    for _ in range(50):
        w.step()
    w.drag_stop()
    v = w.body_vel[0][1]
    w.step()
    assert w.body_vel[0][1] == pytest.approx(v - 9.81 * 0.01, abs=1e-12)
    assert not w.drag_active and np.array_equal(w.drag_force(), np.zeros(3))


def test_dragging_a_chain_link_keeps_the_joints_closed(scene_path):
    free = load_scene(scene_path("chain8.json"))
    free.run(100)
    w = load_scene(scene_path("chain8.json"))
    b = w.body_index("link4")
    w.drag_start(b, w.body_pos[b])
    w.drag_to(w.body_pos[b] + [0.0, 1.0, 0.5])
    for _ in range(100):
        w.step()
        assert w.last_step()["max_position_error"] <= 1e-5
    assert w.body_pos[b][1] > free.body_pos[b][1] + 0.3


def test_fixed_body_cannot_be_dragged(scene_path):
    w = load_scene(scene_path("chain8.json"))
    with pytest.raises(ValueError):
        w.drag_start(w.body_index("left_mount"), [0, 0, 0])


def test_orientation_target_turns_the_body():
    w = World({"h": 0.01, "gravity": [0, 0, 0]})
    w.add_body({"name": "box", "shape": {"type": "box", "size": [0.4, 0.2, 0.1]}, "mass": 1.0})
    w.drag_start(0, [0.0, 0.0, 0.0])
    w.drag_to([0.0, 0.0, 0.0], np.eye(3))
    c, s = np.cos(0.5), np.sin(0.5)
    w.drag_to([0.0, 0.0, 0.0], np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]))
    for _ in range(300):
        w.step()
    assert w.body_rot[0][1, 0] == pytest.approx(s, abs=0.02)


@pytest.mark.slow
def test_orientation_drag_against_hinges_stays_finite_and_the_hinges_hold(scene_path):
    """A VR grab that tilts a hinge-chain plate out of the hinges' plane: the capped angular
    drag fights the joints every step; the state stays finite and the chain stays closed."""
    w = load_scene(scene_path("hinge_chain.json"))
    b = w.body_index("plate6")
    p = w.body_pos[b].copy()
    w.drag_start(b, p + w.B.rot[b] @ np.array([-0.0347, -0.022, 0.0999]), max_force=196.2)
    tilt = np.array([[0.944584423, -0.0669182305, -0.321375509],
                     [0.0, 0.979001703, -0.203852067],
                     [0.328268590, 0.192555487, 0.924749759]])
    for i in range(200):
        w.drag_to(p + [0, 0.5 * min(i / 40, 1), 0.1], tilt)
        w.step()
        assert np.isfinite(w.B.vel).all() and np.isfinite(w.B.pos).all(), i
        assert w.last_step()["max_position_error"] <= w.settings.eps_pos * (1 + 1e-9)
    assert w.body_pos[b][1] > p[1] + 0.3                  # lifted towards the hand
