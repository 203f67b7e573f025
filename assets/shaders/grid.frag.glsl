#version 330 core
// Ground with an anti-aliased grid (screen-space derivatives), fading with distance;
// with u_fill == 0 only translucent grid lines (scenes without a ground plane).
// The plane is flat, so its lit and shadowed colours come in as uniforms: only the
// shadow lookup and the grid lines are per fragment (cheap enough for llvmpipe).
uniform vec3 u_eye;
uniform sampler2DShadow u_shadow_map;
uniform int u_use_shadow;
uniform float u_shadow_texel;
uniform vec3 u_lit_color;
uniform vec3 u_shadow_color;
uniform float u_cell;
uniform int u_show_grid;
uniform float u_fade;
uniform int u_fill;
in vec3 v_world;
in vec2 v_plane;
in vec4 v_light;
out vec4 f_color;

void main() {
    vec2 coord = v_plane / u_cell;
    vec2 d = max(fwidth(coord), vec2(1e-6));
    float fade = float(u_show_grid) * clamp(1.0 - length(u_eye - v_world) / u_fade, 0.0, 1.0);
    vec2 minor_g = abs(fract(coord - 0.5) - 0.5) / d;
    vec2 major_g = abs(fract(coord * 0.1 - 0.5) - 0.5) / (d * 0.1);
    vec2 axis_g = abs(coord) / d;
    float minor = (1.0 - clamp(min(minor_g.x, minor_g.y) - 0.1, 0.0, 1.0)) * fade;
    float major = (1.0 - clamp(min(major_g.x, major_g.y) - 0.6, 0.0, 1.0)) * fade;
    if (u_fill == 0) {
        f_color = vec4(vec3(0.75), max(minor * 0.5, major) * 0.6);
        return;
    }
    float lit = 1.0;
    vec3 p = v_light.xyz * 0.5 + 0.5;
    if (u_use_shadow != 0 && all(greaterThan(p, vec3(0.0))) && all(lessThan(p, vec3(1.0))))
        lit = texture(u_shadow_map, vec3(p.xy, p.z - u_shadow_texel));
    vec3 c = mix(u_shadow_color, u_lit_color, lit);
    c *= (1.0 - 0.35 * minor) * (1.0 - 0.5 * major);
    c = mix(c, vec3(0.8, 0.25, 0.25), (1.0 - clamp(axis_g.y - 0.5, 0.0, 1.0)) * fade);
    c = mix(c, vec3(0.25, 0.35, 0.85), (1.0 - clamp(axis_g.x - 0.5, 0.0, 1.0)) * fade);
    f_color = vec4(c, 1.0);
}
