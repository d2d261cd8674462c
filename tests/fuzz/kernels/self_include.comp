#version 450
// Fuzzer input: includes itself without a guard, so an include resolver that
// does not bound its depth recurses forever; the load must fail with an error.
#extension GL_GOOGLE_include_directive : require
#include "self_include.comp"
layout(local_size_x = 1) in;
void main() {}
