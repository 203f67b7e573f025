"""GPU picking: render body ids of the one pixel under the cursor into a 1x1 target."""
from __future__ import annotations

import moderngl
import numpy as np

from impulse.app.mathutil import gl_bytes
from impulse.app.render.batch import set_uniform


def pixel_matrix(x: float, y: float, width: int, height: int) -> np.ndarray:
    """Clip-space zoom that maps the pixel at (x, y) (GL convention, y up) onto the whole view."""
    cx = 2.0 * (np.floor(x) + 0.5) / width - 1.0
    cy = 2.0 * (np.floor(y) + 0.5) / height - 1.0
    m = np.identity(4)
    m[0, 0], m[1, 1] = width, height
    m[0, 3], m[1, 3] = -cx * width, -cy * height
    return m


class Picker:
    """1x1 float id target plus depth; `pick` returns (body id or -1, NDC depth or None)."""

    def __init__(self, ctx: moderngl.Context, prog: moderngl.Program):
        self.ctx = ctx
        self.prog = prog
        self.color = ctx.texture((1, 1), 1, dtype="f4")
        self.depth = ctx.depth_texture((1, 1))
        self.fbo = ctx.framebuffer([self.color], self.depth)

    def pick(self, batches, view, proj, x, y, size) -> tuple[int, float | None]:
        self.fbo.use()
        self.fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        self.ctx.enable_only(moderngl.DEPTH_TEST)
        self.ctx.wireframe = False
        set_uniform(self.prog, "u_view", gl_bytes(view))
        set_uniform(self.prog, "u_proj", gl_bytes(pixel_matrix(x, y, size[0], size[1]) @ proj))
        for batch in batches:
            batch.draw(self.prog)
        texel = np.frombuffer(self.fbo.read(components=1, dtype="f4"), "f4")[0]
        body = int(round(float(texel))) - 1
        if body < 0:
            return -1, None
        depth = float(np.frombuffer(self.depth.read(), dtype="f4")[0])
        return body, depth * 2.0 - 1.0

    def release(self) -> None:
        for obj in (self.fbo, self.color, self.depth):
            obj.release()
