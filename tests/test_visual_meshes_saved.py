"""Visual meshes are saved with the scene (engine/visual_meshes.py): an archive beside the
scene file that `impulse convert`, save_scene and the viewer's Save write and loading reads
back; a missing or broken archive costs the meshes, never the scene."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import numpy as np
import pytest
from scene_docs import scene_doc

from impulse.engine import load_scene, save_scene, scene_to_world
from impulse.engine.scene import SceneError, validate
from impulse.engine.visual_meshes import (
    VisualMesh,
    archive_name,
    read_visuals,
    write_visuals,
)


def meshes(rng):
    out = []
    for body, n in (("base", 12), ("arm", 40), ("arm", 7)):
        v = rng.normal(size=(n, 3))
        f = rng.integers(0, n, size=(2 * n, 3))
        out.append(VisualMesh(body, v, f, tuple(rng.random(3))))
    return out


def same(a, b):
    return len(a) == len(b) and all(
        x.body == y.body and np.array_equal(x.vertices, y.vertices)
        and np.array_equal(x.faces, y.faces) and np.allclose(x.color, y.color, atol=0)
        for x, y in zip(a, b, strict=True))


def test_an_archive_holds_the_meshes_exactly(tmp_path):
    visuals = meshes(np.random.default_rng(1))
    write_visuals(visuals, tmp_path / "m.visuals.npz")
    assert same(read_visuals(tmp_path / "m.visuals.npz"), visuals)
    write_visuals([], tmp_path / "none.visuals.npz")
    assert read_visuals(tmp_path / "none.visuals.npz") == []
    assert archive_name("/x/robot.json") == "robot.visuals.npz"


def robot_world():
    doc = scene_doc([{"name": "base", "shape": {"type": "box", "size": [1, 0.2, 1]},
                      "fixed": True},
                     {"name": "arm", "shape": {"type": "box", "size": [0.1, 0.6, 0.1]},
                      "mass": 1.0, "position": [0, 0.5, 0]}])
    world = scene_to_world(doc)
    world.meta["visuals"] = meshes(np.random.default_rng(2))
    return world


def test_saving_writes_the_archive_beside_the_scene_and_loading_reads_it(tmp_path):
    world = robot_world()
    for folder in ("a", "b"):                    # saved twice: each file has its own
        (tmp_path / folder).mkdir()
        save_scene(world, tmp_path / folder / "robot.json")
        doc = json.loads((tmp_path / folder / "robot.json").read_text())
        assert doc["visuals"] == {"file": "robot.visuals.npz"}
        assert (tmp_path / folder / "robot.visuals.npz").exists()
        again = load_scene(tmp_path / folder / "robot.json")
        assert same(again.meta["visuals"], world.meta["visuals"])
    again.rename_body("arm", "upper_arm")        # the meshes follow the body's name
    assert [m.body for m in again.meta["visuals"]] == ["base", "upper_arm", "upper_arm"]
    save_scene(again, tmp_path / "renamed.json")
    assert [m.body for m in load_scene(tmp_path / "renamed.json").meta["visuals"]] == \
        ["base", "upper_arm", "upper_arm"]


def test_a_world_without_meshes_writes_no_archive(tmp_path):
    world = robot_world()
    world.meta.pop("visuals")
    save_scene(world, tmp_path / "plain.json")
    assert "visuals" not in json.loads((tmp_path / "plain.json").read_text())
    assert not (tmp_path / "plain.visuals.npz").exists()


@pytest.mark.parametrize("damage", ["missing", "garbage", "truncated", "bad index"])
def test_a_missing_or_broken_archive_costs_the_meshes_not_the_scene(tmp_path, caplog, damage):
    world = robot_world()
    save_scene(world, tmp_path / "robot.json")
    archive = tmp_path / "robot.visuals.npz"
    if damage == "missing":
        archive.unlink()
    elif damage == "garbage":
        archive.write_bytes(b"not an archive")
    elif damage == "truncated":
        archive.write_bytes(archive.read_bytes()[:100])
    else:
        broken = world.meta["visuals"]
        broken[1].faces = broken[1].faces + 1000
        write_visuals(broken, archive)
    with caplog.at_level(logging.WARNING, logger="impulse"):
        again = load_scene(tmp_path / "robot.json")
    assert "visuals" not in again.meta
    line, = [r.getMessage() for r in caplog.records]
    assert "robot.json: $.visuals.file: cannot read robot.visuals.npz" in line
    again.step()                                            # the physics is all there


@pytest.mark.parametrize("entry", [{"file": "../elsewhere.npz"}, {"file": "/abs.npz"},
                                   {"file": ""}, {"path": "x.npz"}, "x.npz"])
def test_the_visuals_entry_names_a_file_beside_the_scene(entry):
    doc = scene_doc([{"name": "b", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0}])
    doc["visuals"] = entry
    with pytest.raises(SceneError) as e:
        validate(doc, "s.json")
    assert "$.visuals" in str(e.value)


@pytest.mark.slow
def test_convert_writes_the_models_visual_meshes_and_the_scene_shows_them(tmp_path):
    pytest.importorskip("trimesh")
    from impulse.engine.formats import load_model_world

    from import_corpus import corpus_path
    model = corpus_path("kuka_iiwa")
    out = tmp_path / "kuka.json"
    r = subprocess.run([sys.executable, "-m", "impulse.app", "convert", str(model), str(out),
                        "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    direct = load_model_world(model).meta["visuals"]
    assert summary["visual_meshes"] == len(direct) > 0
    loaded = load_scene(out).meta["visuals"]
    assert same(loaded, direct)


def test_the_viewers_save_writes_the_meshes_beside_the_file(tmp_path):
    from impulse.app.session import Session
    world = robot_world()
    ses = Session(world)
    try:
        ses.save(tmp_path / "from_viewer.json")
        again = load_scene(tmp_path / "from_viewer.json")
        assert same(again.meta["visuals"], world.meta["visuals"])
    finally:
        ses.close()
