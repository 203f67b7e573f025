#version 330 core
// Picking pass: writes the body id of each instance.
#include "instance.glsl"
uniform mat4 u_view;
uniform mat4 u_proj;
in float in_id;
flat out float v_id;

void main() {
    v_id = in_id;
    gl_Position = u_proj * u_view * vec4(instance_world(), 1.0);
}
