"""The joint repertoire: constrained directions hold to the tolerance, free ones are free;
limits, servos, motors and target sequences do what they promise."""
import numpy as np
import pytest
from conftest import slow_only

from impulse.engine import World, load_scene
from impulse.engine.joints import KIND_NAMES

EPS_POS, EPS_VEL = 1e-6, 1e-5
# the iterative solver and the tree solver (every joint kind as rows of Baraff's O(n) solve,
# limits around it, motors inside it until they saturate) must keep the same promises
SOLVERS = pytest.mark.parametrize("solver", ["iterative", "tree"])


def two_bodies(kind, extra=None, gravity=(0, -9.81, 0), solver="iterative"):
    """A box on a ball joint to the world, and a second box joined to it by `kind`, both
    thrown with a tumbling start: a chaotic test motion."""
    w = World({"h": 0.005, "eps_pos": EPS_POS, "eps_vel": EPS_VEL, "gravity": list(gravity),
               "solver": solver})
    w.add_body({"name": "a", "shape": {"type": "box", "size": [0.4, 0.1, 0.1]}, "mass": 1.0,
                "position": [0.2, 1.0, 0.0], "angular_velocity": [0.5, 1.0, 2.0]})
    w.add_body({"name": "b", "shape": {"type": "box", "size": [0.3, 0.15, 0.1]}, "mass": 0.7,
                "position": [0.55, 1.0, 0.0], "angular_velocity": [3.0, -2.0, 1.0],
                "velocity": [0.0, 0.5, 0.3]})
    w.add_joint({"name": "top", "type": "ball", "bodies": ["world", "a"], "anchor": [0, 1, 0]})
    spec = {"name": "j", "type": kind, "bodies": ["a", "b"], "anchor": [0.4, 1.0, 0.0],
            "axis": [0.0, 0.6, 0.8]}
    if kind == "universal":
        spec["axis2"] = [1.0, 0.0, 0.0]
    if kind == "generic":
        spec["locked"] = ["x", "z", "rx", "ry"]
    spec.update(extra or {})
    w.add_joint(spec)
    return w


@pytest.mark.parametrize("solver", [pytest.param("iterative", marks=pytest.mark.slow), "tree"])
# (hinge, rail, slider and universal have their own tests in the fast lane)
@pytest.mark.parametrize("kind", slow_only(sorted(k for k in KIND_NAMES),
                                           "hinge", "rail", "slider", "universal"))
def test_every_joint_holds_to_tolerance_in_chaotic_motion(kind, solver):
    w = two_bodies(kind, solver=solver)
    r = w.run(2000)  # 10 s
    assert np.isfinite(w.body_pos).all()
    assert r.stats[:, 3].max() <= EPS_POS * (1 + 1e-6), kind       # position rows
    assert r.stats[:, 8].sum() == 0                                  # never out of budget
    assert w.last_step()["max_velocity_error"] <= EPS_VEL * (1 + 1e-6)


def test_hinge_makes_full_turns_and_keeps_energy():
    w = World({"h": 0.005, "gravity": [0, 0, 0], "eps_pos": 1e-8, "eps_vel": 1e-7})
    w.add_body({"name": "wheel", "shape": {"type": "box", "size": [0.6, 0.1, 0.1]}, "mass": 1.0,
                "angular_velocity": [0.0, 0.0, 5.0]})
    w.add_joint({"name": "axle", "type": "hinge", "bodies": ["world", "wheel"],
                 "anchor": [0, 0, 0], "axis": [0, 0, 1]})
    e0 = w.energy()[0]
    turns = 0.0
    last = w.joint_coordinates("axle")[0]
    for _ in range(400):
        w.run(5)
        now = w.joint_coordinates("axle")[0]
        turns += (now - last + np.pi) % (2 * np.pi) - np.pi
        last = now
    assert turns == pytest.approx(5.0 * 10.0, rel=1e-3)      # 10 s at 5 rad/s: ~8 turns
    assert w.energy()[0] == pytest.approx(e0, rel=1e-6)


def test_slider_slides_frictionless_with_exact_kinetic_energy():
    w = World({"h": 0.01, "eps_pos": 1e-8, "eps_vel": 1e-8})
    w.add_body({"name": "block", "shape": {"type": "box", "size": [0.2, 0.2, 0.2]}, "mass": 2.0,
                "velocity": [1.5, 0.0, 0.0]})
    w.add_joint({"name": "s", "type": "slider", "bodies": ["world", "block"],
                 "anchor": [0, 0, 0], "axis": [1, 0, 0]})
    w.run(100)
    assert w.body_pos[0] == pytest.approx([1.5, 0.0, 0.0], abs=1e-7)
    assert w.energy()[0] == pytest.approx(0.5 * 2.0 * 1.5 ** 2, rel=1e-9)
    assert w.joint_coordinates("s")[0] == pytest.approx(1.5, abs=1e-7)


def hinge_pendulum(extra, solver="iterative"):
    w = World({"h": 0.005, "eps_pos": 1e-7, "eps_vel": 1e-6, "solver": solver})
    w.add_body({"name": "arm", "shape": {"type": "box", "size": [0.5, 0.05, 0.05]}, "mass": 1.0,
                "position": [0.25, 0.0, 0.0]})
    w.add_joint({"name": "h", "type": "hinge", "bodies": ["world", "arm"], "anchor": [0, 0, 0],
                 "axis": [0, 0, 1], **extra})
    return w


@SOLVERS
def test_hinge_limit_is_never_exceeded(solver):
    lim = np.radians(30)
    w = hinge_pendulum({"limits": {"lower": -lim, "upper": lim}}, solver)
    angles = []
    for _ in range(600):
        w.step()
        angles.append(w.joint_coordinates("h")[0])
    assert min(angles) >= -lim - 1e-7 and max(angles) <= lim + 1e-7
    assert min(angles) < -lim + 1e-3        # it does reach the stop (gravity pulls it down)


@SOLVERS
def test_servo_reaches_and_holds_its_target_against_gravity(solver):
    w = hinge_pendulum({"motor": {"mode": "position", "target": 0.5, "max_force": 20.0}},
                       solver)
    w.run(400)
    assert w.joint_coordinates("h")[0] == pytest.approx(0.5, abs=1e-6)
    hold = 1.0 * 9.81 * 0.25 * np.cos(0.5)           # gravity torque at the target
    assert w.joint_motor_effort("h") == pytest.approx(hold, rel=0.02)


@SOLVERS
def test_weak_servo_saturates_at_its_maximum_torque(solver):
    w = hinge_pendulum({"motor": {"mode": "position", "target": 0.5, "max_force": 1.0}},
                       solver)
    w.run(400)
    assert w.joint_coordinates("h")[0] < 0.0          # cannot lift the arm (needs 2.45 N m)
    assert w.joint_motor_effort("h") == pytest.approx(1.0, rel=1e-9)


@SOLVERS
def test_velocity_motor_with_torque_limit(scene_path, solver):
    w = load_scene(scene_path("motors.json"))
    w.settings.solver = solver
    w.run(1000)  # 5 s: the wheel reaches 4 rad/s (needs 2 N m x ~2 s at most)
    wheel = w.body_index("wheel")
    assert w.body_omega[wheel][2] == pytest.approx(4.0, abs=1e-4)
    w2 = load_scene(scene_path("motors.json"))
    w2.settings.solver = solver
    w2.step()
    assert abs(w2.joint_motor_effort("wheel_motor")) == pytest.approx(2.0, rel=1e-9)


@SOLVERS
def test_linear_actuator_follows_its_target_sequence(scene_path, solver):
    w = load_scene(scene_path("motors.json"))
    w.settings.solver = solver
    w.run(int(round(1.5 / w.settings.h)))          # the target holds 0.5 from 1 s to 2 s
    assert w.joint_coordinates("actuator")[0] == pytest.approx(0.5, abs=1e-4)
    lag = []
    for _ in range(int(round(1.5 / w.settings.h))):  # 1.5 s .. 3 s: down the ramp to 0
        w.step()
        from impulse.engine.joints.generic import target_at
        lag.append(abs(w.joint_coordinates("actuator")[0] - target_at(w.J, 2, w.time)))
    assert max(lag) < 0.02


@SOLVERS
def test_rail_end_stops_hold(scene_path, solver):
    w = load_scene(scene_path("rail.json"))
    w.settings.solver = solver
    offsets = []
    for _ in range(800):
        w.step()
        offsets.append(w.joint_coordinates("guide")[0])
    assert max(offsets) <= 0.45 + 1e-6 and min(offsets) >= -0.5 - 1e-6
    assert max(offsets) > 0.45 - 1e-3


@SOLVERS
def test_universal_joint_transmits_rotation(scene_path, solver):
    w = load_scene(scene_path("universal_shaft.json"))
    w.settings.solver = solver
    w.run(1500)  # 3 s
    out = w.body_index("output")
    d = np.array([np.cos(np.radians(30)), np.sin(np.radians(30)), 0.0])
    rate = w.body_omega[out] @ d
    # Cardan: the output speed oscillates between w cos(a) and w / cos(a) around the input's
    assert 3.0 * np.cos(np.radians(30)) - 0.05 <= rate <= 3.0 / np.cos(np.radians(30)) + 0.05
    assert w.last_step()["max_position_error"] <= 1e-6


@pytest.mark.parametrize("solver", [pytest.param("iterative", marks=pytest.mark.slow), "tree"])
def test_slider_crank_closed_loop_runs_within_tolerance(scene_path, solver):
    w = load_scene(scene_path("slider_crank.json"))
    w.settings.solver = solver      # tree: the loop-closing joint by Gauss-Seidel around it
    r = w.run(2000)
    assert r.stats[:, 3].max() <= 1e-6 * (1 + 1e-6)
    piston = w.body_index("piston")
    assert 0.6 - 0.2 - 1e-3 <= w.body_pos[piston][0] <= 0.6 + 0.2 + 1e-3


def test_target_sequence_interpolates_and_repeats():
    w = hinge_pendulum({"motor": {"mode": "position", "max_force": 100.0,
                                  "target": {"times": [0, 1, 2], "values": [0, 1, 0],
                                             "repeat": True}}})
    from impulse.engine.joints.generic import target_at
    for t, v in [(0.0, 0.0), (0.5, 0.5), (1.0, 1.0), (1.5, 0.5), (2.5, 0.5), (3.25, 0.75)]:
        assert target_at(w.J, 0, t) == pytest.approx(v)


def test_bad_joint_specs_are_refused():
    w = World()
    w.add_body({"name": "a", "mass": 1.0, "inertia": [1, 1, 1]})
    with pytest.raises(ValueError):
        w.add_joint({"name": "u", "type": "universal", "bodies": ["world", "a"],
                     "anchor": [0, 0, 0], "axis": [1, 0, 0], "axis2": [1, 1, 0]})
    with pytest.raises(ValueError):
        w.add_joint({"name": "h", "type": "hinge", "bodies": ["world", "a"],
                     "anchor": [0, 0, 0], "axis": [0, 0, 0]})


@pytest.mark.slow
def test_seven_axis_servo_arm_follows_its_target_sequences(scene_path):
    """scenes/servo_arm.json (Schmitt sec. 10): seven servo axes, roll and pitch alternating,
    on the tree solver (every hinge's locks and servo row in one O(n) solve). Every step
    holds the joints to eps_pos without step halvings, no servo exceeds its T_max, and after
    the start-up transient every axis stays within 3 mrad of its sampled target sequence."""
    from impulse.engine.joints.generic import target_at
    w = load_scene(scene_path("servo_arm.json"))
    assert w.settings.solver == "tree"
    names = [jm.spec["name"] for jm in w.joint_models]
    assert len(names) == 7
    t_max = np.array([jm.spec["motor"]["max_force"] for jm in w.joint_models])
    lag = 0.0
    travel = np.zeros(7)
    start = np.array([w.joint_coordinates(n)[0] for n in names])
    for _ in range(int(round(4.0 / w.settings.h))):
        w.step()
        st = w.last_step()
        assert st["step_halvings"] == 0
        assert st["max_position_error"] <= w.settings.eps_pos * (1 + 1e-9)
        effort = np.abs([w.joint_motor_effort(n) for n in names])
        assert (effort <= t_max * (1 + 1e-9)).all()
        now = np.array([w.joint_coordinates(n)[0] for n in names])
        travel = np.maximum(travel, np.abs(now - start))
        if w.time > 1.0:
            lag = max(lag, max(abs(now[k] - target_at(w.J, k, w.time)) for k in range(7)))
    assert lag < 3e-3
    assert (travel > 0.5).all()      # every axis really moved (amplitudes 0.6 ... 1.5 rad)
