#version 450
// The first dispatch of gemv_dense_wide.comp (COOP_REG=2): x's 8 token rows (zeros past
// GEMV_TOKENS) divided by a power of two s_t >= the row's largest |x| and split into f16 hi + lo,
// as gemv_dense_coop_xprep.comp, but written in the order B's components are filled: for unit
// c (32 k) and lane L = 4 g + p, two uvec4s (hi, then lo) at 2 + 2 (32 c + L); word i of each
// holds tokens 2 p and 2 p + 1 (low half first) at k = 32 c + 8 (g / 2) + 4 (i >> 1) + 2 (i & 1)
// + g % 2 (the k order gemv_dense_wide.comp's header derives). Then s_t as 8 floats in the
// first 2 uvec4s. Workgroup w: token pair w % 4, units 32 (w / 4) .. + 31 (one entry an
// invocation); each finds its pair's amax over all of k (from L2: 40 KB at k = 5120), so no
// workgroup waits for another. k a multiple of 32.
// Launch: (x, workspace, u32 k), block 256, grid 4 ceil(k / 1024).

#extension GL_EXT_control_flow_attributes : require

#ifndef GEMV_TOKENS
#error "gemv_dense_wide_xprep takes GEMV_TOKENS (rows of x, 1..8) as a define (lib/gpubench/gemv_vulkan.lua)"
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
    uint p = gl_WorkGroupID.x & 3u, slice = gl_WorkGroupID.x >> 2u, tid = gl_LocalInvocationIndex, k4 = P.k >> 2u;
    uvec2 tok = uvec2(2u * p, 2u * p + 1u);
    bvec2 live = lessThan(tok, uvec2(GEMV_TOKENS));
    vec2 s = vec2(xsplit_scale(tok.x, live.x), xsplit_scale(tok.y, live.y));
    vec2 inv = 1.0 / s; // powers of two: exact
    uint units = P.k >> 5u, c = 32u * slice + (tid >> 3u), g = tid & 7u, lane = 4u * g + p;
    if (c < units) {
        uvec4 hi = uvec4(0u), lo = uvec4(0u);
        [[unroll]] for (int w = 0; w < 4; w++) {
            uint kk = 32u * c + 8u * (g >> 1u) + 4u * uint(w >> 1) + 2u * uint(w & 1) + (g & 1u);
            vec2 v = vec2(0.0);
            [[unroll]] for (int h = 0; h < 2; h++) {
                if (live[h]) v[h] = X[tok[h] * k4 + (kk >> 2u)][kk & 3u] * inv[h];
            }
            uvec2 hl = xsplit_hilo(v);
            hi[w] = hl.x;
            lo[w] = hl.y;
        }
        Q[2u + 2u * (32u * c + lane)] = hi;
        Q[3u + 2u * (32u * c + lane)] = lo;
    }
    if (slice == 0u && tid == 0u) {
        // 8 floats in two uvec4s: each workgroup writes its own two components only, one
        // store each (a swizzled store may be compiled as a read-modify-write of all four)
        uint w0 = 2u * (p & 1u);
        Q[p >> 1u][w0] = floatBitsToUint(s.x);
        Q[p >> 1u][w0 + 1u] = floatBitsToUint(s.y);
    }
}
