"""Import of other model formats (URDF, MJCF) into scene entries.

No compiled kernels here and no kernel imports this package (tests/test_kernel_cache.py), so
it is left out of the kernel cache's key: editing an importer compiles nothing.

    load.py     read a file with MuJoCo's compiler (URDF: package:// paths, compiler options)
    convert.py  the compiled model -> our scene document; what is not mapped, by kind
    geoms.py    collision geoms -> shapes (meshes -> convex hulls)
    decompose.py  concave meshes -> convex parts (CoACD), cached in the user cache folder
    visuals.py  the visual meshes, for the viewer (saved beside scene files)
    collada.py  a URDF's COLLADA (.dae) meshes, which MuJoCo does not read (trimesh): the
                visual ones for the viewer, the collision ones as .obj files for MuJoCo
    frames.py   MuJoCo's Z up -> our Y up
    errors.py   one-line errors; the optional `import` extra

The importers need the `import` extra (mujoco; coacd for --decompose):
pip install 'impulse[import]'.
"""
MODEL_SUFFIXES = (".urdf", ".xml", ".mjcf")


def is_model_file(path):
    """Whether `path` names a URDF or MJCF file (by its extension)."""
    return str(path).lower().endswith(MODEL_SUFFIXES)


def convert_file(path, **options):
    """Imported (doc, unmapped kinds, counts, seconds) of a URDF or MJCF file; ModelError
    (a SceneError: one line naming the file and element) for a bad file. Options
    (engine/formats/convert.py): actuators, decompose (concave meshes -> convex parts,
    CoACD, cached), keyframe, pose, floating (a URDF's root free), servos, ground."""
    from .convert import convert_file as convert
    return convert(path, **options)


def load_model_world(path, visuals=True):
    """A World from a URDF or MJCF file, its source noted in world.meta["source"] (it has
    no scene file of its own: "path" stays unset, so saving asks for a name) and, with
    `visuals`, its visual meshes in world.meta["visuals"] (engine/formats/visuals.py: for
    the viewer; needs trimesh for primitive visuals)."""
    from ..scene import scene_to_world
    imported = convert_file(path)
    world = scene_to_world(imported.doc, str(path))
    world.meta["source"] = str(path)
    world.meta["unmapped"] = imported.unmapped.lines()
    if visuals:
        world.meta["visuals"] = body_visuals(path, imported.doc)
    return world


def body_visuals(path, doc, **options):
    """The visual meshes of model file `path` in the frames of the bodies of `doc`, its
    conversion (with `options`: floating, qpos)."""
    import numpy as np
    from scipy.spatial.transform import Rotation

    from .visuals import visual_meshes
    bodies = {b["name"]: (np.asarray(b.get("position", [0.0, 0.0, 0.0])),
                          Rotation.from_quat(b.get("orientation", [1.0, 0, 0, 0]),
                                             scalar_first=True).as_matrix())
              for b in doc["bodies"]}
    return visual_meshes(path, bodies, **options)
