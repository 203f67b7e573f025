#version 330 core
// Ground with an anti-aliased grid (screen-space derivatives), fading with distance;
// with u_fill == 0 only translucent grid lines (scenes without a ground plane).
#include "lighting.glsl"
uniform vec3 u_normal;
uniform vec3 u_ground_color;
uniform float u_cell;
uniform int u_show_grid;
uniform float u_fade;
uniform int u_fill;
in vec3 v_world;
in vec2 v_plane;
in vec4 v_light;
out vec4 f_color;

float grid_line(vec2 coord, float width) {
    vec2 d = fwidth(coord);
    vec2 g = abs(fract(coord - 0.5) - 0.5) / max(d, 1e-6);
    return 1.0 - clamp(min(g.x, g.y) - width + 0.5, 0.0, 1.0);
}

void main() {
    float fade = clamp(1.0 - length(u_eye - v_world) / u_fade, 0.0, 1.0);
    float minor = u_show_grid != 0 ? grid_line(v_plane / u_cell, 0.6) * fade : 0.0;
    float major = u_show_grid != 0 ? grid_line(v_plane / (u_cell * 10.0), 1.1) * fade : 0.0;
    if (u_fill == 0) {
        f_color = vec4(vec3(0.75), max(minor * 0.5, major) * 0.6);
        return;
    }
    vec3 n = u_normal;
    if (dot(n, u_eye - v_world) < 0.0) n = -n;
    vec3 c = shade(u_ground_color, n, v_world, v_light, 0.05);
    c *= 1.0 - 0.35 * minor;
    c *= 1.0 - 0.5 * major;
    if (u_show_grid != 0) {
        vec2 ax = abs(v_plane) / max(fwidth(v_plane), 1e-6);
        c = mix(c, vec3(0.8, 0.25, 0.25), (1.0 - clamp(ax.y - 0.5, 0.0, 1.0)) * fade);
        c = mix(c, vec3(0.25, 0.35, 0.85), (1.0 - clamp(ax.x - 0.5, 0.0, 1.0)) * fade);
    }
    f_color = vec4(c, 1.0);
}
