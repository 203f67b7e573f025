"""Contacts at the viewer's step (h = 1/30 ... 0.001) against analytic answers: impacts at
the moment of contact, restitution along chains of touching bodies, rolling without slip,
static friction on fresh contacts, stacks without a height cap, twist friction of a face.
Each case is run over step sizes and over several configurations (masses, sizes, angles,
coefficients)."""
import math

import numpy as np
import pytest

from impulse.engine import state as S
from impulse.engine.scene import scene_to_world
from tests.scene_docs import scene_doc

G = 9.81
VIEWER_STEPS = [1 / 30, 1 / 60, 1 / 120, pytest.param(0.001, marks=pytest.mark.slow)]


def doc(bodies, joints=(), **settings):
    return scene_doc(bodies, joints, settings)


def world(bodies, joints=(), **settings):
    return scene_to_world(doc(bodies, joints, **settings))


def slope(angle_deg, material=None, box=False):
    """A fixed slope rising towards -x: a plane (or a large box) turned about z."""
    th = math.radians(angle_deg)
    q = [math.cos(th / 2), 0, 0, math.sin(th / 2)]
    body = {"name": "ground", "fixed": True, "orientation": q, "shape": {"type": "plane"}}
    if box:
        n = slope_normal(angle_deg)
        body.update(shape={"type": "box", "size": [6, 0.2, 6]}, position=list(-0.1 * n))
    if material:
        body["material"] = material
    return body


def slope_normal(angle_deg):
    th = math.radians(angle_deg)
    return np.array([-math.sin(th), math.cos(th), 0.0])


def down_slope(angle_deg):
    th = math.radians(angle_deg)
    return np.array([-math.cos(th), -math.sin(th), 0.0])


# ---- 1. impacts at the moment of contact -------------------------------------------------

def apexes(w, b, radius, duration):
    """Apex heights above contact after each bounce: the first moment the ball rises, its
    energy height y + v^2/(2g) (ballistic, so exact at any sampling)."""
    out, best, rising = [], 0.0, False
    while w.time < duration - 1e-9:
        w.step()
        y, vy = w.B.pos[b, 1] - radius, w.B.vel[b, 1]
        if vy > 0:
            best, rising = max(best, y + vy * vy / (2 * G)), True
        elif rising:
            out.append(best)
            best, rising = 0.0, False
    return np.array(out)


@pytest.mark.parametrize("h", VIEWER_STEPS)
@pytest.mark.parametrize("e, radius, mass, drop", [(0.3, 0.1, 1.0, 1.0), (0.6, 0.03, 0.2, 0.5),
                                                   pytest.param(0.8, 0.25, 20.0, 1.3,
                                                                marks=pytest.mark.slow),
                                                   (0.95, 0.05, 3.0, 0.7)])
def test_bounce_apexes_follow_e_to_the_2k(h, e, radius, mass, drop):
    w = world([{"name": "ground", "fixed": True, "shape": {"type": "plane"}},
               {"name": "ball", "shape": {"type": "sphere", "radius": radius}, "mass": mass,
                "position": [0, radius + drop, 0], "material": {"restitution": e}}], h=h)
    duration = 2 * math.sqrt(2 * drop / G) * (1 + 2 * e / (1 - e)) * 0.9 if e < 0.9 else 4.0
    got = apexes(w, 1, radius, duration)
    k = np.arange(1, len(got) + 1)
    want = drop * e ** (2 * k)
    seen = want > 0.005
    assert seen.sum() >= min(3, int(math.log(0.005 / drop) / (2 * math.log(e))))
    np.testing.assert_allclose(got[seen], want[seen], rtol=0.02)


@pytest.mark.parametrize("h", VIEWER_STEPS)
@pytest.mark.parametrize("radius, speed, thickness, e", [(0.01, 100.0, 0.02, 0.0),
                                                         (0.02, 50.0, 0.05, 0.5),
                                                         (0.03, 20.0, 0.1, 0.0),
                                                         (0.015, 80.0, 0.03, 0.9)])
def test_small_fast_sphere_hits_a_thin_wall_at_its_face(h, radius, speed, thickness, e):
    """No tunnelling, no stopping short: the sphere's surface comes to the wall's face
    (within 1 mm) and never passes it by more than 1 mm. Where it bounces back within a
    step, the turning point follows from its straight path in and out (no gravity): at the
    step's end T, x_T = x_c - e v (T - t_c) with x_c = v t_c."""
    face = 1.0 - thickness / 2
    w = world([{"name": "wall", "fixed": True, "position": [1.0, 0, 0],
                "shape": {"type": "box", "size": [thickness, 2.0, 2.0]}},
               {"name": "ball", "shape": {"type": "sphere", "radius": radius}, "mass": 0.05,
                "position": [0, 0, 0], "velocity": [speed, 0, 0],
                "material": {"restitution": e, "static_friction": 0.0}}],
              h=h, gravity=[0, 0, 0])
    closest = np.inf
    while w.time < 2.0 / speed + 0.05:
        w.step()
        x = w.B.pos[1, 0]
        if e > 0 and w.B.vel[1, 0] < 0 and closest == np.inf:      # bounced in this step
            t_c = (x + e * speed * w.time) / (speed * (1 + e))
            closest = face - (speed * t_c + radius)
        gap = face - (x + radius)
        assert gap > -1e-3, f"passed the face by {-gap:.4f} m"
        if e == 0:
            closest = min(closest, gap)
    assert abs(closest) < 1e-3
    assert w.B.vel[1, 0] == pytest.approx(-e * speed, abs=0.01 * speed + 0.05)


# ---- 2. restitution through touching bodies ----------------------------------------------

@pytest.mark.parametrize("h", VIEWER_STEPS)
@pytest.mark.parametrize("n", [2, 3, 5, 7])
def test_free_newtons_cradle_hands_the_speed_on(h, n):
    r, v = 0.05, 1.5
    mat = {"restitution": 1.0, "static_friction": 0.0}
    balls = [{"name": f"b{i}", "shape": {"type": "sphere", "radius": r}, "mass": 0.7,
              "position": [2 * r * i, 0, 0], "material": mat} for i in range(n)]
    striker = {"name": "striker", "shape": {"type": "sphere", "radius": r}, "mass": 0.7,
               "position": [-2 * r - 0.13, 0, 0], "velocity": [v, 0, 0], "material": mat}
    w = world(balls + [striker], h=h, gravity=[0, 0, 0])
    while w.time < 0.4:
        w.step()
    vx = w.B.vel[:, 0]
    assert vx[n - 1] == pytest.approx(v, rel=0.05)
    assert np.abs(np.r_[vx[:n - 1], vx[n]]).max() < 0.05 * v
    assert 0.5 * (w.B.vel ** 2).sum() == pytest.approx(0.5 * v * v, rel=0.02)
    assert vx.sum() == pytest.approx(v, rel=1e-9)            # momentum (equal masses)


@pytest.mark.parametrize("h", VIEWER_STEPS)
@pytest.mark.parametrize("n", [3, 5])
def test_hung_newtons_cradle_swings_the_last_ball_out(h, n):
    r, L, angle = 0.05, 0.5, math.radians(20)
    bodies, joints = [], []
    for i in range(n):
        x = 2 * r * i
        p = [x - L * math.sin(angle), 1 - L * math.cos(angle), 0] if i == 0 else [x, 1 - L, 0]
        bodies.append({"name": f"b{i}", "shape": {"type": "sphere", "radius": r},
                       "mass": 1.0, "position": p,
                       "material": {"restitution": 1.0, "static_friction": 0.0}})
        joints.append({"name": f"j{i}", "type": "ball", "bodies": ["world", f"b{i}"],
                       "anchor": [x, 1.0, 0]})
    w = world(bodies, joints, h=h, eps_pos=1e-7)
    rise = L * (1 - math.cos(angle))
    top = np.full(n, -np.inf)
    while w.time < 0.75:           # the impact at ~0.36 s, the last ball at its top at ~0.72 s
        w.step()
        if w.time > 0.4:
            top = np.maximum(top, w.B.pos[:, 1] - (1 - L))
    assert top[-1] == pytest.approx(rise, rel=0.05)
    assert top[:-1].max() < 0.05 * rise


# ---- 3. rolling without slip, without sinking ---------------------------------------------

def rolling_body(kind, radius, angle_deg, mu):
    n = slope_normal(angle_deg)
    turned = [math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0]    # local Y along z
    shape = {"sphere": {"type": "sphere", "radius": radius},
             "capsule": {"type": "capsule", "radius": radius, "length": 2.5 * radius},
             "cylinder": {"type": "cylinder", "radius": radius, "height": 3 * radius}}[kind]
    return {"name": "body", "shape": shape, "mass": 1.7, "position": list(n * radius),
            "orientation": [1, 0, 0, 0] if kind == "sphere" else turned,
            "material": {"static_friction": mu}}


@pytest.mark.parametrize("h", VIEWER_STEPS)
@pytest.mark.parametrize("kind", ["sphere", "capsule", "cylinder"])
@pytest.mark.parametrize("angle, radius", [pytest.param(10, 0.1, marks=pytest.mark.slow),
                                           (25, 0.04),
                                           pytest.param(40, 0.2, marks=pytest.mark.slow)])
def test_bodies_roll_down_slopes_at_the_analytic_rate(h, kind, angle, radius):
    mu = 0.8
    w = world([slope(angle, {"static_friction": mu}), rolling_body(kind, radius, angle, mu)],
              h=h)
    m = 1.0 / w.B.inv_mass[1]
    rot = w.B.rot[1]
    i_axis = (rot @ np.diag(w.B.const.inertia[1]) @ rot.T)[2, 2]
    a = G * math.sin(math.radians(angle)) / (1 + i_axis / (m * radius ** 2))
    n, down = slope_normal(angle), down_slope(angle)
    p0 = w.B.pos[1].copy()
    e0 = sum(w.energy())
    deepest = 0.0
    while w.time < 1.0 - 1e-9:
        w.step()
        deepest = max(deepest, w.last_step()["contact_depth"],
                      radius - (w.B.pos[1] - 0) @ n)
        assert (w.B.pos[1] @ n) - radius < 1e-4                 # no lift-off
        # no energy gain beyond what the position tolerance allows (m g eps_pos)
        assert sum(w.energy()) <= e0 + m * G * w.settings.eps_pos
        if abs(w.time - 0.5) < h / 2:
            v = w.B.vel[1] @ down
            slip = abs(v - w.B.omega[1, 2] * radius)
            assert slip <= 0.01 * v
    s = (w.B.pos[1] - p0) @ down
    assert s == pytest.approx(0.5 * a * w.time ** 2, rel=0.01)
    assert deepest <= w.settings.eps_pos + 1e-4


@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 1 / 90])
@pytest.mark.parametrize("kind", ["sphere", "capsule", "cylinder"])
def test_fast_rolling_on_flat_ground_keeps_line_speed_and_height(h, kind):
    """omega h = 1 rad per step: it rolls on in a straight line, no lift-off, no loss."""
    radius = 0.05
    omega = 1.0 / h
    body = rolling_body(kind, radius, 0.0, 0.9)
    body["velocity"] = [-omega * radius, 0, 0]
    body["angular_velocity"] = [0, 0, omega]
    w = world([slope(0.0, {"static_friction": 0.9}), body], h=h)
    v0 = w.B.vel[1].copy()
    for _ in range(int(1.0 / h)):
        w.step()
        assert abs(w.B.pos[1, 1] - radius) < 1e-4
        assert abs(w.B.pos[1, 2]) < 1e-4                        # a straight line
    np.testing.assert_allclose(w.B.vel[1], v0, atol=0.01 * abs(v0[0]))
    assert w.B.omega[1, 2] == pytest.approx(omega, rel=0.01)


# ---- 4. static friction at every step size -------------------------------------------------

def block_on_slope(angle, mu_s, mu_d, h, size=0.2, mass=1.0, box=False):
    mat = {"static_friction": mu_s, "dynamic_friction": mu_d}
    th = math.radians(angle)
    return world([slope(angle, mat, box=box),
                  {"name": "block", "shape": {"type": "box", "size": [size] * 3}, "mass": mass,
                   "position": list(slope_normal(angle) * size / 2),
                   "orientation": [math.cos(th / 2), 0, 0, math.sin(th / 2)],
                   "material": mat}], h=h)


@pytest.mark.parametrize("h", [pytest.param(1e-4, marks=pytest.mark.slow),
                               pytest.param(0.001, marks=pytest.mark.slow),
                               pytest.param(0.004, marks=pytest.mark.slow), 1 / 60, 1 / 30])
@pytest.mark.parametrize("angle, mu_s, mu_d, size, mass, box", [
    (29, 0.6, 0.4, 0.2, 1.0, True), (20, 0.5, 0.2, 0.5, 30.0, False),
    (35, 0.75, 0.3, 0.1, 0.2, True)])
def test_block_sticks_below_the_static_friction_angle(h, angle, mu_s, mu_d, size, mass, box):
    assert mu_d < math.tan(math.radians(angle)) < mu_s
    w = block_on_slope(angle, mu_s, mu_d, h, size, mass, box)
    p0 = w.B.pos[1].copy()
    duration = 1.0 if h < 1e-3 else 3.0
    while w.time < duration - 1e-9:
        w.step()
    assert np.linalg.norm(w.B.pos[1] - p0) < 1e-3


@pytest.mark.parametrize("h", [pytest.param(0.001, marks=pytest.mark.slow), 1 / 60, 1 / 30])
@pytest.mark.parametrize("angle, mu_s, mu_d, box", [(35, 0.5, 0.3, False), (40, 0.7, 0.5, True),
                                                    (25, 0.4, 0.1, True)])
def test_block_slides_with_dynamic_friction_above_it(h, angle, mu_s, mu_d, box):
    th = math.radians(angle)
    assert math.tan(th) > mu_s
    w = block_on_slope(angle, mu_s, mu_d, h, box=box)
    p0 = w.B.pos[1].copy()
    while w.time < 1.0 - 1e-9:
        w.step()
    a = G * (math.sin(th) - mu_d * math.cos(th))
    assert (w.B.pos[1] - p0) @ down_slope(angle) == pytest.approx(0.5 * a * w.time ** 2,
                                                                  rel=0.01)


# ---- 5. stacks of any height, no hidden cap -----------------------------------------------

def tower(n, turned, size=0.4, seed=1):
    rng = np.random.default_rng(seed)
    bodies = [{"name": "ground", "fixed": True, "shape": {"type": "plane"}}]
    for i in range(n):
        angle = math.radians(3.0 * (1 if i % 2 else -1)) if turned else 0.0
        dx, dz = rng.uniform(-0.003, 0.003, 2) if turned else (0.0, 0.0)
        bodies.append({"name": f"box{i}", "shape": {"type": "box", "size": [size] * 3},
                       "mass": 1.0, "position": [dx, size * (i + 0.5), dz],
                       "orientation": [math.cos(angle / 2), 0, math.sin(angle / 2), 0]})
    return bodies


@pytest.mark.parametrize("n", [10, pytest.param(25, marks=pytest.mark.slow),
                               pytest.param(40, marks=pytest.mark.slow)])
@pytest.mark.parametrize("turned", [False, True])
def test_towers_stand_10_s_at_the_viewer_step(n, turned):
    w = world(tower(n, turned), h=1 / 60)
    p0 = w.B.pos.copy()
    layers = caps = 0
    while w.time < 10.0 - 1e-9:
        w.step()
        layers = max(layers, w.last_step()["shock_layers"])
        caps += w.stats[S.T_CAP_HIT] > 0
    assert np.linalg.norm(w.B.pos[-1] - p0[-1]) < 0.01
    assert layers == n                                  # every layer, none cut off
    assert caps == 0


@pytest.mark.slow
def test_the_252_stone_wall_stands_10_s_without_the_car():
    """wall_car.json's wall in quarter bond (12 rows of 21 stones), the car taken out, with
    sleeping off (the solver's own creep): friction anchors (contacts/system.py) take back
    what sticking contacts crept. Without them its top row crept 12 mm in 10 s; now 3.7 mm."""
    d = _wall_doc()
    d["settings"]["sleeping"] = False
    assert _top_row_creep(d) < 0.005


def _wall_doc():
    """wall_car.json without the car."""
    import json
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "scenes", "wall_car.json")
    with open(path) as f:
        d = json.load(f)
    d["bodies"] = [b for b in d["bodies"] if b["name"] == "ground" or b["name"][0] == "s"]
    d.pop("joints", None)
    return d


def _top_row_creep(d):
    """The worst move of the wall's top row over 10 s [m]."""
    w = scene_to_world(d)
    assert w.settings.h == pytest.approx(1 / 60) and w.B.pos.shape[0] == 253
    p0 = w.B.pos.copy()
    while w.time < 10.0 - 1e-9:
        w.step()
    top = p0[:, 1] > p0[1:, 1].max() - 0.01            # the top row
    return np.linalg.norm(w.B.pos[top] - p0[top], axis=1).max()


@pytest.mark.slow
def test_the_wall_falls_asleep_and_stands_10_s_as_the_viewer_shows_it():
    """With sleeping (the default) the wall rests within its first second and sleeps; its
    top row then stands 10 s (the creep above is the solver's without sleeping)."""
    assert _top_row_creep(_wall_doc()) < 0.002


def test_a_shock_cap_that_is_reached_is_reported():
    w = world(tower(12, False), h=1 / 60, shock_passes=5)
    w.step()
    assert w.last_step()["shock_layers"] == 5
    assert w.stats[S.T_CAP_HIT] >= 1


# ---- 6. only touching points act; twist friction from the face ----------------------------

def test_speculative_rows_carry_no_twist_for_a_top_on_its_tip():
    """A symmetric top spinning on a small tip: rim points within the detection margin
    must not brake its spin (was: lost spin whenever they came near)."""
    for h in (1 / 200, 1 / 60):
        w = spinning_top(h, spin=60.0, tilt_deg=15.0)
        axis0 = w.B.rot[1][:, 1].copy()
        s0 = w.B.omega[1] @ axis0
        while w.time < 3.0 - 1e-9:
            w.step()
        axis = w.B.rot[1][:, 1]
        assert w.B.omega[1] @ axis == pytest.approx(s0, rel=0.02)


def spinning_top(h, spin, tilt_deg):
    """A heavy symmetric top: a disc (radius 0.12 m) 6 cm up a stem from its 5 mm tip
    (m = 7.135 kg, I1 = 0.02575, I3 = 0.05081 kg m^2 about the centre of mass; the
    sleeping-top limit 2 sqrt(m g l I1')/I3 is 18.3 rad/s), its tip on a frictionless
    floor, tilted by tilt_deg, started in the steady precession with its centre of mass at
    rest (the tip circles under it): the slow root of I1 cos(th) W^2 - I3 w3 W + m g l = 0
    (I1 about the centre of mass: the torque of the floor's push about it is m g l sin th;
    w3 the spin)."""
    m, I1, I3, arm, tip = 7.135, 0.02575, 0.05081, 0.06, 0.005     # arm: l above
    th = math.radians(tilt_deg)
    axis = np.array([math.sin(th), math.cos(th), 0.0])
    a_, b_, c_ = I1 * math.cos(th), -I3 * spin, m * G * arm
    W = (-b_ - math.sqrt(b_ * b_ - 4 * a_ * c_)) / (2 * a_)
    omega = spin * axis + W * np.array([0, 1.0, 0]) - (W * math.cos(th)) * axis
    body = {"name": "top", "mass": m, "inertia": [I1, I3, I1], "center_of_mass": [0, arm, 0],
            "shapes": [{"type": "cylinder", "radius": 0.12, "height": 0.02,
                        "position": [0, arm, 0]},
                       {"type": "sphere", "radius": tip, "position": [0, 0, 0]}],
            "position": [0, tip, 0],
            "orientation": [math.cos(-th / 2), 0, 0, math.sin(-th / 2)],
            "angular_velocity": list(omega), "velocity": [0.0, 0.0, 0.0],
            "material": {"static_friction": 0.0}}
    w = world([{"name": "ground", "fixed": True, "shape": {"type": "plane"},
                "material": {"static_friction": 0.0}}, body], h=h)
    w.precession = W
    return w


@pytest.mark.parametrize("h, spin, tilt", [
    (h, spin, tilt) if (spin, tilt) != (45.0, 25.0) else
    pytest.param(h, spin, tilt, marks=pytest.mark.slow)
    for h in (1 / 200, 1 / 90, 1 / 60, 1 / 30)
    for spin, tilt in ((60.0, 10.0), (120.0, 20.0), (45.0, 25.0))
    if spin * h <= 3.0])                # motion.ALIAS_TURN: beyond it the single series
def test_heavy_top_precesses_at_the_analytic_rate(h, spin, tilt):
    """At h = 1/60 the top's axis circles L by 2 rad a step (120 rad/s: 4 rad), which the
    rotation series takes in sub-steps (motion.series_over_step); it was 4.5 % fast at 10
    deg, at half the rate at 25 deg, and blew up at 120 rad/s. What is left is second order
    in h (the floor's push acts at the step's start): 0.4 % at 1/60, 2.0 % at 1/30, where
    the issue asks for no bound and this one is 3 %."""
    w = spinning_top(h, spin, tilt)
    ts, az = [], []
    s0 = w.B.omega[1] @ w.B.rot[1][:, 1]
    while w.time < 3.0 - 1e-9:
        w.step()
        a = w.B.rot[1][:, 1]
        ts.append(w.time)
        az.append(math.atan2(-a[2], a[0]))
    rate = np.polyfit(ts, np.unwrap(az), 1)[0]
    assert abs(rate) == pytest.approx(w.precession, rel=0.02 if h < 1 / 40 else 0.03)
    assert w.B.omega[1] @ w.B.rot[1][:, 1] == pytest.approx(s0, rel=0.02)
    assert math.degrees(math.acos(w.B.rot[1][1, 1])) == pytest.approx(tilt, abs=1.0)


@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 1 / 120,
                               pytest.param(0.001, marks=pytest.mark.slow)])
@pytest.mark.parametrize("R, mu", [(0.1, 0.3), (0.25, 0.6), (0.05, 0.9)])
def test_flat_disc_spins_down_at_two_thirds_mu_n_r(h, R, mu):
    """A solid disc lying on its face, spinning: alpha = 2 mu m g R / (3 I) = 4 mu g / (3 R)."""
    omega0 = 20.0
    w = world([{"name": "ground", "fixed": True, "shape": {"type": "plane"},
                "material": {"static_friction": mu}},
               {"name": "disc", "shape": {"type": "cylinder", "radius": R, "height": 0.02},
                "mass": 2.0, "position": [0, 0.01, 0], "angular_velocity": [0, omega0, 0],
                "material": {"static_friction": mu}}], h=h)
    inertia = w.B.const.inertia[1][1]
    alpha = 2 * mu * 2.0 * G * R / (3 * inertia)
    t = 0.5 * omega0 / alpha
    while w.time < t - 1e-9:
        w.step()
    assert w.B.omega[1, 1] == pytest.approx(omega0 - alpha * w.time, rel=0.02)


@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 1 / 120])
@pytest.mark.parametrize("side, thickness, mu", [(0.2, 0.01, 0.3), (0.5, 0.004, 0.6),
                                                 (0.3, 0.05, 0.4)])
def test_thin_plate_spins_down_on_its_face_not_on_its_top(h, side, thickness, mu):
    """A square plate thinner than the contact margin spinning on its face: both faces'
    corners are candidates, and the reduction keeps the four that touch. Uniform pressure:
    torque mu m g R, R = (s/2)(sqrt 2 + asinh 1)/3, I = m s^2/6 (+ the thickness's part)."""
    omega0, mass = 8.0, 1.5
    w = world([{"name": "ground", "fixed": True, "shape": {"type": "plane"},
                "material": {"static_friction": mu}},
               {"name": "plate", "shape": {"type": "box", "size": [side, thickness, side]},
                "mass": mass, "position": [0, thickness / 2, 0],
                "angular_velocity": [0, omega0, 0], "material": {"static_friction": mu}}], h=h)
    r_face = (side / 2) * (math.sqrt(2) + math.asinh(1.0)) / 3
    alpha = mu * mass * G * r_face / w.B.const.inertia[1][1]
    while w.time < 0.5 * omega0 / alpha - 1e-9:
        w.step()
        assert abs(w.B.rot[1][1, 1] - 1.0) < 1e-6                     # flat, never tipped
    assert w.B.omega[1, 1] == pytest.approx(omega0 - alpha * w.time, rel=0.02)
    assert abs(w.B.pos[1, 1] - thickness / 2) < w.settings.eps_pos + 1e-4
