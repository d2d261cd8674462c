#version 450
// Includes itself: the compiler must stop at the include depth limit and say so.
#extension GL_GOOGLE_include_directive : require
#include "self_include.comp"
layout(local_size_x = 1) in;
void main() {}
