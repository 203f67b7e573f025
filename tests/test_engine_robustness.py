"""Never crash, never lie (issue 17): the finite-state guard, bounded and typed input,
regular files only, bounded memory, honest figures and exit codes."""
import json
import os
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest

from impulse.engine import cli
from impulse.engine.scene import SceneError, load_scene, read_document, scene_to_world
from tests.scene_docs import scene_doc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def impulse(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "impulse.app", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def strict(text):
    """json.loads that refuses NaN / Infinity tokens, as strict parsers do."""
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


def spring_pair(stiffness, mass, h, gravity=(0, 0, 0)):
    """Two spheres on a spring stretched to twice its rest length: explicit spring forces
    blow up where k h^2 / m >> 1."""
    return scene_doc([{"name": n, "mass": mass, "position": [x, 0, 0],
                       "shape": {"type": "sphere", "radius": 0.01}}
                      for n, x in (("a", 0.0), ("b", 1.0))],
                     [{"name": "s", "type": "spring", "bodies": ["a", "b"],
                       "anchors": [[0, 0, 0], [1, 0, 0]], "stiffness": stiffness,
                       "rest_length": 0.5}],
                     {"h": h, "gravity": list(gravity)})


# ---- 1. the finite-state guard -----------------------------------------------------------

@pytest.mark.parametrize("stiffness, mass, h", [(1e9, 1e-6, 1 / 30), (1e9, 1e-3, 1 / 60),
                                                (1e8, 1e-6, 0.001)])
def test_a_blow_up_is_stopped_and_reported(stiffness, mass, h):
    world = scene_to_world(spring_pair(stiffness, mass, h))
    for _ in range(30):
        world.step()
    assert {p.body for p in world.problems} == {"a", "b"}
    assert all(np.isfinite(a).all() for a in (world.B.pos, world.B.vel, world.B.omega))
    assert world.B.static.all() and not world.B.vel.any()
    assert np.abs(world.B.pos).max() <= 1e10      # where the step that failed started
    assert world.problems[0].step >= 1


@pytest.mark.parametrize("field, value", [("vel", np.nan), ("omega", np.inf),
                                          ("pos", 1e300), ("vel", -1e12)])
def test_a_bad_state_set_through_the_api_never_reaches_detection(scene_path, field, value):
    world = load_scene(scene_path("box_stack.json"))
    world.step()
    b = next(i for i, m in enumerate(world.models) if not m.static)
    getattr(world.B, field)[b] = value
    for _ in range(5):
        world.step()
    assert [p.body for p in world.problems] == [world.models[b].name]
    assert world.last_step()["stopped_bodies"] == 0           # only the step that caught it
    for a in (world.B.pos, world.B.rot, world.B.vel, world.B.omega):
        assert np.isfinite(a).all()


def test_the_compiled_run_falls_back_to_guarded_steps():
    """Scenes without contacts run in one compiled call; a blow-up there is found and the
    run is taken again step by step, where the guard stops the bodies."""
    world = scene_to_world(spring_pair(1e9, 1e-6, 1 / 30))
    result = world.run(20)
    assert len(world.problems) == 2 and world.steps_taken == 20
    assert np.isfinite(result.energy).all()


@pytest.mark.slow
def test_sim_of_a_blow_up_exits_3_with_strict_json_and_one_line(tmp_path):
    p = tmp_path / "blow.json"
    p.write_text(json.dumps(spring_pair(1e9, 1e-6, 1 / 30)))
    r = impulse("sim", str(p), "--duration", "1", "--json")
    assert r.returncode == 3
    doc = strict(r.stdout)
    assert [s["body"] for s in doc["stopped_bodies"]] == ["a", "b"]
    assert doc["stopped_bodies"][0]["step"] == 1
    line, = r.stderr.strip().splitlines()
    assert line.startswith("impulse sim: step 1 (t = 0 s): body 'a' moved beyond 1e10") \
        and line.endswith("it was stopped and fixed (and 1 more body)")


# ---- 2. bounded, typed input --------------------------------------------------------------

def pendulum():
    return json.load(open(os.path.join(ROOT, "scenes", "pendulum.json")))


def _set(path, value):
    def mutate(doc):
        node = doc
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value
    return mutate


@pytest.mark.parametrize("mutate, where", [
    (_set(("bodies", 0, "mass"), 1e-300), "$.bodies[0].mass"),
    (_set(("bodies", 0, "mass"), 1e308), "$.bodies[0].mass"),
    (_set(("bodies", 0, "position"), [1e300, 0, 0]), "$.bodies[0].position[0]"),
    (_set(("bodies", 0, "angular_velocity"), [0, 1e200, 0]),
     "$.bodies[0].angular_velocity[1]"),
    (_set(("bodies", 0, "inertia"), [1, 1, 100]), "$.bodies[0].inertia"),
    (_set(("bodies", 0, "material"), {"static_friction": 1e20}),
     "$.bodies[0].material.static_friction"),
    (_set(("bodies", 0, "shape"), {"type": "box", "size": [1e200, 1, 1]}),
     "$.bodies[0].shape.size[0]"),
    (_set(("bodies", 0, "collision"), {"group": 2 ** 70}), "$.bodies[0].collision.group"),
    (_set(("joints", 0, "anchor"), [1e20, 0, 0]), "$.joints[0].anchor[0]"),
    (_set(("settings", "max_cycles"), 1e30), "$.settings.max_cycles"),
    (_set(("settings", "h"), 1e-300), "$.settings.h"),
    (_set(("settings", "eps_pos"), 1e-300), "$.settings.eps_pos"),
    (_set(("settings", "gravity"), [0, -1e300, 0]), "$.settings.gravity[1]"),
])
def test_out_of_bounds_magnitudes_are_refused_naming_the_place(mutate, where):
    doc = pendulum()
    if "inertia" in where:
        doc["bodies"][0].pop("shape", None)
    mutate(doc)
    with pytest.raises(SceneError) as e:
        scene_to_world(doc, "x.json")
    assert str(e.value).startswith(f"x.json: {where}: "), str(e.value)


def test_a_spring_stiffness_beyond_the_bound_is_refused():
    with pytest.raises(SceneError, match=r"\$.joints\[0\].stiffness: must be at most"):
        scene_to_world(spring_pair(1e300, 1.0, 0.01), "x.json")


@pytest.mark.parametrize("key, value", [("taylor_order", 4.0), ("max_cycles", 300.0),
                                        ("contact_cycles", 12.0), ("max_halvings", 2.0)])
def test_integral_floats_are_integers(key, value):
    doc = pendulum()
    doc["settings"][key] = value
    world = scene_to_world(doc)
    assert type(getattr(world.settings, key)) is int
    world.run(3)
    assert np.isfinite(world.B.pos).all()


@pytest.mark.slow
@pytest.mark.parametrize("points", [
    [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]],            # coplanar
    [[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3]],            # collinear
    [[0.5, 0.5, 0.5]] * 5,                                   # coincident
])
def test_degenerate_hulls_give_one_line(tmp_path, points):
    doc = pendulum()
    doc["bodies"][0]["shape"] = {"type": "hull", "points": points}
    p = tmp_path / "hull.json"
    p.write_text(json.dumps(doc))
    r = impulse("sim", str(p), "--duration", "0.01")
    assert r.returncode == 2
    line, = r.stderr.strip().splitlines()
    assert line.startswith(f"{p}: $.bodies[0]") and "no volume" in line


@pytest.mark.slow
def test_only_regular_files_are_read(tmp_path):
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    for path, words in (("/dev/zero", "it is a device"), (str(fifo), "it is a FIFO"),
                        (str(tmp_path), "it is a folder")):
        result = {}
        t = threading.Thread(target=lambda result=result, path=path: result.update(
            r=impulse("sim", path)))
        t.start()
        t.join(60)
        assert not t.is_alive(), f"{path}: blocked"
        r = result["r"]
        assert r.returncode == 2 and r.stderr.strip() == f"{path}: $: not a regular file " \
                                                         f"({words})", r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("text, words", [("[" * 100_000 + "]" * 100_000, "nested too deeply"),
                                         ('{"a": ' + "9" * 5000 + "}", "4300 digits")],
                         ids=["deep", "huge-int"])
def test_deep_nesting_and_huge_integers_exit_2(tmp_path, text, words):
    p = tmp_path / "x.json"
    p.write_text(text)
    r = impulse("sim", str(p))
    assert r.returncode == 2 and words in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_the_size_cap_applies_to_what_is_read(tmp_path, monkeypatch):
    from impulse.engine import scene
    monkeypatch.setattr(scene, "MAX_BYTES", 1000)
    p = tmp_path / "big.json"
    p.write_text(json.dumps(pendulum()) + " " * 5000)
    with pytest.raises(SceneError, match="larger than the limit"):
        read_document(p)


@pytest.mark.slow
def test_a_long_run_keeps_its_memory_bounded(tmp_path, monkeypatch):
    """A run ten times longer needs no more memory (h = 1e-6: 60 000 steps against 6 000,
    in parts of 2 000 steps; the per-step statistics of the long run alone would be
    11.5 MB). Measured from the loaded world on."""
    monkeypatch.setattr(cli, "CHUNK_STEPS", 2000)
    p = tmp_path / "fine.json"
    doc = pendulum()
    doc["settings"]["h"] = 1e-6
    p.write_text(json.dumps(doc))
    load = cli.load_with_settings

    def loaded(*args):
        world = load(*args)
        tracemalloc.reset_peak()
        return world
    monkeypatch.setattr(cli, "load_with_settings", loaded)

    def peak(duration):
        tracemalloc.start()
        try:
            assert cli.run_sim(cli.sim_parser().parse_args([str(p), "--duration", duration,
                                                            "--json"])) == 0
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    peak("0.001")    # compiled
    short, long = peak("0.006"), peak("0.06")
    assert long - short < 2e6, f"{short / 1e6:.1f} MB -> {long / 1e6:.1f} MB"


# ---- the drag API ------------------------------------------------------------------------

@pytest.mark.parametrize("call, words", [
    (lambda w: w.drag_start(0, [np.nan, 0, 0]), "finite"),
    (lambda w: w.drag_start(0, [0, 0, 0], max_force=0.0), "positive"),
    (lambda w: w.drag_start(0, [0, 0, 0], max_force=-5), "positive"),
    (lambda w: w.drag_start(0, [0, 0, 0], max_force=np.inf), "positive"),
    (lambda w: w.drag_start(-1, [0, 0, 0]), "no body with index -1"),
    (lambda w: w.drag_start(99, [0, 0, 0]), "no body with index 99"),
    (lambda w: w.drag_start(1.5, [0, 0, 0]), "integer"),
    (lambda w: w.drag_start(0, [0, 0]), "3 numbers"),
])
def test_drag_start_refuses_bad_arguments(call, words):
    world = scene_to_world(pendulum())
    with pytest.raises(ValueError, match=words):
        call(world)
    assert world.drag is None


@pytest.mark.parametrize("target, rot", [([np.nan, 0, 0], None), ([0, np.inf, 0], None),
                                         ([0, 0, 0], np.full((3, 3), np.nan)),
                                         ([0, 0, 0], 2 * np.eye(3))])
def test_drag_to_refuses_non_finite_targets_and_keeps_the_old_one(target, rot):
    world = scene_to_world(pendulum())
    world.drag_start(0, world.B.pos[0].copy())
    before = world.drag.target.copy()
    with pytest.raises(ValueError):
        world.drag_to(target, rot)
    assert (world.drag.target == before).all()
    world.step()
    assert np.isfinite(world.B.vel).all() and not world.problems


# ---- 3. honest figures ---------------------------------------------------------------------

@pytest.mark.slow
def test_unmet_tolerances_exit_4_and_say_so(scene_path):
    r = impulse("sim", scene_path("chain8.json"), "--duration", "0.2", "--json",
                "--set", "max_cycles=1")
    assert r.returncode == 4
    doc = strict(r.stdout)
    assert doc["tolerance_unmet_steps"] == doc["steps"] == 20
    assert doc["first_unmet_step"] == 1 and doc["max_position_error"] > 1e-5
    line, = r.stderr.strip().splitlines()
    assert "tolerances unmet in 20 of 20 steps" in line


@pytest.mark.slow
def test_met_tolerances_exit_0(scene_path):
    r = impulse("sim", scene_path("chain8.json"), "--duration", "0.2", "--json")
    assert r.returncode == 0 and r.stderr == ""
    doc = strict(r.stdout)
    assert doc["tolerance_unmet_steps"] == 0 and doc["max_position_error"] <= 1e-5


def test_a_nan_figure_is_null_never_a_small_error():
    from impulse.engine import state as S
    from impulse.engine.metrics import RunTally
    from impulse.engine.strict_json import dumps
    from impulse.engine.world import RunResult
    stats = np.zeros((3, S.T_SIZE))
    stats[1, S.T_RESIDUAL] = np.nan
    r = RunResult(stats, np.array([1.0, 1.0, np.nan, np.nan]), np.zeros(0), *[None] * 4, 0.1)
    tally = RunTally(1.0)
    tally.add(r, 1e-5, 1e-4)
    world = scene_to_world(pendulum())
    doc = strict(dumps(tally.summary(world, "x")))
    assert doc["max_position_error"] is None and doc["energy_final"] is None
    assert doc["tolerance_unmet_steps"] == 1 and doc["first_unmet_step"] == 2
