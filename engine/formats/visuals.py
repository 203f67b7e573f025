"""Visual meshes of an imported model, for the viewer (saved beside a scene file as an
archive: engine/visual_meshes.py).

The model is compiled again with its visual geoms kept (URDF: MuJoCo's `discardvisual`
off), posed as the conversion posed it, and each visual geom (MuJoCo: contype = conaffinity =
0) becomes a triangle mesh in the frame of the scene body that carries it: meshes as they
are, spheres, boxes, capsules, cylinders and ellipsoids tessellated by trimesh. Colours are
the geom's material or rgba. A URDF's COLLADA (.dae) visual meshes, which MuJoCo does not
read (load.py leaves them out of what it compiles), are read by trimesh and placed the same
way (engine/formats/collada.py); a .dae that cannot be read is one warning, and the bodies
of its links show their collision shapes. Where the visual model cannot be compiled there
are no visual meshes, and the viewer shows the collision shapes.
"""
import logging

import numpy as np

from ..visual_meshes import VisualMesh
from .frames import UP
from .geoms import BOX, CAPSULE, CYLINDER, ELLIPSOID, MESH, SPHERE, mesh_faces, mesh_vertices

log = logging.getLogger(__name__)


def _primitive(kind, size):
    """(vertices, faces) of a MuJoCo primitive in its geom frame (long axis z); None
    without trimesh (the `import` extra brings it)."""
    try:
        import trimesh
    except ImportError:
        return None
    if kind == SPHERE:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=size[0])
    elif kind == ELLIPSOID:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
        mesh.apply_scale(size[:3])
    elif kind == BOX:
        mesh = trimesh.creation.box(extents=2 * np.asarray(size[:3]))
    elif kind == CAPSULE:
        mesh = trimesh.creation.capsule(height=2 * size[1], radius=size[0], count=[16, 8])
    elif kind == CYLINDER:
        mesh = trimesh.creation.cylinder(radius=size[0], height=2 * size[1], sections=24)
    else:
        return None
    return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64)


def visual_meshes(path, bodies, floating=False, qpos=None):
    """[VisualMesh] of the model file `path`; `bodies`: {scene body name: (position (3,),
    rotation (3,3))} of the converted scene at its start (the frames the meshes are put
    in); `floating`, `qpos`: as the conversion was made."""
    from .convert import _Builder
    from .errors import ModelError
    from .load import load_model
    try:
        model, model_kind = load_model(path, floating=floating, visual=True)
    except ModelError as e:
        log.info("no visual meshes: %s", e)
        return []
    b = _Builder(model, path, qpos=qpos)
    m, d = model, b.d
    out = []
    for g in range(m.ngeom):
        if m.geom_contype[g] or m.geom_conaffinity[g]:
            continue
        name = b.names.get(int(b.group[m.geom_bodyid[g]]))
        if name not in bodies:
            continue
        kind = int(m.geom_type[g])
        if kind == MESH:
            verts, faces = mesh_vertices(m, g), mesh_faces(m, g)
        else:
            made = _primitive(kind, m.geom_size[g])
            if made is None:
                continue
            verts, faces = made
        world = UP @ (d.geom_xpos[g][:, None] + d.geom_xmat[g].reshape(3, 3) @ verts.T)
        pos, rot = bodies[name]
        local = (rot.T @ (world - np.asarray(pos)[:, None])).T
        mat = m.geom_matid[g]
        rgba = m.mat_rgba[mat] if mat >= 0 else m.geom_rgba[g]
        out.append(VisualMesh(name, local, faces, tuple(float(c) for c in rgba[:3])))
    if model_kind == "urdf":
        from .collada import collada_meshes
        added, plain = collada_meshes(path, b, bodies)
        out = [v for v in out + added if v.body not in plain]
    return out
