"""The desktop mirror of the headset: a copy of the left eye's image, shown scaled into the
window (letterboxed, aspect kept) instead of rendering the scene a third time."""

from __future__ import annotations

import moderngl


class EyeMirror:
    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.fbo = None
        self.size = (0, 0)

    def keep(self, eye_fbo: moderngl.Framebuffer, size) -> None:
        """Copy an eye's image (call while its swapchain image is acquired)."""
        size = (int(size[0]), int(size[1]))
        if size != self.size:
            self.release()
            self.fbo = self.ctx.framebuffer([self.ctx.renderbuffer(size, 4)])
            self.size = size
        self.ctx.copy_framebuffer(self.fbo, eye_fbo)

    @property
    def ready(self) -> bool:
        return self.fbo is not None

    def show(self, dst: moderngl.Framebuffer, size, background) -> None:
        """Scale the kept image into dst's lower-left `size` pixels (bars in `background`)."""
        from OpenGL import GL

        _ = self.ctx.error             # clears a stale flag, else PyOpenGL's check raises for it
        dst.use()
        dst.clear(*background, 1.0)
        (sw, sh), (dw, dh) = self.size, size
        scale = min(dw / sw, dh / sh)
        w, h = int(sw * scale), int(sh * scale)
        x, y = (dw - w) // 2, (dh - h) // 2
        GL.glBindFramebuffer(GL.GL_READ_FRAMEBUFFER, self.fbo.glo)
        GL.glBindFramebuffer(GL.GL_DRAW_FRAMEBUFFER, dst.glo)
        GL.glBlitFramebuffer(0, 0, sw, sh, x, y, x + w, y + h, GL.GL_COLOR_BUFFER_BIT, GL.GL_LINEAR)
        dst.use()                      # moderngl's idea of the bound framebuffer again

    def release(self) -> None:
        if self.fbo is not None:
            for att in self.fbo.color_attachments:
                att.release()
            self.fbo.release()
        self.fbo, self.size = None, (0, 0)
