#version 450
// The first dispatch of gemv_dense_wideb.comp (COOP_REG=3): x's 8 token rows (zeros past
// GEMV_TOKENS) divided by a power of two s_t >= the row's largest |x| and split into f16 hi + lo
// (as gemv_dense_coop_xprep.comp), written in A's order: for unit c (64 k), token t and q = 0..3
// (lane L = 4t + q), four uvec4 at 2 + 4 (32c + L) + j, one a step j; word w of step j holds
// (low half first) the values at k = 64c + 16q + 2j + (w & 1) and that + 8, hi for w < 2, lo
// for w >= 2 (the k order gemv_dense_wideb.comp's header derives). Then s_t as 8 floats in the
// first 2 uvec4s. Workgroup w: token w % 8, units 64 (w / 8) .. + 63 (one entry an invocation);
// each finds its token's amax over all of k. k a multiple of 64. WIDEB_F32=1 (f32 weights,
// whose k order differs: gemv_dense_wideb.comp): word w of step j holds k = 64c + 32 (w & 1) +
// 8q + j and that + 4.
// Launch: (x, workspace, u32 k), block 256, grid 8 ceil(k / 4096).

#extension GL_EXT_control_flow_attributes : require

#ifndef WIDEB_F32
#define WIDEB_F32 0
#endif
#ifndef GEMV_TOKENS
#error "gemv_dense_wideb_xprep takes GEMV_TOKENS (rows of x, 1..8) as a define (lib/gpubench/gemv_vulkan.lua)"
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
    uint t = gl_WorkGroupID.x & 7u, slice = gl_WorkGroupID.x >> 3u, tid = gl_LocalInvocationIndex, k4 = P.k >> 2u;
    bool live = t < uint(GEMV_TOKENS);
    float s = xsplit_scale(t, live);
    float inv = 1.0 / s; // a power of two: exact
    uint units = P.k >> 6u, c = 64u * slice + (tid >> 2u), q = tid & 3u;
    if (c < units) {
        // the lane's 16 values as x / s_t: from k = 64c + 16q (f32: 8 from 64c + 8q, 8 from 64c + 32 + 8q)
        vec4 v[4];
        [[unroll]] for (int i = 0; i < 4; i++) {
            uint at = WIDEB_F32 != 0 ? 16u * c + 8u * uint(i >> 1) + 2u * q + uint(i & 1) : 16u * c + 4u * q + uint(i);
            v[i] = live ? X[t * k4 + at] * inv : vec4(0.0);
        }
        uint base = 2u + 4u * (32u * c + 4u * t + q);
        [[unroll]] for (int j = 0; j < 4; j++) {
            uvec4 o;
            [[unroll]] for (int sh = 0; sh < 2; sh++) {
                // local k 2j + sh and 8 + 2j + sh (f32: 8 sh + j and 8 sh + 4 + j)
                int l0 = WIDEB_F32 != 0 ? 8 * sh + j : 2 * j + sh, l1 = l0 + (WIDEB_F32 != 0 ? 4 : 8);
                uvec2 hl = xsplit_hilo(vec2(v[l0 >> 2][l0 & 3], v[l1 >> 2][l1 & 3]));
                o[sh] = hl.x;
                o[2 + sh] = hl.y;
            }
            Q[base + uint(j)] = o;
        }
    }
    if (slice == 0u && tid == 0u) Q[t >> 2u][t & 3u] = floatBitsToUint(s); // its own component only
}
