"""URDF/MJCF -> scene entries (engine/formats): what each MuJoCo element becomes, checked
against the numbers in the file; the corpus converts and round-trips through our loader."""
import json
import logging

import numpy as np
import pytest

from import_corpus import CORPUS, corpus_path

mujoco = pytest.importorskip("mujoco")

from impulse.engine import load_scene, scene_to_world, world_to_scene  # noqa: E402
from impulse.engine.formats import convert_file  # noqa: E402
from impulse.engine.formats.frames import UP  # noqa: E402

ARM = """<mujoco model="arm">
  <compiler angle="radian"/>
  <option timestep="0.002" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="base" pos="0 0 0.5">
      <geom type="box" size="0.1 0.1 0.05"/>
      <body name="upper" pos="0 0 0.1">
        <joint name="shoulder" type="hinge" axis="0 1 0" range="-1 1.5" ref="0.25"
               damping="0.7" stiffness="3" springref="0.5" armature="0.01"/>
        <inertial pos="0.1 0 0" quat="0.9238795 0 0.3826834 0" mass="2"
                  diaginertia="0.03 0.02 0.015"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <body name="tool" pos="0.3 0 0">
          <inertial pos="0 0 0" mass="0.5" diaginertia="0.001 0.001 0.001"/>
          <geom type="sphere" size="0.04"/>
        </body>
        <body name="slide_link" pos="0.3 0 0">
          <joint name="slide" type="slide" axis="1 0 0" range="0 0.2"/>
          <geom type="box" size="0.02 0.02 0.02" mass="0.3"/>
        </body>
      </body>
    </body>
    <body name="floater" pos="1 0 1">
      <freejoint/>
      <geom type="cylinder" size="0.05 0.1" mass="1"/>
    </body>
  </worldbody>
  <contact><exclude body1="floater" body2="upper"/></contact>
  <actuator>
    <position name="servo" joint="shoulder" kp="50" forcerange="-20 20" forcelimited="true"/>
    <motor name="m1" joint="slide"/>
    <motor name="m2" joint="slide"/>
  </actuator>
</mujoco>
"""


@pytest.fixture
def arm(tmp_path):
    path = tmp_path / "arm.xml"
    path.write_text(ARM)
    return str(path)


def by_name(entries):
    return {e["name"]: e for e in entries}


def test_bodies_joints_actuators_from_the_file(arm):
    doc = convert_file(arm).doc
    bodies, joints = by_name(doc["bodies"]), by_name(doc["joints"])
    assert doc["settings"]["h"] == 0.002 and doc["settings"]["gravity"] == [0, -9.81, 0]
    assert bodies["base"]["fixed"] is True                  # welded to the world
    assert "floater" in bodies and "floater" not in {b for j in joints.values()
                                                     for b in j["bodies"]}   # free: no joint
    # the welded tool joins `upper`: masses add, the centre moves towards the tool
    upper = bodies["upper"]
    assert upper["mass"] == pytest.approx(2.5)
    com = np.array([0.0, 0.0, 0.6]) + np.array([2 * 0.1 + 0.5 * 0.3, 0, 0]) / 2.5
    assert np.allclose(upper["position"], UP @ com, atol=1e-12)
    # the file's pose is the shoulder at ref = 0.25 (qpos0): our 0 is there, so the limits,
    # the spring's rest (0.5) and the servo's target (ctrl 0) are shifted by -0.25; the
    # position servo (kp 50, soft at h = 0.002) joins the joint's spring (stiffness 3)
    sh = joints["shoulder"]
    assert sh["type"] == "hinge" and sh["bodies"] == ["base", "upper"]
    assert np.allclose(sh["axis"], UP @ [0, 1, 0]) and np.allclose(sh["anchor"], UP @ [0, 0, .6])
    assert sh["limits"] == pytest.approx({"lower": -1.25, "upper": 1.25})   # range - ref
    assert sh["spring"] == pytest.approx({"stiffness": 53, "damping": 0.7,
                                          "rest": (3 * 0.25 + 50 * -0.25) / 53})
    assert "motor" not in sh
    sl = joints["slide"]
    assert sl["type"] == "slider" and sl["limits"] == pytest.approx({"lower": 0, "upper": 0.2})
    assert "motor" not in sl                 # a torque input is a joint load, not a motor
    assert doc["loads"] == [{"name": "m1", "joint": "slide", "effort": 0.0}]   # ctrl 0
    assert doc["contacts"]["disabled_pairs"] == [["upper", "floater"]]


def test_single_body_inertia_keeps_its_principal_frame(tmp_path):
    path = tmp_path / "rotor.xml"
    path.write_text("""<mujoco><worldbody><body name="rotor" pos="0 0 1"><freejoint/>
      <inertial pos="0.1 0.2 0.3" quat="0.9238795 0 0.3826834 0" mass="3"
                diaginertia="0.5 0.4 0.3"/><geom type="sphere" size="0.1" mass="0"/>
      </body></worldbody></mujoco>""")
    body = by_name(convert_file(str(path)).doc["bodies"])["rotor"]
    assert body["mass"] == 3 and body["inertia"] == pytest.approx([0.5, 0.4, 0.3])
    assert np.allclose(body["position"], UP @ [0.1, 0.2, 1.3])
    from scipy.spatial.transform import Rotation
    R = Rotation.from_quat(body["orientation"], scalar_first=True).as_matrix()
    R_mj = Rotation.from_quat([0.9238795, 0, 0.3826834, 0], scalar_first=True).as_matrix()
    assert np.allclose(R, UP @ R_mj, atol=1e-6)
    # the sphere sits at the body origin: in the principal frame it is at -R^T (com - origin)
    assert np.allclose(body["shape"]["position"], -R.T @ (UP @ [0.1, 0.2, 0.3]), atol=1e-6)


def test_one_warning_per_unmapped_kind(arm, caplog):
    with caplog.at_level(logging.WARNING):
        imported = convert_file(arm)
    motor_lines = [r for r in caplog.records if "torque inputs" in r.getMessage()]
    assert len(motor_lines) == 1 and "second torque inputs on one joint: 1 (m2)" in \
        motor_lines[0].getMessage()
    # the shoulder's armature is mapped (its parent is welded to the world: exact); the
    # servo's force range is not (a joint spring has no cap)
    assert not any("armature" in r.getMessage() for r in caplog.records)
    assert any("force ranges of position and velocity actuators" in r.getMessage()
               for r in caplog.records)
    assert "Not mapped:" in imported.doc["description"]        # kept in the scene as well


def test_connect_and_weld_become_ball_and_fixed_joints():
    doc = convert_file(corpus_path("four_bar")).doc
    loop = by_name(doc["joints"])["loop"]
    assert loop["type"] == "ball" and loop["bodies"] == ["coupler", "rocker"]
    assert np.allclose(loop["anchor"], UP @ [0.8, 0, 0.05])


@pytest.mark.parametrize("name", list(CORPUS))
def test_corpus_converts_and_round_trips(name, tmp_path):
    imported = convert_file(corpus_path(name))
    doc = imported.doc
    assert imported.counts["bodies"] > 0 and imported.counts["joints"] > 0
    assert corpus_path(name) in doc["description"]            # the note of its source
    path = tmp_path / "model.json"
    path.write_text(json.dumps(doc))
    world = load_scene(str(path))
    again = world_to_scene(world)
    assert [b["name"] for b in again["bodies"]] == [b["name"] for b in doc["bodies"]]
    assert [j["name"] for j in again["joints"]] == [j["name"] for j in doc["joints"]]
    for a, b in zip(again["bodies"], doc["bodies"], strict=True):
        assert np.allclose(a.get("position", [0, 0, 0]), b.get("position", [0, 0, 0]),
                           atol=1e-9)
    world2 = scene_to_world(again)
    assert world2.body_names == world.body_names


def test_visual_meshes_sit_where_the_collision_hulls_are():
    """kuka_iiwa's visual and collision meshes are two versions of one shape: in each body's
    frame their bounding boxes agree to 2 cm (a wrong frame would put them apart)."""
    from impulse.engine.formats import body_visuals
    doc = convert_file(corpus_path("kuka_iiwa")).doc
    visuals = body_visuals(corpus_path("kuka_iiwa"), doc)
    bodies = by_name(doc["bodies"])
    checked = 0
    for v in visuals:
        shape = bodies[v.body]["shape"]
        if shape["type"] != "hull" or bodies[v.body].get("fixed"):
            continue
        from scipy.spatial.transform import Rotation
        R = Rotation.from_quat(shape.get("orientation", [1, 0, 0, 0]),
                               scalar_first=True).as_matrix()
        hull = np.array(shape["points"]) @ R.T + shape.get("position", [0, 0, 0])
        assert np.allclose(v.vertices.min(axis=0), hull.min(axis=0), atol=0.02), v.body
        assert np.allclose(v.vertices.max(axis=0), hull.max(axis=0), atol=0.02), v.body
        checked += 1
    assert checked == 7


@pytest.mark.parametrize("friction, moves", [(3.0, False), (1.0, True)])
def test_frictionloss_is_dry_friction(tmp_path, friction, moves):
    """A horizontal arm (1 kg at 0.2 m: 1.962 N m of gravity torque) on a hinge with friction
    loss 3 N m stays put; with 1 N m it falls, at the rate (m g r - F) / (m r^2) at first."""
    path = tmp_path / "arm.xml"
    path.write_text(f"""<mujoco><worldbody><body name="arm"><joint name="j" axis="0 1 0"
      frictionloss="{friction}"/><inertial pos="0.2 0 0" mass="1" diaginertia="1e-6 1e-6 1e-6"/>
      </body></worldbody></mujoco>""")
    doc = convert_file(str(path)).doc
    motor = by_name(doc["joints"])["j"]["motor"]
    assert motor == {"mode": "velocity", "target": 0.0, "max_force": friction}
    doc["settings"].update(h=1e-3)
    world = scene_to_world(doc)
    world.run(100)
    angle = abs(world.joint_coordinates("j")[0])
    if moves:
        expected = 0.5 * (9.81 * 0.2 - friction) / (0.2 ** 2 + 1e-6) * 0.1 ** 2
        assert angle == pytest.approx(expected, rel=0.03)
    else:
        assert angle < 1e-6


def test_unmapped_elements_are_named():
    """What has no counterpart is listed by name (the Robotiq gripper's tendon `split` and
    site `pinch`; once only their count was)."""
    lines = convert_file(corpus_path("robotiq_2f85")).unmapped.lines()
    assert "tendons: 1 (split)" in lines and "sites: 1 (pinch)" in lines
    assert any(line.startswith("equalities other than body connect/weld") for line in lines)
