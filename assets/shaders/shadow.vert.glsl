#version 330 core
// Depth-only pass from the light: same instance layout as shape.vert.
uniform mat4 u_light_vp;
in vec3 in_pos;
in float in_shift;
in vec3 in_rot0;
in vec3 in_rot1;
in vec3 in_rot2;
in vec3 in_trans;
in vec3 in_scale;
in vec3 in_offset;

void main() {
    mat3 rot = mat3(in_rot0, in_rot1, in_rot2);
    vec3 world = rot * (in_pos * in_scale + in_shift * in_offset) + in_trans;
    gl_Position = u_light_vp * vec4(world, 1.0);
}
