#version 450
// Test kernel: `iters` dependent integer steps per thread, so a dispatch takes
// measurable time; the result is stored so the loop cannot be removed.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint outv[]; };
layout(push_constant) uniform Params { uint iters; };

void main() {
    uint x = gl_GlobalInvocationID.x;
    for (uint i = 0u; i < iters; i++)
        x = x * 1664525u + 1013904223u;
    outv[gl_GlobalInvocationID.x] = x;
}
