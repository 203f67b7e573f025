"""Visual meshes: triangle meshes the viewer draws in place of a body's collision shapes
(an imported robot's visual geometry: engine/formats/visuals.py). The physics never reads
them.

A scene file refers to them by its `visuals` entry, {"file": "NAME.visuals.npz"}: a numpy
archive beside the scene file (a path relative to the scene's folder). Saving a world that
has visual meshes writes the archive beside the scene file it writes (write_document's
`visuals`);
loading reads it back into world.meta["visuals"]. A missing or unreadable archive is
reported in one line and the viewer draws the collision shapes.

The archive's arrays: body (k,) str, the scene body each mesh belongs to; color (k,3);
vertex_count, face_count (k,); vertices (sum of vertex counts, 3) float64, each mesh's in
its body's scene frame; faces (sum of face counts, 3) int64, indices within their mesh.
"""
from __future__ import annotations

import io
import logging
import os
import zipfile
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

SUFFIX = ".visuals.npz"


@dataclass
class VisualMesh:
    body: str                 # the scene body's name
    vertices: np.ndarray      # (n,3) in the body's frame (its scene position/orientation)
    faces: np.ndarray         # (m,3) int, counter-clockwise seen from outside
    color: tuple


def archive_name(scene_path):
    """The archive's file name for a scene file: NAME.json -> NAME.visuals.npz."""
    stem = os.path.basename(str(scene_path))
    stem = stem[:-5] if stem.lower().endswith(".json") else stem
    return stem + SUFFIX


def write_visuals(visuals, path):
    """Write [VisualMesh] as one compressed archive, durably (engine/durable.py)."""
    from .durable import write_file
    buf = io.BytesIO()
    empty3 = np.zeros((0, 3))
    np.savez_compressed(
        buf,
        body=np.array([v.body for v in visuals], dtype=str),
        color=np.array([list(v.color)[:3] for v in visuals], dtype=np.float64).reshape(-1, 3),
        vertex_count=np.array([len(v.vertices) for v in visuals], dtype=np.int64),
        face_count=np.array([len(v.faces) for v in visuals], dtype=np.int64),
        vertices=np.concatenate([np.asarray(v.vertices, np.float64).reshape(-1, 3)
                                 for v in visuals] or [empty3]),
        faces=np.concatenate([np.asarray(v.faces, np.int64).reshape(-1, 3)
                              for v in visuals] or [empty3.astype(np.int64)]))
    write_file(path, buf.getvalue())


def read_visuals(path):
    """[VisualMesh] from an archive; ValueError (one sentence) where it is not one."""
    try:
        with np.load(path, allow_pickle=False) as z:
            body, color = z["body"], z["color"]
            nv, nf = z["vertex_count"], z["face_count"]
            vertices, faces = z["vertices"], z["faces"]
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"not a visual mesh archive ({e})") from None
    k = len(body)
    if not (color.shape == (k, 3) and nv.shape == nf.shape == (k,)
            and vertices.shape == (int(nv.sum()), 3) and faces.shape == (int(nf.sum()), 3)
            and (nv >= 0).all() and (nf >= 0).all() and np.isfinite(vertices).all()):
        raise ValueError("its arrays do not fit together")
    out, v0, f0 = [], 0, 0
    for i in range(k):
        f = faces[f0:f0 + nf[i]]
        if len(f) and (f.min() < 0 or f.max() >= nv[i]):
            raise ValueError(f"mesh {i} of body {str(body[i])!r} indexes a missing vertex")
        out.append(VisualMesh(str(body[i]), vertices[v0:v0 + nv[i]].copy(), f.copy(),
                              tuple(float(c) for c in color[i])))
        v0, f0 = v0 + nv[i], f0 + nf[i]
    return out


def attach_visuals(doc, visuals, scene_path):
    """Refer from the document `doc` (in place) to the archive that holds `visuals` beside
    the scene file `scene_path`, and return a callable that writes the archive (to run once
    the document is known to be valid, before the scene file is written); without visuals
    the document gets no `visuals` entry and the callable does nothing."""
    doc.pop("visuals", None)
    if not visuals:
        return lambda: None
    name = archive_name(scene_path)
    doc["visuals"] = {"file": name}
    folder = os.path.dirname(os.path.abspath(str(scene_path)))
    return lambda: write_visuals(visuals, os.path.join(folder, name))


def load_visuals(world, entry, scene_path):
    """Read a scene's `visuals` entry into world.meta["visuals"]; a missing or bad archive
    gives one warning line (naming the scene file and the archive) and no visual meshes."""
    path = os.path.join(os.path.dirname(os.path.abspath(str(scene_path))), entry["file"])
    try:
        world.meta["visuals"] = read_visuals(path)
    except ValueError as e:
        log.warning("%s: $.visuals.file: cannot read %s: %s; the collision shapes are drawn",
                    scene_path, entry["file"], e)
        world.meta.pop("visuals", None)
