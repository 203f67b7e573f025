"""Contacts, collisions and friction (engine/contacts/solve.py) against published numbers."""
import json
import os

import numpy as np
import pytest

from impulse.engine.scene import load_scene, scene_to_world
from tests.scene_docs import scene_doc

SCENES = os.path.join(os.path.dirname(__file__), "..", "scenes")


def scene(name):
    return load_scene(os.path.join(SCENES, name))


def ground():
    return {"name": "ground", "fixed": True, "shape": {"type": "plane"}}


def doc(bodies, settings=None, joints=(), contacts=None):
    return scene_doc(bodies, joints, settings or {"h": 0.001}, contacts)


def impulse_by_pair(w):
    cs, imp = w.contacts, w.contact_impulse
    out = {}
    if len(cs) == 0:
        return out
    names = w.body_names
    for a, b, p in zip(cs.body_a, cs.body_b, imp, strict=True):
        key = frozenset((names[a], names[b]))
        out[key] = out.get(key, 0.0) + float(p)
    return out


def test_rod_impacts_then_rest_without_chatter():
    w = scene("rod_table.json")
    assert w.settings.h == 0.001
    first = second = None
    ys, speeds = [], []
    while w.time < 1.2 - 1e-9:
        t = w.time
        w.step()
        cs, imp = w.contacts, w.contact_impulse
        if len(cs) and imp.sum() > 0:
            axis = w.B.rot[1][:, 1]                     # capsule axis (principal Y)
            side = np.sign((cs.world - w.B.pos[1]) @ axis)[imp > 0]
            if first is None:
                first, first_side = t, side[0]
            elif second is None and np.any(side == -first_side):
                second = t
        if w.time > 0.8:
            ys.append(w.B.pos[1, 1])
            speeds.append(max(np.abs(w.B.vel[1]).max(), np.abs(w.B.omega[1]).max() * 0.3))
    assert first == pytest.approx(0.383, abs=0.003)
    assert second == pytest.approx(0.548, abs=0.005)
    assert max(speeds) < 1e-3                          # at rest before 0.8 s
    assert np.ptp(ys) < 1e-5                           # and no chatter afterwards


def test_four_balls_times_and_outcome():
    w = scene("four_balls.json")
    ground_hit = ball_hit = None
    lifted = False
    ball3_airborne = False
    while w.time < 1.2 - 1e-9:
        t = w.time
        w.step()
        p = impulse_by_pair(w)
        if ground_hit is None and p.get(frozenset(("ball1", "ground")), 0) > 0:
            ground_hit = t
        if ball_hit is None and p.get(frozenset(("ball1", "ball2")), 0) > 0:
            ball_hit = t
        if ball_hit is not None and t < ball_hit + 0.05:
            lifted |= w.B.pos[1, 1] > 0.1 + 5e-4          # friction lifts the thrown ball
            ball3_airborne |= p.get(frozenset(("ball3", "ground")), 0) == 0
    assert ground_hit == pytest.approx(0.4284, abs=0.003)
    assert ball_hit == pytest.approx(0.585, abs=0.005)
    assert lifted and ball3_airborne
    vx = w.B.vel[1:, 0]
    assert np.all(vx[1:] > 0.05)                        # the row moves off along +x
    assert np.all(np.abs(w.B.pos[1:, 1] - 0.1) < 1e-3)  # back on the table, rolling


@pytest.mark.parametrize("e", [0.5, 0.8])
@pytest.mark.parametrize("law", ["newton", "poisson"])
def test_sphere_bounces_to_e_squared_height(e, law):
    drop = 1.0
    w = scene_to_world(doc([ground(), {
        "name": "ball", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0,
        "position": [0, 0.1 + drop, 0], "material": {"restitution": e}}],
        settings={"h": 0.001, "restitution_law": law}))
    ys = []
    hit = False
    while w.time < 1.5:
        w.step()
        ys.append(w.B.pos[1, 1])
        hit |= w.contact_impulse.sum() > 0
        if hit and w.B.vel[1, 1] < 0:
            break
    assert max(ys[-50:]) - 0.1 == pytest.approx(e * e * drop, rel=0.02)


def test_box_stack_stands_10_s():
    w = scene("box_stack.json")
    assert w.settings.h == pytest.approx(1 / 60)
    p0 = w.B.pos.copy()
    w.run(600)
    drift = np.linalg.norm((w.B.pos - p0)[:, [0, 2]], axis=1)
    assert drift[-1] <= 1e-3                            # top box
    assert np.abs(w.B.pos[:, 1] - p0[:, 1]).max() < 1e-3   # nothing fell


@pytest.mark.parametrize("h", [1 / 45, 1 / 60, 1 / 90, 1 / 120])
def test_resting_tall_tower_keeps_its_manifolds_and_its_loops_stop_at_once(h):
    """The 20 cubes, each turned 2-4 degrees against the next, rest after 3 s: from then on
    every detection finds the same contact points (feature ids) as the last, so the warm
    start holds and the position loop stops in its first cycle. Before manifold.DEPTH_TIE
    the octagons' kept corners flipped with micrometre tilts and the loop ran to the cycle
    cap (10) every step."""
    w = scene("tall_tower.json")
    w.settings.h = h
    w.settings.sleeping = False
    w.run(int(round(3.0 / h)))
    last = None
    cycles = []
    for _ in range(int(round(0.5 / h))):
        w.step()
        cs = w.collision.last
        now = set(zip(cs.body_a.tolist(), cs.body_b.tolist(), cs.feature.tolist(), strict=True))
        assert last is None or now == last
        last = now
        cycles.append(w.last_step()["cycles"])
    assert np.mean(cycles) <= 1.5


def test_pyramid_stands():
    w = scene("pyramid.json")
    p0 = w.B.pos.copy()
    w.run(300)
    assert np.abs(w.B.pos - p0).max() < 5e-3


@pytest.mark.parametrize("name", ["rod_table.json", "four_balls.json", "box_stack.json",
                                  "pyramid.json",
                                  pytest.param("chain_drape.json", marks=pytest.mark.slow),
                                  pytest.param("hexapod.json", marks=pytest.mark.slow),
                                  pytest.param("wall_car.json", marks=pytest.mark.slow),
                                  pytest.param("funnel_1000.json", marks=pytest.mark.slow),
                                  "newtons_cradle.json",
                                  "bouncing_balls.json", "rolling_bodies.json",
                                  "tall_tower.json", "spinning_top.json"])
def test_contact_depth_stays_within_tolerance(name):
    w = scene(name)
    tol = w.settings.eps_pos + w.settings.contact_margin
    worst = 0.0
    for _ in range(int(round(1.0 / w.settings.h))):
        w.step()
        C = w.collision.C          # detected at the start of the step = end of the last one
        if len(C.depth):
            worst = max(worst, float(C.depth.max()))
    assert worst <= tol


@pytest.mark.slow
def test_wall_of_wall_car_stands_until_the_car_breaks_through_it():
    """Bender's car and wall: 252 stones in quarter bond stand on their own (no stone moves
    1 cm in the first second; with Schmitt's sliding rule for friction the wall shook itself
    down within 2 s), then the car, driven by its wheel motors, breaks through."""
    w = scene("wall_car.json")
    stones = [i for i, n in enumerate(w.body_names) if n.startswith("s")]
    car = w.body_index("chassis")
    assert len(stones) == 252
    p0 = w.B.pos[stones].copy()
    w.run(60)
    assert w.B.pos[car, 0] < 2.0                        # not there yet
    assert np.linalg.norm(w.B.pos[stones] - p0, axis=1).max() < 0.01
    w.run(120)
    moved = np.linalg.norm(w.B.pos[stones] - p0, axis=1)
    assert w.B.pos[car, 0] > 3.0                        # through the wall's plane (x = 3)
    assert (moved > 0.1).sum() > 50


def test_disabled_pair_passes_through():
    def run(disabled):
        a = {"name": "a", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0,
             "position": [-0.5, 1, 0], "velocity": [2, 0, 0]}
        b = {"name": "b", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0,
             "position": [0.5, 1, 0], "velocity": [-2, 0, 0]}
        w = scene_to_world(doc([a, b], settings={"h": 0.005, "gravity": [0, 0, 0]},
                               contacts={"disabled_pairs": [["a", "b"]] if disabled else []}))
        w.run(100)
        return w
    through = run(True)
    assert through.B.pos[0, 0] > 0.4 and through.B.pos[1, 0] < -0.4
    blocked = run(False)
    assert blocked.B.pos[0, 0] < 0.0 < blocked.B.pos[1, 0]
    blocked.set_pair_collision("a", "b", False)
    assert blocked.contacts_spec["disabled_pairs"] == [["a", "b"]]


def test_materials_combine_max_restitution_and_geometric_friction():
    a = {"name": "a", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0,
         "position": [0, 0.1, 0], "material": {"restitution": 0.3, "static_friction": 0.4,
                                               "dynamic_friction": 0.1}}
    g = ground()
    g["material"] = {"restitution": 0.6, "static_friction": 0.9, "dynamic_friction": 0.4}
    w = scene_to_world(doc([g, a]))
    w.step()
    assert w.contact_count == 1
    assert w.collision.C.coef[0] == pytest.approx([0.6, 0.6, 0.2, 0.0, 0.0])


@pytest.mark.parametrize("name,seconds", [("rod_table.json", 0.2), ("four_balls.json", 0.2),
                                          ("box_stack.json", 0.5), ("pyramid.json", 0.5),
                                          pytest.param("funnel_1000.json", 0.05,
                                                       marks=pytest.mark.slow),
                                          pytest.param("wall_car.json", 0.1,
                                                       marks=pytest.mark.slow),
                                          ("hexapod.json", 0.5), ("chain_drape.json", 0.5),
                                          ("newtons_cradle.json", 0.5),
                                          ("bouncing_balls.json", 0.5),
                                          ("rolling_bodies.json", 0.5), ("tall_tower.json", 0.5),
                                          ("spinning_top.json", 0.5)])
def test_every_contact_scene_loads_and_runs(name, seconds):
    w = scene(name)
    d = json.load(open(os.path.join(SCENES, name)))
    assert d["name"] and d["description"]
    assert any(b.get("shape", {}).get("type") == "plane" and b.get("fixed")
               for b in d["bodies"])
    w.run(max(1, int(round(seconds / w.settings.h))))
    assert np.isfinite(w.B.pos).all() and np.isfinite(w.B.vel).all()


def test_live_edit_rebuilds_the_shape_rows():
    w = scene("box_stack.json")
    k = len(w.shape_kind)
    w.add_body({"name": "extra", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0,
                "position": [1, 0.1, 0]})
    assert len(w.shape_kind) == k + 1 and w.shape_body[-1] == len(w.models) - 1
    w.remove_body("box0")
    assert len(w.shape_kind) == k and w.shape_body.max() == len(w.models) - 1
    w.step()
    assert w.contact_count > 0


def _settle_draped_chain(w):
    """5 s, then the top speed and the largest joint error over 0.5 s (the solver's own
    rest: sleeping off)."""
    w.settings.sleeping = False
    w.run(300)
    top_speed, joint_err = 0.0, 0.0
    for _ in range(30):
        w.step()
        moving = ~w.B.static
        top_speed = max(top_speed, np.linalg.norm(w.B.vel[moving], axis=1).max())
        joint_err = max(joint_err, w.J.err.max())
    return top_speed, joint_err


@pytest.mark.slow
def test_hinge_chain_draped_over_a_box_comes_to_rest():
    """Joints and contacts together (scenes/chain_drape.json, the tree solver with the
    contacts through the tree): 12 plates on hinges fall across a box, the ends land on the
    ground; after 5 s nothing moves faster than 1 mm/s, the hinges hold."""
    w = scene("chain_drape.json")
    assert w.settings.solver == "tree" and w.settings.h == 1 / 60
    top_speed, joint_err = _settle_draped_chain(w)
    assert top_speed < 1e-3
    assert joint_err <= w.settings.eps_pos * 1.0001
    links = [w.body_names.index(f"link{i}") for i in range(12)]
    assert w.B.pos[links, 1].min() > 0.0                # draped, not sunk
    assert w.B.pos[links, 1].max() > 0.3                # the middle lies on the box
    w.settings.sleeping = True                          # at rest, the whole chain sleeps
    w.run(40)
    assert w.body_asleep[links].all()
    assert (w.B.pos[links, 1] < 0.03).sum() >= 4        # both ends on the ground


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="known defect (issue 4): with the iterative solver "
                   "(contacts and joints as rows of one Gauss-Seidel loop) the draped chain "
                   "keeps jittering at 3.2 mm/s (a few cm/s before friction anchors)")
def test_hinge_chain_draped_over_a_box_rests_with_the_iterative_solver():
    d = json.load(open(os.path.join(SCENES, "chain_drape.json")))
    d["settings"]["solver"] = "iterative"
    top_speed, joint_err = _settle_draped_chain(scene_to_world(d))
    assert top_speed < 1e-3 and joint_err <= d["settings"]["eps_pos"] * 1.0001


def _cube_on_ground(gravity, mu, omega=(0, 0, 0), h=1 / 240):
    half = 0.1
    return scene_to_world(doc([
        {**ground(), "material": {"static_friction": mu, "dynamic_friction": mu}},
        {"name": "cube", "shape": {"type": "box", "size": [2 * half] * 3}, "mass": 1.0,
         "position": [0, half, 0], "angular_velocity": list(omega),
         "material": {"static_friction": mu, "dynamic_friction": mu}}],
        settings={"h": h, "gravity": list(gravity)}))


@pytest.mark.parametrize("deg", [20.0, 35.0])
def test_cube_on_an_incline_sticks_below_the_friction_angle_and_slides_above(deg):
    """Gravity tilted by deg (the same as a plane tilted by deg). mu = 0.5, friction angle
    26.6 deg: at 20 deg the cube stays; at 35 deg it slides with a = g (sin - mu cos)."""
    g, mu, th = 9.81, 0.5, np.radians(deg)
    w = _cube_on_ground([g * np.sin(th), -g * np.cos(th), 0.0], mu)
    w.run(120)                                  # 0.5 s to settle on the contact
    x0, v0, t0 = w.B.pos[1, 0], w.B.vel[1, 0], w.time
    w.run(240)                                  # 1 s more
    dt = w.time - t0
    moved = w.B.pos[1, 0] - x0
    if deg < 26.0:
        assert abs(moved) < 1e-4
    else:
        a = g * (np.sin(th) - mu * np.cos(th))
        assert moved == pytest.approx(v0 * dt + 0.5 * a * dt * dt, rel=0.03)
    assert abs(w.B.pos[1, 1] - 0.1) < 1e-3      # on the ground, not tipped


def test_spinning_cube_stops_at_the_coulomb_twist_torque():
    """A cube spinning about the vertical on its bottom face: under a uniform pressure every
    bit of the face slides tangentially, so the friction torque is mu m g R with R the mean
    distance of the face from its centre, (s/2)(sqrt 2 + asinh 1)/3 for a square of side s
    (not the corners' distance: the weight is not all on the corners), and the spin stops
    at t = w0 I / (mu m g R) (I = m s^2 / 6)."""
    g, mu, w0, s = 9.81, 0.3, 3.0, 0.2
    w = _cube_on_ground([0.0, -g, 0.0], mu, omega=(0, w0, 0))
    r_face = (s / 2) * (np.sqrt(2) + np.arcsinh(1.0)) / 3
    t_stop = w0 * (s * s / 6) / (mu * g * r_face)
    while w.time < 2 * t_stop and w.B.omega[1, 1] > 1e-3:
        w.step()
    assert w.time == pytest.approx(t_stop, rel=0.05)
    assert np.linalg.norm(w.B.pos[1, [0, 2]]) < 1e-3   # it spun in place


@pytest.mark.slow
def test_hexapod_walks_its_tripod_gait_on_the_tree_solver():
    """The six servo legs (tree solver, the feet's contacts as Gauss-Seidel rows around the
    solve) walk the bundled gait: in 3 s the torso goes > 0.75 m along -x, straight (< 5 cm
    sideways), level, without a step halving, every joint within eps_pos at every step."""
    w = scene("hexapod.json")
    assert w.settings.solver == "tree"
    torso = w.body_names.index("torso")
    start = w.B.pos[torso].copy()
    halvings, joint_err = 0, 0.0
    for _ in range(int(round(3.0 / w.settings.h))):
        w.step()
        halvings += w.last_step()["step_halvings"]
        joint_err = max(joint_err, w.last_step()["max_position_error"])
    moved = w.B.pos[torso] - start
    assert moved[0] < -0.75 and abs(moved[2]) < 0.05 and abs(moved[1]) < 0.05
    assert w.B.rot[torso][1, 1] > 0.99                  # upright
    assert halvings == 0 and joint_err <= w.settings.eps_pos * 1.0001
