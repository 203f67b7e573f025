"""Live edits after motion (issue 20): the engine owns the conversion between a running world
and scene entries (engine/scene_entries.py) and edits rows in place (engine/world_edits.py).

For every bundled scene with joints, after 0.5 s of motion:
  - an edit that does not touch the physics (a body's colour, its name) leaves the
    trajectory bit-identical to the unedited run;
  - removing a body and undoing that at once leaves it bit-identical too;
  - editing a joint's `collide` flag leaves every joint frame where it was.
The editor's commands (app/editor.py) go through the same engine methods.
"""
import json
import os

import numpy as np
import pytest

from impulse.engine.scene import load_scene, scene_to_world
from tests.conftest import SCENES, slow_except
from tests.scene_docs import scene_doc

WITH_JOINTS = sorted(
    f[:-5] for f in os.listdir(SCENES) if f.endswith(".json")
    and json.load(open(os.path.join(SCENES, f))).get("joints"))
QUICK = ("universal_shaft", "slider_crank", "chain8", "newtons_cradle", "double_pendulum")
AFTER = 0.2    # [s] compared after the edit


def steps_for(world, seconds):
    return max(1, int(round(seconds / world.settings.h)))


def moved(name, seconds=0.5, most_steps=150):
    world = load_scene(os.path.join(SCENES, name + ".json"))
    world.run(min(steps_for(world, seconds), most_steps))
    return world


def state(world):
    B = world.B
    return (B.pos.copy(), B.rot.copy(), B.vel.copy(), B.omega.copy())


def assert_same_run(edited, reference, name, steps):
    edited.run(steps)
    reference.run(steps)
    for a, b, what in zip(state(edited), state(reference), ("pos", "rot", "vel", "omega"),
                          strict=True):
        assert np.array_equal(a, b), \
            f"{name}: {what} differs by {np.abs(a - b).max():.3g} after the edit"


def joint_frames_world(world):
    """(m, 2, 3, 3) joint frames in the world (the world side is stored in world axes)."""
    J, B = world.J, world.B
    out = np.array(J.const.frame[:len(world.joint_models)])
    for j in range(out.shape[0]):
        for s in range(2):
            b = J.const.body[j, s]
            if b >= 0:
                out[j, s] = B.rot[b] @ out[j, s]
    return out


@pytest.mark.parametrize("name", slow_except(WITH_JOINTS, *QUICK))
def test_colour_and_name_edits_leave_the_trajectory_alone(name):
    edited, reference = moved(name), moved(name)
    steps = steps_for(edited, AFTER)
    for body in list(edited.body_names):
        edited.edit_body(body, {"color": [0.9, 0.2, 0.1]})
    first = edited.body_names[0]
    edited.rename_body(first, first + "_renamed")
    assert edited.joints_of(first + "_renamed") == reference.joints_of(first)
    with pytest.raises(KeyError):
        edited.joints_of(first)
    assert_same_run(edited, reference, name, steps)
    assert edited.models[0].color == (0.9, 0.2, 0.1)


@pytest.mark.parametrize("name", slow_except(WITH_JOINTS, *QUICK))
def test_remove_a_body_and_put_it_back_leaves_the_trajectory_alone(name):
    edited, reference = moved(name), moved(name)
    steps = steps_for(edited, AFTER)
    # the body with the most joints, so that the most rows come back
    body = max(edited.body_names, key=lambda b: len(edited.joints_of(b)))
    removal = edited.remove_body(body)
    assert body not in edited.body_names
    assert not any(body in jm.bodies for jm in edited.joint_models + edited.spring_models)
    edited.restore_body(removal)
    assert edited.body_names == reference.body_names
    assert edited.scene_joint_names == reference.scene_joint_names
    assert_same_run(edited, reference, name, steps)


@pytest.mark.parametrize("name", slow_except(WITH_JOINTS, *QUICK))
def test_a_joints_collide_flag_keeps_its_frames(name):
    world = moved(name)
    frames = joint_frames_world(world)
    anchors = world.joint_anchor_world()
    for j in world.scene_joint_names:
        flag = bool(world.joint_model(j).spec.get("collide", False))
        world.edit_joint(j, {"collide": not flag})
        assert world.joint_model(j).spec["collide"] is (not flag)
    assert np.array_equal(joint_frames_world(world), frames)
    assert np.array_equal(world.joint_anchor_world(), anchors)


def test_the_reported_bug_a_colour_edit_after_motion_keeps_the_universal_shaft_turning():
    """The report: after 0.6 s, a colour edit of `output` (and its undo) through the editor
    turned the cardan and bearing frames by about 105 degrees; 0.2 s later the output shaft
    turned at 2.444 rad/s instead of 2.541. Now the edit and its undo change nothing."""
    from impulse.app.editor import EditBody, Editor

    edited, reference = (moved("universal_shaft", 0.6, most_steps=10**6) for _ in range(2))
    editor = Editor(edited)
    frames = joint_frames_world(edited)
    editor.run(EditBody("output", {"color": [1.0, 0.0, 0.0]}))
    editor.undo()
    editor.redo()
    assert np.array_equal(joint_frames_world(edited), frames)
    assert_same_run(edited, reference, "universal_shaft", steps_for(edited, 0.2))
    assert edited.time == pytest.approx(0.8)
    spin = edited.B.omega[edited.body_index("output")]
    assert spin[0] == pytest.approx(2.541, abs=0.002)        # the report's figure
    axis = edited.joint_anchors("output_bearing")             # (the shaft turns about its
    bearing = np.array(edited.joint_entry("output_bearing")["local_axes"][0])   # bearing only)
    assert abs(spin @ bearing) == pytest.approx(np.linalg.norm(spin), rel=1e-6)
    assert np.allclose(axis[0], axis[1], atol=1e-5)


def test_the_editor_remove_and_undo_through_the_engine():
    from impulse.app.editor import Editor, RemoveBody

    edited, reference = moved("slider_crank"), moved("slider_crank")
    editor = Editor(edited)
    body = edited.body_names[1]
    editor.run(RemoveBody(body))
    editor.undo()
    assert_same_run(edited, reference, "slider_crank", 40)


def ball_on_rod(mass=1.0, shapes=None):
    return scene_doc([{"name": "rod", "mass": mass, "position": [1.0, 0.0, 0.0],
                       "shapes": shapes or [{"type": "box", "size": [1.0, 0.1, 0.1]}]}],
                     [{"name": "pivot", "type": "hinge", "bodies": ["world", "rod"],
                       "anchor": [0.5, 0.0, 0.0], "axis": [0, 0, 1]}],
                     {"h": 0.005, "gravity": [0, -9.81, 0]})


@pytest.mark.parametrize("shapes", [
    [{"type": "box", "size": [1.0, 0.1, 0.1]}, {"type": "sphere", "radius": 0.2,
                                                 "position": [0.5, 0.0, 0.0]}],
    [{"type": "sphere", "radius": 0.3, "position": [-0.4, 0.1, 0.0]}],
])
@pytest.mark.parametrize("mass", [0.5, 4.0])
def test_a_mass_or_shape_edit_keeps_the_joint_at_the_same_body_point(mass, shapes):
    """A physics edit rebuilds the body's row in place: its scene frame stays where it is,
    the joint stays at the same point of the body (the pivot), in the same direction."""
    world = scene_to_world(ball_on_rod())
    world.run(60)
    pivot = world.joint_anchors("pivot")
    pose = world.body_scene_pose(0)
    axis = joint_frames_world(world)[0, :, :, 0]
    world.edit_body("rod", {"mass": mass, "shapes": shapes})
    assert world.body_mass("rod") == pytest.approx(mass)
    assert np.allclose(world.joint_anchors("pivot"), pivot, atol=1e-12)
    assert np.allclose(world.body_scene_pose(0)[0], pose[0], atol=1e-12)
    assert np.allclose(joint_frames_world(world)[0, :, :, 0], axis, atol=1e-12)
    world.run(200)          # and the hinge still holds
    assert np.allclose(world.joint_anchors("pivot")[1], [0.5, 0.0, 0.0], atol=1e-5)
    assert abs(world.B.omega[0][0]) < 1e-6 and abs(world.B.omega[0][1]) < 1e-6


def test_a_rejected_edit_leaves_the_world_as_it_was():
    world = scene_to_world(ball_on_rod())
    world.run(10)
    before = state(world)
    for bad in ({"mass": -1.0}, {"name": "other"}, {"shapes": "no"}):
        with pytest.raises(ValueError):
            world.edit_body("rod", bad)
    with pytest.raises(ValueError):
        world.edit_joint("pivot", {"bodies": ["world", "nobody"]})
    with pytest.raises(ValueError):
        world.edit_joint("pivot", {"type": "spring"})
    for a, b in zip(state(world), before, strict=True):
        assert np.array_equal(a, b)
    assert world.joint_entry("pivot")["type"] == "hinge"


def test_the_saved_scene_is_the_same_conversion():
    """world_to_scene writes exactly the entries body_entry / joint_entry give."""
    from impulse.engine.scene import world_to_scene

    world = moved("slider_crank")
    doc = world_to_scene(world)
    assert doc["bodies"] == [world.body_entry(b) for b in world.body_names]
    assert doc["joints"] == [world.joint_entry(j) for j in world.scene_joint_names]
