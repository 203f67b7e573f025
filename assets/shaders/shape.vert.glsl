#version 330 core
// Instanced shape, lit and shadowed (instance.glsl: the pose).
#include "instance.glsl"
uniform mat4 u_view;
uniform mat4 u_proj;
uniform mat4 u_light_vp;

in vec3 in_normal;
in vec3 in_edir;
in vec3 in_color;
in float in_flags;
in float in_id;

out vec3 v_world;
out vec3 v_normal;
out vec3 v_color;
out vec4 v_light;
flat out int v_flags;

void main() {
    vec3 world = instance_world();
    v_world = world;
    v_normal = instance_rotation() * normalize(in_normal / in_scale);
    v_color = in_color;
    v_flags = int(in_flags + 0.5);
    v_light = u_light_vp * vec4(world, 1.0);
    gl_Position = u_proj * u_view * vec4(world, 1.0);
}
