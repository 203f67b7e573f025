"""Higher-order stepping (Schmitt's report sec. 8, issue 22 item 6): one step of h and two of
h/2 from the same start, extrapolated as p3 = -1/3 p1 + 4/3 p2 (engine/extrapolation.py)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from impulse.engine.scene import load_scene
from tests.conftest import ROOT

T0 = 2.00989262729860   # the 1 m pendulum's exact period at 10 degrees, g = 9.81
TABLE_9_1 = {0.02: -0.00033659873943, 0.01: -0.00008371325490, 0.005: -0.00002095018606}


def hermite_down_crossings(t, x, v):
    """Times where x crosses 0 downwards, on the cubic Hermite interpolant of (x, v): its
    error is O(h^4), below what is measured here (linear interpolation: O(h^3) ~ 1e-6)."""
    out = []
    for i in np.nonzero((x[:-1] > 0) & (x[1:] <= 0))[0]:
        h = t[i + 1] - t[i]
        a, b, da, db = x[i], x[i + 1], h * v[i], h * v[i + 1]
        p = np.polynomial.Polynomial([a, da, 3 * (b - a) - 2 * da - db, 2 * (a - b) + da + db])
        s = [r.real for r in p.roots() if abs(r.imag) < 1e-9 and -1e-9 <= r.real <= 1 + 1e-9]
        out.append(t[i] + min(s, key=lambda r: abs(r - x[i] / (x[i] - x[i + 1]))) * h)
    return np.array(out)


def pendulum_period(scene_path, h, extrapolate):
    w = load_scene(scene_path("pendulum.json"))
    w.settings.h = h
    w.settings.extrapolate = extrapolate
    r = w.run(int(round(2.7 / h)), record_every=1)
    down = hermite_down_crossings(r.times, r.pos[:, 0, 0], r.vel[:, 0, 0])
    return down[1] - down[0]


@pytest.mark.parametrize("h", sorted(TABLE_9_1))
def test_table_9_1_both_columns_plain_and_extrapolated(scene_path, h):
    """The plain method is the report's Table 9.1 (within 3 %); the extrapolated one is
    better by three orders of magnitude or more, and within 1e-7 s from h = 0.01 on."""
    plain = pendulum_period(scene_path, h, False) - T0
    extrapolated = pendulum_period(scene_path, h, True) - T0
    assert plain == pytest.approx(TABLE_9_1[h], rel=0.03)
    assert abs(extrapolated) < abs(plain) * 2e-3
    if h <= 0.01:
        assert abs(extrapolated) <= 1e-7


def test_extrapolation_is_third_order(scene_path):
    errs = [abs(pendulum_period(scene_path, h, True) - T0) for h in (0.02, 0.005)]
    order = np.log(errs[0] / errs[1]) / np.log(4.0)
    assert order >= 3.0


def mass_spring_deviation(scene_path, h, extrapolate):
    """Table 10.1's mass on a spring, x = 2 + cos t: the mean |x - 2 - cos t| over 17.2 s."""
    w = load_scene(scene_path("mass_spring.json"))
    w.settings.h = h
    w.settings.extrapolate = extrapolate
    r = w.run(int(round(17.2 / h)), record_every=1)
    x = r.pos[:, w.body_index("mass"), 0] - 2.0
    return np.mean(np.abs(x - np.cos(r.times)))


def test_springs_are_fourth_order_with_extrapolation(scene_path):
    """With extrapolate the spring acts as half kicks at t and t + h (velocities in step
    with positions): the deviation falls 16x per halving of h (plain: 4x), and at h = 0.02
    it is 2.7e-9 against 9.1e-5."""
    plain = [mass_spring_deviation(scene_path, h, False) for h in (0.04, 0.02)]
    ext = [mass_spring_deviation(scene_path, h, True) for h in (0.04, 0.02, 0.01)]
    assert plain[0] / plain[1] == pytest.approx(4.0, rel=0.1)
    assert ext[0] / ext[1] > 12 and ext[1] / ext[2] > 12
    assert ext[1] < 1e-8 and ext[1] < 1e-4 * plain[1]


def wheel_on_a_spring_deviation(h, extrapolate, stiffness=2.0, inertia=0.5):
    """A wheel on a hinge with a torsional spring (rest 0.5 rad from its start), no
    gravity: theta = -0.5 + 0.5 cos(w t), w = sqrt(k / I); mean |error| over 6 s."""
    doc = {"format": "impulse-scene", "version": 1,
           "settings": {"h": h, "gravity": [0, 0, 0], "eps_pos": 1e-12, "eps_vel": 1e-12,
                        "extrapolate": extrapolate},
           "bodies": [{"name": "wheel", "mass": 2.0, "inertia": [inertia] * 3}],
           "joints": [{"name": "axle", "type": "hinge", "bodies": ["world", "wheel"],
                       "anchor": [0, 0, 0], "axis": [0, 0, 1],
                       "spring": {"stiffness": stiffness, "rest": -0.5}}]}
    from impulse.engine import scene_to_world
    w = scene_to_world(doc)
    r = w.run(int(round(6.0 / h)), record_every=1)
    turn = r.rot[:, 0] @ r.rot[0, 0].T
    theta = np.arctan2(turn[:, 1, 0], turn[:, 0, 0])
    omega = np.sqrt(stiffness / inertia)
    return np.mean(np.abs(theta - (-0.5 + 0.5 * np.cos(omega * r.times))))


@pytest.mark.parametrize("stiffness,inertia", [(2.0, 0.5), (50.0, 0.2)])
def test_joint_springs_are_fourth_order_with_extrapolation(stiffness, inertia):
    """w = 2 and 15.8 rad/s (w h up to 0.16): the error falls 16x per halving (plain: 4x),
    and is 1/500 of plain stepping's or less at the middle step."""
    hs = (0.02, 0.01, 0.005) if stiffness > 10 else (0.04, 0.02, 0.01)
    plain = [wheel_on_a_spring_deviation(h, False, stiffness, inertia) for h in hs[:2]]
    ext = [wheel_on_a_spring_deviation(h, True, stiffness, inertia) for h in hs]
    assert plain[0] / plain[1] == pytest.approx(4.0, rel=0.15)
    assert ext[0] / ext[1] > 12 and ext[1] / ext[2] > 12
    assert ext[1] < 2e-3 * plain[1]


def test_chain8_energy_error_halves_the_reports_figure(scene_path):
    """The 8-chain at h = 0.01, Dmax 1e-5, 10 s: the report's mean energy error is 0.21 J."""
    w = load_scene(scene_path("chain8.json"))
    w.settings.h, w.settings.eps_pos = 0.01, 1e-5
    w.settings.extrapolate = True
    r = w.run(1000)
    drift = np.abs(r.energy - r.energy[0])
    assert drift.mean() <= 0.21


def test_a_resumed_run_continues_bit_for_bit(scene_path):
    w = load_scene(scene_path("double_pendulum.json"))
    w.settings.extrapolate = True
    w.run(20)
    snap = w.get_state()
    a = w.run(30, record_every=30)
    w.set_state(snap)
    b = w.run(30, record_every=30)
    assert np.array_equal(a.pos, b.pos) and np.array_equal(a.omega, b.omega)
    assert w.time == pytest.approx(snap["time"] + 30 * w.settings.h, abs=1e-12)


def test_steps_with_contacts_keep_the_two_half_steps(scene_path):
    """A bouncing ball: extrapolated steps in flight, the halves at the impacts; the apexes
    follow e^2 as in plain stepping at h/2, and a resting ball stays at rest."""
    def heights(extrapolate, h):
        w = load_scene(scene_path("bouncing_balls.json"))
        w.settings.h, w.settings.extrapolate = h, extrapolate
        r = w.run(int(3.0 / h), record_every=1)
        return r.pos[:, :, 1]

    ours = heights(True, 1 / 60)
    halves = heights(False, 1 / 120)[::2]
    assert np.isfinite(ours).all()
    assert np.abs(ours - halves).max() < 5e-3
    after = ours[int(0.6 * 60):int(1.6 * 60)]          # between the first two impacts
    for ball, e in ((3, 0.8), (4, 0.95)):                # ground, e = 0.3, 0.6, 0.8, 0.95
        assert after[:, ball].max() - 0.1 == pytest.approx(e * e, rel=0.02)


def test_command_line_flag(tmp_path):
    out = subprocess.run([sys.executable, "-m", "impulse.app", "sim", "pendulum", "--duration",
                          "0.5", "--extrapolate", "--json"], capture_output=True, text=True,
                         cwd=ROOT, timeout=600, env={**os.environ})
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["steps"] == 50 and d["step_halvings"] == 0
