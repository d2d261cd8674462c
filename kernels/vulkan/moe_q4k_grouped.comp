#version 450
// Mixture-of-experts Q4_K GEMV grouped by expert: the `grouped` variant of
// experiments/moe_scaling.lua, one dispatch per step. Workgroup (x, y) takes
// the y-th expert present in ids (ascending; workgroups past the last one
// exit), finds that expert's pairs itself (256 ids at a time, into shared
// memory) and computes rows x * MOE_ROWS .. of the expert for MOE_TC of its
// pairs at a time: each chunk of weights is loaded and decoded once per pass
// and dotted with every token of the pass, so an expert's weights are read
// once per MOE_TC of its pairs instead of once per pair. Which pass a pair
// lands in does not change its sums, so the output is deterministic.
//
// MOE_IDOT=1 (with MOE_XB): per pass, the integer path of moe_idot.glsl (the
// pass's tokens' x quantized to int16 into shared memory, packed 4x8-bit dots).
#extension GL_GOOGLE_include_directive : require

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };
layout(set = 0, binding = 1) readonly buffer XBuf { vec4 X[]; };
layout(set = 0, binding = 2) readonly buffer IBuf { int IDS[]; };
layout(set = 0, binding = 3) writeonly buffer YBuf { float Y[]; };
layout(push_constant) uniform Params {
    uint n, k, experts, nb02, top_k, pairs, outer, inner;
} P;

#ifndef MOE_TC
#error "MOE_TC (tokens per pass) must be defined (defaults: lib/gpubench/moe_vulkan.lua)"
#endif
#ifndef MOE_IDOT
#error "MOE_IDOT (1: the integer-dot path) must be defined (defaults: lib/gpubench/moe_vulkan.lua)"
#endif
#define MOE_NV (MOE_NR * MOE_TC)
#include "moe_common.glsl"

#if MOE_IDOT
#define MOE_XT MOE_TC
#include "moe_idot.glsl"
#endif

#define MOE_MAXE 1024u // experts the presence mask holds (gpubench.moe refuses more)
shared uint moe_mask[MOE_MAXE / 32u];
shared uint moe_list[MOE_WG];
shared uint moe_cnt, moe_ex;

void main() {
    uint li = gl_LocalInvocationIndex;
    uint tid = moe_tid();
    uint row0 = moe_row0(tid);
    if (li < MOE_MAXE / 32u) moe_mask[li] = 0u;
    barrier();
    for (uint p = li; p < P.pairs; p += uint(MOE_WG)) {
        uint e = moe_expert(IDS[p], P.experts);
        atomicOr(moe_mask[e >> 5u], 1u << (e & 31u));
    }
    barrier();
    if (li == 0u) { // the y-th set bit of the mask
        uint u = gl_WorkGroupID.y, seen = 0u, ex = 0xFFFFFFFFu;
        for (uint w = 0u; w < MOE_MAXE / 32u && ex == 0xFFFFFFFFu; w++) {
            uint word = moe_mask[w], b = uint(bitCount(word));
            if (u < seen + b) {
                for (uint i = seen; i < u; i++) word &= word - 1u;
                ex = 32u * w + uint(findLSB(word));
            }
            seen += b;
        }
        moe_ex = ex;
    }
    barrier();
    uint ex = moe_ex;
    if (ex == 0xFFFFFFFFu) return; // the same for the whole workgroup
    uint wbase = ex * (P.nb02 >> 4u);
    uint nsb = P.k >> 8u;
    uint base[MOE_NR];
    [[unroll]] for (int r = 0; r < MOE_NR; r++) base[r] = wbase + min(row0 + uint(r), P.n - 1u) * nsb * 9u;
    for (uint w0 = 0u; w0 < P.pairs; w0 += uint(MOE_WG)) {
        if (li == 0u) moe_cnt = 0u;
        barrier();
        uint q = w0 + li;
        if (q < P.pairs && moe_expert(IDS[q], P.experts) == ex) moe_list[atomicAdd(moe_cnt, 1u)] = q;
        barrier();
        uint cnt = moe_cnt;
        for (uint j0 = 0u; j0 < cnt; j0 += uint(MOE_TC)) {
            uint tc = min(uint(MOE_TC), cnt - j0);
            uint xrow[MOE_TC];
            [[unroll]] for (int j = 0; j < MOE_TC; j++) {
                uint p = moe_list[j0 + min(uint(j), tc - 1u)];
                uint t = p / P.top_k, s = p - t * P.top_k;
                xrow[j] = (t * P.outer + s * P.inner) >> 2u;
            }
            float acc[MOE_NV];
            [[unroll]] for (int i = 0; i < MOE_NV; i++) acc[i] = 0.0;
#if MOE_IDOT
            moe_idot_rows(tid, base, xrow, tc, acc);
#else
            for (uint ch = tid % uint(MOE_T); ch < nsb * 8u; ch += uint(MOE_T)) {
                uint sb = ch >> 3u, v = ch & 7u;
                // every row's chunk decoded first, then each token's x loaded once for all
                // MOE_NR rows (docs/kernels/moe.md, "The Vulkan grouped shader")
                MoeChunk c[MOE_NR];
                [[unroll]] for (int r = 0; r < MOE_NR; r++) {
                    uint w = base[r] + sb * 9u;
                    c[r] = moe_chunk(W[w], W[w + 1u + v], v >> 1u);
                }
                [[unroll]] for (int j = 0; j < MOE_TC; j++) {
                    if (uint(j) < tc) {
                        MoeX x = moe_x(xrow[j], sb, v);
                        [[unroll]] for (int r = 0; r < MOE_NR; r++) acc[r * MOE_TC + j] += moe_dot(c[r], x);
                    }
                }
            }
#endif
            moe_group_sum(acc, tid);
            if (tid % uint(MOE_T) == 0u) {
                [[unroll]] for (int r = 0; r < MOE_NR; r++) {
                    uint row = row0 + uint(r);
                    [[unroll]] for (int j = 0; j < MOE_TC; j++) {
                        if (uint(j) < tc && row < P.n) Y[moe_list[j0 + uint(j)] * P.n + row] = acc[r * MOE_TC + j];
                    }
                }
            }
        }
        barrier(); // moe_cnt and moe_list are refilled by the next window
    }
}
