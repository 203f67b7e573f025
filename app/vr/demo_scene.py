"""A tiny test scene for VR: a floor and a few coloured cubes at known world positions.

Used by ``python -m app.vr`` and the VR tests until the desktop renderer plugs in. Colours
are flat per face (a fixed shade per face direction), so a cube's pixels are easy to find.
"""

from __future__ import annotations

import moderngl
import numpy as np

VERTEX = """
#version 330
uniform mat4 view_proj;
uniform mat4 model;
uniform vec3 color;
in vec3 in_pos;
in vec3 in_normal;
flat out vec3 v_color;
void main() {
    vec3 n = normalize(mat3(model) * in_normal);
    float shade = 0.75 + 0.25 * n.y + 0.1 * n.x;
    v_color = color * shade;
    gl_Position = view_proj * model * vec4(in_pos, 1.0);
}
"""

FRAGMENT = """
#version 330
flat in vec3 v_color;
out vec4 f_color;
void main() { f_color = vec4(v_color, 1.0); }
"""

# (name, centre xyz in metres, edge length, colour rgb)
CUBES = [
    ("red", (0.0, 1.5, -1.5), 0.3, (1.0, 0.1, 0.1)),
    ("green", (-0.8, 1.0, -2.0), 0.4, (0.1, 0.9, 0.1)),
    ("blue", (0.8, 1.2, -2.5), 0.5, (0.1, 0.2, 1.0)),
]
FLOOR_COLOR = (0.35, 0.35, 0.38)
BACKGROUND = (0.05, 0.05, 0.08)


def _cube_mesh() -> np.ndarray:
    """Unit cube (edge 1, centred) as triangles: rows of x, y, z, nx, ny, nz."""
    rows = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            u, v = np.roll(np.eye(3), 1, axis=0)[axis], np.roll(np.eye(3), 2, axis=0)[axis]
            if sign > 0:  # keep u x v = n (counter-clockwise from outside)
                u, v = v, u
            c = n * 0.5
            quad = [c - u / 2 - v / 2, c + u / 2 - v / 2, c + u / 2 + v / 2, c - u / 2 + v / 2]
            for i in (0, 1, 2, 0, 2, 3):
                rows.append(np.concatenate([quad[i], n]))
    return np.array(rows, dtype="f4")


def model_matrix(center, size) -> np.ndarray:
    """Scale by ``size`` then move to ``center``."""
    m = np.diag([size, size, size, 1.0])
    m[:3, 3] = center
    return m


class DemoScene:
    """Floor plus CUBES, drawn with one tiny shader."""

    def __init__(self, ctx: moderngl.Context) -> None:
        self.ctx = ctx
        self.program = ctx.program(vertex_shader=VERTEX, fragment_shader=FRAGMENT)
        self.vbo = ctx.buffer(_cube_mesh().tobytes())
        self.vao = ctx.vertex_array(self.program, [(self.vbo, "3f 3f", "in_pos", "in_normal")])
        self.objects = [(name, model_matrix(c, s), col) for name, c, s, col in CUBES]
        floor = np.diag([10.0, 0.02, 10.0, 1.0])
        floor[1, 3] = -0.01
        self.objects.append(("floor", floor, FLOOR_COLOR))

    def render(self, fbo: moderngl.Framebuffer, view: np.ndarray, proj: np.ndarray) -> None:
        """Clear ``fbo`` and draw the scene with the given view and projection."""
        fbo.use()
        fbo.clear(*BACKGROUND, 1.0, depth=1.0)
        self.ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        self.program["view_proj"].write((proj @ view).T.astype("f4").tobytes())
        for _, model, color in self.objects:
            self.program["model"].write(model.T.astype("f4").tobytes())
            self.program["color"].value = color
            self.vao.render(moderngl.TRIANGLES)

    def release(self) -> None:
        """Free the GL objects."""
        for obj in (self.vao, self.vbo, self.program):
            obj.release()
