#version 450
// Pure-read probe for experiments/bandwidth.lua (the CUDA twin takes the same
// arguments): read(src, out, n16, sentinel) loads n16 16-byte elements with a
// grid-stride loop and folds them into an accumulator. out[gid] is written
// only when the accumulator equals `sentinel`, a value the caller makes sure
// the data never produces, so the compiler must keep every load while the
// kernel writes nothing: the measured traffic is reads only.
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params { uint n16; uint sentinel; };

void main() {
    uint gid = gl_GlobalInvocationID.x;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uvec4 acc = uvec4(0u);
    for (uint i = gid; i < n16; i += stride) {
        uvec4 v = src[i];
        acc = (acc ^ v) + uvec4(i);
    }
    uint folded = acc.x ^ acc.y ^ acc.z ^ acc.w;
    if (folded == sentinel)
        out_[gid] = folded;
}
