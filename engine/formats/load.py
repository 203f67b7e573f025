"""Read a URDF or MJCF file with MuJoCo's own compiler (includes, defaults, mesh paths,
inertias resolved there), with one-line errors naming the file and the element.

URDF files get two things MuJoCo's URDF reader leaves to the user: `package://` mesh paths
are resolved (relative to the file's folder and the folders above it), and
a `<mujoco><compiler/></mujoco>` block keeps mesh paths as given and balances inertias that
break the triangle inequality. MuJoCo cannot read COLLADA (.dae) meshes: a <visual> with one
is left out of the visual model (engine/formats/collada.py reads it for the viewer) and has
a small box for its mesh otherwise (discarded there with the other visuals, it keeps its
material, which MuJoCo gives the link's collision geoms); a <collision> with one gets an
.obj copy of it, its <mesh scale> applied (collada.py reads it, as for the viewer), written
beside the edited URDF. Both are written to a temporary folder, which lives as long as
MuJoCo's compiler reads them: the compiled model holds its own copy of the mesh data.
"""
import os
import re
import tempfile
import xml.etree.ElementTree as ET

from .errors import ModelError, need


def model_kind(path):
    """'urdf' or 'mjcf' from the file's root element (the extension alone may lie: MJCF
    files end in .xml, URDF in .urdf or .xml)."""
    root = parse_xml(path).getroot()
    if root.tag == "robot":
        return "urdf"
    if root.tag == "mujoco":
        return "mjcf"
    raise ModelError(path, f"root element <{root.tag}> is neither <robot> (URDF) nor <mujoco> "
                           "(MJCF)")


def load_model(path, floating=False, visual=False):
    """(mujoco.MjModel, kind) for a URDF or MJCF file. Raises ModelError (one line).
    `floating`: a URDF's root link gets a free joint (MuJoCo, like ROS, fixes it to the
    world); MJCF files say so themselves. `visual`: a URDF's visual geoms are kept (MJCF
    keeps them anyway)."""
    mujoco = need("mujoco")
    if not os.path.isfile(path):
        raise ModelError(path, "no such file")
    kind = model_kind(path)
    try:
        if kind == "mjcf":
            return mujoco.MjModel.from_xml_path(os.path.abspath(path)), kind
        with tempfile.TemporaryDirectory(prefix="impulse-urdf-") as tmp:
            copy = os.path.join(tmp, os.path.basename(path))
            _urdf_for_mujoco(path, visual, tmp).write(copy, encoding="unicode")
            if not floating:
                return mujoco.MjModel.from_xml_path(copy), kind
            spec = mujoco.MjSpec.from_file(copy)
            root = spec.worldbody.first_body()
            if root is None:
                raise ModelError(path, "no link to set floating")
            root.add_freejoint()
            return spec.compile(), kind
    except ModelError:
        raise
    except ValueError as e:
        raise ModelError(path, _one_line(str(e))) from None


def parse_xml(path):
    """The file's element tree. Trailing NUL bytes (PyBullet's humanoid.urdf has one, which
    MuJoCo's reader skips) are dropped first."""
    try:
        with open(path, "rb") as f:
            data = f.read().rstrip(b"\0\r\n\t ")
        return ET.ElementTree(ET.fromstring(data))
    except ET.ParseError as e:
        raise ModelError(path, f"malformed XML: {e}") from None
    except OSError as e:
        raise ModelError(path, e.strerror or str(e)) from None


def is_collada(filename):
    """Whether a mesh file name is a COLLADA file (.dae), which MuJoCo does not read."""
    return filename.lower().endswith(".dae")


def _urdf_for_mujoco(path, visual, tmp):
    """The URDF's tree with absolute mesh paths and MuJoCo's compiler options; its COLLADA
    visuals left out (`visual`) or given a box for their mesh; its COLLADA collision meshes
    written as .obj files into the folder `tmp` and named by those. Raises ModelError."""
    tree = parse_xml(path)
    folder = os.path.dirname(os.path.abspath(path))
    _collada_collisions(path, tree, folder, tmp)
    for link in tree.getroot().iter("link"):
        for element in link.findall("visual"):
            geometry = element.find("geometry")
            mesh = None if geometry is None else geometry.find("mesh")
            if mesh is None or not is_collada(mesh.get("filename") or ""):
                continue
            if visual:
                link.remove(element)
            else:
                geometry.remove(mesh)
                ET.SubElement(geometry, "box", size="0.001 0.001 0.001")
    for mesh in tree.getroot().iter("mesh"):
        name = mesh.get("filename")
        if name is None:
            raise ModelError(path, "element <mesh> has no 'filename'")
        found = resolve_mesh_path(name, folder)
        if not os.path.isfile(found):
            raise ModelError(path, f"element <mesh filename=\"{name}\">: mesh file not found")
        mesh.set("filename", found)
    for old in tree.getroot().findall("mujoco"):
        tree.getroot().remove(old)
    extra = ET.SubElement(tree.getroot(), "mujoco")
    ET.SubElement(extra, "compiler", strippath="false", balanceinertia="true",
                  discardvisual="false" if visual else "true", fusestatic="true")
    return tree


def _collada_collisions(path, tree, folder, tmp):
    """Each <collision> mesh of the tree that is a .dae file: read (collada.py), scaled by
    its <mesh scale> and written as an .obj file into `tmp`, which the <mesh> then names
    (without a scale); a file named with one scale by several is written once. The
    collision's <origin> stays: MuJoCo applies it as to any mesh. ModelError (one line naming
    the mesh and its link) for a file that cannot be read or a bad scale."""
    written = {}
    for link in tree.getroot().iter("link"):
        for element in link.findall("collision"):
            mesh = element.find("geometry/mesh")
            name = None if mesh is None else mesh.get("filename")
            if not name or not is_collada(name):
                continue
            from .collada import Unreadable, collision_obj, mesh_scale
            where = f"element <mesh filename=\"{name}\"> (collision of link {link.get('name')})"
            try:
                scale = mesh_scale(mesh)
            except ValueError as e:
                raise ModelError(path, f"{where}: bad scale: {e}") from None
            file = resolve_mesh_path(name, folder)
            key = (os.path.realpath(file), tuple(scale.tolist()))
            if key not in written:
                stem = os.path.splitext(os.path.basename(file))[0]
                out = os.path.join(tmp, f"collada{len(written)}_{stem}.obj")
                try:
                    collision_obj(file, scale, out)
                except Unreadable as e:
                    raise ModelError(path, f"{where}: cannot read the COLLADA file: {e}") \
                        from None
                written[key] = out
            mesh.set("filename", written[key])
            mesh.attrib.pop("scale", None)


def resolve_mesh_path(name, folder):
    """A URDF mesh file name as a path. `package://PKG/REST` (ROS) is looked for as PKG/REST
    and REST in the file's folder and each folder above it, and as REST in a folder above
    named PKG, the first that exists (as PyBullet and yourdfpy search); `file://` is a
    path."""
    if name.startswith("file://"):
        name = name[len("file://"):]
    if not name.startswith("package://"):
        return name if os.path.isabs(name) else os.path.join(folder, name)
    package, _, rest = name[len("package://"):].partition("/")
    here = folder
    while True:
        for candidate in (os.path.join(here, package, rest), os.path.join(here, rest)):
            if os.path.isfile(candidate):
                return candidate
        if os.path.basename(here) == package and os.path.isfile(os.path.join(here, rest)):
            return os.path.join(here, rest)
        up = os.path.dirname(here)
        if up == here:
            return name
        here = up


def _one_line(message):
    """MuJoCo's multi-line compiler message as one line: 'XML Error: ... (element 'x',
    line 3)'."""
    lines = [s.strip() for s in message.strip().splitlines() if s.strip()]
    if not lines:
        return "MuJoCo could not compile the model"
    text = lines[0]
    for extra in lines[1:]:
        if re.match(r"(Element|Object)\b", extra):
            text += f" ({extra[0].lower()}{extra[1:]})"
    return text
