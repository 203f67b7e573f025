#version 330 core
// Lit shape with shadow; flags: 1 hover, 2 selected, 4 unlit (gizmo), 8 wireframe colour.
// Written branch-free where possible: llvmpipe runs both sides of a divergent branch.
#include "lighting.glsl"
uniform float u_alpha;

in vec3 v_world;
in vec3 v_normal;
in vec3 v_color;
in vec4 v_light;
flat in int v_flags;
out vec4 f_color;

void main() {
    vec3 n = normalize(v_normal);
    if (!gl_FrontFacing) n = -n;
    float facing = abs(dot(n, normalize(u_eye - v_world)));
    vec3 lit = shade(v_color, n, v_world, v_light, 0.3);
    vec3 flat_c = v_color * (0.7 + 0.3 * facing);
    vec3 c = (v_flags & 12) != 0 ? flat_c : lit;
    float rim = (1.0 - facing) * (1.0 - facing);
    vec3 tint = (v_flags & 2) != 0 ? vec3(1.0, 0.62, 0.15) : vec3(0.55, 0.8, 1.0);
    float amount = (v_flags & 2) != 0 ? 0.15 + 0.6 * rim : ((v_flags & 1) != 0 ? 0.1 + 0.5 * rim : 0.0);
    f_color = vec4(mix(c, tint, amount), u_alpha);
}
