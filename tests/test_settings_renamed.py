"""Settings renamed to the glossary's words (engine/settings.RENAMED: max_iterations ->
max_cycles, contact_sweeps -> contact_cycles): old names still work everywhere a user gives
them (scene files, --set, --vary, Python attributes), with a warning that names the place;
files are written with the new names only."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from scene_docs import scene_doc

from impulse.app.sweep import key_path, parse_vary
from impulse.engine.cli import load_with_settings
from impulse.engine.scene import (
    SceneError,
    parse_document,
    scene_to_world,
    validate,
    world_to_scene,
)
from impulse.engine.settings import RENAMED, Settings

OLD = {"max_iterations": 7, "contact_sweeps": 13}
NEW = {"max_cycles": 7, "contact_cycles": 13}


def a_scene(settings):
    return scene_doc([{"name": "ball", "shape": {"type": "sphere", "radius": 0.1},
                       "mass": 1.0}], settings=dict(settings))


def test_a_scene_file_with_the_old_names_loads_with_a_warning_each(caplog):
    with caplog.at_level(logging.WARNING, logger="impulse"):
        world = scene_to_world(a_scene(OLD), "old.json")
    assert (world.settings.max_cycles, world.settings.contact_cycles) == (7, 13)
    lines = [r.getMessage() for r in caplog.records]
    for old, new in RENAMED.items():
        assert any(f"old.json: $.settings.{old}" in m and f"'{new}'" in m for m in lines), lines
    saved = world_to_scene(world)["settings"]                   # written under the new names
    assert saved["max_cycles"] == 7 and saved["contact_cycles"] == 13
    assert not set(RENAMED) & set(saved)


def test_parsed_text_is_upgraded_and_the_new_name_wins_over_the_old(caplog):
    doc = parse_document(json.dumps(a_scene({"max_iterations": 3, "max_cycles": 9})), "f.json")
    assert doc["settings"] == {"max_cycles": 9}
    validate(doc)
    assert scene_to_world(doc).settings.max_cycles == 9


def test_the_schema_itself_knows_only_the_new_names():
    doc = a_scene(OLD)
    with pytest.raises(SceneError) as e:
        validate(doc, "raw.json")                 # not upgraded: refused, naming the key
    assert any(f"unknown key {k!r}" in str(e.value) for k in OLD)
    validate(a_scene(NEW))


def test_settings_attributes_under_the_old_names_warn_and_map():
    s = Settings()
    with pytest.warns(DeprecationWarning, match="max_cycles"):
        s.max_iterations = 42
    assert s.max_cycles == 42
    with pytest.warns(DeprecationWarning, match="contact_cycles"):
        assert s.contact_sweeps == s.contact_cycles == 10
    assert Settings.from_dict({"contact_sweeps": 4.0}).contact_cycles == 4
    assert "max_iterations" not in s.to_dict() and s.to_dict()["max_cycles"] == 42


def test_set_and_vary_take_the_old_names_with_a_warning(tmp_path, caplog):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(a_scene({})))
    with caplog.at_level(logging.WARNING, logger="impulse"):
        world = load_with_settings(str(path), [("--set max_iterations=3", "max_iterations", 3)])
        key, values = parse_vary("contact_sweeps=4,8")
    assert world.settings.max_cycles == 3
    assert key_path(key) == ["settings", "contact_cycles"] and values == [4, 8]
    assert key_path("settings.max_iterations") == ["settings", "max_cycles"]
    lines = " ".join(r.getMessage() for r in caplog.records)
    assert "--set max_iterations=3" in lines and "--vary contact_sweeps=4,8" in lines


def test_bundled_scenes_use_the_new_names():
    from impulse.engine.scenes_list import SCENES_DIR
    for path in Path(SCENES_DIR).glob("*.json"):
        settings = json.loads(path.read_text()).get("settings", {})
        assert not set(RENAMED) & set(settings), path.name
