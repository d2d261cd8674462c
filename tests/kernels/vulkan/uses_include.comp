#version 450
// Test kernel: includes relative to this file, nested relative to the
// included file, and from an include directory; requires SCALE and
// OFFSET defines (OFFSET with an empty value is an error here).
#include "inc/helper.glsl"
#include "from_idir.glsl"
#ifndef SCALE
#error SCALE must be defined
#endif
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint outv[]; };
layout(push_constant) uniform Params { uint n; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < n)
        outv[i] = helper(i) * SCALE + FROM_IDIR + OFFSET;
}
