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

#extension GL_GOOGLE_include_directive : require
#include "dense_xsplit.glsl"

void main() {
    uint t = gl_WorkGroupID.x, tid = gl_LocalInvocationIndex, n8 = P.k >> 3u;
    bool live = t < uint(GEMV_TOKENS);
    float s = xsplit_scale(t, live);
    float inv = 1.0 / s; // a power of two: exact
    for (uint i = tid; i < n8; i += 256u) {
        uvec4 hi = uvec4(0u), lo = uvec4(0u);
        if (live) {
            vec4 a = X[t * (P.k >> 2u) + 2u * i] * inv, b = X[t * (P.k >> 2u) + 2u * i + 1u] * inv;
            uvec2 p0 = xsplit_hilo(a.xy), p1 = xsplit_hilo(a.zw), p2 = xsplit_hilo(b.xy), p3 = xsplit_hilo(b.zw);
            hi = uvec4(p0.x, p1.x, p2.x, p3.x);
            lo = uvec4(p0.y, p1.y, p2.y, p3.y);
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
