"""Ground planes drawn as large quads with the grid shader (and a line-only grid if none)."""
from __future__ import annotations

import moderngl
import numpy as np

from impulse.app.mathutil import gl_bytes, normalize
from impulse.app.render.batch import set_uniform
from impulse.app.render.meshes import ground_quad

# must match lighting.glsl
AMBIENT_GROUND = np.array([0.16, 0.15, 0.14])
AMBIENT_SKY = np.array([0.40, 0.44, 0.52])
DIFFUSE = 0.75


def plane_colors(options, normal) -> tuple[tuple, tuple]:
    """Lit and shadowed colour of a flat ground (the light terms of lighting.glsl)."""
    n = np.asarray(normal, dtype=np.float64)
    base = np.asarray(options.ground_color, dtype=np.float64)
    ndl = max(float(np.dot(n, normalize(options.light_dir))), 0.0)
    ambient = AMBIENT_GROUND + (AMBIENT_SKY - AMBIENT_GROUND) * (0.5 + 0.5 * n[1])
    light = np.asarray(options.light_color, dtype=np.float64) * ndl * DIFFUSE
    return tuple(np.clip(base * (ambient + light), 0, 1)), tuple(np.clip(base * ambient, 0, 1))


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
        set_uniform(self.prog, "u_fade", float(self.half_size) * 0.3)
        for pose in poses:
            set_uniform(self.prog, "u_model", gl_bytes(pose))
            lit, dark = plane_colors(options, np.asarray(pose)[:3, 1])
            set_uniform(self.prog, "u_lit_color", lit)
            set_uniform(self.prog, "u_shadow_color", dark)
            set_uniform(self.prog, "u_fill", 1)
            self.vao.render(moderngl.TRIANGLES)
        if not poses and fallback_grid and options.grid:
            self.ctx.enable(moderngl.BLEND)
            self.ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
            set_uniform(self.prog, "u_model", gl_bytes(np.identity(4)))
            set_uniform(self.prog, "u_fill", 0)
            self.vao.render(moderngl.TRIANGLES)
            self.ctx.disable(moderngl.BLEND)

    def release(self) -> None:
        self.vao.release()
        self.vbo.release()
