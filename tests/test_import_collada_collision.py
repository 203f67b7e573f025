"""COLLADA (.dae) collision meshes of URDF models (issue #23): MuJoCo cannot read them, so
load.py has collada.py's reader (trimesh through pycollada) read each one, applies its
<mesh scale> and writes it as an .obj file that MuJoCo compiles in its place; from there it
is any mesh (MuJoCo's inertia, our hull or CoACD parts). Checked on PyBullet's racecar with
its links' meshes as collision meshes, .dae against the .obj/.STL versions shipped beside
them, and on a hand-written robot with a concave mesh, its .dae written by trimesh's
exporter from its .obj. A .dae that cannot be read fails the import with one line naming the
URDF, the mesh and its link."""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

mujoco = pytest.importorskip("mujoco")
trimesh = pytest.importorskip("trimesh")
pytest.importorskip("collada")
pybullet_data = pytest.importorskip("pybullet_data")

from impulse.engine import cli  # noqa: E402
from impulse.engine.formats import body_visuals, convert_file, decompose, geoms  # noqa: E402
from impulse.engine.formats.collada import collision_obj  # noqa: E402
from impulse.engine.formats.errors import ModelError  # noqa: E402
from impulse.engine.formats.load import load_model  # noqa: E402

RACECAR = os.path.join(pybullet_data.getDataPath(), "racecar")


def racecar(tmp_path, dae):
    """PyBullet's racecar.urdf with each link's visual mesh also its collision mesh (in
    place of the wheels' cylinders; added to the chassis, hinges and laser, which have none),
    at the visual's <origin>: the .dae versions (`dae`; package:// paths into a link to the
    racecar folder) or the .obj/.STL files the URDF names."""
    if not (tmp_path / "racecar").exists():
        os.symlink(RACECAR, tmp_path / "racecar")
    tree = ET.parse(os.path.join(RACECAR, "racecar.urdf"))
    for link in tree.getroot().iter("link"):
        visual = link.find("visual")
        mesh = None if visual is None else visual.find("geometry/mesh")
        if mesh is None:
            continue
        name = mesh.get("filename")
        mesh.set("filename", f"racecar/{name}")
        for old in link.findall("collision"):
            link.remove(old)
        collision = ET.SubElement(link, "collision")
        if visual.find("origin") is not None:
            collision.append(visual.find("origin"))
        stem = os.path.splitext(os.path.basename(name))[0]
        ET.SubElement(ET.SubElement(collision, "geometry"), "mesh",
                      filename=f"package://racecar/meshes/{stem}.dae" if dae
                      else f"racecar/{name}")
    path = tmp_path / f"racecar_{'dae' if dae else 'obj'}.urdf"
    tree.write(path)
    return str(path)


def hulls(doc):
    """{body name: [hull points (k,3) in the body's frame]}."""
    out = {}
    for body in doc["bodies"]:
        for shape in body.get("shapes") or [body["shape"]]:
            if shape["type"] == "hull":
                R = Rotation.from_quat(shape.get("orientation", [1.0, 0, 0, 0]),
                                       scalar_first=True).as_matrix()
                points = np.asarray(shape["points"]) @ R.T + shape.get("position", [0, 0, 0])
                out.setdefault(body["name"], []).append(points)
    return out


def surface_distance(a, b):
    """The largest distance of a point of `a` from the surface of the convex hull of `b`
    (inside or out)."""
    planes = ConvexHull(b).equations
    return float(np.abs((a @ planes[:, :3].T + planes[:, 3]).max(axis=1)).max())


def without_points(doc):
    """The bodies with each hull's points and pose left out (MuJoCo places a mesh in its
    inertia frame, which moves with the files' digits; hulls() has them in the body
    frame)."""
    bodies = []
    for body in doc["bodies"]:
        body = dict(body)
        for key in ("shape", "shapes"):
            if key in body:
                shapes = body[key] if key == "shapes" else [body[key]]
                shapes = [{k: v for k, v in s.items() if s["type"] != "hull" or k not in
                           ("points", "position", "orientation")} for s in shapes]
                body[key] = shapes if key == "shapes" else shapes[0]
        bodies.append(body)
    return bodies


@pytest.mark.slow
def test_racecar_dae_collision_meshes_convert_as_their_obj_and_stl_versions(tmp_path,
                                                                           monkeypatch):
    """The .dae and the .obj/.STL racecar convert to the same bodies (masses and inertias
    from the URDF's <inertial>: equal), joints and shapes: every collision mesh a hull (6 of
    them in 6 moving bodies, 2 in the fixed chassis). Unthinned, each hull's vertices lie on
    the other's surface to 1e-6 m (measured 6.3e-7: the files' digits) and their volumes
    agree to 1e-5 (measured 3.5e-6). The visual model compiles too (7 bodies' meshes)."""
    dae, obj = racecar(tmp_path, True), racecar(tmp_path, False)
    doc, ref = convert_file(dae).doc, convert_file(obj).doc
    assert without_points(doc) == without_points(ref)
    assert doc["joints"] == ref["joints"]
    counts = {name: len(h) for name, h in hulls(doc).items()}
    assert counts == {"world_geoms": 2, "left_rear_wheel": 1, "right_rear_wheel": 1,
                      "left_front_wheel": 1, "right_front_wheel": 1,
                      "left_steering_hinge": 1, "right_steering_hinge": 1}
    assert len({v.body for v in body_visuals(dae, doc)}) == 7
    # the hulls unthinned (farthest-point thinning to 128 picks other points of meshes that
    # differ in their 7th digit: up to 1.5 mm apart)
    monkeypatch.setattr(geoms, "MAX_HULL_VERTICES", 100000)
    full, full_ref = hulls(convert_file(dae).doc), hulls(convert_file(obj).doc)
    for name in full_ref:
        for a, b in zip(full[name], full_ref[name], strict=True):
            assert surface_distance(a, b) < 1e-6 and surface_distance(b, a) < 1e-6, name
            assert ConvexHull(a).volume == pytest.approx(ConvexHull(b).volume, rel=1e-5)


# a U prism (concave: its hull is 6/4.25 of it): 3 x 2 x 1 with a 1 x 1.75 notch, in units
# of 1/16 m and off the origin; coordinates exact in binary, as pycollada reads them float32
U = [(0, 0), (1, 0), (2, 0), (3, 0), (3, 2), (2, 2), (2, 0.25), (1, 0.25), (1, 2), (0, 2)]
U_TRIANGLES = [(7, 8, 9), (7, 9, 0), (7, 0, 1), (1, 2, 6), (1, 6, 7), (6, 5, 4), (6, 4, 3),
               (6, 3, 2)]
U_VERTICES = np.array([[x, y, z] for z in (0, 1) for x, y in U]) / 16 + [1 / 32, -1 / 64, 1 / 128]
U_VOLUME = (6 - 1.75) / 16**3


def u_faces():
    """The U's triangles, facing out: the caps' (turned counter-clockwise seen from +z)
    below, facing -z, and on top; two per side."""
    n, faces = len(U), []
    for tri in U_TRIANGLES:
        (ax, ay), (bx, by), (cx, cy) = (U[i] for i in tri)
        a, b, c = tri if (bx - ax) * (cy - ay) - (by - ay) * (cx - ax) > 0 else tri[::-1]
        faces += [(a, c, b), (a + n, b + n, c + n)]
    for i in range(n):
        j = (i + 1) % n
        faces += [(i, j, j + n), (i, j + n, i + n)]
    return np.array(faces)


ROBOT = """<robot name="cups">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
  <link name="cup">
    <collision>
      <origin xyz="0.1 0.2 0.3" rpy="0.3 0.2 0.1"/>
      <geometry><mesh filename="meshes/u.{ext}"{scale}/></geometry>
    </collision>
  </link>
  <joint name="hinge" type="revolute">
    <origin xyz="0 0 0.5"/><parent link="base"/><child link="cup"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <link name="mug">
    <collision><geometry><mesh filename="package://parts/u.{ext}"/></geometry></collision>
  </link>
  <joint name="slide" type="prismatic">
    <origin xyz="0.3 0 0"/><parent link="cup"/><child link="mug"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>
"""


def write_robot(tmp_path, ext, scale="", robot=ROBOT):
    """The robot (masses from its meshes: no <inertial>) naming u.obj or u.dae; both files
    written (the .obj by hand, the .dae by trimesh from the same vertices and faces)."""
    meshes = tmp_path / "meshes"
    if not meshes.exists():
        meshes.mkdir()
        faces = u_faces()
        (meshes / "u.obj").write_text(
            "".join(f"v {x!r} {y!r} {z!r}\n" for x, y, z in U_VERTICES.tolist())
            + "".join(f"f {a} {b} {c}\n" for a, b, c in (faces + 1).tolist()))
        mesh = trimesh.Trimesh(U_VERTICES, faces, process=False)
        assert mesh.is_watertight and mesh.is_winding_consistent
        assert mesh.volume == pytest.approx(U_VOLUME, rel=1e-12)
        (meshes / "u.dae").write_bytes(trimesh.exchange.dae.export_collada(mesh))
        os.symlink(meshes, tmp_path / "parts")                   # package://parts/...
    path = tmp_path / f"robot_{ext}{'_scaled' if scale else ''}.urdf"
    path.write_text(robot.format(ext=ext, scale=scale))
    return str(path)


def close(a, b, rel):
    """Whether two scene documents' values are equal: lists of numbers to `rel` of their
    largest, hull points as sets (in any order)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            close(a[k], b[k], rel) for k in a)
    if not isinstance(a, list) or not isinstance(b, list) or not a:
        return a == b
    if isinstance(a[0], (int, float)) or isinstance(a[0], list) and isinstance(a[0][0], float):
        pa, pb = np.array(a, dtype=np.float64), np.array(b, dtype=np.float64)
        if pa.shape != pb.shape:
            return False
        if pa.ndim == 2:                                            # hull points
            pa = pa[np.lexsort(np.round(pa, 6).T[::-1])]
            pb = pb[np.lexsort(np.round(pb, 6).T[::-1])]
        return bool(np.allclose(pa, pb, rtol=0, atol=rel * np.abs(pa).max()))
    return len(a) == len(b) and all(close(x, y, rel) for x, y in zip(a, b, strict=True))


def body(doc, name):
    found, = [b for b in doc["bodies"] if b["name"] == name]
    return found


@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("scale", ["", ' scale="2 2 2"', ' scale="-1 1 1"'])
def test_a_dae_collision_mesh_converts_as_the_same_mesh_as_obj(tmp_path, scale, floating):
    """The robot with its collision meshes as .dae and as .obj (trimesh writes the .dae's
    vertices in another order) converts to the same bodies (masses, centres, inertias, poses
    to 1e-9 relative: measured equal, and 7e-17 apart with the mirroring scale), joints and
    hulls (the same points), with and without a scale (MuJoCo applies the .obj's, load.py
    the .dae's), a mirroring one included."""
    dae = convert_file(write_robot(tmp_path, "dae", scale), floating=floating).doc
    obj = convert_file(write_robot(tmp_path, "obj", scale), floating=floating).doc
    assert close(dae["bodies"], obj["bodies"], 1e-9), (dae["bodies"], obj["bodies"])
    assert close(dae["joints"], obj["joints"], 1e-9)
    cup = body(dae, "cup")
    assert cup["mass"] > 1.0 and cup["shape"]["type"] == "hull"
    assert len(cup["shape"]["points"]) == 8         # the U's hull: its bounding box


def test_scale_2_is_8_times_the_mass_and_32_times_the_inertia(tmp_path):
    """<mesh scale="2"> on the .dae cup: mass x8 (volume x8 at one density) and principal
    inertia x32 (x8 mass, x4 lever arms squared), to 1e-9 (measured 0: the scale is exact in
    binary); the hull points x2 about the body's centre of mass."""
    one = body(convert_file(write_robot(tmp_path, "dae")).doc, "cup")
    two = body(convert_file(write_robot(tmp_path, "dae", ' scale="2"')).doc, "cup")
    assert two["mass"] == pytest.approx(8 * one["mass"], rel=1e-9)
    assert np.allclose(two["inertia"], 32 * np.array(one["inertia"]), rtol=1e-9, atol=0)
    assert close(two["shape"]["points"], (2 * np.array(one["shape"]["points"])).tolist(), 1e-9)


@pytest.mark.parametrize("scale", [(1, 1, 1), (2, 2, 2), (-1, 1, 1), (0.5, -2, -1)])
def test_the_written_obj_is_the_scaled_mesh_facing_out(tmp_path, scale):
    """collision_obj's .obj: the .dae's triangles, scaled, facing out (a mirroring scale turns
    them over): its volume is the U's times |sx sy sz| (exact in binary: to 1e-12)."""
    write_robot(tmp_path, "dae")
    out = tmp_path / "u.obj"
    collision_obj(str(tmp_path / "meshes" / "u.dae"), np.array(scale, dtype=float), str(out))
    mesh = trimesh.load(out, process=False, force="mesh")
    assert len(mesh.faces) == len(u_faces()) and mesh.is_winding_consistent
    assert mesh.volume == pytest.approx(U_VOLUME * abs(np.prod(scale)), rel=1e-12)
    assert np.allclose(np.sort(mesh.vertices, axis=0),
                       np.sort(U_VERTICES * scale, axis=0), rtol=0, atol=1e-15)


def test_the_compiled_model_keeps_the_mesh_after_the_temporary_folder_is_gone(tmp_path,
                                                                              monkeypatch):
    """load_model's temporary folder (the URDF copy and the .obj written from the .dae) is
    removed when it returns; the model holds the mesh (MuJoCo copies it at compile) and
    steps."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    model, kind = load_model(write_robot(tmp_path, "dae"), floating=True)
    assert kind == "urdf" and os.listdir(temp) == []
    assert model.nmesh == 1 and model.mesh_vertnum[0] == 20    # one .obj for both links
    data = mujoco.MjData(model)
    for _ in range(10):
        mujoco.mj_step(model, data)
    assert np.all(np.isfinite(data.qpos))


@pytest.mark.slow
def test_decomposed_dae_collision_gives_the_obj_parts(tmp_path, monkeypatch):
    """With --decompose the .dae cup goes through CoACD as its .obj does: the same parts
    (at least 2: the notch stays open), to 1e-9."""
    pytest.importorskip("coacd")
    monkeypatch.setattr(decompose, "cache_dir", lambda: str(tmp_path / "cache"))
    dae = convert_file(write_robot(tmp_path, "dae"), decompose=True).doc
    obj = convert_file(write_robot(tmp_path, "obj"), decompose=True).doc
    assert len(body(dae, "cup")["shapes"]) >= 2
    assert close(dae["bodies"], obj["bodies"], 1e-9)


def broken(tmp_path, how):
    """The .dae robot with u.dae missing, broken, or unreadable for want of pycollada."""
    path = write_robot(tmp_path, "dae")
    if how == "missing":
        os.remove(tmp_path / "meshes" / "u.dae")
    elif how == "broken":
        (tmp_path / "meshes" / "u.dae").write_text("<COLLADA><asset><unit meter='1'/>")
    return path


@pytest.mark.parametrize("how, why", [
    ("missing", "file not found"),
    ("broken", "not a readable COLLADA file"),
    ("no pycollada", "the Python package 'pycollada' is not installed"),
])
def test_an_unreadable_dae_collision_is_one_line_naming_the_file(tmp_path, monkeypatch, how,
                                                                 why):
    """A collision .dae that cannot be read: ModelError, one line, naming the URDF, the mesh
    as written, its link and why; the visual model is not compiled either (no meshes)."""
    path = broken(tmp_path, how)
    if how == "no pycollada":
        monkeypatch.setitem(sys.modules, "collada", None)       # `import collada` fails
    with pytest.raises(ModelError) as e:
        convert_file(path)
    line = str(e.value)
    assert "\n" not in line and line.startswith(f"{path}: ")
    assert 'element <mesh filename="meshes/u.dae"> (collision of link cup)' in line
    assert why in line
    assert body_visuals(path, {"bodies": []}) == []


def test_a_bad_scale_is_one_line(tmp_path):
    path = write_robot(tmp_path, "dae", ' scale="2 x 2"')
    with pytest.raises(ModelError, match=r'u\.dae"> \(collision of link cup\): bad scale'):
        convert_file(path)


def test_impulse_convert_with_a_broken_collision_dae_exits_2(tmp_path, capsys):
    """`impulse convert` (in process): exit status 2, one line on stderr, nothing written."""
    path = broken(tmp_path, "broken")
    out = tmp_path / "out.json"
    code = cli.main(["convert", path, str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and path in err and "u.dae" in err, err
    assert "Traceback" not in err and not out.exists()


@pytest.mark.slow
def test_impulse_convert_command_line_broken_collision_dae(tmp_path):
    """The same as a command: exit status 2, one line on stderr, no traceback."""
    path = broken(tmp_path, "broken")
    r = subprocess.run([sys.executable, "-m", "impulse.app", "convert", path,
                        str(tmp_path / "out.json")], capture_output=True, text=True,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"}, timeout=300)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "u.dae" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
