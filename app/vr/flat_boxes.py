"""Flat-shaded boxes, each given by a model matrix and a colour: the demo scene, the
controller rays and the wrist menu buttons.

Colours are flat per face (a fixed shade per face direction), so a box's pixels are easy to
find in tests. ``draw`` does not clear: it draws over whatever the framebuffer holds.
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


def cube_mesh() -> np.ndarray:
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


def box_matrix(center, size, rotation=None) -> np.ndarray:
    """Model matrix: scale by ``size`` (scalar or xyz), rotate, move to ``center``."""
    m = np.eye(4)
    rot = np.eye(3) if rotation is None else np.asarray(rotation, float)
    m[:3, :3] = rot * np.broadcast_to(np.asarray(size, float), (3,))
    m[:3, 3] = center
    return m


class FlatBoxes:
    """One tiny shader and a unit cube; draws lists of (model matrix, colour)."""

    def __init__(self, ctx: moderngl.Context) -> None:
        self.ctx = ctx
        self.program = ctx.program(vertex_shader=VERTEX, fragment_shader=FRAGMENT)
        self.vbo = ctx.buffer(cube_mesh().tobytes())
        self.vao = ctx.vertex_array(self.program, [(self.vbo, "3f 3f", "in_pos", "in_normal")])

    def draw(self, boxes, view: np.ndarray, proj: np.ndarray, depth_test: bool = True) -> None:
        """Draw ``boxes`` [(model (4, 4), colour rgb)] into the bound framebuffer.

        Without ``depth_test`` each box is still drawn correctly (convex, back faces culled)
        and later boxes cover earlier ones: an overlay over an already resolved image.
        """
        self.ctx.enable_only(moderngl.CULL_FACE | (moderngl.DEPTH_TEST if depth_test else 0))
        self.program["view_proj"].write((proj @ view).T.astype("f4").tobytes())
        for model, color in boxes:
            self.program["model"].write(np.asarray(model).T.astype("f4").tobytes())
            self.program["color"].value = tuple(float(c) for c in color)
            self.vao.render(moderngl.TRIANGLES)

    def release(self) -> None:
        """Free the GL objects."""
        for obj in (self.vao, self.vbo, self.program):
            obj.release()
