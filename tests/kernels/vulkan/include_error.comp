#version 450
// Test kernel: the error is in the included file, line 3 of inc/broken.glsl.
#include "inc/broken.glsl"
layout(local_size_x = 1) in;
void main() {}
