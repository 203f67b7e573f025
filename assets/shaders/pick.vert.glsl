#version 330 core
// Picking pass: writes the body id of each instance.
uniform mat4 u_view;
uniform mat4 u_proj;
in vec3 in_pos;
in float in_shift;
in vec3 in_rot0;
in vec3 in_rot1;
in vec3 in_rot2;
in vec3 in_trans;
in vec3 in_scale;
in vec3 in_offset;
in float in_id;
flat out float v_id;

void main() {
    mat3 rot = mat3(in_rot0, in_rot1, in_rot2);
    vec3 world = rot * (in_pos * in_scale + in_shift * in_offset) + in_trans;
    v_id = in_id;
    gl_Position = u_proj * u_view * vec4(world, 1.0);
}
