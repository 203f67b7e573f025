"""Ground planes drawn as large quads with the grid shader (and a line-only grid if none)."""
from __future__ import annotations

import moderngl
import numpy as np

from app.mathutil import gl_bytes
from app.render.batch import set_uniform
from app.render.meshes import ground_quad


class Ground:
    """One quad VAO drawn once per plane pose."""

    def __init__(self, ctx: moderngl.Context, prog: moderngl.Program, half_size: float = 500.0):
        self.ctx = ctx
        self.prog = prog
        self.half_size = half_size
        self.vbo = ctx.buffer(ground_quad(half_size).tobytes())
        self.vao = ctx.vertex_array(prog, [(self.vbo, "2f", "in_xz")])

    def draw(self, poses, options, fallback_grid: bool) -> None:
        """Draw each plane pose (4x4); without planes, a translucent grid at y = 0 if wanted."""
        set_uniform(self.prog, "u_cell", float(options.grid_cell))
        set_uniform(self.prog, "u_show_grid", int(options.grid))
        set_uniform(self.prog, "u_ground_color", tuple(options.ground_color))
        set_uniform(self.prog, "u_fade", float(self.half_size) * 0.3)
        for pose in poses:
            set_uniform(self.prog, "u_model", gl_bytes(pose))
            set_uniform(self.prog, "u_normal", tuple(np.asarray(pose)[:3, 1]))
            set_uniform(self.prog, "u_fill", 1)
            self.vao.render(moderngl.TRIANGLES)
        if not poses and fallback_grid and options.grid:
            self.ctx.enable(moderngl.BLEND)
            self.ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
            set_uniform(self.prog, "u_model", gl_bytes(np.identity(4)))
            set_uniform(self.prog, "u_normal", (0.0, 1.0, 0.0))
            set_uniform(self.prog, "u_fill", 0)
            self.vao.render(moderngl.TRIANGLES)
            self.ctx.disable(moderngl.BLEND)

    def release(self) -> None:
        self.vao.release()
        self.vbo.release()
