#version 330 core
// Ground quad in plane coordinates (x, z), placed by the plane's world pose.
uniform mat4 u_view;
uniform mat4 u_proj;
uniform mat4 u_model;
uniform mat4 u_light_vp;
in vec2 in_xz;
out vec3 v_world;
out vec2 v_plane;
out vec4 v_light;

void main() {
    vec4 world = u_model * vec4(in_xz.x, 0.0, in_xz.y, 1.0);
    v_world = world.xyz;
    v_plane = in_xz;
    v_light = u_light_vp * world;
    gl_Position = u_proj * u_view * world;
}
