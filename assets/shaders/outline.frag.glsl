#version 330 core
// Outline colour: orange when selected, light blue when hovered.
flat in int v_flags;
out vec4 f_color;
void main() {
    if ((v_flags & 3) == 0) discard;
    f_color = (v_flags & 2) != 0 ? vec4(1.0, 0.6, 0.1, 1.0) : vec4(0.55, 0.85, 1.0, 1.0);
}
