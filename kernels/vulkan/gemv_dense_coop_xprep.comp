#version 450
// The first dispatch of the f16 / bf16 GEMV on fp16 cooperative matrices (gemv_dense_coop.comp):
// each of 8 token rows of x (zeros past GEMV_TOKENS) divided by a power of two s_t >= its
// largest |x| and split into f16 hi + lo (x / s_t - hi - lo within 2^-24, 2^-23 where packHalf2x16
// truncates), so that
// the matrices' f16 B columns carry x to about 22 bits of its row's range
// (docs/kernels/vulkan-gemv.md, "The dense formats on cooperative matrices").
// Workspace (uvec4s): s_t as 8 floats in [0, 2), the hi rows in [2, 2 + k), the lo rows in
// [2 + k, 2 + 2k), token t's values at t * k / 8 within each. One workgroup per token; k a
// multiple of 16. Launch: (x, workspace, u32 k), block 256, grid 8.

#ifndef GEMV_TOKENS
#error "gemv_dense_coop_xprep takes GEMV_TOKENS (rows of x, 1..8) as a define (lib/gpubench/gemv_vulkan.lua)"
#endif

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer XBuf { vec4 X[]; };
layout(set = 0, binding = 1) writeonly buffer QBuf { uvec4 Q[]; };
layout(push_constant) uniform Params {
    uint k;
} P;

shared float part_[256];

void main() {
    uint t = gl_WorkGroupID.x, tid = gl_LocalInvocationIndex, n8 = P.k >> 3u;
    bool live = t < uint(GEMV_TOKENS);
    float amax = 0.0;
    if (live) {
        for (uint i = tid; i < (P.k >> 2u); i += 256u) {
            vec4 a = abs(X[t * (P.k >> 2u) + i]);
            amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
        }
    }
    part_[tid] = amax;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1u) {
        if (tid < h) part_[tid] = max(part_[tid], part_[tid + h]);
        barrier();
    }
    amax = part_[0];
    // s = 2^e >= amax (1 for a row of zeros): x / s in [-1, 1], exact
    float s = amax > 0.0 ? exp2(ceil(log2(amax))) : 1.0;
    if (s < amax) s *= 2.0; // log2's rounding
    float inv = 1.0 / s; // a power of two: exact
    for (uint i = tid; i < n8; i += 256u) {
        uvec4 hi = uvec4(0u), lo = uvec4(0u);
        if (live) {
            vec4 a = X[t * (P.k >> 2u) + 2u * i] * inv, b = X[t * (P.k >> 2u) + 2u * i + 1u] * inv;
            vec4 ah = vec4(unpackHalf2x16(packHalf2x16(a.xy)), unpackHalf2x16(packHalf2x16(a.zw)));
            vec4 bh = vec4(unpackHalf2x16(packHalf2x16(b.xy)), unpackHalf2x16(packHalf2x16(b.zw)));
            hi = uvec4(packHalf2x16(ah.xy), packHalf2x16(ah.zw), packHalf2x16(bh.xy), packHalf2x16(bh.zw));
            vec4 ar = a - ah, br = b - bh;
            lo = uvec4(packHalf2x16(ar.xy), packHalf2x16(ar.zw), packHalf2x16(br.xy), packHalf2x16(br.zw));
        }
        Q[2u + t * n8 + i] = hi;
        Q[2u + P.k + t * n8 + i] = lo;
    }
    if (tid == 0u) {
        uint w = t & 3u;
        // 8 floats in two uvec4s: each workgroup writes its own component only
        if (w == 0u) Q[t >> 2u].x = floatBitsToUint(s);
        else if (w == 1u) Q[t >> 2u].y = floatBitsToUint(s);
        else if (w == 2u) Q[t >> 2u].z = floatBitsToUint(s);
        else Q[t >> 2u].w = floatBitsToUint(s);
    }
}
