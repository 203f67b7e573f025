"""`impulse bench contacts`: the issue-16 scenes (newtons_cradle, bouncing_balls,
rolling_bodies, tall_tower, spinning_top) load and run, their behaviour figures are computed
(keys, finite values; the physics itself is asserted elsewhere), the MuJoCo model of a
contact scene has our bodies, and the bench runs only the scenes asked for."""
import contextlib
import json
import math
import os

import numpy as np
import pytest
from conftest import SCENES

from impulse.engine import state as S
from impulse.engine.bench import contacts as bc
from impulse.engine.bench.joints import format_table
from impulse.engine.scene import load_scene

NEW_SCENES = ["newtons_cradle", "bouncing_balls", "rolling_bodies", "tall_tower",
              "spinning_top"]
TIMING_KEYS = {"benchmark", "h", "steps", "ms_step_mean", "ms_step_median", "ms_step_max",
               "detect_mean", "detect_max", "collide_mean", "collide_max", "contacts_mean",
               "contacts_max", "project_mean", "depth_max_mm", "max_collisions",
               "max_contacts", "realtime_x"}


@pytest.mark.parametrize("name", NEW_SCENES)
def test_new_scene_loads_and_runs_a_second(name):
    path = os.path.join(SCENES, name + ".json")
    d = json.load(open(path))
    assert d["name"] and "h = 1/60" in d["description"]
    assert any(b.get("shape", {}).get("type") == "plane" and b.get("fixed")
               for b in d["bodies"])
    w = load_scene(path)
    assert w.settings.h == pytest.approx(1 / 60)
    r = w.run(60)
    assert np.isfinite(w.B.pos).all() and np.isfinite(w.B.vel).all()
    assert np.isfinite(w.B.omega).all() and np.isfinite(r.energy).all()
    if w.joint_models:      # newtons_cradle: the hinges hold (a sanity bound on the scene,
        # not the solver's eps_pos: its precision with contacts is tested with the contacts)
        assert r.stats[:, S.T_RESIDUAL].max() < 1e-3
    assert name in bc.scene_names() and name in bc.FIGURES


def _check_figure_rows(rows, name, columns):
    assert rows and all(r["benchmark"] == name for r in rows)
    for r in rows:
        assert set(r) == {"benchmark", "figure", "expected", *columns}
        assert isinstance(r["figure"], str) and math.isfinite(r["expected"])


def test_behaviour_figures_of_rolling_bodies_ours_only():
    timing, rows = bc.behaviour("rolling_bodies", 0.2, mujoco=None)
    assert set(timing) == TIMING_KEYS and timing["steps"] == 12
    _check_figure_rows(rows, "rolling_bodies", ["ours"])
    assert len(rows) == 6                   # acceleration ratio and slip of three bodies
    assert all(isinstance(r["ours"], float) and math.isfinite(r["ours"]) for r in rows)
    assert [r["expected"] for r in rows] == [1.0, 0.0] * 3


def test_behaviour_figures_side_by_side_with_mujoco():
    mujoco = pytest.importorskip("mujoco")
    timing, rows = bc.behaviour("rolling_bodies", 0.2, mujoco=mujoco)
    assert set(timing) == TIMING_KEYS | {"x_mujoco", "x_mujoco_mean"}
    assert timing["x_mujoco"] > 0 and timing["x_mujoco_mean"] > 0
    cols = ["ours"] + [c for c, _ in bc.MUJOCO_RUNS]
    _check_figure_rows(rows, "rolling_bodies", cols)
    for r in rows:
        for c in cols:
            assert isinstance(r[c], float) and math.isfinite(r[c])
    table = format_table([timing] + rows)
    timing_table, figure_table = table.split("\n\n")   # two tables
    assert "ms_step_mean" in timing_table and "figure" not in timing_table
    assert figure_table.splitlines()[0].split() == ["benchmark", "figure", "expected", *cols]


def test_bouncing_ball_apexes_of_an_exact_track():
    """_apexes on an exact bouncing track sampled at h = 1/60: e^(2k) of the drop height."""
    g, e, h = 9.81, 0.6, 1 / 60
    t = np.arange(0, 3.0, h)
    y, vy = np.zeros_like(t), np.zeros_like(t)
    t0, v0, y0 = 0.0, 0.0, 1.0              # one flight: y0 + v0 s - g s^2/2 from t0
    for i, ti in enumerate(t):
        s = ti - t0
        yy = y0 + v0 * s - 0.5 * g * s * s
        if yy < 0:                           # the bounce inside this sample's interval
            v_hit = math.sqrt(v0 * v0 + 2 * g * y0)
            s_hit = (v0 + v_hit) / g
            t0, v0, y0 = t0 + s_hit, e * v_hit, 0.0
            s = ti - t0
            yy = v0 * s - 0.5 * g * s * s
        y[i], vy[i] = yy, v0 - g * s
    apex = bc._apexes(y, vy, g)
    assert len(apex) >= 3
    np.testing.assert_allclose(apex[:3], [e ** 2, e ** 4, e ** 6], rtol=1e-9)


def test_mjcf_of_the_cradle_has_our_bodies_joints_and_pairs():
    mujoco = pytest.importorskip("mujoco")
    from impulse.engine.bench import peers
    w = load_scene(os.path.join(SCENES, "newtons_cradle.json"))
    xml, names = peers.mjcf_contacts(w)
    m = mujoco.MjModel.from_xml_string(xml)
    assert m.njnt == 5 and all(t == mujoco.mjtJoint.mjJNT_HINGE for t in m.jnt_type)
    # 10 ball-ball pairs and 5 ball-ground pairs; none with the bar the balls hang from
    assert m.npair == 15
    for b, name in names.items():
        i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
        assert m.body_mass[i] == pytest.approx(w.models[b].mass)
        np.testing.assert_allclose(m.body_inertia[i], w.B.const.inertia[b], rtol=1e-9)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    for b, name in names.items():
        i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
        np.testing.assert_allclose(d.xpos[i], w.B.pos[b], atol=1e-12)


def test_contacts_bench_runs_only_the_chosen_scenes(monkeypatch):
    monkeypatch.setattr(bc, "FIGURE_CASES", [("rolling_bodies", 0.1)] + [
        (n, 0.1) for n in NEW_SCENES if n != "rolling_bodies"])
    monkeypatch.setattr(bc, "_peers_available", lambda: False)
    monkeypatch.setattr(bc, "_mujoco_module", lambda: None)
    rows = bc.contacts(["rolling_bodies"])
    names = [r["benchmark"] for r in rows]
    assert names[0] == "rolling_bodies" and names[1].startswith("peers skipped")
    assert set(names[2:]) == {"rolling_bodies"} and all("figure" in r for r in rows[2:])
    monkeypatch.setenv("IMPULSE_BENCH_SCENES", "rolling_bodies.json")
    assert [r["benchmark"] for r in bc.contacts()] == names
    with pytest.raises(ValueError, match="nosuch"):
        bc.contacts(["nosuch"])
    assert bc.main(["--scenes", "nosuch"]) == 2


def test_peer_ratios_are_medians_and_means():
    """x_*: median over median; x_*_mean: mean over mean. A slow step of the machine moves
    the mean ratio, not the median one."""
    ours = np.array([2.0, 2.0, 2.0, 50.0, 2.0, 3.0])      # one slow step
    mujoco = np.array([1.0, 1.0, 1.0, 1.0, 4.0])
    r = bc.peer_ratios(ours, mujoco=mujoco)
    assert r == {"x_mujoco": 2.0, "x_mujoco_mean": round((61 / 6) / (8 / 5), 2)}
    r = bc.peer_ratios(ours, mujoco=mujoco, pybullet=np.array([4.0, 4.0]))
    assert r["x_pybullet"] == 0.5 and r["x_pybullet_mean"] == round((61 / 6) / 4, 2)


def test_the_engines_step_the_same_seconds_in_turns_of_peer_chunk_steps(monkeypatch):
    """peer_times: ours, MuJoCo, PyBullet, PEER_CHUNK steps each in turn over the same
    steps (the last turn shorter), each step timed on its own."""
    calls = []
    clock = [0.0]
    monkeypatch.setattr(bc.time, "perf_counter", lambda: clock[0])

    def stepper(name, seconds):
        def step():
            calls.append(name)
            clock[0] += seconds
        return step

    class World:
        step = staticmethod(stepper("ours", 2.0))

    @contextlib.contextmanager
    def pybullet(path, h):
        yield stepper("pybullet", 4.0)

    monkeypatch.setattr(bc, "_ready_world", lambda *args: World())
    monkeypatch.setattr(bc, "_mujoco_stepper", lambda path, h: stepper("mujoco", 1.0))
    monkeypatch.setattr(bc, "_pybullet_stepper", pybullet)
    steps = 2 * bc.PEER_CHUNK + 3
    ours, mujoco, pybullet_t = bc.peer_times("scene.json", 0.1, 0.0, steps * 0.1)
    turns = [("ours", bc.PEER_CHUNK), ("mujoco", bc.PEER_CHUNK), ("pybullet", bc.PEER_CHUNK)]
    expected = [n for name, k in turns * 2 for n in [name] * k] + \
        ["ours"] * 3 + ["mujoco"] * 3 + ["pybullet"] * 3
    assert calls == expected
    assert ours.tolist() == [2.0] * steps and mujoco.tolist() == [1.0] * steps
    assert pybullet_t.tolist() == [4.0] * steps


def test_peer_times_of_the_box_stack_with_the_real_peers():
    pytest.importorskip("mujoco")
    pytest.importorskip("pybullet")
    path = os.path.join(SCENES, "box_stack.json")
    times = bc.peer_times(path, 1 / 60, 0.0, 0.5)
    assert [t.shape for t in times] == [(30,)] * 3
    assert all(np.isfinite(t).all() and (t > 0).all() for t in times)
    r = bc.peer_ratios(times[0], mujoco=times[1], pybullet=times[2])
    assert set(r) == {"x_mujoco", "x_mujoco_mean", "x_pybullet", "x_pybullet_mean"}


@pytest.mark.parametrize("n", [100, 1000])
def test_bin_pour_scene_starts_apart_inside_the_bin_and_falls_in(n):
    """bench contacts' bin_N: n cubes, none overlapping at the start, all inside the walls,
    and after 2 s at 1/60 they all lie inside the bin, low, without flying off."""
    from impulse.engine import scene_to_world
    doc = bc.bin_document(n)
    cubes = [b for b in doc["bodies"] if b["name"].startswith("cube")]
    assert len(cubes) == n
    world = scene_to_world(doc)
    walls = [b for b in doc["bodies"] if b["name"].startswith("wall")]
    inner = walls[0]["position"][0] - walls[0]["shape"]["size"][0] / 2
    pos = np.array([c["position"] for c in cubes])
    assert np.abs(pos[:, [0, 2]]).max() + 0.125 < inner
    # start apart: the turned cubes' reach (0.125 m) is below half the lattice pitch
    d = np.linalg.norm(pos[:, None] - pos[None], axis=2) + 10 * np.eye(n)
    assert d.min() >= bc.BIN_PITCH - 1e-9 > 2 * 0.125
    for _ in range(120):
        world.step()
    idx = [world.body_index(c["name"]) for c in cubes]
    at = world.body_pos[idx]
    assert np.abs(at[:, [0, 2]]).max() < inner and at[:, 1].min() > 0.09
    assert at[:, 1].max() < bc.BIN_LAYERS * bc.BIN_CUBE + 0.3
    assert np.abs(world.B.vel[idx]).max() < 0.5


def test_bin_exponent_fits_the_rows():
    rows = [{"benchmark": f"bin_{n} pour", "ms_step_mean": 0.01 * n ** 1.2}
            for n in (100, 1000, 10000)] + [{"benchmark": "box_stack", "ms_step_mean": 1.0}]
    assert bc.bin_exponent(rows) == pytest.approx(1.2, abs=1e-3)
    assert bc.bin_exponent(rows[:1]) is None
