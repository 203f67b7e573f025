"""Stable handles (issue 20): a BodyId / JointId (slot + generation) keeps pointing at its
object while others come and go; once the object is removed every use of it raises
StaleHandle, also after the slot is reused."""
import numpy as np
import pytest

from impulse.engine import BodyId, JointId, StaleHandle
from impulse.engine.scene import scene_to_world
from tests.scene_docs import scene_doc


def chain(n=4):
    bodies = [{"name": f"b{i}", "mass": 1.0, "position": [0.5 + i, 0.0, 0.0],
               "shape": {"type": "box", "size": [1.0, 0.1, 0.1]}} for i in range(n)]
    joints = [{"name": f"j{i}", "type": "ball", "bodies": ["world" if i == 0 else f"b{i - 1}",
                                                         f"b{i}"], "anchor": [float(i), 0, 0]}
              for i in range(n)]
    return scene_to_world(scene_doc(bodies, joints, {"h": 0.01}))


def test_a_body_handle_survives_the_removal_of_an_earlier_body():
    world = chain()
    last = world.body_id("b3")
    assert isinstance(last, BodyId) and world.body_index(last) == 3
    world.remove_body("b1")
    assert world.body_index(last) == 2                 # the index moved, the handle did not
    assert world.body_entry(last)["name"] == "b3"
    assert world.joints_of(last) == ["j3"]


def test_add_body_and_add_joint_return_handles_that_edits_and_renames_keep():
    world = chain(2)
    ball = world.add_body({"name": "ball", "mass": 1.0, "position": [0, 2, 0],
                           "shape": {"type": "sphere", "radius": 0.1}})
    spring = world.add_joint({"name": "s", "type": "spring", "bodies": ["b1", "ball"],
                              "anchors": [[1.5, 0, 0], [0, 2, 0]], "stiffness": 10.0})
    assert isinstance(ball, BodyId) and isinstance(spring, JointId)
    world.edit_body(ball, {"mass": 2.0})
    world.rename_body(ball, "heavy")
    assert world.body_names[world.body_index(ball)] == "heavy"
    assert world.body_mass(ball) == pytest.approx(2.0)
    world.edit_joint(spring, {"stiffness": 20.0})
    assert world.joint_entry(spring)["stiffness"] == 20.0
    assert world.joint_model(spring).bodies == ("b1", "heavy")
    world.step()
    assert np.isfinite(world.B.pos[world.body_index(ball)]).all()


def test_a_removed_objects_handle_is_stale_even_when_its_slot_is_reused():
    world = chain()
    b2, j2 = world.body_id("b2"), world.joint_id("j2")
    removal = world.remove_body(b2)                      # takes j2 and j3 with it
    for use in (lambda: world.body_index(b2), lambda: world.body_entry(b2),
                lambda: world.edit_body(b2, {"color": [1, 0, 0]}), lambda: world.remove_body(b2),
                lambda: world.drag_start(b2, [0, 0, 0]), lambda: world.joint_entry(j2)):
        with pytest.raises(StaleHandle, match="was removed"):
            use()
    again = world.add_body({"name": "new", "mass": 1.0, "shape": {"type": "sphere",
                                                                   "radius": 0.1}})
    assert again.slot == b2.slot and again.generation == b2.generation + 1
    with pytest.raises(StaleHandle):
        world.body_index(b2)
    back = world.restore_body(removal)                   # back: a new handle
    assert back != b2 and world.body_index(back) == 2
    assert world.joint_index(world.joint_id("j2")) == 2
    with pytest.raises(StaleHandle):
        world.joint_index(j2)


def test_handles_of_a_loaded_scene_and_the_drag():
    world = chain()
    h = world.body_id(2)
    assert world.body_id("b2") == h
    world.drag_start(h, world.B.pos[2])
    world.drag_to(world.B.pos[2] + [0.0, 0.1, 0.0])
    world.step()
    assert world.drag_active
