#version 330 core
// Inverted-hull outline: push each vertex outwards (along its direction from the shape's
// centre, so flat-faced meshes stay closed) by a constant number of pixels on screen.
#include "instance.glsl"
uniform mat4 u_view;
uniform mat4 u_proj;
uniform vec2 u_viewport;
uniform float u_width_px;
in vec3 in_edir;
in float in_flags;
flat out int v_flags;

void main() {
    vec3 world = instance_world();
    vec3 dir = instance_rotation() * normalize(in_edir * in_scale);
    vec4 clip = u_proj * u_view * vec4(world, 1.0);
    vec4 clip_dir = u_proj * u_view * vec4(world + dir * 0.01, 1.0);
    vec2 screen_dir = clip_dir.xy / clip_dir.w - clip.xy / clip.w;
    float len = length(screen_dir);
    if (len > 1e-8) clip.xy += screen_dir / len * u_width_px * 2.0 / u_viewport * clip.w;
    gl_Position = clip;
    v_flags = int(in_flags + 0.5);
}
