"""Load `assets/shaders/<name>.vert.glsl` + `<name>.frag.glsl` pairs, with `#include "x.glsl"`."""
from __future__ import annotations

import re

import moderngl

from impulse.app.paths import shader_path

_INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"\s*$', re.MULTILINE)


def read_source(name: str, depth: int = 0) -> str:
    """Shader text with includes expanded (one level of nesting is plenty here)."""
    if depth > 4:
        raise RecursionError(f"#include nested too deeply at {name}")
    text = shader_path(name).read_text(encoding="utf-8")
    return _INCLUDE.sub(lambda m: read_source(m.group(1), depth + 1), text)


def load_program(ctx: moderngl.Context, name: str) -> moderngl.Program:
    """Compile and link the vertex/fragment pair called `name`."""
    return ctx.program(
        vertex_shader=read_source(f"{name}.vert.glsl"),
        fragment_shader=read_source(f"{name}.frag.glsl"),
    )
