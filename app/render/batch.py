"""One unit mesh plus a growable per-instance buffer, drawable with any shape-layout program."""
from __future__ import annotations

import moderngl
import numpy as np

from impulse.app.render.instances import INSTANCE_ATTRS, INSTANCE_FLOATS, INSTANCE_FORMAT
from impulse.app.render.meshes import VERTEX_ATTRS, VERTEX_FORMAT, MeshData


def set_uniform(prog: moderngl.Program, name: str, value) -> None:
    """Set a uniform if the linker kept it (unused uniforms are optimised away)."""
    if name in prog:
        if isinstance(value, (bytes, bytearray)):
            prog[name].write(value)
        else:
            prog[name].value = value


class MeshBatch:
    """Instanced draws of one mesh; vertex arrays are created per program on demand."""

    def __init__(self, ctx: moderngl.Context, mesh: MeshData, capacity: int = 64):
        self.ctx = ctx
        self.vbo = ctx.buffer(mesh.vertices.astype(np.float32).tobytes())
        self.ibo = ctx.buffer(mesh.indices.astype(np.int32).tobytes())
        self.capacity = 0
        self.instances = None
        self.count = 0
        self.rows = np.zeros((0, INSTANCE_FLOATS), dtype=np.float32)
        self._vaos: dict[int, moderngl.VertexArray] = {}
        self._reserve(capacity)

    def _reserve(self, n: int) -> None:
        if n <= self.capacity:
            return
        self.capacity = max(n, 2 * self.capacity)
        for vao in self._vaos.values():
            vao.release()
        self._vaos.clear()
        if self.instances is not None:
            self.instances.release()
        self.instances = self.ctx.buffer(reserve=self.capacity * INSTANCE_FLOATS * 4, dynamic=True)

    def set_instances(self, rows: np.ndarray) -> None:
        """Upload instance rows (n, 23) float32."""
        self.rows = np.ascontiguousarray(rows, dtype=np.float32)
        self._write(self.rows)

    def _write(self, rows: np.ndarray) -> None:
        n = len(rows)
        self._reserve(n)
        if n:
            self.instances.write(rows.tobytes())
        self.count = n

    def sort_front_to_back(self, eye) -> None:
        """Re-upload the rows nearest-first so early depth rejection skips hidden fragments."""
        if self.count > 1:
            d = np.einsum("ij,ij->i", self.rows[:, 9:12] - eye, self.rows[:, 9:12] - eye)
            self._write(np.ascontiguousarray(self.rows[np.argsort(d)]))

    def vao(self, prog: moderngl.Program) -> moderngl.VertexArray:
        key = prog.glo
        if key not in self._vaos:
            self._vaos[key] = self.ctx.vertex_array(
                prog,
                [(self.vbo, VERTEX_FORMAT, *VERTEX_ATTRS),
                 (self.instances, INSTANCE_FORMAT, *INSTANCE_ATTRS)],
                index_buffer=self.ibo, index_element_size=4, skip_errors=True)
        return self._vaos[key]

    def draw(self, prog: moderngl.Program) -> None:
        if self.count:
            self.vao(prog).render(moderngl.TRIANGLES, instances=self.count)

    def release(self) -> None:
        for vao in self._vaos.values():
            vao.release()
        for buf in (self.vbo, self.ibo, self.instances):
            buf.release()
