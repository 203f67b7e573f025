"""Level of detail for many small instances of one mesh (the gizmos' anchor spheres): each
view draws an instance with the fine mesh only where it covers more than `FINE_PX` pixels
of radius, else with the coarse one. tree_255's 254 joint spheres are under a pixel in a
320x240 eye: at 144 triangles each they cost llvmpipe 7 ms per eye, at 24 under 2."""
from __future__ import annotations

import moderngl
import numpy as np

from impulse.app.render.batch import MeshBatch
from impulse.app.render.meshes import MeshData

FINE_PX = 6.0


def projected_radius_px(rows: np.ndarray, eye, proj, height_px: float) -> np.ndarray:
    """Screen radius in pixels of instances whose bounding radius is their largest scale
    (rows: instance rows, translation at 9:12, scale at 12:15), seen from `eye`."""
    dist = np.linalg.norm(rows[:, 9:12] - np.asarray(eye, dtype=np.float32), axis=1)
    radius = rows[:, 12:15].max(axis=1)
    return radius * float(proj[1, 1]) * 0.5 * height_px / np.maximum(dist - radius, 1e-6)


class LodBatch:
    """A fine and a coarse MeshBatch of the same shape sharing one set of instance rows."""

    def __init__(self, ctx: moderngl.Context, fine: MeshData, coarse: MeshData):
        self.fine, self.coarse = MeshBatch(ctx, fine), MeshBatch(ctx, coarse)
        self.rows = np.zeros((0, 0), dtype=np.float32)

    @property
    def count(self) -> int:
        return len(self.rows)

    def set_instances(self, rows: np.ndarray) -> None:
        self.rows = np.ascontiguousarray(rows, dtype=np.float32)
        self.fine.set_instances(self.rows)
        self.coarse.set_instances(self.rows[:0])

    def choose(self, eye, proj, height_px: float) -> None:
        """Split the instances between the meshes for this view."""
        if self.count:
            big = projected_radius_px(self.rows, eye, proj, height_px) > FINE_PX
            self.fine.set_instances(self.rows[big])
            self.coarse.set_instances(self.rows[~big])

    def draw(self, prog: moderngl.Program) -> None:
        self.fine.draw(prog)
        self.coarse.draw(prog)

    def release(self) -> None:
        self.fine.release()
        self.coarse.release()
