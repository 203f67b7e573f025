"""A tiny test scene for VR: a floor and a few coloured cubes at known world positions.

Used by ``python -m impulse.app.vr`` and the session tests (the app's VR mode draws real scenes
with the desktop renderer). Colours are flat per face, so a cube's pixels are easy to find.
"""

from __future__ import annotations

import moderngl
import numpy as np

from .flat_boxes import FlatBoxes, box_matrix

# (name, centre xyz in metres, edge length, colour rgb)
CUBES = [
    ("red", (0.0, 1.5, -1.5), 0.3, (1.0, 0.1, 0.1)),
    ("green", (-0.8, 1.0, -2.0), 0.4, (0.1, 0.9, 0.1)),
    ("blue", (0.8, 1.2, -2.5), 0.5, (0.1, 0.2, 1.0)),
]
FLOOR_COLOR = (0.35, 0.35, 0.38)
BACKGROUND = (0.05, 0.05, 0.08)


class DemoScene:
    """Floor plus CUBES."""

    def __init__(self, ctx: moderngl.Context) -> None:
        self.boxes = FlatBoxes(ctx)
        self.objects = [(box_matrix(c, s), col) for _, c, s, col in CUBES]
        self.objects.append((box_matrix((0.0, -0.01, 0.0), (10.0, 0.02, 10.0)), FLOOR_COLOR))

    def render(self, fbo: moderngl.Framebuffer, view: np.ndarray, proj: np.ndarray) -> None:
        """Clear ``fbo`` and draw the scene with the given view and projection."""
        fbo.use()
        fbo.clear(*BACKGROUND, 1.0, depth=1.0)
        self.boxes.draw(self.objects, view, proj)

    def release(self) -> None:
        """Free the GL objects."""
        self.boxes.release()
