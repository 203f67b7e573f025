#version 330 core
// Body id + 1 (0 means nothing was hit).
flat in float v_id;
out float f_id;
void main() { f_id = v_id + 1.0; }
