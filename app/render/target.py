"""Offscreen (multisampled) colour + depth target, resolved into any framebuffer by a blit."""
from __future__ import annotations

import moderngl
import numpy as np


class RenderTarget:
    """Colour and depth renderbuffers of one size and sample count; recreated on change."""

    def __init__(self, ctx: moderngl.Context, samples: int = 4):
        self.ctx = ctx
        self.samples = min(samples, ctx.max_samples) if samples > 1 else 0
        self.size = (0, 0)
        self.fbo = None
        self.color_only = None
        self._parts = []

    def ensure(self, size: tuple[int, int]) -> moderngl.Framebuffer:
        size = (max(int(size[0]), 1), max(int(size[1]), 1))
        if size != self.size:
            self.release()
            color = self.ctx.renderbuffer(size, 4, samples=self.samples)
            depth = self.ctx.depth_renderbuffer(size, samples=self.samples)
            self.fbo = self.ctx.framebuffer([color], depth)
            # colour-only view for the resolve: blitting depth into a window framebuffer
            # with another depth format is GL_INVALID_OPERATION
            self.color_only = self.ctx.framebuffer([color])
            self._parts = [color, depth, self.color_only]
            self.size = size
        return self.fbo

    def resolve(self, dst: moderngl.Framebuffer) -> None:
        """Blit (and resolve multisampling) into dst's lower-left `size` pixels."""
        self.ctx.copy_framebuffer(dst, self.color_only)

    def release(self) -> None:
        if self.fbo is not None:
            self.fbo.release()
        for part in reversed(self._parts):
            part.release()
        self.fbo, self.color_only, self._parts, self.size = None, None, [], (0, 0)


class ImageTarget:
    """Single-sample RGBA texture + depth framebuffer whose pixels can be read back safely."""

    def __init__(self, ctx: moderngl.Context, size: tuple[int, int]):
        self.size = (int(size[0]), int(size[1]))
        self.color = ctx.texture(self.size, 4)
        self.depth = ctx.depth_renderbuffer(self.size)
        self.fbo = ctx.framebuffer([self.color], self.depth)

    def read_rgb(self):
        """Pixels as a (height, width, 3) uint8 array, top row first."""
        data = self.fbo.read(components=3, alignment=1)
        img = np.frombuffer(data, dtype=np.uint8).reshape(self.size[1], self.size[0], 3)
        return np.ascontiguousarray(img[::-1])

    def release(self) -> None:
        for obj in (self.fbo, self.color, self.depth):
            obj.release()
