#version 450
// Mixture-of-experts Q4_K GEMV over (token, expert) pairs: the `batched` and
// `per_token` variants of experiments/moe_scaling.lua (moe_common.glsl has the
// layout). Workgroup (x, y) computes rows x * MOE_ROWS .. of pair pair0 + y:
// one GEMV of expert ids[pair] with that pair's activation row, as
// gemv_q4_k.comp does it. `batched` dispatches y = m * top_k once; `per_token`
// y = top_k with pair0 = t * top_k once per token: one shader for both, so the
// two agree bit for bit. MOE_IDOT=1 (with MOE_XB): the integer path of
// moe_idot.glsl (the pair's x quantized to int16 into shared memory, packed
// 4x8-bit dots).
#extension GL_GOOGLE_include_directive : require

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };
layout(set = 0, binding = 1) readonly buffer XBuf { vec4 X[]; };
layout(set = 0, binding = 2) readonly buffer IBuf { int IDS[]; };
layout(set = 0, binding = 3) writeonly buffer YBuf { float Y[]; };
layout(push_constant) uniform Params {
    uint n, k, experts, nb02, top_k, pair0, outer, inner;
} P;

#ifndef MOE_IDOT
#error "MOE_IDOT (1: the integer-dot path) must be defined (defaults: lib/gpubench/moe_vulkan.lua)"
#endif
#define MOE_NV MOE_NR
#include "moe_common.glsl"

#if MOE_IDOT
#define MOE_XT 1
#include "moe_idot.glsl"
#endif

void main() {
    uint tid = moe_tid();
    uint row0 = moe_row0(tid);
    uint p = P.pair0 + gl_WorkGroupID.y;
    uint e = moe_expert(IDS[p], P.experts);
    uint t = p / P.top_k, s = p - t * P.top_k;
    uint wbase = e * (P.nb02 >> 4u);
    uint xrow = (t * P.outer + s * P.inner) >> 2u;
    uint nsb = P.k >> 8u;
    uint base[MOE_NR];
    float acc[MOE_NV];
    [[unroll]] for (int r = 0; r < MOE_NR; r++) {
        base[r] = wbase + min(row0 + uint(r), P.n - 1u) * nsb * 9u;
        acc[r] = 0.0;
    }
#if MOE_IDOT
    uint xr[1] = uint[1](xrow);
    moe_idot_rows(tid, base, xr, 1u, acc);
#else
    for (uint ch = tid % uint(MOE_T); ch < nsb * 8u; ch += uint(MOE_T)) {
        uint sb = ch >> 3u, v = ch & 7u;
        MoeX x = moe_x(xrow, sb, v);
        [[unroll]] for (int r = 0; r < MOE_NR; r++) {
            uint w = base[r] + sb * 9u;
            acc[r] += moe_dot(moe_chunk(W[w], W[w + 1u + v], v >> 1u), x);
        }
    }
#endif
    moe_group_sum(acc, tid);
    if (tid % uint(MOE_T) == 0u) {
        [[unroll]] for (int r = 0; r < MOE_NR; r++) {
            uint row = row0 + uint(r);
            if (row < P.n) Y[p * P.n + row] = acc[r];
        }
    }
}
