"""External loads (issue 22 item 7, engine/loads.py): constant and sequenced forces and
torques on bodies, world or body frame, at a point; against analytic motion over step sizes,
masses and magnitudes; the scene format, its errors, saving, and the Python API."""
import copy
import json
import subprocess
import sys

import numpy as np
import pytest

from impulse.engine import LoadId, StaleHandle, scene_to_world, world_to_scene
from impulse.engine.scene import SceneError
from tests.conftest import ROOT

G = 9.81
STEPS = (1 / 30, 1 / 60, 1 / 90, 0.001)


def doc(bodies, loads, settings=None, joints=()):
    return {"format": "impulse-scene", "version": 1, "settings": settings or {},
            "bodies": bodies, "joints": list(joints), "loads": loads}


def free_body(mass=1.0, **extra):
    return {"name": "b", "mass": mass, "shape": {"type": "box", "size": [0.4, 0.6, 0.8]},
            **extra}


def run_for(w, seconds):
    for _ in range(round(seconds / w.settings.h)):
        w.step()


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("mass,force", [(0.5, [3.0, 0.0, 0.0]), (2.0, [-4.0, 7.0, 1.0]),
                                        (50.0, [0.0, 0.0, 900.0])])
def test_a_constant_force_moves_a_free_body_as_one_half_a_t2(h, mass, force):
    """x = x0 + v0 t + (F/m + g) t^2/2 exactly (the kicks around the step are the look-ahead's
    treatment of gravity), with and without gravity."""
    for g in ([0.0, 0.0, 0.0], [0.0, -G, 0.0]):
        v0 = np.array([0.3, -0.2, 0.1])
        w = scene_to_world(doc([free_body(mass, velocity=v0.tolist())],
                               [{"name": "f", "body": "b", "force": force}],
                               {"h": h, "gravity": g}))
        run_for(w, 1.0)
        t = w.time
        a = np.asarray(force) / mass + np.asarray(g)
        assert np.allclose(w.B.pos[0], v0 * t + 0.5 * a * t * t, rtol=1e-9, atol=1e-9)
        assert np.allclose(w.B.vel[0], v0 + a * t, rtol=1e-9, atol=1e-9)
        assert np.allclose(w.B.omega[0], 0.0, atol=1e-12)


@pytest.mark.parametrize("h", STEPS)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_a_torque_about_a_principal_axis_spins_a_body_up_at_tau_over_i(h, axis):
    """omega = tau t / I about a principal axis (box of three different moments)."""
    w = scene_to_world(doc([free_body(3.0)], [{"name": "t", "body": "b",
                                               "torque": list(2.5 * np.eye(3)[axis])}],
                           {"h": h, "gravity": [0, 0, 0]}))
    rot = w.B.rot[0]
    inertia = (rot @ np.diag(w.B.const.inertia[0]) @ rot.T)[axis, axis]
    run_for(w, 0.5)
    expected = 2.5 * w.time / inertia * np.eye(3)[axis]
    assert np.allclose(w.B.omega[0], expected, rtol=1e-9, atol=1e-9)
    assert np.allclose(w.B.pos[0], 0.0, atol=1e-12)


@pytest.mark.parametrize("h", (1 / 30, 1 / 60, 0.01))
@pytest.mark.parametrize("arm", [0.2, 0.5])
def test_a_body_frame_couple_at_two_points_spins_a_sphere_up_in_place(h, arm):
    """Two body-frame forces +-F at +-arm make a pure couple 2 arm F: the centre stays, and
    a sphere (isotropic) spins up about the couple's axis at 2 arm F t / I, the couple
    turning with the body."""
    F = 1.5
    loads = [{"name": "a", "body": "b", "frame": "body", "force": [0, F, 0],
              "point": [arm, 0, 0]},
             {"name": "b", "body": "b", "frame": "body", "force": [0, -F, 0],
              "point": [-arm, 0, 0]}]
    w = scene_to_world(doc([{"name": "b", "mass": 2.0, "shape": {"type": "sphere",
                                                                 "radius": 0.5}}],
                           loads, {"h": h, "gravity": [0, 0, 0]}))
    inertia = w.models[0].inertia[0]
    run_for(w, 1.0)
    assert np.allclose(w.B.omega[0], [0, 0, 2 * arm * F * w.time / inertia], rtol=1e-9,
                       atol=1e-9)
    assert np.allclose(w.B.pos[0], 0.0, atol=1e-12)
    assert np.allclose(w.B.vel[0], 0.0, atol=1e-12)


def spinning_push_error(h, w0, F=3.0, m=1.5, T=1.0):
    """A sphere spinning at w0 about z, pushed by a body-frame force along its own x: the
    force turns, v(t) = F/(m w0) (sin w0 t, 1 - cos w0 t, 0)."""
    w = scene_to_world(doc([{"name": "b", "mass": m, "shape": {"type": "sphere", "radius": 0.5},
                             "angular_velocity": [0, 0, w0]}],
                           [{"name": "f", "body": "b", "force": [F, 0, 0], "frame": "body"}],
                           {"h": h, "gravity": [0, 0, 0]}))
    run_for(w, T)
    t = w.time
    v = F / (m * w0) * np.array([np.sin(w0 * t), 1 - np.cos(w0 * t), 0])
    return np.linalg.norm(w.B.vel[0] - v) / (F / m * t)


@pytest.mark.parametrize("w0", [1.0, 2.0, 5.0])
def test_a_body_frame_force_on_a_spinning_body_turns_with_it_to_second_order(w0):
    """The body-frame force is taken at the step's middle orientation: the velocity's error
    quarters when h halves, and at the viewer's step it is below 0.1 % of F t/m for
    w0 h up to 0.08 rad."""
    e60, e120 = spinning_push_error(1 / 60, w0), spinning_push_error(1 / 120, w0)
    assert e60 < 2e-4 * w0 ** 2
    assert e60 / e120 == pytest.approx(4.0, rel=0.15)


def torque_held_pendulum(h, tau):
    """A hinge pendulum (1 kg at 1 m) at rest at its balance angle asin(tau / m g l) under a
    constant torque tau; returns (world, angle)."""
    th = np.arcsin(tau / G)
    pendulum = [{"name": "bob", "mass": 1.0, "inertia": [1e-3] * 3,
                 "position": [np.sin(th), -np.cos(th), 0]}]
    pin = [{"name": "pin", "type": "hinge", "bodies": ["world", "bob"], "anchor": [0, 0, 0],
            "axis": [0, 0, 1]}]
    return scene_to_world(doc(pendulum, [{"name": "t", "body": "bob", "torque": [0, 0, tau]}],
                              {"h": h}, pin)), th


@pytest.mark.parametrize("h", (1 / 30, 1 / 60, 0.01))
@pytest.mark.parametrize("tau", [1.0, 3.0, 7.0])
def test_a_torque_holds_a_pendulum_at_its_balance_angle(h, tau):
    """Started at rest at its balance angle, the torque-held pendulum stays there: the load
    and gravity balance through the joint."""
    w, th = torque_held_pendulum(h, tau)
    run_for(w, 2.0)
    p = w.B.pos[0]
    assert np.arctan2(p[0], -p[1]) == pytest.approx(th, abs=1e-9)
    assert np.linalg.norm(w.B.vel[0]) < 1e-8


def torqued_pendulum_energy_drift(h, tau, T=3.0):
    """Largest |E - E0| with E = 1/2 I_p w^2 - m g l cos(theta) - tau theta (the load's work
    counted), released hanging, so it swings about the balance angle."""
    pendulum = [{"name": "bob", "mass": 1.0, "inertia": [1e-3] * 3, "position": [0, -1, 0]}]
    pin = [{"name": "pin", "type": "hinge", "bodies": ["world", "bob"], "anchor": [0, 0, 0],
            "axis": [0, 0, 1]}]
    w = scene_to_world(doc(pendulum, [{"name": "t", "body": "bob", "torque": [0, 0, tau]}],
                           {"h": h, "eps_pos": 1e-9, "eps_vel": 1e-9}, pin))
    ip = 1e-3 + 1.0

    def energy():
        th = np.arctan2(w.B.pos[0, 0], -w.B.pos[0, 1])
        return 0.5 * ip * w.B.omega[0, 2] ** 2 - G * np.cos(th) - tau * th

    e0, worst = energy(), 0.0
    for _ in range(round(T / h)):
        w.step()
        worst = max(worst, abs(energy() - e0))
    return worst


@pytest.mark.parametrize("tau", [1.5, 3.0])
def test_a_pendulum_swinging_under_a_torque_keeps_its_energy_with_the_loads_work(tau):
    """Released hanging, it swings about the balance angle; the energy including the
    load's potential -tau theta stays to 2nd order: below 4e-4 J at h = 1/60, and a
    quarter of that at h = 1/120."""
    e60 = torqued_pendulum_energy_drift(1 / 60, tau)
    e120 = torqued_pendulum_energy_drift(1 / 120, tau)
    assert e60 < 4e-4 * (tau / 3.0) ** 2 + 1e-5
    assert e60 / e120 == pytest.approx(4.0, rel=0.2)


@pytest.mark.parametrize("h", (1 / 30, 1 / 60, 0.01))
def test_a_step_sequence_gives_the_impulse_of_its_pulses_and_repeats(h):
    """10 N on a 2 kg body for 0.5 s of every 2 s (a held sequence, repeating): after 4.0 s,
    two pulses: v = 2 * 10 * 0.5 / 2 = 5 m/s, and x from the pulses' timing."""
    seq = {"times": [0.0, 0.5, 2.0], "values": [[10, 0, 0], [0, 0, 0], [0, 0, 0]],
           "interpolation": "step", "repeat": True}
    w = scene_to_world(doc([free_body(2.0)], [{"name": "p", "body": "b", "force": seq}],
                           {"h": h, "gravity": [0, 0, 0]}))
    run_for(w, 4.0)
    assert w.B.vel[0, 0] == pytest.approx(5.0, rel=1e-9)
    # each pulse: 0.625 m while it pushes, then it coasts at 2.5 m/s (per pulse)
    x = 0.625 + 2.5 * 1.5 + (2.5 * 0.5 + 0.625) + 5.0 * 1.5
    assert w.B.pos[0, 0] == pytest.approx(x, rel=1e-9)


@pytest.mark.parametrize("h", (1 / 30, 1 / 60, 0.01))
def test_a_linear_ramp_integrates_to_k_t2_over_2m(h):
    """F = k t (a linear sequence 0 -> 8 N over 2 s) on 2 kg: v = k t^2/(2m) exactly (the
    midpoint rule is exact for a line), x = k t^3/(6m) to O(h^2)."""
    seq = {"times": [0.0, 2.0], "values": [[0, 0, 0], [8, 0, 0]]}
    w = scene_to_world(doc([free_body(2.0)], [{"name": "r", "body": "b", "force": seq}],
                           {"h": h, "gravity": [0, 0, 0]}))
    run_for(w, 2.0)
    k, t = 4.0, w.time
    assert w.B.vel[0, 0] == pytest.approx(k * t * t / 4.0, rel=1e-9)
    assert w.B.pos[0, 0] == pytest.approx(k * t ** 3 / 12.0, abs=k * h * h * t / 8 + 1e-12)


def test_run_takes_the_loads_as_step_does():
    """World.run (one call) gives what step() by step gives for a world with loads."""
    spec = doc([free_body(2.0)], [{"name": "f", "body": "b", "force": [1, 2, 3],
                                   "torque": [0.1, 0, 0]}], {"h": 0.01})
    a, b = scene_to_world(spec), scene_to_world(spec)
    a.run(100)
    run_for(b, 1.0)
    assert np.array_equal(a.B.pos, b.B.pos) and np.array_equal(a.B.omega, b.B.omega)


# ---- the scene format ------------------------------------------------------------------

BAD = [
    ({"name": "x", "body": "nobody", "force": [1, 0, 0]}, "$.loads[0].body",
     "no body named 'nobody'"),
    ({"name": "x", "body": "b"}, "$.loads[0]", "give a 'force', a 'torque' or both"),
    ({"name": "x", "body": "b", "torque": [1, 0, 0], "point": [0, 0, 1]}, "$.loads[0].point",
     "a point needs a 'force'"),
    ({"name": "x", "body": "b", "force": {"times": [0, 1, 0.5], "values": [[0] * 3] * 3}},
     "$.loads[0].force.times", "times must rise"),
    ({"name": "x", "body": "b", "force": {"times": [0, 1], "values": [[0] * 3] * 3}},
     "$.loads[0].force", "one value per time"),
    ({"name": "x", "body": "b", "force": [1, 0]}, "$.loads[0].force", "must be [x, y, z]"),
    ({"name": "x", "body": "b", "force": [1, 0, 0], "frame": "local"}, "$.loads[0].frame",
     "is not one of"),
    ({"name": "x", "body": "b", "force": [1, 0, 0], "extra": 1}, "$.loads[0]",
     "unknown key 'extra'"),
    ({"name": "x", "body": "b", "force": [2e9, 0, 0]}, "$.loads[0].force", ""),
]


@pytest.mark.parametrize("load,path,words", BAD)
def test_a_bad_load_is_refused_naming_its_place(load, path, words):
    with pytest.raises(SceneError) as e:
        scene_to_world(doc([free_body()], [load]))
    p, msg = e.value.problems[0]
    assert p == path and words in msg


def test_a_duplicate_load_name_is_refused():
    with pytest.raises(SceneError) as e:
        scene_to_world(doc([free_body()], [{"name": "x", "body": "b", "force": [1, 0, 0]}] * 2))
    assert e.value.problems[0] == ("$.loads[1].name", "duplicate load name 'x'")


def test_impulse_sim_refuses_a_bad_load_in_one_line_with_exit_2(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc([free_body()], [{"name": "x", "body": "c",
                                                    "force": [1, 0, 0]}])))
    r = subprocess.run([sys.executable, "-m", "impulse.app", "sim", str(path), "--duration", "0.1"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "$.loads[0].body: no body named 'c'" in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_saving_keeps_the_loads_and_the_run_continues_exactly(tmp_path):
    from impulse.engine import load_scene, save_scene
    loads = [{"name": "thrust", "body": "b", "frame": "body", "point": [0, -0.3, 0],
              "force": {"times": [0, 0.5, 1.0], "values": [[0, 15, 0], [0, 0, 0], [0, 0, 0]],
                        "interpolation": "step", "repeat": True}},
             {"name": "twist", "body": "b", "torque": [0, 0.2, 0]}]
    w = scene_to_world(doc([free_body(1.0)], loads, {"h": 0.01}))
    run_for(w, 0.37)
    save_scene(w, tmp_path / "s.json")
    again = load_scene(tmp_path / "s.json")
    assert again.load_names == ["thrust", "twist"]
    assert [again.load_entry(n) for n in again.load_names] == loads
    run_for(w, 0.5)
    run_for(again, 0.5)
    assert np.array_equal(w.B.pos, again.B.pos) and np.array_equal(w.B.rot, again.B.rot)


# ---- the Python API ----------------------------------------------------------------------

def test_loads_are_added_edited_and_removed_by_name_or_handle():
    w = scene_to_world(doc([free_body(2.0)], [], {"h": 0.01, "gravity": [0, 0, 0]}))
    lid = w.add_load({"name": "push", "body": "b", "force": [2, 0, 0]})
    assert isinstance(lid, LoadId) and w.load_id("push") == lid
    assert w.loads_of("b") == ["push"]
    run_for(w, 1.0)
    assert w.B.vel[0, 0] == pytest.approx(1.0, rel=1e-9)
    w.edit_load(lid, {"force": [-2, 0, 0]})
    run_for(w, 1.0)
    assert w.B.vel[0, 0] == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="already taken"):
        w.add_load({"name": "push", "body": "b", "torque": [1, 0, 0]})
    with pytest.raises(ValueError, match="no body named"):
        w.add_load({"name": "other", "body": "c", "torque": [1, 0, 0]})
    with pytest.raises(ValueError, match="keeps its name"):
        w.edit_load("push", {"name": "pull"})
    with pytest.raises(ValueError):
        w.edit_load("push", {"force": "strong"})
    assert w.load_entry("push")["force"] == [-2, 0, 0]      # the refused edits left it
    w.remove_load(lid)
    assert w.load_names == []
    with pytest.raises(StaleHandle):
        w.remove_load(lid)
    v = w.B.vel[0].copy()
    run_for(w, 0.5)
    assert np.array_equal(w.B.vel[0], v)


def test_a_bodys_loads_follow_its_renaming_and_its_removal_and_restoration():
    bodies = [free_body(1.0), {**free_body(1.0), "name": "c", "position": [2, 0, 0]}]
    loads = [{"name": "on_b", "body": "b", "force": [1, 0, 0]},
             {"name": "on_c", "body": "c", "force": [0, 1, 0]}]
    w = scene_to_world(doc(bodies, copy.deepcopy(loads), {"gravity": [0, 0, 0]}))
    w.rename_body("b", "bee")
    assert w.load_entry("on_b")["body"] == "bee" and w.loads_of("bee") == ["on_b"]
    removal = w.remove_body("bee")
    assert w.load_names == ["on_c"]
    w.step()
    w.restore_body(removal)
    assert w.load_names == ["on_b", "on_c"]
    assert world_to_scene(w)["loads"][0]["body"] == "bee"


def test_load_arrows_give_the_point_force_and_torque_in_the_world():
    w = scene_to_world(doc([free_body(1.0, position=[1, 2, 3],
                                      orientation=[np.cos(0.5), 0, np.sin(0.5), 0])],
                           [{"name": "f", "body": "b", "frame": "body", "force": [0, 0, 2],
                             "point": [1, 0, 0]}]))
    point, force, torque = w.load_arrows()[0]
    turn = w.B.rot[0] @ w.models[0].frame.T
    assert np.allclose(point, [1, 2, 3] + turn @ [1, 0, 0])
    assert np.allclose(force, turn @ [0, 0, 2])
    assert np.allclose(torque, np.cross(turn @ [1, 0, 0], force))


def test_the_bundled_loads_scene_does_what_its_description_says(scene_path):
    """scenes/loads.json: the crate holds until mu_s m g and slides ~11 cm, the rocket's
    centre rises 3.97 m, the pendulum swings 0 ... 63.5 deg, the disc reaches 37.5 rad/s."""
    from impulse.engine import load_scene
    w = load_scene(scene_path("loads.json"))
    c, r, bob, disc = (w.body_names.index(n) for n in ("crate", "rocket", "bob", "disc"))
    x0, y0 = w.B.pos[c, 0], w.B.pos[r, 1]
    top, angles, spin, crate_at_break = 0.0, [], [], None
    for _ in range(round(6.0 / w.settings.h)):
        w.step()
        if crate_at_break is None and w.time >= 1.95:
            crate_at_break = w.B.pos[c, 0] - x0
        top = max(top, w.B.pos[r, 1] - y0)
        p = w.B.pos[bob] - [0.5, 2.5, 0.0]
        angles.append(np.degrees(np.arctan2(p[0], -p[1])))
        spin.append(w.B.omega[disc, 1])
    assert abs(crate_at_break) < 1e-4                  # static friction held below 49 N
    assert 0.08 < w.B.pos[c, 0] - x0 < 0.14 and abs(w.B.vel[c, 0]) < 1e-3
    assert top == pytest.approx(0.5 * 5.19 + 5.19 ** 2 / (2 * G), abs=0.01)
    assert min(angles) > -0.5 and max(angles) == pytest.approx(63.5, abs=0.3)
    assert max(spin) == pytest.approx(37.5, rel=1e-6) and abs(spin[-1]) < 1e-6


def resting_crate(**load):
    bodies = [{"name": "ground", "fixed": True, "shape": {"type": "plane"}},
              {"name": "crate", "mass": 10.0, "position": [0, 0.25, 0],
               "shape": {"type": "box", "size": [0.5, 0.5, 0.5]},
               "material": {"static_friction": 0.5}}]
    loads = [{"name": "push", "body": "crate", **load}] if load else []
    return scene_to_world(doc(bodies, loads, {"h": 1 / 60, "sleeping": True}))


def test_a_constant_load_held_by_friction_lets_the_crate_sleep_and_a_new_one_wakes_it():
    w = resting_crate(force=[20.0, 0, 0])           # below mu_s m g = 49 N: held
    run_for(w, 2.0)
    assert w.body_asleep[1]
    x = w.B.pos[1].copy()
    w.add_load({"name": "shove", "body": "crate", "force": [60.0, 0, 0]})
    assert not w.body_asleep[1]
    run_for(w, 0.5)
    assert w.B.pos[1, 0] - x[0] > 0.05              # 80 N against 39 N of dynamic friction


def test_a_load_that_varies_keeps_its_body_awake_and_acts_when_it_rises():
    """Zero for 2 s, then 60 N: the crate must not sleep through the rise."""
    seq = {"times": [0.0, 2.0, 2.1], "values": [[0, 0, 0], [0, 0, 0], [60, 0, 0]]}
    w = resting_crate(force=seq)
    run_for(w, 1.9)
    assert not w.body_asleep[1]
    run_for(w, 1.0)
    assert w.B.pos[1, 0] > 0.1


# ---- joint loads: actuator efforts ------------------------------------------------------

def wheel(h, effort, inertia=0.5, kind="hinge", free_base=False, **extra):
    """A wheel (or a block on a slider) on a joint to the world (or to a free base), no
    gravity, driven by a joint load."""
    bodies = [{"name": "wheel", "mass": 2.0, "inertia": [inertia] * 3}]
    base = "world"
    if free_base:
        bodies.append({"name": "base", "mass": 3.0, "inertia": [0.8] * 3})   # at the axle
        base = "base"
    joint = {"name": "axle", "type": kind, "bodies": [base, "wheel"], "anchor": [0, 0, 0],
             "axis": [0, 0, 1]}
    return scene_to_world(doc(bodies, [{"name": "drive", "joint": "axle", "effort": effort,
                                        **extra}],
                              {"h": h, "gravity": [0, 0, 0], "eps_pos": 1e-10,
                               "eps_vel": 1e-10}, [joint]))


@pytest.mark.parametrize("h", (1 / 30, 1 / 60, 0.01))
@pytest.mark.parametrize("effort,inertia", [(1.0, 0.5), (-3.0, 0.2), (40.0, 4.0)])
def test_an_effort_on_a_hinge_turns_it_at_tau_over_i(h, effort, inertia):
    """omega = tau t / I exactly (the effort is kicked like a body load) and theta =
    tau t^2 / 2I to 1e-6 (the rotation over a step is its Taylor series of order 4)."""
    w = wheel(h, effort, inertia)
    run_for(w, 0.5)
    t = w.time
    assert w.B.omega[0, 2] == pytest.approx(effort * t / inertia, rel=1e-9)
    assert w.joint_coordinates("axle")[0] == pytest.approx(
        effort * t * t / (2 * inertia), rel=1e-6)


@pytest.mark.parametrize("h", (1 / 30, 1 / 60, 0.01))
def test_an_effort_on_a_slider_pushes_it_at_f_over_m(h):
    w = wheel(h, 5.0, kind="slider")
    run_for(w, 0.5)
    assert w.joint_coordinates("axle")[0] == pytest.approx(5.0 * w.time ** 2 / 4.0, rel=1e-9)
    assert w.B.vel[0, 2] == pytest.approx(5.0 * w.time / 2.0, rel=1e-9)   # along the axis


@pytest.mark.parametrize("h", (1 / 60, 0.01))
def test_an_effort_between_two_free_bodies_is_equal_and_opposite(h):
    """Wheel and free base, both centred on the axle: their angular momenta stay equal and
    opposite (an internal torque), and the joint turns at tau (1/I_wheel + 1/I_base) t^2/2."""
    w = wheel(h, 2.0, inertia=0.5, free_base=True)
    run_for(w, 0.5)
    lw, lb = 0.5 * w.B.omega[0, 2], 0.8 * w.B.omega[1, 2]
    assert lw == pytest.approx(2.0 * w.time, rel=1e-9) and lb == pytest.approx(-lw, rel=1e-9)
    assert np.allclose(w.B.vel, 0.0, atol=1e-9)
    assert w.joint_coordinates("axle")[0] == pytest.approx(
        2.0 * (1 / 0.5 + 1 / 0.8) * w.time ** 2 / 2, rel=1e-6)


@pytest.mark.parametrize("h", (1 / 30, 1 / 60, 0.01))
@pytest.mark.parametrize("tau", [1.0, 4.0])
def test_an_effort_holds_a_pendulum_at_its_balance_angle(h, tau):
    th = np.arcsin(tau / G)
    pendulum = [{"name": "bob", "mass": 1.0, "inertia": [1e-3] * 3,
                 "position": [np.sin(th), -np.cos(th), 0]}]
    pin = [{"name": "pin", "type": "hinge", "bodies": ["world", "bob"], "anchor": [0, 0, 0],
            "axis": [0, 0, 1]}]
    w = scene_to_world(doc(pendulum, [{"name": "hold", "joint": "pin", "effort": tau}],
                           {"h": h}, pin))
    run_for(w, 2.0)
    assert w.joint_coordinates("pin")[0] == pytest.approx(0.0, abs=1e-9)
    assert np.linalg.norm(w.B.vel[0]) < 1e-8


def test_an_effort_sequence_gives_its_impulse():
    """1 N m for 0.5 s of each 1 s (held, repeating) on I = 0.5: after 2 s, w = 2 rad/s."""
    seq = {"times": [0, 0.5, 1.0], "values": [1.0, 0.0, 0.0], "interpolation": "step",
           "repeat": True}
    w = wheel(0.01, seq)
    run_for(w, 2.0)
    assert w.B.omega[0, 2] == pytest.approx(2.0, rel=1e-9)


JOINT_BAD = [
    ({"name": "x", "joint": "nojoint", "effort": 1}, "$.loads[0].joint",
     "no joint named 'nojoint'"),
    ({"name": "x", "joint": "ballj", "effort": 1}, "$.loads[0]", "is a ball joint"),
    ({"name": "x", "joint": "axle", "body": "b", "effort": 1}, "$.loads[0]", "not both"),
    ({"name": "x", "joint": "axle", "force": [1, 0, 0]}, "$.loads[0].force",
     "a joint load takes an 'effort'"),
    ({"name": "x", "joint": "axle"}, "$.loads[0]", "needs an 'effort'"),
    ({"name": "x", "body": "b", "effort": 1}, "$.loads[0].effort", "acts on a joint"),
    ({"name": "x"}, "$.loads[0]", "give a 'body'"),
    ({"name": "x", "joint": "axle", "effort": [1, 2, 3]}, "$.loads[0].effort",
     "must be a number or a sequence"),
]


@pytest.mark.parametrize("load,path,words", JOINT_BAD)
def test_a_bad_joint_load_is_refused_naming_its_place(load, path, words):
    bodies = [free_body(), {"name": "c", "mass": 1.0, "inertia": [1, 1, 1]}]
    joints = [{"name": "axle", "type": "hinge", "bodies": ["world", "b"], "anchor": [0, 0, 0]},
              {"name": "ballj", "type": "ball", "bodies": ["world", "c"], "anchor": [0, 0, 0]}]
    with pytest.raises(SceneError) as e:
        scene_to_world(doc(bodies, [load], joints=joints))
    p, msg = e.value.problems[0]
    assert p == path and words in msg, (p, msg)


def test_a_joint_load_goes_with_its_joint_and_comes_back_with_its_body():
    w = wheel(0.01, 1.0)
    assert w.load_arrows()[0][2] @ [0, 0, 1] == pytest.approx(1.0)    # torque along the axle
    removal = w.remove_body("wheel")
    assert w.load_names == []
    w.restore_body(removal)
    assert w.load_names == ["drive"] and w.load_entry("drive")["joint"] == "axle"
    w.remove_joint("axle")
    assert w.load_names == []


def test_an_imported_mjcf_motor_is_a_joint_load_that_turns_like_mujoco(tmp_path):
    """A pendulum on a hinge with a torque `motor` (gear 2, ctrl 0.75 from a keyframe): its
    effort is gear * ctrl = 1.5 N m, and the swing (over the top: the motor adds to gravity)
    matches MuJoCo's (RK4, dt 1e-4) every 0.1 s for 1 s within 1e-3 rad at h = 0.001."""
    import mujoco

    from impulse.engine.formats.convert import convert_file
    path = tmp_path / "driven.xml"
    path.write_text("""<mujoco><option timestep="0.001"/><worldbody>
      <body name="arm" pos="0 0 1"><joint name="pin" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04" mass="1"/></body>
      </worldbody><actuator><motor name="drive" joint="pin" gear="2"/></actuator>
      <keyframe><key name="go" ctrl="0.75"/></keyframe></mujoco>""")
    imported = convert_file(str(path), keyframe="go")
    assert imported.doc["loads"] == [{"name": "drive", "joint": "pin", "effort": 1.5}]
    w = scene_to_world(imported.doc)
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.timestep, m.opt.integrator = 1e-4, mujoco.mjtIntegrator.mjINT_RK4
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    for _ in range(10):
        for _ in range(1000):                            # 0.1 s at dt 1e-4
            mujoco.mj_step(m, d)
        run_for(w, 0.1)
        diff = w.joint_coordinates("pin")[0] - d.qpos[0]   # ours wraps at +-pi
        assert abs((diff + np.pi) % (2 * np.pi) - np.pi) < 1e-3
    assert abs(d.qpos[0]) > 0.3                          # it did swing


@pytest.mark.parametrize("kind", ["joint", "body"])
def test_a_removed_load_stops_acting(kind):
    """After its (last) load is removed, the wheel turns on at the speed it had."""
    w = wheel(0.01, 2.0)
    if kind == "body":
        w.remove_load("drive")
        w.add_load({"name": "drive", "body": "wheel", "torque": [0, 0, 2.0]})
    run_for(w, 0.5)
    w.remove_load("drive")
    spin = w.B.omega[0, 2]
    assert spin == pytest.approx(2.0 * 0.5 / 0.5, rel=1e-9)
    run_for(w, 0.5)
    assert w.B.omega[0, 2] == pytest.approx(spin, rel=1e-12)


def test_run_after_the_last_load_is_removed_takes_it_away_too():
    w = wheel(0.01, 2.0)
    w.run(50)
    w.remove_load("drive")
    spin = w.B.omega[0, 2]
    w.run(50)
    assert w.B.omega[0, 2] == pytest.approx(spin, rel=1e-12)
