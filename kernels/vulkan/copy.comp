#version 450
// Device-to-device copy for experiments/bandwidth.lua (the CUDA twin takes the
// same arguments): copy(src, dst, n16) moves n16 16-byte elements.
// A grid-stride loop lets any grid cover any n16.
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Params { uint n16; };

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < n16; i += stride)
        dst[i] = src[i];
}
