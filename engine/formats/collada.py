"""COLLADA (.dae) visual meshes of URDF models, which MuJoCo's compiler cannot read
(engine/formats/load.py leaves those <visual> elements out of the visual model it compiles,
so the rest of the model, its other visuals included, compiles as before).

Each <visual> whose <mesh> names a .dae file (package:// and relative paths resolved as for
MuJoCo's meshes) is read by trimesh, through pycollada (the `import` extra): the file's node
transforms and its <unit meter> are applied, its <up_axis> is not (robot exporters label
files Y_UP whose vertices are in the link frame: PyBullet's racecar wheels and chassis match
their STL versions only unrotated, as robot tools built on Assimp read them with its
IGNORE_UP_DIRECTION). Then the <mesh scale>, the visual's <origin xyz
rpy> in its link's frame, and the link's pose: the MuJoCo body of the link, or of the
nearest link above it where MuJoCo fused links joined by fixed joints (the fixed joints'
origins in between), in the pose the conversion was made in. The colour: the visual's
<material> (its <color rgba>, or the robot's material of that name), else the .dae's own
(trimesh's main colour of each part), else grey.

A file that cannot be read (missing, broken, pycollada or trimesh not installed) is one
warning per file, and the scene bodies carrying its links get no visual meshes at all, so
the viewer draws their collision shapes (it draws a body's visual meshes or its shapes,
never both).

A <collision> whose <mesh> is a .dae file is read by the same reader (read_dae) and written,
with its <mesh scale>, as an .obj file that MuJoCo's compiler reads in its place
(collision_obj, called by load.py's URDF copy for MuJoCo): from there it is any mesh, its
inertia and convex hull MuJoCo's and its shape engine/formats/geoms.py's. There a file that
cannot be read fails the import (one line naming the URDF and the mesh).
"""
import logging
import os
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from ..visual_meshes import VisualMesh
from .frames import UP
from .load import is_collada, parse_xml, resolve_mesh_path

log = logging.getLogger(__name__)

GREY = (0.5, 0.5, 0.5)      # MuJoCo's default geom colour, which its own visuals get


@dataclass
class DaeVisual:
    """One <visual> of a URDF link whose mesh is a .dae file."""
    link: str
    filename: str             # as written in the URDF
    file: str                 # resolved path
    scale: np.ndarray         # (3,)
    pos: np.ndarray           # the visual's origin in the link frame
    rot: np.ndarray           # (3,3)
    rgba: object              # the URDF material's colour, or None
    problem: str = ""         # why the <visual> itself cannot be used (a bad number)


class Unreadable(Exception):
    """A .dae file (or its <visual>) that gives no mesh; the message says why."""


def _floats(text, n, default):
    """n numbers of an attribute's text (`default` for none); ValueError where it holds
    fewer or a word that is no number."""
    values = [float(x) for x in (text or "").split()] or list(default)
    if len(values) == 1 and n == 3:          # <mesh scale="2">: uniform
        values *= 3
    if len(values) < n:
        raise ValueError(f"{text!r}: {n} numbers expected")
    return np.array(values[:n])             # <mesh scale="1 1 1 1"> (racecar): first three


def mesh_scale(mesh):
    """The (3,) scale of a URDF <mesh> element (1 1 1 where it gives none). ValueError."""
    return _floats(mesh.get("scale"), 3, (1, 1, 1))


def _origin(element):
    """(xyz, rotation) of an <origin> element (URDF rpy: fixed axes x, y, z); identity for
    None."""
    if element is None:
        return np.zeros(3), np.eye(3)
    xyz = _floats(element.get("xyz"), 3, (0, 0, 0))
    rpy = _floats(element.get("rpy"), 3, (0, 0, 0))
    return xyz, Rotation.from_euler("xyz", rpy).as_matrix()


def _rgba(material, named):
    """The colour of a <material> element: its own <color rgba>, else the robot-level
    material of that name's; None where neither gives one."""
    if material is None:
        return None
    color = material.find("color")
    if color is not None and color.get("rgba"):
        return _floats(color.get("rgba"), 4, ())
    return named.get(material.get("name"))


def dae_visuals(root, folder):
    """[DaeVisual] of a URDF (`root`: its <robot> element; `folder`: the file's), in file
    order."""
    named = {}
    for material in root.findall("material"):
        try:
            rgba = _rgba(material, {})
        except ValueError:
            rgba = None
        if rgba is not None:
            named[material.get("name")] = rgba
    out = []
    for link in root.findall("link"):
        for visual in link.findall("visual"):
            mesh = visual.find("geometry/mesh")
            name = None if mesh is None else mesh.get("filename")
            if not name or not is_collada(name):
                continue
            entry = DaeVisual(link.get("name"), name, resolve_mesh_path(name, folder), np.ones(3),
                              np.zeros(3), np.eye(3), None)
            try:
                entry.scale = mesh_scale(mesh)
                entry.pos, entry.rot = _origin(visual.find("origin"))
                entry.rgba = _rgba(visual.find("material"), named)
            except ValueError as e:
                entry.problem = f"a bad number in its <visual>: {e}"
            out.append(entry)
    return out


def read_dae(file):
    """[(vertices (n,3) in metres, faces (m,3), colour or None)] of a .dae file: each
    triangle mesh of its scene, node transforms applied. Raises Unreadable."""
    if not os.path.isfile(file):
        raise Unreadable("file not found")
    try:
        import trimesh
    except ImportError:
        raise Unreadable("the Python package 'trimesh' is not installed (the 'import' "
                         "extra: pip install 'impulse[import]')") from None
    try:
        import collada  # noqa: F401   (trimesh reads .dae through it)
    except ImportError:
        raise Unreadable("the Python package 'pycollada' is not installed (the 'import' "
                         "extra: pip install 'impulse[import]')") from None
    try:
        scene = trimesh.load(file, file_type="dae", force="scene")
        if scene.units not in (None, "meters"):
            scene = scene.convert_units("meters")
        parts = [g for g in scene.dump() if isinstance(g, trimesh.Trimesh) and len(g.faces)]
    except Exception as e:      # pycollada and trimesh raise many kinds on a broken file
        text = " ".join(str(e).split())[:200] or type(e).__name__
        raise Unreadable(f"not a readable COLLADA file ({text})") from None
    if not parts:
        raise Unreadable("no triangles in it")
    return [(np.asarray(g.vertices, dtype=np.float64), np.asarray(g.faces, dtype=np.int64),
             _own_color(g)) for g in parts]


def scaled(vertices, faces, scale):
    """(vertices, faces) of a mesh scaled by a URDF <mesh scale> (3,): a mirroring scale (an
    odd count of negative factors) turns the triangles over, so they face out as before."""
    vertices = np.asarray(vertices, dtype=np.float64) * np.asarray(scale, dtype=np.float64)
    if np.prod(scale) < 0:
        faces = faces[:, ::-1]
    return vertices, faces


def collision_obj(file, scale, out):
    """Write the .dae file `file` (read by read_dae: all its triangle meshes joined), scaled
    by `scale` (3,), as the Wavefront .obj file `out` (vertices with all their digits),
    which MuJoCo reads as a mesh. Raises Unreadable."""
    vertices, faces, start = [], [], 0
    for verts, tris, _ in read_dae(file):
        verts, tris = scaled(verts, tris, scale)
        vertices.append(verts)
        faces.append(tris + start)
        start += len(verts)
    vertices, faces = np.concatenate(vertices), np.concatenate(faces)
    with open(out, "w", encoding="ascii") as f:
        f.write(f"# {os.path.basename(file)}, scale {' '.join(map(repr, map(float, scale)))}"
                "\n")
        f.writelines(f"v {x!r} {y!r} {z!r}\n" for x, y, z in vertices.tolist())
        f.writelines(f"f {a} {b} {c}\n" for a, b, c in (faces + 1).tolist())


def _own_color(mesh):
    """The .dae part's own colour (rgb in 0..1), or None where it gives none."""
    visual = mesh.visual
    try:
        if visual.kind == "texture":
            color = visual.material.main_color
        elif visual.kind in ("vertex", "face"):
            color = visual.main_color
        else:
            return None
    except (AttributeError, ValueError, IndexError):
        return None
    return tuple(float(c) / 255.0 for c in np.asarray(color, dtype=np.float64)[:3])


def _link_pose(m, d, joints, link):
    """(MuJoCo body id, position, rotation) of URDF link `link` in MuJoCo's world: its own
    body's frame, or the nearest body above it (MuJoCo fuses links joined by fixed joints)
    composed with the joints' origins in between; the world where none is (a root link
    fused into it)."""
    import mujoco
    pos, rot = np.zeros(3), np.eye(3)
    name, seen = link, set()
    while True:
        body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
        if body >= 0:
            R = d.xmat[body].reshape(3, 3)
            return body, d.xpos[body] + R @ pos, R @ rot
        if name not in joints or name in seen:
            return 0, pos, rot
        seen.add(name)
        name, (xyz, R) = joints[name]
        pos, rot = xyz + R @ pos, R @ rot


def _joints(root):
    """{child link: (parent link, (xyz, rotation) of the joint's origin)} of a URDF."""
    out = {}
    for joint in root.findall("joint"):
        parent, child = joint.find("parent"), joint.find("child")
        if parent is None or child is None:
            continue
        try:
            origin = _origin(joint.find("origin"))
        except ValueError:
            origin = (np.zeros(3), np.eye(3))     # MuJoCo compiled it: not reached
        out[child.get("link")] = (parent.get("link"), origin)
    return out


def collada_meshes(path, builder, bodies):
    """([VisualMesh] of the URDF's .dae visuals, {scene bodies to show collision shapes}).
    `builder`: the visual model's conversion (convert._Builder: its MuJoCo data in the
    converted pose, and the scene body of each MuJoCo body); `bodies`: {scene body name:
    (position, rotation)} as visuals.visual_meshes takes them. One warning per file that
    cannot be read, naming the links whose bodies show their collision shapes instead."""
    root = parse_xml(path).getroot()
    visuals = dae_visuals(root, os.path.dirname(os.path.abspath(path)))
    if not visuals:
        return [], set()
    m, d = builder.m, builder.d
    joints = _joints(root)
    read, failed, out, plain = {}, {}, [], set()
    for v in visuals:
        body, link_pos, link_rot = _link_pose(m, d, joints, v.link)
        name = builder.names.get(int(builder.group[body]))
        # each file is read once (and reported once), by whichever path it is named
        key = (v.file, v.link) if v.problem else os.path.realpath(v.file)
        if key not in read:
            try:
                if v.problem:
                    raise Unreadable(v.problem)
                read[key] = read_dae(v.file)
            except Unreadable as e:
                read[key] = e
        if isinstance(read[key], Unreadable):
            failed.setdefault(key, (v.filename, read[key], []))[2].append(v.link)
            plain.add(name)
            continue
        if name not in bodies:
            continue
        pos, rot = bodies[name]
        for verts, faces, own in read[key]:
            verts, faces = scaled(verts, faces, v.scale)
            inlink = v.pos[:, None] + v.rot @ verts.T
            world = UP @ (link_pos[:, None] + link_rot @ inlink)
            local = (rot.T @ (world - np.asarray(pos)[:, None])).T
            rgba = v.rgba if v.rgba is not None else own if own is not None else GREY
            out.append(VisualMesh(name, local, faces.copy(),
                                  tuple(float(c) for c in rgba[:3])))
    for filename, error, links in failed.values():
        log.warning("%s: cannot read the visual mesh %s: %s; the collision shapes are drawn "
                    "for the body of link %s", path, filename, error, ", ".join(links))
    return out, plain
