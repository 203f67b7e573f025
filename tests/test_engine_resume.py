"""Exact resume (issue 17.5): save -> load -> continue, and a history snapshot -> set_state
-> continue, are bit-identical to the uninterrupted run, for every bundled scene."""
import json
import os

import numpy as np
import pytest

from impulse.engine.scene import SceneError, load_scene, save_scene, scene_to_world, world_to_scene
from tests.conftest import SCENES, slow_except, slow_only

ALL = sorted(f[:-5] for f in os.listdir(SCENES) if f.endswith(".json"))
BEFORE, AFTER = 25, 40
SLOW = {"funnel_1000": (8, 8), "wall_car": (10, 12), "tree_255": (10, 12)}


def state_of(world):
    B = world.B
    return [world.time, B.pos.copy(), B.rot.copy(), B.vel.copy(), B.omega.copy(),
            world.Sp.force_prev.copy()]


def assert_identical(a, b, name):
    assert a[0] == b[0], f"{name}: time {a[0]} != {b[0]}"
    for x, y, what in zip(a[1:], b[1:], ("pos", "rot", "vel", "omega", "spring force"),
                           strict=True):
        assert np.array_equal(x, y), f"{name}: {what} differs by {np.abs(x - y).max():.3g}"


@pytest.mark.parametrize("name", slow_only(ALL, "wall_car", "funnel_1000", "tree_255", "tree_127",
                                          "chain_drape", "pyramid", "tree_63", "tree_31",
                                          "tall_tower", "hexapod"))
def test_save_load_continue_is_bit_identical(name, tmp_path):
    before, after = SLOW.get(name, (BEFORE, AFTER))
    world = load_scene(os.path.join(SCENES, name + ".json"))
    world.run(before)
    path = tmp_path / "saved.json"
    save_scene(world, path)
    resumed = load_scene(path)
    assert resumed.time == world.time
    world.run(after)
    resumed.run(after)
    assert_identical(state_of(world), state_of(resumed), name)


@pytest.mark.parametrize("name", slow_only(ALL, "funnel_1000", "wall_car", "chain_drape",
                                          "tree_255", "tree_127", "pyramid"))
def test_snapshot_then_continue_is_bit_identical(name):
    before, after = SLOW.get(name, (BEFORE, AFTER))
    world = load_scene(os.path.join(SCENES, name + ".json"))
    world.run(before)
    snap = world.get_state()
    world.run(after)
    first = state_of(world)
    world.run(7)                     # somewhere else, then back (a history scrub)
    world.set_state(snap)
    world.run(after)
    assert_identical(first, state_of(world), name)


def test_a_hand_edited_position_wins_over_the_state_block(tmp_path, scene_path):
    world = load_scene(scene_path("box_stack.json"))
    world.run(10)
    doc = world_to_scene(world, exact_state=True)
    doc["bodies"][3]["position"][0] += 0.5           # moved by hand in an editor
    edited = scene_to_world(json.loads(json.dumps(doc)))
    b = 3
    assert edited.body_scene_pose(b)[0][0] == pytest.approx(world.body_scene_pose(b)[0][0] + 0.5)
    edited.run(3)
    assert np.isfinite(edited.B.pos).all()


@pytest.mark.parametrize("key, value, words", [
    ("prev.shape_a", 10 ** 6, "index out of range"),
    ("prev.body_b", -3, "index out of range"),
    ("order", 999, "index out of range"),
    ("prev.depth", "x", "not valid"),
    ("prev.normal", [1, 2], "shape"),
])
def test_a_crafted_contact_memory_is_refused_not_followed(tmp_path, scene_path, key, value,
                                                          words):
    world = load_scene(scene_path("box_stack.json"))
    world.run(5)
    doc = world_to_scene(world, exact_state=True)
    arr = doc["state"]["contacts"][key]
    arr[0] = value
    with pytest.raises(SceneError, match=words) as e:
        scene_to_world(doc, "x.json")
    assert str(e.value).startswith(f"x.json: $.state.contacts.{key}")


@pytest.mark.parametrize("name", slow_except(ALL, "pendulum", "slider_crank", "box_stack"))
def test_one_second_saved_then_one_more_is_two_seconds_in_one_go(name, tmp_path):
    """Issue 20: run 1 s, save through the engine's one conversion, load, run 1 s more: the
    same bits as 2 s uninterrupted (run() in one call, so the parts differ from the whole)."""
    world = load_scene(os.path.join(SCENES, name + ".json"))
    second = max(1, int(round(1.0 / world.settings.h)))
    whole = load_scene(os.path.join(SCENES, name + ".json"))
    whole.run(2 * second)
    world.run(second)
    save_scene(world, tmp_path / "one_second.json")
    resumed = load_scene(tmp_path / "one_second.json")
    resumed.run(second)
    assert_identical(state_of(resumed), state_of(whole), name)
