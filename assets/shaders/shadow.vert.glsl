#version 330 core
// Depth-only pass from the light (instance.glsl: the same pose as the shape pass).
#include "instance.glsl"
uniform mat4 u_light_vp;

void main() {
    gl_Position = u_light_vp * vec4(instance_world(), 1.0);
}
