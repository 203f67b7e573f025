"""Torsional and rolling friction as material fields (issue 16, item 6): lengths in m as in
MuJoCo, the pair takes the larger value. Analytic answers over step sizes, sizes, masses and
coefficients:
- a sphere spinning on its point of contact spins down at alpha = mu_t m g / I;
- a body rolling on flat ground slows at a = (mu_r / r) g / (1 + I / (m r^2)) and stops;
- on a slope it stays put where tan(theta) < mu_r / r and rolls down at
  a = g (sin(theta) - (mu_r / r) cos(theta)) / (1 + I / (m r^2)) where it is steeper."""
import math

import numpy as np
import pytest

from impulse.engine.scene import SceneError, scene_to_world
from tests.scene_docs import scene_doc
from tests.test_engine_contacts_viewer_step import down_slope, rolling_body, slope

G = 9.81
STEPS = [1 / 30, 1 / 60, 1 / 120, pytest.param(0.001, marks=pytest.mark.slow)]


def world(bodies, h):
    return scene_to_world(scene_doc(bodies, (), {"h": h, "sleeping": False}))


def ground(material=None):
    body = {"name": "ground", "fixed": True, "shape": {"type": "plane"}}
    if material:
        body["material"] = material
    return body


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("radius, mass, mu_t, on", [(0.1, 1.0, 0.002, "ball"),
                                                    (0.05, 4.0, 0.0005, "ground"),
                                                    (0.2, 0.3, 0.01, "ball")])
def test_a_ball_spinning_on_its_point_spins_down_at_mu_t_m_g_over_i(h, radius, mass, mu_t, on):
    omega0 = 15.0
    mat = {"torsional_friction": mu_t}
    ball = {"name": "ball", "shape": {"type": "sphere", "radius": radius}, "mass": mass,
            "position": [0, radius, 0], "angular_velocity": [0, omega0, 0]}
    if on == "ball":
        ball["material"] = mat
    w = world([ground(mat if on == "ground" else None), ball], h)
    alpha = mu_t * mass * G / w.B.const.inertia[1][1]
    t_stop = omega0 / alpha
    while w.time < 0.5 * t_stop - 1e-9:
        w.step()
    assert w.B.omega[1, 1] == pytest.approx(omega0 - alpha * w.time, rel=0.02)
    while w.time < 1.2 * t_stop:
        w.step()
        assert w.B.omega[1, 1] >= -1e-9                     # friction never turns it back
    assert abs(w.B.omega[1, 1]) < 1e-6
    np.testing.assert_allclose(w.B.pos[1], [0, radius, 0], atol=1e-4)


def test_without_torsional_friction_a_ball_keeps_spinning_on_its_point():
    w = world([ground(), {"name": "ball", "shape": {"type": "sphere", "radius": 0.1},
                          "mass": 1.0, "position": [0, 0.1, 0],
                          "angular_velocity": [0, 15.0, 0]}], 1 / 60)
    w.run(120)
    assert w.B.omega[1, 1] == pytest.approx(15.0, rel=1e-9)


def rolling_on_flat(kind, radius, mu_r, speed, h, mass=1.7):
    body = rolling_body(kind, radius, 0.0, 0.9)
    body["mass"] = mass
    body["velocity"] = [-speed, 0, 0]
    body["angular_velocity"] = [0, 0, speed / radius]
    body["material"] = {"static_friction": 0.9, "rolling_friction": mu_r}
    return world([slope(0.0, {"static_friction": 0.9}), body], h)


def inertia_ratio(w, radius):
    """I / (m r^2) about the rolling axis (world z)."""
    rot = w.B.rot[1]
    return (rot @ np.diag(w.B.const.inertia[1]) @ rot.T)[2, 2] * w.B.inv_mass[1] / radius ** 2


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("kind, radius, mu_r, speed, mass", [
    ("sphere", 0.1, 0.002, 1.0, 1.7), ("sphere", 0.03, 0.0003, 0.5, 0.2),
    ("cylinder", 0.05, 0.001, 1.2, 5.0), pytest.param("capsule", 0.08, 0.004, 2.0, 1.0,
                                                      marks=pytest.mark.slow)])
def test_rolling_friction_slows_a_rolling_body_at_the_analytic_rate(h, kind, radius, mu_r,
                                                                     speed, mass):
    w = rolling_on_flat(kind, radius, mu_r, speed, h, mass)
    a = (mu_r / radius) * G / (1 + inertia_ratio(w, radius))
    t_stop = speed / a
    while w.time < 0.5 * t_stop - 1e-9:
        w.step()
    v = -w.B.vel[1, 0]
    assert v == pytest.approx(speed - a * w.time, rel=0.01, abs=0.002 * speed)
    assert abs(v - w.B.omega[1, 2] * radius) <= 0.01 * v                # still no slip
    assert abs(w.B.pos[1, 1] - radius) < 1e-4 and abs(w.B.pos[1, 2]) < 1e-4
    while w.time < 1.3 * t_stop:
        w.step()
        assert -w.B.vel[1, 0] >= -w.settings.eps_vel       # it stops, never rolls back
    eps = w.settings.eps_vel
    assert abs(w.B.vel[1, 0]) < eps and abs(w.B.omega[1, 2]) * radius < eps


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("kind, radius, ratio", [("sphere", 0.1, 0.6), ("sphere", 0.04, 0.9),
                                                 ("cylinder", 0.06, 0.8)])
def test_rolling_friction_holds_a_ball_on_a_gentle_slope(h, kind, radius, ratio):
    """tan(theta) = ratio mu_r / r < mu_r / r: it stays where it was put (drift < 1 mm in 3 s)."""
    mu_r = 0.004
    angle = math.degrees(math.atan(ratio * mu_r / radius))
    body = rolling_body(kind, radius, angle, 0.9)
    body["material"] = {"static_friction": 0.9, "rolling_friction": mu_r}
    w = world([slope(angle, {"static_friction": 0.9}), body], h)
    p0 = w.B.pos[1].copy()
    while w.time < 3.0 - 1e-9:
        w.step()
    assert np.linalg.norm(w.B.pos[1] - p0) < 1e-3


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("kind, radius, angle", [("sphere", 0.1, 10.0), ("cylinder", 0.05, 25.0)])
def test_rolling_friction_slows_the_roll_down_a_steeper_slope(h, kind, radius, angle):
    mu_r = 0.005
    th = math.radians(angle)
    body = rolling_body(kind, radius, angle, 0.9)
    body["material"] = {"static_friction": 0.9, "rolling_friction": mu_r}
    w = world([slope(angle, {"static_friction": 0.9}), body], h)
    a = G * (math.sin(th) - mu_r / radius * math.cos(th)) / (1 + inertia_ratio(w, radius))
    p0 = w.B.pos[1].copy()
    while w.time < 1.0 - 1e-9:
        w.step()
    s = (w.B.pos[1] - p0) @ down_slope(angle)
    assert s == pytest.approx(0.5 * a * w.time ** 2, rel=0.01)


@pytest.mark.parametrize("field", ["torsional_friction", "rolling_friction"])
@pytest.mark.parametrize("value", [-0.001, 2.0, "a"])
def test_bad_coefficients_are_refused_naming_the_field(field, value):
    doc = scene_doc([{"name": "ball", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0,
                      "material": {field: value}}])
    with pytest.raises(SceneError, match=rf"\$\.bodies\[0\]\.material\.{field}"):
        scene_to_world(doc)


def test_the_pair_takes_the_larger_coefficient():
    w = world([ground({"rolling_friction": 0.003, "torsional_friction": 0.001}),
               {"name": "ball", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0,
                "position": [0, 0.1, 0],
                "material": {"rolling_friction": 0.001, "torsional_friction": 0.004}}], 1 / 60)
    w.step()
    coef = w.collision.C.coef
    assert len(coef) and coef[0, 3] == 0.004 and coef[0, 4] == 0.003


def test_the_rolling_friction_scene_does_what_its_description_says(scene_path):
    """scenes/rolling_friction.json: the balls stop where a = (mu_r / r) g / 1.4 puts them,
    the spinner stops turning at t = omega0 / (mu_t g / (2/5 r^2)), in place."""
    from impulse.engine import load_scene

    w = load_scene(scene_path("rolling_friction.json"))
    start = w.B.pos.copy()
    w.run(int(round(4.5 / w.settings.h)))
    for name, mu_r in (("ball_mu_r_0.01", 0.01), ("ball_mu_r_0.02", 0.02)):
        b = w.body_index(name)
        a = (mu_r / 0.1) * G / 1.4
        assert w.B.pos[b, 0] - start[b, 0] == pytest.approx(2.0 ** 2 / (2 * a), rel=0.01)
        assert abs(w.B.vel[b, 0]) < w.settings.eps_vel
    b = w.body_index("ball_mu_r_0.005")
    assert w.B.vel[b, 0] == pytest.approx(2.0 - (0.005 / 0.1) * G / 1.4 * w.time, rel=0.01)
    s = w.body_index("spinner")
    assert abs(w.B.omega[s, 1]) < 1e-6
    np.testing.assert_allclose(w.B.pos[s], start[s], atol=1e-4)
