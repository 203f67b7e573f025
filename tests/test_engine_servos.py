"""Torque-limited servos and motors against analytic answers (issue 22, items 1 and 2).

A servo with maximum torque T moves a lever (a cube of side s and mass m whose centre sits
d from the hinge): through the hinge the lever's inertia is I = m s^2 / 6 + m d^2, so the
most it can accelerate is a = T / I. It accelerates at full torque and brakes on half of it
(generic.motor_change), so it never overshoots, wherever the mass is: before the fix the
braking was sized with the inertia about the centre of mass (m s^2 / 6), and a lever with
d = 0.3 m overshot a 1 rad move by 90 %. A servo too weak for its load (and a damper to
settle it) rests where the load's torque equals T, at rest: its impulse is split between
the step's two stages like a constant torque (half at t, half at t + h), so the step's
velocity at t + h carries no O(h) remainder.
"""
import numpy as np
import pytest

from impulse.engine.world import World

G = 9.81


def lever(offset, side, h, solver, target, torque, gravity=True, mass=1.0, damping=0.0,
          servo="position"):
    w = World({"h": h, "eps_pos": 1e-7, "eps_vel": 1e-6, "solver": solver,
               "gravity": [0.0, -G if gravity else 0.0, 0.0]})
    w.add_body({"name": "lever", "shape": {"type": "box", "size": [side, side, side]},
                "mass": mass, "position": [offset, 0.0, 0.0]})
    joint = {"name": "h", "type": "hinge", "bodies": ["world", "lever"], "anchor": [0, 0, 0],
             "axis": [0, 0, 1], "motor": {"mode": servo, "target": target, "max_force": torque}}
    if damping:
        joint["spring"] = {"damping": damping}
    w.add_joint(joint)
    return w


def inertia(offset, side, mass=1.0):
    return mass * side * side / 6.0 + mass * offset * offset


@pytest.mark.parametrize("solver", ["iterative", "tree"])
@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 0.01, 0.002])
@pytest.mark.parametrize("offset,side", [(0.0, 0.3), (0.1, 0.1), (0.3, 0.1), (0.6, 0.2),
                                         (0.25, 0.5)])
@pytest.mark.parametrize("gravity", [False, True])
def test_torque_limited_move_does_not_overshoot_wherever_the_mass_is(solver, h, offset, side,
                                                                    gravity):
    move = 1.0
    inertia_h = inertia(offset, side)
    load = G * offset                       # the largest gravity torque on the lever
    torque = 3.0 * load if gravity and offset > 0 else 2.0
    a = torque / inertia_h
    w = lever(offset, side, h, solver, move, torque, gravity)
    t_min = 2.0 * np.sqrt(move / a)         # bang-bang at full torque, no load
    steps = int(max(2.0, 6.0 * t_min) / h)
    angles = np.empty(steps)
    for i in range(steps):
        w.step()
        angles[i] = w.joint_coordinates("h")[0]
    assert angles.max() - move <= 0.05 * move
    assert angles[-1] == pytest.approx(move, abs=1e-5)             # and it holds there
    assert abs(w.body_omega[0][2]) < 1e-5
    if not gravity:
        # accelerate at a, brake at a / 2: v = sqrt(2 a d / 3), t = 3 v / a (plus the
        # steps' discreteness); never faster than full torque allows
        t_profile = 3.0 * np.sqrt(2.0 * a * move / 3.0) / a
        reached = (np.argmax(angles > 0.99 * move) + 1) * h
        assert t_min * 0.99 <= reached + h <= 1.15 * t_profile + 3 * h


@pytest.mark.parametrize("solver", ["iterative", "tree"])
def test_servo_on_a_slider_stops_at_its_target(solver):
    """The offset coordinate: a block on a vertical slider lifted 0.5 m by a force-limited
    servo (3x its weight), and lowered again."""
    for h in (1 / 60, 0.01):
        w = World({"h": h, "eps_pos": 1e-7, "eps_vel": 1e-6, "solver": solver})
        w.add_body({"name": "block", "shape": {"type": "box", "size": [0.2, 0.2, 0.2]},
                    "mass": 2.0})
        w.add_joint({"name": "s", "type": "slider", "bodies": ["world", "block"],
                     "anchor": [0, 0, 0], "axis": [0, 1, 0],
                     "motor": {"mode": "position", "target": 0.5, "max_force": 3 * 2.0 * G}})
        ys = []
        for _ in range(int(2.0 / h)):
            w.step()
            ys.append(w.joint_coordinates("s")[0])
        assert max(ys) <= 0.5 * 1.05 and ys[-1] == pytest.approx(0.5, abs=1e-6)
        assert abs(w.body_vel[0][1]) < 1e-6


@pytest.mark.parametrize("solver", ["iterative", "tree", "linear"])
@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 0.01, 0.005])
@pytest.mark.parametrize("torque", [0.6, 1.0, 2.0])
def test_saturated_servo_rests_where_the_load_equals_its_torque(solver, h, torque):
    """A 0.5 m, 1 kg arm (gravity torque m g L/2 cos phi, 2.45 N m at most) and a servo
    aiming at +0.5 rad that cannot lift it: it settles at cos phi = T / (m g L/2)."""
    w = World({"h": h, "eps_pos": 1e-7, "eps_vel": 1e-6, "solver": solver})
    w.add_body({"name": "arm", "shape": {"type": "box", "size": [0.5, 0.05, 0.05]},
                "mass": 1.0, "position": [0.25, 0.0, 0.0]})
    w.add_joint({"name": "h", "type": "hinge", "bodies": ["world", "arm"], "anchor": [0, 0, 0],
                 "axis": [0, 0, 1], "spring": {"damping": 0.3},
                 "motor": {"mode": "position", "target": 0.5, "max_force": torque}})
    w.run(int(30.0 / h))
    balance = -np.arccos(torque / (G * 0.25))
    assert w.joint_coordinates("h")[0] == pytest.approx(balance, abs=1e-3)
    assert abs(w.body_omega[0][2]) < 1e-6
    assert np.abs(w.body_vel[0]).max() < 1e-6
    assert w.joint_motor_effort("h") == pytest.approx(torque, rel=1e-9)


@pytest.mark.parametrize("solver", ["iterative", "tree"])
@pytest.mark.parametrize("h", [1 / 60, 0.01, 0.002])
def test_holding_servo_reports_no_motion_at_rest(solver, h):
    """Holding a lever out against gravity: the angle stays on target and the velocity at
    the end of every step is zero (no h-sized remainder of the load's push)."""
    w = lever(0.3, 0.1, h, solver, 0.4, 10.0)
    w.run(int(2.0 / h))
    for _ in range(20):
        w.step()
        assert w.joint_coordinates("h")[0] == pytest.approx(0.4, abs=1e-6)
        assert abs(w.body_omega[0][2]) < 1e-6
    hold = 1.0 * G * 0.3 * np.cos(0.4)
    assert w.joint_motor_effort("h") == pytest.approx(hold, rel=1e-3)


@pytest.mark.parametrize("solver", ["iterative", "tree"])
@pytest.mark.parametrize("h", [1 / 60, 0.01])
def test_velocity_motor_keeps_its_rate_at_every_step_end_against_a_varying_load(solver, h):
    """An off-centre lever turned at 2 rad/s about a horizontal axis: gravity's torque
    changes sign every half turn; with torque to spare the rate at the end of every step is
    the target, and the motor's effort follows the gravity torque."""
    w = lever(0.3, 0.1, h, solver, 2.0, 20.0, servo="velocity")
    for i in range(int(3.0 / h)):
        w.step()
        if i > 2:
            assert w.body_omega[0][2] == pytest.approx(2.0, abs=1e-6)
    phi = w.joint_coordinates("h")[0]
    mid = phi - 2.0 * h / 2           # the effort is the step's mean torque
    assert w.joint_motor_effort("h") == pytest.approx(G * 0.3 * np.cos(mid), abs=0.05)
