"""Imported robots on the ground: PyBullet's MIT mini cheetah (URDF, mesh hulls), its base set
floating, its 12 joints held by position servos (capped at the URDF's effort limits) in a
standing pose, dropped from 5 mm onto a floor under its feet, stands for 10 s at h = 1/60
with its base within 1 cm of its starting height; so should the Unitree A1 (see below);
PyBullet's humanoid (URDF, ball joints; floating, unactuated: a
ragdoll) falls onto a floor and comes to rest on it, neither exploding nor sinking.

The A1's standing test is an expected failure for now (strict: it reports when it passes): on
the tree solver the servo-stiff robot rocks on its four point feet, touching with one or two
at a time, and every few seconds a rocking builds up (4.7 cm at t = 4.4 s); with the
iterative or linear solver it stands within 1.2 mm, but at 0.07x real time. The import
is not at fault (the fall tests match MuJoCo); the tree solver's contacts are."""
import os

import numpy as np
import pytest

pytest.importorskip("mujoco")
pybullet_data = pytest.importorskip("pybullet_data")

from impulse.engine import scene_to_world  # noqa: E402
from impulse.engine.formats import convert_file  # noqa: E402

DATA = pybullet_data.getDataPath()
STAND = {f"{leg}_{part}_joint": angle for leg in ("FR", "FL", "RR", "RL")
         for part, angle in (("hip", 0.0), ("upper", 0.8), ("lower", -1.6))}


def cheetah_standing(drop=0.005):
    pose = {}
    for leg in ("fr", "fl", "hr", "hl"):
        pose[f"abduct_{leg}_to_thigh_{leg}_j"] = 0.8
        pose[f"thigh_{leg}_to_knee_{leg}_j"] = -1.6
    doc = convert_file(os.path.join(DATA, "mini_cheetah", "mini_cheetah.urdf"), floating=True,
                       servos=True, ground=True, pose=pose).doc
    doc["settings"]["h"] = 1.0 / 60.0
    next(b for b in doc["bodies"] if b["name"] == "ground")["position"][1] -= drop
    return doc


def height_changes(world, body, seconds=10.0):
    """The body's height at every step of `seconds` (the scene's h = 1/60) minus its start."""
    b = world.body_names.index(body)
    y0 = world.B.pos[b, 1]
    heights = []
    for _ in range(int(round(seconds))):
        heights.extend(world.run(60, record_every=1).pos[:, b, 1])
    return np.array(heights) - y0


@pytest.mark.slow
def test_mini_cheetah_stands_for_10_s_on_its_servos():
    world = scene_to_world(cheetah_standing(), "mini_cheetah")
    heights = height_changes(world, "body")
    assert not world.problems
    assert world.last_step()["contacts"] >= 3                # on its feet
    assert heights[-1] == pytest.approx(-0.005, abs=0.002)   # it landed, and stays
    assert np.max(np.abs(heights)) < 0.01


@pytest.mark.slow
def test_mini_cheetah_on_the_iterative_solver_stays_on_its_feet():
    """The same drop on the Gauss-Seidel loop, 2 s: its joints over-relax only once the
    contacts have settled in each step (started over-relaxed from the last step's factor,
    10 s of it ended with 13 bodies stopped by the guard and no foot on the floor)."""
    doc = cheetah_standing()
    doc["settings"]["solver"] = "iterative"
    world = scene_to_world(doc, "mini_cheetah")
    heights = height_changes(world, "body", seconds=2.0)
    assert not world.problems
    assert world.last_step()["contacts"] >= 3
    assert np.max(np.abs(heights)) < 0.01


def a1_standing():
    imported = convert_file(os.path.join(DATA, "a1", "a1.urdf"), floating=True, servos=True,
                            ground=True, pose=STAND)
    doc = imported.doc
    doc["settings"]["h"] = 1.0 / 60.0
    return doc


def test_a1_converts_floating_with_servos_and_a_floor():
    doc = a1_standing()
    bodies = {b["name"]: b for b in doc["bodies"]}
    assert not bodies["trunk"].get("fixed") and bodies["ground"]["fixed"]
    motors = {j["name"]: j["motor"] for j in doc["joints"]}
    assert len(motors) == 12
    assert {m["max_force"] for m in motors.values()} == {20.0, 55.0}     # the URDF's efforts
    assert all(m["mode"] == "position" and m["target"] == 0.0 for m in motors.values())
    assert not any("trunk" in j["bodies"] and "world" in j["bodies"] for j in doc["joints"])


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="tree solver: a servo-held quadruped rocks on its "
                                       "point feet (see the module's doc)")
def test_a1_stands_for_10_s_on_its_servos():
    doc = a1_standing()
    world = scene_to_world(doc, "a1")
    heights = height_changes(world, "trunk")
    assert not world.problems
    assert np.max(np.abs(heights)) < 0.01
    assert world.time == pytest.approx(10.0)


@pytest.mark.slow
def test_humanoid_ragdoll_falls_and_comes_to_rest():
    imported = convert_file(os.path.join(DATA, "humanoid", "humanoid.urdf"), floating=True,
                            ground=True)
    doc = imported.doc
    doc["settings"]["h"] = 1.0 / 60.0
    assert {j["type"] for j in doc["joints"]} == {"ball", "hinge"}
    world = scene_to_world(doc, "humanoid")
    floor = next(b for b in doc["bodies"] if b["name"] == "ground")["position"][1]
    moving = [i for i, m in enumerate(world.models) if not m.static]
    start = world.B.pos[moving, 1].copy()
    world.run(6 * 60)
    speeds = np.linalg.norm(world.B.vel[moving], axis=1)
    assert not world.problems
    assert start.max() - world.B.pos[moving, 1].max() > 0.5          # it fell
    # every body's centre stays above the floor (sinking: below it), and it rests
    assert world.B.pos[moving, 1].min() > floor + 0.02
    assert world.last_step()["contact_depth"] < 0.01
    assert speeds.max() < 0.05
