#version 450
// The memory-bound Linear route (docs/kernels/vulkan-linear.md, "gemv"): for T <= LIN_TMAX
// every weight is loaded and decoded once and used for all T rows of x.
//
// A workgroup of 256 invocations is cut into lane groups of LIN_LANES lanes; a lane group
// owns LIN_NR consecutive rows n and its lanes stride over the rows' chunks of 32
// weights (bf16: 8), so each chunk of x is loaded once per lane for LIN_NR rows. Each lane
// keeps LIN_NR x LIN_TMAX fp32 sums; a subgroup reduction (through shared memory where a
// lane group spans several subgroups) finishes them, and one lane stores y.
// Rows per workgroup: (256 / LIN_LANES) * LIN_NR, which linear_vulkan.lua repeats.
// With LIN_DOT = 1 (route "dot", q4/q5/q6/w8) a chunk's codes meet x quantized to int16
// through integer dots (linear_dot.glsl) instead of fp32 FMAs; the rest is the same.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#include "linear_common.glsl"
#include "linear_formats.glsl"
#include "linear_gemv_decode.glsl"
#ifndef LIN_DOT
#error "LIN_DOT must be defined (1: the integer-dot route, linear_dot.glsl; 0: fp32 FMAs)"
#endif
#if LIN_DOT
#include "linear_dot.glsl"
#if LIN_TMAX > 4
#error "the integer-dot route keeps every row of x's chunk in registers: LIN_TMAX must be at most 4"
#endif
#endif

#if !defined(LIN_LANES) || !defined(LIN_NR) || !defined(LIN_TMAX) || !defined(LIN_UNROLL)
#error "LIN_LANES, LIN_NR, LIN_TMAX and LIN_UNROLL must be defined"
#endif
#if LIN_UNROLL < 1 || LIN_UNROLL > 4
#error "LIN_UNROLL must be in 1..4"
#endif
#if LIN_LANES < 1 || LIN_LANES > 256 || (LIN_LANES & (LIN_LANES - 1)) != 0
#error "LIN_LANES must be a power of two in 1..256"
#endif
#if LIN_NR < 1 || LIN_NR > 8 || LIN_TMAX < 1 || LIN_TMAX > 16
#error "LIN_NR must be in 1..8 and LIN_TMAX in 1..16"
#endif

#define LIN_WG 256
#define LIN_ROWS ((LIN_WG / LIN_LANES) * LIN_NR)
#define LIN_NACC (LIN_NR * LIN_TMAX)
// Subgroups of at least 4 invocations (linear_vulkan.lua requires it): one partial per
// subgroup and sum for the cross-subgroup step.
#define LIN_MIN_SG 4

layout(local_size_x = LIN_WG, local_size_y = 1, local_size_z = 1) in;

shared float lin_red[(LIN_WG / LIN_MIN_SG) * LIN_NACC];

// Numbered through the subgroup: the reduction needs each subgroup inside one lane
// group (or each lane group inside one subgroup), which Vulkan does not promise for
// gl_LocalInvocationIndex (the same reasoning as gemv_common.glsl's gemv_tid).
uint lin_tid() { return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID; }

#if LIN_FMT == LIN_BF16
// Chunk u of wv (weights k .. k+7 of every row) into part[r][t]. The helpers' loops have
// constant trip counts, no early exit and no loop inside a branch (the shapes
// spirv-opt's unroller takes), so every sum and array index is a register after it.
void lin_gemv_bf16(uvec4 wv[LIN_UNROLL * LIN_NR], int u, uint k, uint T, inout float part[LIN_NACC]) {
    vec4 we[LIN_NR], wo[LIN_NR];
    [[unroll]] for (int r = 0; r < LIN_NR; r++) lin_bf16x8(wv[u * LIN_NR + r], we[r], wo[r]);
    [[unroll]] for (int t = 0; t < LIN_TMAX; t++) {
        vec4 xe = vec4(0.0), xo = vec4(0.0);
        if (uint(t) < T) lin_bf16x8(lin_x8(uint(t), k), xe, xo);
        [[unroll]] for (int r = 0; r < LIN_NR; r++)
            if (uint(t) < T) part[r * LIN_TMAX + t] += dot(we[r], xe) + dot(wo[r], xo);
    }
}
#else
// Sub-chunk s (weights 8s .. 8s+7) of chunk c for every row of ch[u * LIN_NR ...]:
// part[r][t] += sum(f * x) and sx[t] += sum(x), the sums lin_chunk_scale's A and B
// take. The weights are decoded once for all t; x is converted one row at a time, so
// the registers grow with LIN_NR * LIN_TMAX sums, not with LIN_TMAX copies of x.
void lin_gemv_sub(LinChunk ch[LIN_UNROLL * LIN_NR], int u, uint c, uint s, uint T,
                  inout float part[LIN_NACC], inout float sx[LIN_TMAX]) {
    uint k = 32u * c + 8u * s;
    vec4 we[LIN_NR], wo[LIN_NR];
    [[unroll]] for (int r = 0; r < LIN_NR; r++) lin_chunk_part(ch[u * LIN_NR + r], s, we[r], wo[r]);
    [[unroll]] for (int t = 0; t < LIN_TMAX; t++) {
        vec4 xe = vec4(0.0), xo = vec4(0.0);
        if (uint(t) < T) lin_bf16x8(lin_x8(uint(t), k), xe, xo);
#if LIN_FMT != LIN_NVFP4
        sx[t] += dot(xe + xo, vec4(1.0));
#endif
        [[unroll]] for (int r = 0; r < LIN_NR; r++)
            if (uint(t) < T) part[r * LIN_TMAX + t] += dot(we[r], xe) + dot(wo[r], xo);
    }
}
#endif

void main() {
    uint tid = lin_tid();
    uint lane = tid % uint(LIN_LANES);
    uint row0 = gl_WorkGroupID.x * uint(LIN_ROWS) + (tid / uint(LIN_LANES)) * uint(LIN_NR);
    uint T = P.T, K = P.K;
    float acc[LIN_NACC];
    [[unroll]] for (int i = 0; i < LIN_NACC; i++) acc[i] = 0.0;
    // Rows past N are clamped onto row N-1 for loading (valid memory, no branch in the
    // loop); their sums are never stored.
    uint rows[LIN_NR];
    [[unroll]] for (int r = 0; r < LIN_NR; r++) rows[r] = min(row0 + uint(r), P.N - 1u);

    // LIN_UNROLL chunks per trip, all their weight loads issued before any is used.
    // Chunks past the row's last are clamped onto it for loading; their x is zero, so
    // they add nothing.
#if LIN_FMT == LIN_BF16
    uint nch = K >> 3u; // 8 weights per chunk
    for (uint c0 = lane; c0 < nch; c0 += uint(LIN_LANES * LIN_UNROLL)) {
        uvec4 wv[LIN_UNROLL * LIN_NR];
        [[unroll]] for (int u = 0; u < LIN_UNROLL; u++) {
            uint c = min(c0 + uint(u * LIN_LANES), nch - 1u);
            [[unroll]] for (int r = 0; r < LIN_NR; r++) wv[u * LIN_NR + r] = W[(rows[r] * K >> 3u) + c];
        }
        [[unroll]] for (int u = 0; u < LIN_UNROLL; u++) {
            float part[LIN_NACC];
            [[unroll]] for (int i = 0; i < LIN_NACC; i++) part[i] = 0.0;
            lin_gemv_bf16(wv, u, 8u * (c0 + uint(u * LIN_LANES)), T, part);
            [[unroll]] for (int i = 0; i < LIN_NACC; i++) acc[i] += part[i];
        }
    }
#else
    uint kp = lin_kpad();
    uint nch = (K + 31u) >> 5u; // chunks holding an element k < K
    for (uint c0 = lane; c0 < nch; c0 += uint(LIN_LANES * LIN_UNROLL)) {
        LinChunk ch[LIN_UNROLL * LIN_NR];
        [[unroll]] for (int u = 0; u < LIN_UNROLL; u++) {
            uint c = min(c0 + uint(u * LIN_LANES), nch - 1u);
            [[unroll]] for (int r = 0; r < LIN_NR; r++) ch[u * LIN_NR + r] = lin_chunk_load(rows[r], c, kp);
        }
        [[unroll]] for (int u = 0; u < LIN_UNROLL; u++) {
            uint c = c0 + uint(u * LIN_LANES);
#if LIN_DOT
            // x of this chunk as int16 bytes, every row of x at once; then per row the
            // integer sums (offset included) and one scale each.
            LinXq xq[LIN_TMAX];
            [[unroll]] for (int t = 0; t < LIN_TMAX; t++) xq[t] = lin_xq(uint(t), c, T);
            [[unroll]] for (int r = 0; r < LIN_NR; r++) {
                float d = lin_chunk_d(ch[u * LIN_NR + r], c);
                [[unroll]] for (int t = 0; t < LIN_TMAX; t++)
                    acc[r * LIN_TMAX + t] += float(lin_dot_chunk(ch[u * LIN_NR + r], xq[t])) * (d * xq[t].sx);
            }
#elif LIN_FMT == LIN_NVFP4
            // Two 16-groups per chunk, each with its own scale.
            [[unroll]] for (uint h = 0u; h < 2u; h++) {
                float part[LIN_NACC];
                [[unroll]] for (int i = 0; i < LIN_NACC; i++) part[i] = 0.0;
                float sx[LIN_TMAX]; // unused: E2M1 codes have no offset
                [[unroll]] for (uint s = 0u; s < 2u; s++) lin_gemv_sub(ch, u, c, 2u * h + s, T, part, sx);
                [[unroll]] for (int r = 0; r < LIN_NR; r++) {
                    vec2 sc = lin_nvfp4_scales(ch[u * LIN_NR + r], c);
                    float g = h == 0u ? sc.x : sc.y;
                    [[unroll]] for (int t = 0; t < LIN_TMAX; t++) acc[r * LIN_TMAX + t] += g * part[r * LIN_TMAX + t];
                }
            }
#else
            float part[LIN_NACC];
            [[unroll]] for (int i = 0; i < LIN_NACC; i++) part[i] = 0.0;
            float sx[LIN_TMAX];
            [[unroll]] for (int t = 0; t < LIN_TMAX; t++) sx[t] = 0.0;
            [[unroll]] for (uint s = 0u; s < 4u; s++) lin_gemv_sub(ch, u, c, s, T, part, sx);
            [[unroll]] for (int r = 0; r < LIN_NR; r++) {
                vec2 ab = lin_chunk_scale(ch[u * LIN_NR + r], c);
                [[unroll]] for (int t = 0; t < LIN_TMAX; t++)
                    acc[r * LIN_TMAX + t] += ab.x * part[r * LIN_TMAX + t] - ab.y * sx[t];
            }
#endif
        }
    }
#endif

    // Reduction over the lane group, by the uniform subgroup size sg (as gemv_common).
    uint sg = gl_SubgroupSize;
    if (sg >= uint(LIN_LANES)) {
        if (sg == uint(LIN_LANES)) {
            [[unroll]] for (int i = 0; i < LIN_NACC; i++) acc[i] = subgroupAdd(acc[i]);
        } else {
            [[unroll]] for (uint m = 1u; m < uint(LIN_LANES); m <<= 1u) {
                [[unroll]] for (int i = 0; i < LIN_NACC; i++) acc[i] += subgroupShuffleXor(acc[i], m);
            }
        }
        if (lane == 0u) {
            [[unroll]] for (int r = 0; r < LIN_NR; r++) {
                uint n = row0 + uint(r);
                [[unroll]] for (int t = 0; t < LIN_TMAX; t++)
                    if (n < P.N && uint(t) < T) lin_store(uint(t), n, acc[r * LIN_TMAX + t] * LIN_OUT_SCALE);
            }
        }
    } else {
        // A lane group spans LIN_LANES / sg subgroups: reduce in each, then add the
        // subgroups' partials from shared memory, one invocation per (row, t).
        [[unroll]] for (int i = 0; i < LIN_NACC; i++) acc[i] = subgroupAdd(acc[i]);
        if (gl_SubgroupInvocationID == 0u) {
            [[unroll]] for (int i = 0; i < LIN_NACC; i++) lin_red[gl_SubgroupID * uint(LIN_NACC) + uint(i)] = acc[i];
        }
        barrier();
        uint per = uint(LIN_LANES) / sg; // subgroups per lane group
        for (uint j = tid; j < uint(LIN_ROWS * LIN_TMAX); j += uint(LIN_WG)) {
            uint g = j / uint(LIN_NACC), i = j % uint(LIN_NACC);
            float v = 0.0;
            for (uint q = 0u; q < per; q++) v += lin_red[(g * per + q) * uint(LIN_NACC) + i];
            uint n = gl_WorkGroupID.x * uint(LIN_ROWS) + g * uint(LIN_NR) + i / uint(LIN_TMAX);
            uint t = i % uint(LIN_TMAX);
            if (n < P.N && t < T) lin_store(t, n, v * LIN_OUT_SCALE);
        }
    }
}
