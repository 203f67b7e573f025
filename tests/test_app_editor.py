"""Editor commands and the undo/redo stack, without a window."""
import json
import os

import numpy as np
import pytest

from impulse.app.editor import (
    AddBody,
    AddContactFilter,
    AddJoint,
    Duplicate,
    EditBody,
    EditJoint,
    Editor,
    EditSettings,
    RemoveBody,
    RemoveContactFilter,
    RemoveJoint,
    SetMotion,
    body_at_rest_spec,
)
from impulse.engine import load_scene, world_to_scene


def doc_of(world):
    return world_to_scene(world)


@pytest.fixture
def world(scene_path):
    return load_scene(scene_path("double_pendulum.json"))


def test_add_remove_body_undo_redo_and_dirty(world):
    ed = Editor(world)
    assert not ed.dirty
    n = len(world.body_names)
    ed.run(AddBody(body_at_rest_spec(world, "box", [0, 0, 0])))
    assert world.body_names[-1] == "box" and ed.dirty
    assert np.allclose(world.body_pos[-1], [0, 0.15, 0])          # stands on the point
    ed.undo()
    assert len(world.body_names) == n and not ed.dirty
    ed.redo()
    assert "box" in world.body_names and ed.dirty
    ed.mark_saved()
    assert not ed.dirty
    ed.undo()
    assert ed.dirty


def test_remove_body_restores_joints_and_filters(world):
    ed = Editor(world)
    world.run(20)
    names = world.body_names
    ed.run(AddContactFilter(names[0], names[1]))
    before = doc_of(world)
    joints = list(world.joint_names)
    ed.run(RemoveBody(names[1]))
    assert names[1] not in world.body_names
    assert not any(names[1] in j.bodies for j in world.joint_models)
    assert world.contacts_spec["disabled_pairs"] == []
    ed.undo()
    assert sorted(world.joint_names) == sorted(joints)
    after = doc_of(world)
    assert after["contacts"] == before["contacts"]
    b0 = {b["name"]: b for b in before["bodies"]}
    for b in after["bodies"]:
        assert np.allclose(b["position"], b0[b["name"]]["position"])
        assert np.allclose(b["velocity"], b0[b["name"]]["velocity"])


def test_edit_body_keeps_motion_and_joints_and_undoes(world):
    ed = Editor(world)
    world.run(30)
    name = world.body_names[0]
    b = world.body_index(name)
    pos, vel = world.body_pos[b].copy(), world.body_vel[b].copy()
    anchors = world.joint_anchor_world().copy()
    old_color = list(world.models[b].color)
    ed.run(EditBody(name, {"color": [0.1, 0.2, 0.3], "mass": 2.0}))
    b = world.body_index(name)
    assert world.models[b].mass == 2.0 and tuple(world.models[b].color) == (0.1, 0.2, 0.3)
    assert np.allclose(world.body_pos[b], pos) and np.allclose(world.body_vel[b], vel)
    assert len(world.joint_names) == 2
    assert np.allclose(np.sort(world.joint_anchor_world().reshape(-1)),
                       np.sort(anchors.reshape(-1)), atol=1e-9)
    ed.undo()
    b = world.body_index(name)
    assert world.models[b].mass == 1.0 and list(world.models[b].color) == old_color


def test_rejected_edit_changes_nothing(world):
    ed = Editor(world)
    before = doc_of(world)
    name = world.body_names[0]
    with pytest.raises(ValueError, match="mass"):
        ed.run(EditBody(name, {"mass": -1.0}))
    with pytest.raises(ValueError, match="taken"):
        ed.run(AddBody({"name": name, "mass": 1, "shape": {"type": "sphere", "radius": 0.1}}))
    with pytest.raises(ValueError):
        ed.run(AddJoint({"name": "j", "type": "ball", "bodies": [name, "nobody"],
                         "anchor": [0, 0, 0]}))
    assert doc_of(world) == before and not ed.can_undo


def test_joint_add_edit_remove(world):
    ed = Editor(world)
    a, b = world.body_names
    ed.run(AddJoint({"name": "s", "type": "spring", "bodies": [a, b],
                     "anchors": [[0, 0, 0], [1, 0, 0]], "stiffness": 10.0}))
    ed.run(EditJoint("s", {"stiffness": 50.0}))
    assert world.spring_models[0].spec["stiffness"] == 50.0
    ed.undo()
    assert world.spring_models[0].spec["stiffness"] == 10.0
    ed.run(RemoveJoint(world.joint_names[0]))
    assert len(world.joint_names) == 1
    ed.undo()
    assert len(world.joint_names) == 2


def test_settings_motion_duplicate_filters(world):
    ed = Editor(world)
    h0 = world.settings.h
    ed.run(EditSettings({"h": 0.002, "velocity_correction": False}))
    assert world.settings.h == 0.002 and world.settings.velocity_correction is False
    with pytest.raises(ValueError):
        ed.run(EditSettings({"h": -1.0}))
    ed.undo()
    assert world.settings.h == h0 and world.settings.velocity_correction is True
    name = world.body_names[0]
    ed.run(SetMotion(name, {"velocity": [1.0, 2.0, 3.0]}))
    assert np.allclose(world.body_vel[0], [1, 2, 3])
    ed.undo()
    assert np.allclose(world.body_vel[0], 0)
    ed.run(Duplicate(world, name))
    assert world.body_names[-1] == f"{name}_2"
    assert np.allclose(world.body_pos[-1], world.body_pos[0] + [0.5, 0, 0])
    ed.run(AddContactFilter(name, f"{name}_2"))
    with pytest.raises(ValueError):
        ed.run(AddContactFilter(f"{name}_2", name))
    ed.run(RemoveContactFilter(f"{name}_2", name))
    assert world.contacts_spec["disabled_pairs"] == []
    ed.undo()
    assert world.contacts_spec["disabled_pairs"] == [[name, f"{name}_2"]]


def test_session_reset_history_and_failed_save_keeps_the_file(scene_path, tmp_path):
    from impulse.app.session import Session, states_equal
    from impulse.engine import load_scene

    path = tmp_path / "dp.json"
    path.write_bytes(open(scene_path("double_pendulum.json"), "rb").read())
    ses = Session.open(str(path))
    w = ses.world
    start = w.get_state()
    for _ in range(50):
        ses.step()
    assert len(ses.history.snapshots) == 51
    ses.editor.run(AddBody(body_at_rest_spec(w, "box", [2, 0, 0])))
    assert len(ses.history.snapshots) == 1                 # structural edit: old states dropped
    for _ in range(10):
        ses.step()
    ses.reset()
    assert w.time == 0.0 and np.allclose(w.body_pos[:2], start["pos"])
    assert np.allclose(w.body_pos[2], [2, 0.15, 0])        # added bodies keep their start pose
    ses.save()
    assert states_equal(load_scene(str(path)), w) and not ses.dirty
    before = path.read_bytes()
    ses.editor.run(EditBody("box", {"color": [1.0, 0.0, 0.0]}))

    def disk_full(fd):
        raise OSError(28, "No space left on device")
    real_fsync = os.fsync
    os.fsync = disk_full
    try:
        with pytest.raises(OSError, match="no space left"):
            ses.save()
    finally:
        os.fsync = real_fsync
    assert path.read_bytes() == before and ses.dirty
    assert not list(tmp_path.glob(".*"))                    # no temporary file left behind


def test_new_scene_has_a_ground_and_saves_as_a_valid_file(tmp_path):
    from impulse.app.session import Session, states_equal
    from impulse.engine import load_scene

    ses = Session.new()
    assert ses.world.body_names == ["ground"] and ses.path is None
    with pytest.raises(ValueError, match="Save as"):
        ses.save()
    ses.editor.run(AddBody(body_at_rest_spec(ses.world, "capsule", [0, 0, 0])))
    assert ses.title == "untitled * - impulse"
    out = ses.save(tmp_path / "new.json")
    assert ses.title == "new.json - impulse"
    assert states_equal(load_scene(out), ses.world)


def test_undo_of_a_new_key_removes_it_again(world):
    ed = Editor(world)
    name = world.body_names[0]
    assert "fixed" not in world.models[0].spec
    ed.run(EditBody(name, {"fixed": True}))
    assert world.body_static[world.body_index(name)]
    ed.undo()
    b = world.body_index(name)
    assert not world.body_static[b] and "fixed" not in world.models[b].spec
    ed.redo()
    assert world.body_static[world.body_index(name)]


# ---- saving keeps what the user opened (issue 18.3) ---------------------------------------

def _copy(scene_path, tmp_path, name, mode=0o644):
    path = tmp_path / name
    path.write_bytes(open(scene_path(name), "rb").read())
    os.chmod(path, mode)
    return path


def test_save_writes_the_scene_as_edited_with_its_initial_state(scene_path, tmp_path):
    from impulse.app.editor import SetMotion
    from impulse.app.session import Session
    from impulse.engine import load_scene

    path = _copy(scene_path, tmp_path, "box_stack.json")
    ses = Session.open(str(path))
    start = load_scene(str(path))
    for _ in range(30):
        ses.step()
    moved = ses.world.body_names[-1]
    ses.editor.run(SetMotion(moved, {"position": [0.3, 2.5, 0.0]}))   # a pose edit mid-run
    heavier = ses.world.body_names[2]
    ses.editor.run(EditBody(heavier, {"mass": 2.5}))                 # and a property edit
    for _ in range(10):
        ses.step()
    ses.save()
    saved = json.loads(path.read_text())
    assert "state" not in saved and os.stat(path).st_mode & 0o777 == 0o644
    again = load_scene(str(path))
    for b, name in enumerate(again.body_names):
        if name == moved:
            assert np.allclose(again.body_scene_pose(b)[0], [0.3, 2.5, 0.0])
        else:       # where it started, not where the run has taken it
            s = start.body_index(name)
            assert np.allclose(again.body_pos[b], start.body_pos[s], atol=1e-12), name
            assert not again.body_vel[b].any()
    assert next(b for b in saved["bodies"] if b["name"] == heavier)["mass"] == 2.5
    assert not ses.dirty


def test_save_state_writes_this_moment_exactly_and_keeps_the_open_file(scene_path, tmp_path):
    from impulse.app.session import Session
    from impulse.engine import load_scene

    path = _copy(scene_path, tmp_path, "box_stack.json")
    before = path.read_bytes()
    ses = Session.open(str(path))
    for _ in range(20):
        ses.step()
    out = ses.save_state(tmp_path / "moment.json")
    assert ses.path == str(path) and path.read_bytes() == before
    resumed = load_scene(out)
    for _ in range(15):
        ses.step()
        resumed.step()
    assert np.array_equal(resumed.body_pos, ses.world.body_pos)
    assert resumed.time == ses.world.time


def test_bundled_scenes_are_never_written(scene_path):
    from impulse.app.session import Session

    path = scene_path("pendulum.json")
    before = open(path, "rb").read()
    ses = Session.open(path)
    assert ses.bundled
    for _ in range(10):
        ses.step()
    for save in (ses.save, lambda: ses.save(path), lambda: ses.save_state(path)):
        with pytest.raises(ValueError, match="ships with impulse"):
            save()
    assert open(path, "rb").read() == before


def test_edit_load_and_its_undo_are_exact(scene_path):
    """EditLoad sets keys of a load's entry; undo brings back the previous values, a key
    the entry did not have included (removed again)."""
    from impulse.app.editor import EditLoad, Editor
    from impulse.engine import load_scene

    w = load_scene(scene_path("loads.json"))
    ed = Editor(w)
    before = w.load_entry("hold")
    ed.run(EditLoad("hold", {"torque": [1.0, 2.0, 3.0], "frame": "body"}))
    assert w.load_entry("hold") == {**before, "torque": [1.0, 2.0, 3.0], "frame": "body"}
    ed.undo()
    assert w.load_entry("hold") == before and "frame" not in w.load_entry("hold")
    ed.redo()
    assert w.load_entry("hold")["frame"] == "body"
    with pytest.raises(ValueError):
        EditLoad("hold", {"torque": [1.0, 2.0]}).do(w)          # refused, nothing changed
    assert w.load_entry("hold")["torque"] == [1.0, 2.0, 3.0]
