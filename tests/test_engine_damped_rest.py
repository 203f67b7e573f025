"""A damper does not move where a body rests (#23): a body held by a damped spring against a
load comes to rest where the spring balances the load, at every step size, mass, stiffness
and damping, as in MuJoCo (whose damper reads the velocities at t) and as the analytic
equilibrium says. (Sleeping is off: a body oscillating slower than sleep_speed would fall
asleep before it reached the balance.)

The velocities at the start of a step are kick-drift-kick's: they hold half a step of every
load (the loads' second half kick) but nothing yet of a spring, which acts as one impulse
over its window at t. A damper that read them as they are saw the load's half step at rest
(alpha h / 2 through a hinge, g h / 2 on a hanging mass) and held the body short of the
balance by damping * that / stiffness: 1.2e-2 rad for an imported servo at h = 1/60. The
damper now reads the rate at t, the spring's half step included (joints/generic.apply_forces,
joints/spring.apply_damper).
"""
import numpy as np
import pytest
from scipy.optimize import brentq

from impulse.engine.world import World

G = 9.81
STEPS = [1 / 30, 1 / 60, 1 / 90, 0.01, 0.001]


def settle_steps(h, seconds):
    return int(round(seconds / h))


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("solver", ["iterative", "tree"])
@pytest.mark.parametrize("extrapolate", [False, True])
@pytest.mark.parametrize("mass,offset,stiffness,damping", [
    (1.0, 0.3, 20.0, 1.0),      # a servo-like spring, well damped
    (2.0, 0.5, 60.0, 0.5),      # lightly damped
    (0.2, 0.1, 2.0, 0.05),      # a light lever
])
def test_damped_joint_spring_rests_where_it_balances_gravity(h, solver, extrapolate, mass,
                                                             offset, stiffness, damping):
    """A lever (a cube of side 0.1 m whose centre is `offset` from a horizontal hinge) on
    a joint spring aiming at 0.5 rad: it rests where stiffness (0.5 - q) = m g offset cos q,
    within 1e-6 rad, whatever h (before: short of it by damping alpha h / 2 / stiffness), in
    plain stepping and with the extrapolation's half kicks."""
    w = World({"h": h, "eps_pos": 1e-9, "eps_vel": 1e-9, "solver": solver, "sleeping": False,
               "extrapolate": extrapolate})
    w.add_body({"name": "lever", "shape": {"type": "box", "size": [0.1, 0.1, 0.1]},
                "mass": mass, "position": [offset, 0.0, 0.0]})
    w.add_joint({"name": "h", "type": "hinge", "bodies": ["world", "lever"],
                 "anchor": [0, 0, 0], "axis": [0, 0, 1],
                 "spring": {"stiffness": stiffness, "rest": 0.5, "damping": damping}})
    pivot = mass * 0.1 ** 2 / 6 + mass * offset ** 2
    decay = 2 * pivot / damping                      # the damped oscillation's decay time
    w.run(settle_steps(h, 25 * decay))
    weight = mass * G * offset
    balance = brentq(lambda q: stiffness * (0.5 - q) - weight * np.cos(q), -2.0, 0.5)
    q = w.joint_coordinates("h")[0]
    assert q == pytest.approx(balance, abs=1e-6)
    w.run(10)
    assert w.joint_coordinates("h")[0] == pytest.approx(q, abs=1e-9)     # at rest


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("extrapolate", [False, True])
@pytest.mark.parametrize("mass,stiffness,damping", [
    (1.0, 100.0, 2.0), (5.0, 50.0, 10.0), (0.5, 200.0, 1.0)])
def test_mass_on_a_damped_spring_rests_at_its_static_stretch(h, extrapolate, mass, stiffness,
                                                              damping):
    """A ball hanging from a fixed point on a damped spring of rest length 1 m: it rests
    m g / stiffness below the rest length, within 1e-7 m (before: damping g h / 2 /
    stiffness short of it), in plain stepping and with the extrapolation's half kicks."""
    w = World({"h": h, "eps_pos": 1e-10, "eps_vel": 1e-10, "extrapolate": extrapolate,
               "sleeping": False})
    w.add_body({"name": "top", "shape": {"type": "sphere", "radius": 0.05},
                "position": [0.0, 2.0, 0.0], "fixed": True})
    w.add_body({"name": "ball", "shape": {"type": "sphere", "radius": 0.05}, "mass": mass,
                "position": [0.0, 0.9, 0.0]})
    w.add_joint({"name": "s", "type": "spring", "bodies": ["top", "ball"],
                 "anchors": [[0.0, 2.0, 0.0], [0.0, 0.9, 0.0]], "stiffness": stiffness,
                 "damping": damping, "rest_length": 1.0})
    # slowest decay: the overdamped mode (rate k / c) or the underdamped one (c / 2m)
    rate = min(damping / (2 * mass), stiffness / damping)
    w.run(settle_steps(h, 25 / rate))
    stretch = mass * G / stiffness
    ball = w.body_names.index("ball")
    y = w.B.pos[ball, 1]
    assert y == pytest.approx(2.0 - 1.0 - stretch, abs=1e-7)
    w.run(10)
    assert w.B.pos[ball, 1] == pytest.approx(y, abs=1e-10)                 # at rest
