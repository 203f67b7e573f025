"""COLLADA (.dae) visual meshes of URDF models (engine/formats/collada.py): MuJoCo cannot
read them, so trimesh (through pycollada) does, and they are placed in the scene bodies'
frames as the MuJoCo-read visuals are. Checked on PyBullet's racecar with its .dae meshes
(its URDF files name the .obj/.STL versions; the test writes one naming the .dae files
shipped beside them) and on a hand-written URDF with a tiny .dae; unreadable files are one
warning each and the import goes on."""
import logging
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

mujoco = pytest.importorskip("mujoco")
trimesh = pytest.importorskip("trimesh")
pytest.importorskip("collada")
pybullet_data = pytest.importorskip("pybullet_data")

from impulse.engine import scene_to_world  # noqa: E402
from impulse.engine.formats import body_visuals, convert_file  # noqa: E402
from impulse.engine.formats.frames import UP  # noqa: E402

RACECAR = os.path.join(pybullet_data.getDataPath(), "racecar")
WHEELS = ("left_rear_wheel", "right_rear_wheel", "left_front_wheel", "right_front_wheel")
LOGGER = "impulse.engine.formats.collada"


def matrix(q):
    return Rotation.from_quat(q, scalar_first=True).as_matrix()


def pose(entry):
    """(position, rotation) of a scene entry (a body, or a shape in its body)."""
    return np.asarray(entry.get("position", [0.0, 0.0, 0.0])), \
        matrix(entry.get("orientation", [1.0, 0.0, 0.0, 0.0]))


def racecar_dae(tmp_path):
    """PyBullet's racecar.urdf with every <visual> mesh its .dae version: package:// paths
    (the wheels, hinges, laser) and one relative path (the chassis) into a link to the
    racecar folder; the collision geometry as it was."""
    os.symlink(RACECAR, tmp_path / "racecar")
    tree = ET.parse(os.path.join(RACECAR, "racecar.urdf"))
    for link in tree.getroot().iter("link"):
        for visual in link.findall("visual"):
            mesh = visual.find("geometry/mesh")
            if mesh is None:
                continue
            stem = os.path.splitext(os.path.basename(mesh.get("filename")))[0]
            mesh.set("filename", f"racecar/meshes/{stem}.dae" if stem == "chassis"
                     else f"package://racecar/meshes/{stem}.dae")
    path = tmp_path / "racecar_dae.urdf"
    tree.write(path)
    return str(path)


def by_body(visuals):
    out = {}
    for v in visuals:
        out.setdefault(v.body, []).append(v)
    return out


def bounds(meshes):
    points = np.concatenate([v.vertices for v in meshes])
    return points.min(axis=0), points.max(axis=0)


@pytest.mark.parametrize("floating", [False, True])
def test_racecar_dae_visuals_sit_on_the_collision_wheels(tmp_path, floating):
    """Each wheel's .dae mesh, taken to the world with its body's converted pose, is the
    wheel's collision cylinder (radius 0.05, length 0.045): its surface's area-weighted
    centroid is the cylinder's centre (measured 1e-8 m; asserted 0.1 mm), its farthest
    vertex from the axis is at the radius and its faces at +-half the length (measured
    6.0e-8 and 1.8e-9 m over: the .dae stores 7 significant digits; asserted 1e-6 m). Its
    colour is the URDF material's (white)."""
    path = racecar_dae(tmp_path)
    imported = convert_file(path, floating=floating, ground=True)
    visuals = by_body(body_visuals(path, imported.doc, floating=floating,
                                   qpos=imported.qpos))
    bodies = {b["name"]: b for b in imported.doc["bodies"]}
    for wheel in WHEELS:
        body = bodies[wheel]
        mesh, = visuals[wheel]
        assert mesh.color == (1.0, 1.0, 1.0)
        p, R = pose(body)
        world = mesh.vertices @ R.T + p
        ps, Rs = pose(body["shape"])
        assert body["shape"]["type"] == "cylinder"
        centre, axis = p + R @ ps, R @ Rs @ [0.0, 1.0, 0.0]      # our cylinders: along Y
        corners = world[mesh.faces]
        area = np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0],
                                       corners[:, 2] - corners[:, 0]), axis=1)
        centroid = (corners.mean(axis=1) * area[:, None]).sum(axis=0) / area.sum()
        assert np.linalg.norm(centroid - centre) < 1e-4, wheel
        offset = world - centre
        along = offset @ axis
        radial = np.linalg.norm(offset - np.outer(along, axis), axis=1)
        assert abs(radial.max() - body["shape"]["radius"]) < 1e-6, wheel
        half = body["shape"]["height"] / 2
        assert abs(along.min() + half) < 1e-6 and abs(along.max() - half) < 1e-6, wheel
    chassis = "base_link" if floating else "world_geoms"
    assert (0.0, 0.0, 0.8) in [v.color for v in visuals[chassis]]       # material "blue"
    assert set(visuals) == set(WHEELS) | {chassis, "left_steering_hinge",
                                          "right_steering_hinge"}


def test_racecar_dae_visuals_are_where_mujoco_puts_their_obj_and_stl_versions(tmp_path):
    """The racecar's own URDF (its .obj and .STL visuals, which MuJoCo reads and
    visuals.py places) and the .dae version of it convert to the same bodies and joints, and
    give every body's visual meshes the same bounds in the body's frame, to 1e-6 m
    (measured 2.0e-7: the files' digits): the .dae path puts a link's mesh where MuJoCo puts
    it (fused links, origins, pose)."""
    path = racecar_dae(tmp_path)
    original = os.path.join(RACECAR, "racecar.urdf")
    doc, ref_doc = convert_file(path).doc, convert_file(original).doc
    # the physics, and the collision shapes' colours (MuJoCo gives a link's collision geoms
    # its visual's material), are the original's
    assert doc["bodies"] == ref_doc["bodies"] and doc["joints"] == ref_doc["joints"]
    dae = by_body(body_visuals(path, doc))
    ref = by_body(body_visuals(original, ref_doc))
    assert set(dae) == set(ref) and len(dae) == 7
    for name in ref:
        (lo, hi), (ref_lo, ref_hi) = bounds(dae[name]), bounds(ref[name])
        assert np.allclose(lo, ref_lo, atol=1e-6) and np.allclose(hi, ref_hi, atol=1e-6), name


# a hand-written robot: the .dae on `arm` (a hinge) with scale 2 and 90 degrees about x; on
# `tool` (fused into `arm` by a fixed joint) with its own colour and 90 degrees about z
ROBOT = """<robot name="dae_robot">
  <material name="red"><color rgba="0.9 0.1 0.2 1"/></material>
  <link name="base">
    <visual><geometry><box size="0.2 0.2 0.2"/></geometry></visual>
    <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
  <link name="arm">
    <inertial><origin xyz="0.05 0.01 0"/><mass value="0.5"/>
      <inertia ixx="0.001" iyy="0.002" izz="0.003" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual>
      <origin xyz="0.1 0.2 0.3" rpy="1.5707963267948966 0 0"/>
      <geometry><mesh filename="meshes/part.dae" scale="2 2 2"/></geometry>
      <material name="red"/>
    </visual>
    <collision><geometry><sphere radius="0.05"/></geometry></collision>
  </link>
  <joint name="hinge" type="revolute">
    <origin xyz="0 0 0.5" rpy="0 0 0.3"/><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <link name="tool">
    <visual>
      <origin xyz="0 0 0.1" rpy="0 0 1.5707963267948966"/>
      <geometry><mesh filename="package://parts/part.dae"/></geometry>
    </visual>
  </link>
  <joint name="weld" type="fixed">
    <origin xyz="0.2 0 0" rpy="0.2 0.4 0"/><parent link="arm"/><child link="tool"/>
  </joint>
</robot>
"""
# the .dae: a box off its origin (no symmetry hides a wrong rotation), coloured; its
# coordinates are exact in binary, as pycollada reads a .dae's numbers as float32
PART = np.array([[x, y, z] for x in (0.0, 0.25) for y in (-0.03125, 0.0625)
                 for z in (0.015625, 0.046875)])
PART_RGB = (200, 30, 40)


def write_robot(tmp_path, robot=ROBOT):
    part = trimesh.Trimesh(PART, trimesh.convex.convex_hull(PART).faces)
    part.visual.face_colors = [*PART_RGB, 255]
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "part.dae").write_bytes(trimesh.exchange.dae.export_collada(part))
    os.symlink(tmp_path / "meshes", tmp_path / "parts")          # package://parts/...
    path = tmp_path / "robot.urdf"
    path.write_text(robot)
    return str(path)


def Rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def Rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def Ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


QUARTER_X = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])   # rpy 90 0 0
QUARTER_Z = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])   # rpy 0 0 90


def same_points(a, b, atol):
    """Whether two point sets are equal (any order)."""
    a = a[np.lexsort(np.round(a, 6).T[::-1])]
    b = b[np.lexsort(np.round(b, 6).T[::-1])]
    return a.shape == b.shape and np.allclose(a, b, atol=atol, rtol=0)


@pytest.mark.parametrize("angle", [0.0, 0.4])
def test_scale_origin_rpy_and_fixed_links_are_honoured(tmp_path, angle):
    """The arm's mesh is at joint origin + Rz(0.3) Ry(hinge) (xyz + Rx(90 deg) 2 v) and the
    tool's (MuJoCo fuses it into the arm) at arm + fixed origin (rpy 0.2 0.4 0: Ry(0.4)
    Rx(0.2)) + (0, 0, 0.1) + Rz(90 deg) v, in MuJoCo's Z-up world; in ours (UP) through the
    converted body's pose, to 1e-9. The arm's colour is its named material's, the tool's
    the .dae's own."""
    path = write_robot(tmp_path)
    imported = convert_file(path, pose={"hinge": angle})
    visuals = body_visuals(path, imported.doc, qpos=imported.qpos)
    assert sorted(v.body for v in visuals) == ["arm", "arm", "world_geoms"]   # base: a box
    visuals = [v for v in visuals if v.body == "arm"]
    body, = [b for b in imported.doc["bodies"] if b["name"] == "arm"]
    p, R = pose(body)
    arm_R = Rz(0.3) @ Ry(angle)
    arm_p = np.array([0.0, 0.0, 0.5])
    on_arm = arm_p + (np.array([0.1, 0.2, 0.3]) + (2 * PART) @ QUARTER_X.T) @ arm_R.T
    tool_p, tool_R = arm_p + arm_R @ [0.2, 0.0, 0.0], arm_R @ Ry(0.4) @ Rx(0.2)
    on_tool = tool_p + (np.array([0.0, 0.0, 0.1]) + PART @ QUARTER_Z.T) @ tool_R.T
    arm, = [v for v in visuals if v.color == pytest.approx((0.9, 0.1, 0.2))]  # "red"
    tool, = [v for v in visuals if v.color == pytest.approx([c / 255 for c in PART_RGB])]
    for mesh, expected in ((arm, on_arm), (tool, on_tool)):
        world = mesh.vertices @ R.T + p
        assert same_points(world, expected @ UP.T, atol=1e-9)
        assert len(mesh.faces) == 12


def warnings_of(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING
            and (".dae" in r.getMessage() or r.name == LOGGER)]


BAD_ROBOT = """<robot name="bad">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
""" + "".join(f"""
  <link name="{name}">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0"
      iyz="0"/></inertial>
    <visual><geometry><mesh filename="meshes/{dae}"/></geometry></visual>
    <visual><geometry><box size="0.1 0.1 0.1"/></geometry></visual>
    <collision><geometry><sphere radius="0.05"/></geometry></collision>
  </link>
  <joint name="{name}_hinge" type="continuous">
    <origin xyz="{x} 0 0"/><parent link="base"/><child link="{name}"/><axis xyz="0 0 1"/>
  </joint>""" for x, (name, dae) in enumerate([
    ("missing", "nowhere.dae"), ("broken", "broken.dae"), ("broken_again", "broken.dae"),
    ("good", "part.dae")], 1)) + "\n</robot>\n"


def test_a_missing_or_broken_dae_is_one_warning_each_and_the_import_goes_on(tmp_path,
                                                                            caplog):
    """A missing file and a broken one (named by two links) are one warning per file; the
    bodies of their links get no visual meshes (not even their MuJoCo-read box), so the
    viewer draws their collision shapes; the readable .dae and its body's box are there."""
    path = write_robot(tmp_path, BAD_ROBOT)
    (tmp_path / "meshes" / "broken.dae").write_text("<COLLADA><asset><unit meter='1'/>")
    with caplog.at_level(logging.WARNING, logger="impulse"):
        imported = convert_file(path)
        visuals = body_visuals(path, imported.doc)
    lines = warnings_of(caplog)
    assert len(lines) == 2, lines
    missing, = [s for s in lines if "nowhere.dae" in s]
    broken, = [s for s in lines if "broken.dae" in s]
    assert "nowhere.dae: file not found" in missing and "link missing" in missing
    assert "broken.dae: not a readable COLLADA file" in broken
    assert "link broken, broken_again" in broken
    assert {v.body for v in visuals} == {"good"}
    assert sorted(len(v.vertices) for v in visuals)[-1] == 8        # the part (and the box)
    assert len(visuals) == 2
    world = scene_to_world(imported.doc, path)
    world.step()                                              # the physics is all there


def test_without_pycollada_each_dae_is_one_warning(tmp_path, caplog, monkeypatch):
    """pycollada missing: one warning per .dae (part.dae, named by two links) naming the
    package; MuJoCo's visuals (the base's box) stay."""
    path = write_robot(tmp_path)
    monkeypatch.setitem(sys.modules, "collada", None)       # `import collada` fails
    with caplog.at_level(logging.WARNING, logger="impulse"):
        visuals = body_visuals(path, convert_file(path).doc)
    line, = warnings_of(caplog)
    assert "meshes/part.dae: the Python package 'pycollada' is not installed" in line
    assert "link arm, tool" in line
    assert [v.body for v in visuals] == ["world_geoms"]


@pytest.mark.slow
def test_impulse_convert_reports_a_broken_dae_in_one_line(tmp_path):
    """`impulse convert` on the robot with a broken and a missing .dae: exit status 0, one
    warning line per file on stderr, no traceback, the scene and its meshes written."""
    path = write_robot(tmp_path, BAD_ROBOT)
    (tmp_path / "meshes" / "broken.dae").write_text("not xml at all <<<")
    out = tmp_path / "bad.json"
    r = subprocess.run([sys.executable, "-m", "impulse.app", "convert", path, str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert len([s for s in r.stderr.splitlines() if ".dae" in s]) == 2, r.stderr
    assert out.exists() and (tmp_path / "bad.visuals.npz").exists()
