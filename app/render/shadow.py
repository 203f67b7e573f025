"""Directional-light shadow map: a depth texture with hardware comparison (PCF in the shader)."""
from __future__ import annotations

import moderngl
import numpy as np

from impulse.app.mathutil import look_at, normalize, ortho


def light_view_proj(centre, radius: float, light_dir, resolution: int) -> np.ndarray:
    """Orthographic light matrix enclosing the sphere (centre, radius), snapped to texels."""
    d = normalize(np.asarray(light_dir, dtype=np.float64))
    r = max(float(radius), 1e-3) * 1.05
    view = look_at(np.asarray(centre) + d * 2.0 * r, centre)
    texel = 2.0 * r / resolution
    origin = view[:3, :3] @ np.zeros(3) + view[:3, 3]
    snap = np.round(origin[:2] / texel) * texel - origin[:2]
    view[:2, 3] += snap
    return ortho(-r, r, -r, r, 0.0, 4.0 * r) @ view


class ShadowMap:
    """Depth-only framebuffer of size x size texels."""

    def __init__(self, ctx: moderngl.Context, size: int = 2048):
        self.size = size
        self.depth = ctx.depth_texture((size, size))
        self.depth.compare_func = "<="
        self.depth.filter = (moderngl.LINEAR, moderngl.LINEAR)
        self.depth.repeat_x = False
        self.depth.repeat_y = False
        self.fbo = ctx.framebuffer(depth_attachment=self.depth)

    def release(self) -> None:
        self.fbo.release()
        self.depth.release()
