#version 450
// Mixture-of-experts Q4_K gate and up projections with the SwiGLU epilogue:
// the `fused_gate_up` variant of experiments/moe_scaling.lua. Workgroup (x, y)
// computes rows x * MOE_ROWS .. of pair y for both stacks (the same shape and
// strides, moe_common.glsl) and writes silu(g) * u = g / (1 + exp(-g)) * u.
// MOE_IDOT=1 (with MOE_XB): the integer path of moe_idot.glsl, the pair's x
// quantized once into shared memory for the gate and up rows alike.
#extension GL_GOOGLE_include_directive : require

layout(set = 0, binding = 0) readonly buffer GBuf { uvec4 WG[]; };
layout(set = 0, binding = 1) readonly buffer UBuf { uvec4 WU[]; };
layout(set = 0, binding = 2) readonly buffer XBuf { vec4 X[]; };
layout(set = 0, binding = 3) readonly buffer IBuf { int IDS[]; };
layout(set = 0, binding = 4) writeonly buffer YBuf { float Y[]; };
layout(push_constant) uniform Params {
    uint n, k, experts, nb02, top_k, outer, inner;
} P;

#ifndef MOE_IDOT
#error "MOE_IDOT (1: the integer-dot path) must be defined (defaults: lib/gpubench/moe_vulkan.lua)"
#endif
#define MOE_NV (2 * MOE_NR)
#include "moe_common.glsl"

#if MOE_IDOT
#define MOE_XT 1
#define MOE_IROWS (2 * MOE_NR) // the gate rows, then the up rows: acc's order
#define MOE_WLOAD(r, i) ((r) < MOE_NR ? WG[i] : WU[i])
#include "moe_idot.glsl"
#endif

void main() {
    uint tid = moe_tid();
    uint row0 = moe_row0(tid);
    uint p = gl_WorkGroupID.y;
    uint e = moe_expert(IDS[p], P.experts);
    uint t = p / P.top_k, s = p - t * P.top_k;
    uint wbase = e * (P.nb02 >> 4u);
    uint xrow = (t * P.outer + s * P.inner) >> 2u;
    uint nsb = P.k >> 8u;
    uint base[MOE_NR];
    float acc[MOE_NV]; // gate rows, then up rows
    [[unroll]] for (int r = 0; r < MOE_NR; r++) {
        base[r] = wbase + min(row0 + uint(r), P.n - 1u) * nsb * 9u;
        acc[r] = 0.0;
        acc[MOE_NR + r] = 0.0;
    }
#if MOE_IDOT
    uint both[2 * MOE_NR];
    [[unroll]] for (int r = 0; r < MOE_NR; r++) both[r] = both[MOE_NR + r] = base[r];
    uint xr[1] = uint[1](xrow);
    moe_idot_rows(tid, both, xr, 1u, acc);
#else
    for (uint ch = tid % uint(MOE_T); ch < nsb * 8u; ch += uint(MOE_T)) {
        uint sb = ch >> 3u, v = ch & 7u;
        MoeX x = moe_x(xrow, sb, v);
        [[unroll]] for (int r = 0; r < MOE_NR; r++) {
            uint w = base[r] + sb * 9u;
            acc[r] += moe_dot(moe_chunk(WG[w], WG[w + 1u + v], v >> 1u), x);
            acc[MOE_NR + r] += moe_dot(moe_chunk(WU[w], WU[w + 1u + v], v >> 1u), x);
        }
    }
#endif
    moe_group_sum(acc, tid);
    if (tid % uint(MOE_T) == 0u) {
        [[unroll]] for (int r = 0; r < MOE_NR; r++) {
            uint row = row0 + uint(r);
            float g = acc[r];
            if (row < P.n) Y[p * P.n + row] = g / (1.0 + exp(-g)) * acc[MOE_NR + r];
        }
    }
}
