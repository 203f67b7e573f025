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


KINDS = ("Bodies", "Joints", "Springs")


def test_every_array_field_has_one_role():
    for tup, name in ((S.Bodies, "Bodies"), (S.Joints, "Joints"), (S.Springs, "Springs")):
        roles = S.ROLES[name]
        assert sorted(roles["model"]) == sorted(S.CONSTANTS[name]._fields), name
        data = [f for role, fields in roles.items() if role != "model" for f in fields]
        assert sorted(data + ["const"]) == sorted(tup._fields), name


def _fields(arrays, name, role):
    """{field: copy} of one role's arrays of world array tuple `arrays` (Bodies, ...)."""
    table = arrays.const if role == "model" else arrays
    return {f: getattr(table, f).copy() for f in S.ROLES[name][role]}


@pytest.mark.parametrize("name", ["box_stack", "chain8", "mass_spring", "loads", "hexapod",
                                  "servo_arm", "newtons_cradle", "wall_car"])
def test_a_step_writes_no_model_or_switch_field_and_only_reads_the_settings(name):
    world = load_scene(os.path.join(SCENES, f"{name}.json"))
    kernel = world._step_kernel
    given, switched = [], []

    def checked(*args):
        settings = args[4]
        before = settings.copy()
        switch = [(k, _fields(a, k, "switch")) for a, k in zip(args[:3], KINDS, strict=True)]
        kernel(*args)
        given.append(np.array_equal(settings, before, equal_nan=True))
        switched.extend((k, f) for (k, fields), a in zip(switch, args[:3], strict=True)
                        for f, v in fields.items() if not np.array_equal(getattr(a, f), v))

    world._step_kernel = checked
    arrays = dict(zip(KINDS, (world.B, world.J, world.Sp), strict=True))
    for _ in range(3):
        world.step()
    model = {k: _fields(arrays[k], k, "model") for k in KINDS}
    moved = {k: _fields(arrays[k], k, "state") for k in KINDS}
    for _ in range(10):
        world.step()
    assert given and all(given)
    assert switched == []
    for k in KINDS:
        for f, before in model[k].items():
            assert np.array_equal(getattr(arrays[k].const, f), before), (k, f)
    assert any(not np.array_equal(getattr(arrays[k], f), v)
               for k in KINDS for f, v in moved[k].items())


def test_sleeping_and_waking_leave_the_constants_and_restore_the_mobility_bit_for_bit():
    world = load_scene(os.path.join(SCENES, "box_stack.json"))
    world.settings.sleeping = True
    const = {f: a.copy() for f, a in zip(S.BodyConstants._fields, world.B.const, strict=True)}
    mobility = _fields(world.B, "Bodies", "switch")
    for _ in range(600):
        world.step()
        if world.sleep.count:
            break
    asleep = world.sleep.asleep.copy()
    assert asleep.any()
    assert (world.B.inv_mass[asleep] == 0).all() and world.B.static[asleep].all()
    for f, a in zip(S.BodyConstants._fields, world.B.const, strict=True):
        assert np.array_equal(a, const[f]), f
    world.sleep.wake_all(world)
    for f, before in mobility.items():
        assert np.array_equal(getattr(world.B, f), before), f


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
