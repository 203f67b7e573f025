"""Imported robots on the ground: PyBullet's MIT mini cheetah (URDF, mesh hulls), its base set
floating, its 12 joints held by position servos (capped at the URDF's effort limits) in a
standing pose, dropped from 5 mm onto a floor under its feet, stands for 10 s at h = 1/60
with its base within 1 cm of its starting height; so does the Unitree A1 (its URDF's pose,
on the floor under its feet), on the tree solver and on the iterative one;
PyBullet's humanoid (URDF, ball joints; floating, unactuated: a
ragdoll) falls onto a floor and comes to rest on it, neither exploding nor sinking.

The A1 on the tree solver rocked and hopped off within 0.12 s while the contacts acted
through its servo-held tree (solvers/contact_tree.py: a tree with servos keeps plain contact
rows now)."""
import math
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
    """The body's height at every step of `seconds` minus its start."""
    b = world.body_names.index(body)
    y0 = world.B.pos[b, 1]
    heights = []
    per_second = int(round(1.0 / world.settings.h))
    for _ in range(int(round(seconds))):
        heights.extend(world.run(per_second, record_every=1).pos[:, b, 1])
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
@pytest.mark.xfail(strict=True, reason="known defect (2026-12-01): on the iterative solver the "
                   "cheetah's legs flail and its body turns about the vertical; the tree "
                   "solver holds it (test above)")
def test_mini_cheetah_on_the_iterative_solver_stays_on_its_feet():
    """The same drop on the Gauss-Seidel loop, 2 s: its joints over-relax only once the
    contacts have settled in each step (started over-relaxed from the last step's factor,
    10 s of it ended with 13 bodies stopped by the guard and no foot on the floor).
    It does not stand yet: its loops stop at the scene's 30 contact cycles with the contacts
    unconverged, its legs swing at up to 12 rad/s and its body's heading flips by 180
    degrees within 2 s while its height stays within 1 cm, so that height and the last
    step's contact count (which flickers between 1 and 4) passed until 2026-12-01 by luck.
    With 200 contact cycles it keeps its heading but still carries a yaw rate of 0.385 rad/s
    that its position never shows. Here it must keep its heading and stand on 3 feet or
    more in 9 of 10 steps of its second second."""
    doc = cheetah_standing()
    doc["settings"]["solver"] = "iterative"
    world = scene_to_world(doc, "mini_cheetah")
    b = world.body_names.index("body")
    heading = world.B.rot[b][:, 0].copy()
    y0 = world.B.pos[b, 1]
    feet = []
    for step in range(120):
        world.step()
        if step >= 60:
            feet.append(world.last_step()["contacts"] >= 3)
    assert not world.problems
    assert np.mean(feet) >= 0.9
    assert world.B.rot[b][:, 0] @ heading > math.cos(math.radians(2.0))
    assert abs(world.B.pos[b, 1] - y0) < 0.01


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
@pytest.mark.parametrize("solver,sleeping,h", [("tree", True, 1 / 60), ("tree", False, 1 / 60),
                                               ("tree", False, 1 / 30), ("tree", False, 1 / 90),
                                               ("iterative", True, 1 / 60)])
def test_a1_stands_for_10_s_on_its_servos(solver, sleeping, h):
    """Awake all the time too (sleeping off): the stance itself is still, not only put to
    sleep once it rests."""
    doc = a1_standing()
    doc["settings"].update(solver=solver, sleeping=sleeping, h=h)
    world = scene_to_world(doc, "a1")
    heights = height_changes(world, "trunk")
    assert not world.problems
    assert np.max(np.abs(heights)) < 0.01
    assert world.last_step()["contacts"] >= 3 or world.last_step()["asleep_bodies"] > 0
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
