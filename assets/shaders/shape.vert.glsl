#version 330 core
// Instanced shape: unit mesh scaled per instance, then rigid pose. Capsules shift their
// hemispheres by in_shift * in_offset so the radius and the half length scale separately.
uniform mat4 u_view;
uniform mat4 u_proj;
uniform mat4 u_light_vp;

in vec3 in_pos;
in vec3 in_normal;
in float in_shift;
in vec3 in_edir;
in vec3 in_rot0;
in vec3 in_rot1;
in vec3 in_rot2;
in vec3 in_trans;
in vec3 in_scale;
in vec3 in_offset;
in vec3 in_color;
in float in_flags;
in float in_id;

out vec3 v_world;
out vec3 v_normal;
out vec3 v_color;
out vec4 v_light;
flat out int v_flags;

void main() {
    mat3 rot = mat3(in_rot0, in_rot1, in_rot2);
    vec3 local = in_pos * in_scale + in_shift * in_offset;
    vec3 world = rot * local + in_trans;
    v_world = world;
    v_normal = rot * normalize(in_normal / in_scale);
    v_color = in_color;
    v_flags = int(in_flags + 0.5);
    v_light = u_light_vp * vec4(world, 1.0);
    gl_Position = u_proj * u_view * vec4(world, 1.0);
}
