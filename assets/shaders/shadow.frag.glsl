#version 330 core
// Depth-only: nothing to write but depth.
void main() {}
