#version 450
// The q8_0 / q4_0 GEMV for T = 1..8 rows of x on the tensor cores through
// VK_NV_cooperative_matrix's int8 16x8x32 matrices (docs/kernels/vulkan-gemv.md,
// "Tensor cores through int8 cooperative matrices"): the CUDA int8 kernel's scheme
// (gemv_b32_i8.cuh) where Vulkan offers it. lavapipe has no cooperative matrices, so
// gemv_vulkan.variant's GEMV_COOP=1 carries a device requirement and nothing picks it
// by default; the float and integer kernels are the fallback.
//
// x: quantized once per call into signed digits (coop_common.glsl). Per block of 32 the
// subgroup copies its 16 rows' codes into shared memory (16-byte aligned rows for the
// matrix load; the ggml blocks are 34 and 18 bytes, so each lane funnel-shifts five
// words into its half row), multiplies them with 8 tokens' digits (COOP_PRODUCT) and
// adds float(C) * d_row * s_b,token (q4_0: (C - 8 sum(xq)) ...) into per-invocation
// float sums, d_row staged beside the codes. COOP_U blocks are loaded before any is staged.
#extension GL_GOOGLE_include_directive : require
#include "coop_common.glsl"

#if !defined(COOP_FMT) || !defined(COOP_U)
#error "COOP_FMT (1 q8_0, 2 q4_0) and COOP_U must be defined (lib/gpubench/gemv_vulkan.lua)"
#endif
#if COOP_FMT != 1 && COOP_FMT != 2
#error "COOP_FMT must be 1 (q8_0) or 2 (q4_0)"
#endif
#if COOP_U < 1 || COOP_U > 8
#error "COOP_U must be in 1..8"
#endif

#define BLOCK_BYTES (COOP_FMT == 1 ? 34u : 18u)

layout(set = 0, binding = 0) readonly buffer WBuf { uint W[]; };

shared uvec4 stage_[SGS * COOP_U * COOP_STAGE];
shared float d_[SGS * COOP_U * 16]; // the staged blocks' d per row

uint funnel(uint lo, uint hi, uint s) {
    return (lo >> s) | ((hi << 16u) << (16u - s));
}

void main() {
    uint lane = COOP_LANE, sg = COOP_SG;
    uint wr = sg % uint(COOP_WR), ks = sg / uint(COOP_WR);
    uint row0 = (gl_WorkGroupID.x * uint(COOP_WR) + wr) * 16u;
    uint nb = P.k >> 5u, row_bytes = nb * BLOCK_BYTES;
    // this invocation's staging share: row r of the 16, half hf of its 32 codes
    uint r = lane >> 1u, hf = lane & 1u, row = row0 + r;
    bool live = row < P.m;

    CI32 pos = coop_positions();
    int n_el = COOP_LEN(pos);
    float acc[EL_MAX];
    for (int e = 0; e < EL_MAX; e++) acc[e] = 0.0;

    uint per = (nb + uint(COOP_KS) - 1u) / uint(COOP_KS);
    uint b_lo = min(nb, ks * per), b_hi = min(nb, b_lo + per);
    uint sbase = sg * uint(COOP_U) * COOP_STAGE, dbase = sg * uint(COOP_U) * 16u;
    // every slice runs the longest slice's steps (the emulation's barriers are the workgroup's)
    for (uint i0 = 0u; i0 < per; i0 += uint(COOP_U)) {
        uint b0 = b_lo + i0;
        float d[COOP_U];
        uvec4 q[COOP_U];
        [[unroll]] for (int u = 0; u < COOP_U; u++) {
            uint b = b0 + uint(u);
            d[u] = 0.0;
            q[u] = uvec4(0u);
            if (live && b < b_hi) {
                uint o = row * row_bytes + b * BLOCK_BYTES;
                d[u] = unpackHalf2x16(W[o >> 2u] >> ((o & 2u) << 3u)).x;
#if COOP_FMT == 1
                uint qo = o + 2u + 16u * hf; // this half's 16 codes
#else
                uint qo = o + 2u; // all 16 bytes: low nibbles are codes 0..15, high 16..31
#endif
                uint s = (qo & 2u) << 3u, w = qo >> 2u; // the last word may be past the row: the buffer's slack
                uint u0 = W[w], u1 = W[w + 1u], u2 = W[w + 2u], u3 = W[w + 3u], u4 = W[w + 4u];
                q[u] = uvec4(funnel(u0, u1, s), funnel(u1, u2, s), funnel(u2, u3, s), funnel(u3, u4, s));
#if COOP_FMT == 2
                q[u] = hf == 0u ? (q[u] & 0x0F0F0F0Fu) : ((q[u] >> 4u) & 0x0F0F0F0Fu);
#endif
            }
        }
        COOP_WAIT(); // the previous step's matrix loads are done with the stage
        [[unroll]] for (int u = 0; u < COOP_U; u++) {
            stage_[sbase + uint(u) * COOP_STAGE + r * COOP_ROW_STRIDE + hf] = q[u];
            if (hf == 0u) d_[dbase + uint(u) * 16u + r] = d[u];
        }
        COOP_SYNC();
        [[unroll]] for (int u = 0; u < COOP_U; u++) {
            uint b = b0 + uint(u);
            if (b >= b_hi) break; // uniform over the subgroup
            CI32 c;
            COOP_PRODUCT(c, stage_, sbase + uint(u) * COOP_STAGE, b, nb)
            for (int e = 0; e < min(n_el, EL_MAX); e++) {
                int p = COOP_AT(pos, e);
                uvec2 rec = coop_record(uint(p & 7), nb, b);
                float dw = d_[dbase + uint(u) * 16u + uint(p >> 3)];
#if COOP_FMT == 1
                acc[e] += float(COOP_AT(c, e)) * (dw * uintBitsToFloat(rec.x));
#else
                acc[e] += float(COOP_AT(c, e) - 8 * int(rec.y)) * (dw * uintBitsToFloat(rec.x));
#endif
            }
        }
    }
    coop_store(acc, pos);
}
