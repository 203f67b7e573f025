"""Visual meshes of imported models (world.meta["visuals"], engine/formats/visuals.py): one
flat-shaded triangle mesh each, drawn with its body's pose, in place of that body's
collision shapes while RenderOptions.show_visuals is on (the View panel's toggle)."""
from __future__ import annotations

import numpy as np

from impulse.app.render.batch import MeshBatch
from impulse.app.render.instances import pack_instances
from impulse.app.render.meshes import MeshData


def triangle_mesh(vertices: np.ndarray, faces: np.ndarray) -> MeshData:
    """A flat-shaded mesh (each triangle its own three vertices and face normal)."""
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    corners = v[f]                                           # (m,3,3)
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.where(length > 0, normals / np.where(length > 0, length, 1.0), 0.0)
    pos = corners.reshape(-1, 3)
    nrm = np.repeat(normals, 3, axis=0)
    edir = pos - v.mean(axis=0)
    edir /= np.maximum(np.linalg.norm(edir, axis=1, keepdims=True), 1e-12)
    data = np.hstack([pos, nrm, np.zeros((len(pos), 1)), edir]).astype(np.float32)
    return MeshData(data, np.arange(len(pos), dtype=np.int32))


class VisualBatches:
    """One MeshBatch per visual mesh, kept while the same list of meshes is shown."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.key = None
        self.batches: list[tuple[object, MeshBatch]] = []

    def update(self, scene, visuals, flags) -> set[int]:
        """Upload this frame's instance rows; the indices of the bodies drawn with visual
        meshes (their shapes are not drawn)."""
        if visuals is None or not len(visuals):
            self.release()
            return set()
        if self.key is not visuals:
            self.release()
            self.key = visuals
            self.batches = [(v, MeshBatch(self.ctx, triangle_mesh(v.vertices, v.faces), 1))
                            for v in visuals]
        index = {name: i for i, name in enumerate(scene.body_names)}
        rot = np.asarray(scene.body_rot, dtype=np.float64)
        pos = np.asarray(scene.body_pos, dtype=np.float64)
        drawn = set()
        for v, batch in self.batches:
            b = index.get(v.body)
            if b is None:
                batch.set_instances(np.zeros((0, 23), np.float32))
                continue
            drawn.add(b)
            batch.set_instances(pack_instances(rot[b:b + 1], pos[b:b + 1], np.ones((1, 3)),
                                               np.zeros((1, 3)), np.array([v.color]),
                                               flags[b:b + 1], np.array([b])))
        return drawn

    def live(self) -> list[MeshBatch]:
        return [b for _, b in self.batches if b.count]

    def release(self) -> None:
        for _, batch in self.batches:
            batch.release()
        self.batches, self.key = [], None
