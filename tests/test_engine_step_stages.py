"""The step as named stages (issue 20, engine/step.py): the same stages for every solver,
each timed into its own named statistics field (engine/step_stats.py)."""
import os

import numpy as np
import pytest

from impulse.engine import state as S
from impulse.engine import step_stats
from impulse.engine.scene import load_scene
from tests.conftest import SCENES

KERNEL_STAGES = ("collide_ms", "position_ms", "shock_ms", "advance_ms", "velocity_ms")


def stepped(name, solver=None, steps=5):
    world = load_scene(os.path.join(SCENES, name + ".json"))
    if solver:
        world.settings.solver = solver
    for _ in range(steps):
        world.step()
    return world


def test_every_stats_field_has_one_name_and_the_record_reads_them():
    names = [step_stats.reported_name(n, u) for n, _, u, _ in step_stats.FIELDS]
    assert len(set(names)) == len(names) == S.T_SIZE
    stats = np.arange(S.T_SIZE, dtype=np.float64)[None, :] * 1e6
    rec = step_stats.records(stats)[0]
    assert rec["position_ms"] == S.T_POSITION_NS and rec["checks"] == S.T_CHECKS * 1e6


@pytest.mark.parametrize("solver", ["iterative", "linear", "tree"])
def test_the_same_stages_run_and_are_timed_for_every_solver(solver):
    """servo_arm (joints, motors) and box_stack (contacts in layers) by each solver: the
    stages that have work report a time, and the kernel's stages fit in its whole step."""
    joints = stepped("servo_arm", solver).last_step()
    for key in ("position_ms", "advance_ms", "velocity_ms"):
        assert joints[key] > 0.0, (solver, key, joints)
    assert joints["collide_ms"] == joints["shock_ms"] == joints["contact_ms"] == 0.0
    stack = stepped("box_stack", solver, steps=30).last_step()
    for key in KERNEL_STAGES + ("detect_ms",):
        assert stack[key] > 0.0, (solver, key, stack)
    assert sum(stack[k] for k in KERNEL_STAGES) <= stack["solve_ms"] * 1.001
    assert stack["contact_ms"] == pytest.approx(
        stack["position_ms"] + stack["shock_ms"] + stack["velocity_ms"])
    assert stack["shock_layers"] >= 9 and stack["contacts"] > 0


def test_a_runs_records_are_its_stats_by_name():
    world = load_scene(os.path.join(SCENES, "chain8.json"))
    result = world.run(20)
    rec = result.records()
    assert rec.shape == (20,)
    assert np.array_equal(rec["checks"], result.stats[:, S.T_CHECKS])
    assert np.allclose(rec["position_ms"], result.stats[:, S.T_POSITION_NS] * 1e-6)
    assert (rec["position_ms"] > 0).all() and (rec["max_position_error"] <= 1e-5).all()


def test_every_array_field_has_one_role():
    for tup, name in ((S.Bodies, "Bodies"), (S.Joints, "Joints"), (S.Springs, "Springs")):
        roles = [f for fields in S.ROLES[name].values() for f in fields]
        assert sorted(roles) == sorted(tup._fields), name


@pytest.mark.parametrize("name", ["box_stack", "chain8", "mass_spring", "loads", "hexapod",
                                  "servo_arm", "newtons_cradle", "wall_car"])
def test_a_step_writes_no_model_field_and_only_reads_the_settings(name):
    world = load_scene(os.path.join(SCENES, f"{name}.json"))
    kernel = world._step_kernel
    given = []

    def checked(*args):
        settings = args[4]
        before = settings.copy()
        kernel(*args)
        given.append(np.array_equal(settings, before, equal_nan=True))

    world._step_kernel = checked
    arrays = {"Bodies": world.B, "Joints": world.J, "Springs": world.Sp}
    for _ in range(3):
        world.step()
    model = {(k, f): getattr(arrays[k], f).copy() for k in arrays
             for f in S.ROLES[k]["model"]}
    moved = {(k, f): getattr(arrays[k], f).copy() for k in arrays
             for f in S.ROLES[k]["state"]}
    for _ in range(10):
        world.step()
    assert given and all(given)
    for (k, f), before in model.items():
        assert np.array_equal(getattr(arrays[k], f), before), (k, f)
    assert any(not np.array_equal(getattr(arrays[k], f), v) for (k, f), v in moved.items())


def test_a_compiled_run_only_reads_its_settings_and_reports_its_clock():
    from impulse.engine import step as stages
    world = load_scene(os.path.join(SCENES, "chain8.json"))
    h = world.settings.h
    arr = world.settings.to_array(world.h_prev, world.time)
    before = arr.copy()
    n = len(world.models)
    clock = np.zeros(S.K_SIZE)
    stats, energy = np.zeros((20, S.T_SIZE)), np.zeros(21)
    rec = [np.zeros((0, n, 3)), np.zeros((0, n, 3, 3)), np.zeros((0, n, 3)),
           np.zeros((0, n, 3))]
    stages.run(world.B, world.J, world.Sp, S.empty_contacts(0, n), arr, 20, stats, energy, 1,
               *rec, world.solver_work(), clock)
    assert np.array_equal(arr, before)
    assert clock[S.K_H_LAST] == h and clock[S.K_H_TAKEN] == h
    assert clock[S.K_TIME] == pytest.approx(20 * h, rel=1e-12)
