"""Scene files: validation messages name the JSON path; load -> save -> load; atomic save."""
import glob
import json
import os

import numpy as np
import pytest
from conftest import slow_only

from impulse.engine import SceneError, load_scene, save_scene, scene_to_world
from impulse.engine.scene import read_document
from tests.scene_docs import scene_doc


def base_doc():
    return scene_doc([{"name": "a", "shape": {"type": "box", "size": [1, 1, 1]}, "mass": 1.0},
                      {"name": "b", "shape": {"type": "sphere", "radius": 0.5}, "mass": 2.0,
                       "position": [0, 2, 0]}],
                     [{"name": "j", "type": "ball", "bodies": ["a", "b"], "anchor": [0, 1, 0]}])


def problem(doc):
    with pytest.raises(SceneError) as e:
        scene_to_world(doc, "x.json")
    return str(e.value)


@pytest.mark.parametrize("mutate, path, words", [
    (lambda d: d["bodies"][1].__setitem__("mass", -1), "$.bodies[1].mass", "at least 1e-06"),
    (lambda d: d["bodies"][1].__setitem__("mass", 0), "$.bodies[1].mass", "at least 1e-06"),
    (lambda d: d["bodies"][0].__setitem__("mass", "heavy"), "$.bodies[0].mass", "number"),
    (lambda d: d["bodies"][0].__setitem__("colour", [1, 0, 0]), "$.bodies[0]",
     "unknown key 'colour'"),
    (lambda d: d.__setitem__("extra", 1), "$", "unknown key 'extra'"),
    (lambda d: d["joints"][0].__setitem__("type", "glue"), "$.joints[0].type", "'ball'"),
    (lambda d: d["joints"][0].__setitem__("bodies", ["a", "c"]), "$.joints[0].bodies[1]",
     "no body named 'c'"),
    (lambda d: d["bodies"][0].__setitem__("position", [0, float("nan"), 0]),
     "$.bodies[0].position[1]", "finite"),
    (lambda d: d["bodies"][0].__setitem__("velocity", [float("inf"), 0, 0]),
     "$.bodies[0].velocity[0]", "finite"),
    (lambda d: d["bodies"][0].__setitem__("orientation", [0, 0, 0, 0]),
     "$.bodies[0].orientation", "zero length"),
    (lambda d: d["bodies"][1].__setitem__("name", "a"), "$.bodies[1].name", "duplicate"),
    (lambda d: d.__setitem__("version", 99), "$.version", "at most"),
    (lambda d: d.__setitem__("format", "other"), "$.format", "impulse-scene"),
    (lambda d: d["bodies"][0].pop("name"), "$.bodies[0]", "missing required key 'name'"),
    (lambda d: d["bodies"][0]["shape"].__setitem__("size", [1, 0, 1]),
     "$.bodies[0].shape.size[1]", "at least 0.0001"),
    (lambda d: d["bodies"][0].__setitem__("shape", {"type": "plane"}), "$.bodies[0]",
     "fixed body"),
])
def test_bad_scene_names_the_place(mutate, path, words):
    doc = base_doc()
    mutate(doc)
    msg = problem(doc)
    assert msg.startswith(f"x.json: {path}:"), msg
    assert words in msg
    assert "\n" not in msg


def test_broken_json_reports_line_and_column(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"format": "impulse-scene",\n "version": 1,,}')
    with pytest.raises(SceneError) as e:
        load_scene(p)
    assert "line 2" in str(e.value) and str(p) in str(e.value)


def test_huge_file_is_refused_without_reading(tmp_path, monkeypatch):
    import impulse.engine.scene as scene
    p = tmp_path / "big.json"
    p.write_text(json.dumps(base_doc()) + " " * 2000)
    monkeypatch.setattr(scene, "MAX_BYTES", 1000)
    with pytest.raises(SceneError) as e:
        load_scene(p)
    assert "limit" in str(e.value)


def test_every_error_is_collected():
    doc = base_doc()
    doc["bodies"][0]["mass"] = -1
    doc["bodies"][1]["mass"] = -2
    with pytest.raises(SceneError) as e:
        scene_to_world(doc, "x.json")
    assert len(e.value.problems) == 2 and "and 1 more" in str(e.value)


def test_joint_anchor_becomes_local_points():
    w = scene_to_world(base_doc())
    a = w.joint_anchor_world()[0]
    assert np.allclose(a[0], [0, 1, 0]) and np.allclose(a[1], [0, 1, 0])


def assert_same_world(w1, w2):
    assert w1.body_names == w2.body_names and w1.joint_names == w2.joint_names
    for name in ("pos", "rot", "vel", "omega", "inv_mass", "static"):
        np.testing.assert_allclose(getattr(w1.B, name), getattr(w2.B, name), rtol=0,
                                   atol=1e-14)
    for a, b in zip(w1.B.const, w2.B.const, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-14)
    np.testing.assert_allclose(w1.J.const.anchor, w2.J.const.anchor, atol=1e-14)
    np.testing.assert_allclose(w1.Sp.const.anchor, w2.Sp.const.anchor, atol=1e-14)
    assert w1.settings == w2.settings


@pytest.mark.parametrize("name", slow_only(sorted(os.path.basename(p) for p in glob.glob(
    os.path.join(os.path.dirname(__file__), "..", "scenes", "*.json"))),
    "funnel_1000.json", "wall_car.json", "tree_255.json", "tree_127.json", "pyramid.json",
    "tree_63.json", "tall_tower.json", "chain_drape.json"))
def test_load_save_load_gives_the_same_world(tmp_path, scene_path, name):
    w = load_scene(scene_path(name))
    w.run(20)  # a moved state, with velocities
    out = tmp_path / name
    save_scene(w, out)
    w2 = load_scene(out)
    assert_same_world(w, w2)


def test_compound_body_round_trip(tmp_path):
    doc = base_doc()
    doc["bodies"][0] = {"name": "a", "density": 1000, "angular_velocity": [1, 2, 3],
                        "velocity": [0.5, 0, 0], "orientation": [0.9, 0.1, 0.3, 0.2],
                        "shapes": [{"type": "box", "size": [1, 0.2, 0.2]},
                                   {"type": "sphere", "radius": 0.3, "position": [0.5, 0.3, 0]}]}
    w = scene_to_world(doc)
    w.run(10)
    save_scene(w, tmp_path / "c.json")
    assert_same_world(w, load_scene(tmp_path / "c.json"))


def test_failed_save_keeps_the_old_file(tmp_path, monkeypatch):
    p = tmp_path / "keep.json"
    p.write_text(json.dumps(base_doc()))
    before = p.read_text()
    w = scene_to_world(base_doc())
    import impulse.engine.scene as scene

    def broken_dumps(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(scene.json, "dumps", broken_dumps)
    with pytest.raises(OSError):
        save_scene(w, p)
    assert p.read_text() == before
    assert [x.name for x in tmp_path.iterdir()] == ["keep.json"]


def test_bundled_scenes_are_valid_documents(scene_path):
    for path in glob.glob(scene_path("*.json")):
        doc = read_document(path)
        assert doc["format"] == "impulse-scene" and "description" in doc
