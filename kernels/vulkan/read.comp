#version 450
// Pure-read probe for experiments/bandwidth.lua (the CUDA twin takes the same
// arguments): read(src, out, n16, sentinel) loads n16 16-byte elements with a
// grid-stride loop and XOR-folds them into an accumulator (all-zero data folds to 0). out[gid] is written
// only when the accumulator equals `sentinel`, a value the caller makes sure
// the data never produces, so the compiler must keep every load while the
// kernel writes nothing: the measured traffic is reads only.
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params { uint n16; uint sentinel; };

uint fold(uvec4 v) { return (v.x ^ v.y) ^ (v.z ^ v.w); }

void main() {
    uint gid = gl_GlobalInvocationID.x;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint acc = 0u;
    uint i = gid;
    // Four independent 16-byte loads in flight per iteration, as in the CUDA
    // twin: with one load per iteration too few bytes are in flight to reach
    // the read ceiling (docs/results/h200-gemv.md, "Bandwidth"). (Written as
    // n16 - i > 3 stride so nothing overflows when n16 is close to 2^32.)
    for (; i < n16 && n16 - i > 3u * stride; i += 4u * stride) {
        uvec4 a = src[i];
        uvec4 b = src[i + stride];
        uvec4 c = src[i + 2u * stride];
        uvec4 d = src[i + 3u * stride];
        acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    }
    for (; i < n16; i += stride)
        acc ^= fold(src[i]);
    if (acc == sentinel)
        out_[gid] = acc;
}
