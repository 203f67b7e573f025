"""Typed definitions (engine/definitions.py): the dataclasses and the JSON Schema
(engine/scene_schema.py) name the same keys, the same required ones and the same kinds;
every bundled scene reads into them and writes back unchanged; the World's API takes and
gives them."""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from impulse.engine import scene_schema as schema
from impulse.engine.definitions import (
    BodyDef,
    CameraDef,
    CollisionDef,
    ContactsDef,
    JointDef,
    JointSpringDef,
    LimitsDef,
    LoadDef,
    LoadSequence,
    MaterialDef,
    MotorDef,
    SceneDef,
    ShapeDef,
    TargetSequence,
    VisualsDef,
)
from impulse.engine.scene import (
    SceneError,
    read_document,
    scene_to_world,
    world_to_scene,
    world_to_scene_def,
)
from impulse.engine.scenes_list import SCENES_DIR
from impulse.engine.settings import Settings
from impulse.engine.world import World


def _shape_properties():
    props = {}
    for branch in schema.SHAPE["allOf"]:
        props.update(branch["then"]["properties"])
    return {"type": schema.SHAPE["properties"]["type"], **props}, ["type"]


PAIRS = [   # dataclass, (schema properties, schema required)
    (ShapeDef, _shape_properties()),
    (MaterialDef, (schema.MATERIAL["properties"], [])),
    (CollisionDef, (schema.BODY["properties"]["collision"]["properties"], [])),
    (BodyDef, (schema.BODY["properties"], schema.BODY["required"])),
    (LimitsDef, (schema.JOINT["properties"]["limits"]["properties"], [])),
    (MotorDef, (schema.JOINT["properties"]["motor"]["properties"],
                schema.JOINT["properties"]["motor"]["required"])),
    (TargetSequence, (schema.JOINT["properties"]["motor"]["properties"]["target"]["oneOf"][1]
                      ["properties"], ["times", "values"])),
    (JointSpringDef, (schema.JOINT["properties"]["spring"]["properties"], [])),
    (JointDef, (schema.JOINT["properties"], schema.JOINT["required"])),
    (LoadSequence, (schema.LOAD["properties"]["force"]["oneOf"][1]["properties"],
                    ["times", "values"])),
    (LoadDef, (schema.LOAD["properties"], schema.LOAD["required"])),
    (CameraDef, (schema.SCENE["properties"]["camera"]["properties"], [])),
    (ContactsDef, (schema.SCENE["properties"]["contacts"]["properties"], [])),
    (Settings, (schema.SETTINGS["properties"], [])),
    (VisualsDef, (schema.SCENE["properties"]["visuals"]["properties"],
                  schema.SCENE["properties"]["visuals"]["required"])),
    (SceneDef, ({k: v for k, v in schema.SCENE["properties"].items()
                 if k not in ("format", "version")}, [])),
]

_KIND = {float: "number", int: "integer", bool: "boolean", str: "string", list: "array",
         dict: "object"}


def _hint_kinds(hint):
    """JSON kinds a field's type allows (None left out)."""
    if hint is type(None):
        return set()
    if dataclasses.is_dataclass(hint):
        return {"object"}
    origin = typing.get_origin(hint)
    if origin in (typing.Union, __import__("types").UnionType):
        return set().union(*(_hint_kinds(a) for a in typing.get_args(hint)))
    return {_KIND[origin or hint]}


def _schema_kinds(prop):
    if "oneOf" in prop:
        return set().union(*(_schema_kinds(p) for p in prop["oneOf"]))
    if "type" in prop:
        return {prop["type"]}
    values = prop.get("enum", [prop.get("const")])
    return {_KIND[type(v)] for v in values}


@pytest.mark.parametrize("cls, spec", PAIRS, ids=[c.__name__ for c, _ in PAIRS])
def test_each_definition_names_the_schemas_keys_required_ones_and_kinds(cls, spec):
    properties, required = spec
    names = [f.name for f in dataclasses.fields(cls)]
    assert sorted(names) == sorted(properties), cls.__name__
    no_default = [f.name for f in dataclasses.fields(cls)
                  if f.default is dataclasses.MISSING
                  and f.default_factory is dataclasses.MISSING]
    assert sorted(no_default) == sorted(required), cls.__name__
    hints = typing.get_type_hints(cls)
    for name in names:
        want = _schema_kinds(properties[name])
        got = _hint_kinds(hints[name])
        if "number" in want:
            want = want | {"integer"}      # a JSON number may be written as an integer
            got = got | ({"integer"} if "number" in got else set())
        assert got == want, (cls.__name__, name, got, want)


def _bundled():
    return sorted(Path(SCENES_DIR).glob("*.json"))


@pytest.mark.parametrize("path", _bundled(), ids=lambda p: p.stem)
def test_every_bundled_scene_reads_into_definitions_and_writes_back_the_same(path):
    doc = read_document(path)
    scene = SceneDef.read(path)
    assert all(isinstance(b, BodyDef) for b in scene.bodies)
    assert all(isinstance(j, JointDef) for j in scene.joints or [])
    back = scene.to_document()
    if "settings" in doc:          # written whole, as every save writes it
        doc["settings"] = Settings.from_dict(doc["settings"]).to_dict()
    assert json.dumps(back, sort_keys=True) == json.dumps(doc, sort_keys=True)


@pytest.mark.parametrize("name", ["pendulum", "universal_shaft", "loads", "box_stack"])
def test_a_running_world_as_definitions_is_its_scene_document(name):
    world = scene_to_world(read_document(Path(SCENES_DIR) / f"{name}.json"))
    for _ in range(5):
        world.step()
    for exact in (False, True):
        assert world_to_scene_def(world, exact).to_document() == world_to_scene(world, exact)
    again = scene_to_world(world_to_scene_def(world))          # a SceneDef builds a world
    assert again.body_names == world.body_names


def test_write_and_read_a_scene_definition(tmp_path):
    scene = SceneDef(
        name="typed", settings=Settings(h=0.005),
        bodies=[BodyDef("ground", shape=ShapeDef.plane(), fixed=True),
                BodyDef("ball", shape=ShapeDef.sphere(0.1), mass=2.0, position=(0, 1.0, 0),
                        material=MaterialDef(restitution=0.5))],
        camera=CameraDef(eye=[0, 1, 4], target=[0, 0.5, 0]))
    scene.write(tmp_path / "typed.json")
    back = SceneDef.read(tmp_path / "typed.json")
    assert back.bodies[1].position == [0, 1.0, 0] and back.settings.h == 0.005
    assert back == replace(scene, bodies=[scene.bodies[0], replace(scene.bodies[1],
                                                                   position=[0, 1.0, 0])])
    world = scene_to_world(back)
    for _ in range(30):
        world.step()
    t = world.time
    assert world.body_pos[1][1] == pytest.approx(1.0 - 0.5 * 9.81 * t * t, abs=1e-3)


def test_a_bad_definition_is_refused_with_its_place(tmp_path):
    scene = SceneDef(bodies=[BodyDef("ball", shape=ShapeDef.sphere(-1.0), mass=1.0)])
    with pytest.raises(SceneError) as e:
        scene.write(tmp_path / "bad.json")
    assert "$.bodies[0].shape.radius" in str(e.value)
    assert not (tmp_path / "bad.json").exists()
    with pytest.raises(SceneError) as e:
        scene_to_world(SceneDef(bodies=[BodyDef("b", mass=1.0)]))
    assert "$.bodies[0]" in str(e.value)


def test_world_api_takes_and_gives_definitions():
    w = World()
    w.add_body(BodyDef("floor", shape=ShapeDef.box([4, 0.2, 4]), fixed=True,
                       position=np.array([0.0, -0.1, 0.0])))
    ball = w.add_body(BodyDef("ball", shape=ShapeDef.sphere(0.1), mass=1.0,
                              position=[0.0, 0.1, 0.0], color=(1, 0, 0)))
    w.add_body(BodyDef("lamp", shape=ShapeDef.capsule(0.05, 0.3), density=500.0,
                       position=[1.0, 2.0, 0.0]))
    got = w.body_def(ball)
    assert isinstance(got.shape, ShapeDef) and got.shape.radius == 0.1
    assert got.position == [0.0, 0.1, 0.0] and got.color == [1, 0, 0]
    assert w.body_def("floor").position == [0.0, -0.1, 0.0]       # an array, as a list
    # a whole definition as the edit: only what differs is set; a key left None is removed
    w.edit_body("ball", replace(got, color=[0, 0, 1], mass=2.0))
    assert w.body_mass("ball") == pytest.approx(2.0) and w.body_def("ball").color == [0, 0, 1]
    w.edit_body("ball", replace(w.body_def("ball"), color=None))
    assert w.body_def("ball").color is None
    hinge = JointDef("hang", "hinge", ["world", "lamp"], anchor=[1.0, 2.2, 0.0],
                     axis=[0, 0, 1], limits=LimitsDef(-0.5, 0.5),
                     motor=MotorDef("velocity", target=0.0, max_force=1.0))
    jid = w.add_joint(hinge)
    jd = w.joint_def(jid)
    assert isinstance(jd.limits, LimitsDef) and jd.limits.upper == 0.5
    assert isinstance(jd.motor, MotorDef) and jd.motor.max_force == 1.0
    w.edit_joint("hang", replace(jd, limits=LimitsDef(-0.2, 0.2)))
    assert w.joint_def("hang").limits == LimitsDef(-0.2, 0.2)
    w.add_load(LoadDef("wind", body="lamp", force=[1.0, 0.0, 0.0]))
    w.edit_load("wind", replace(w.load_def("wind"), force=[2.0, 0.0, 0.0]))
    assert w.load_def("wind").force == [2.0, 0.0, 0.0]
    w.add_load(LoadDef("gust", body="ball",
                       force=LoadSequence(times=[0, 1], values=[[0, 0, 0], [1, 0, 0]])))
    assert isinstance(w.load_def("gust").force, LoadSequence)
    for _ in range(10):
        w.step()
    assert np.isfinite(w.body_pos).all()
