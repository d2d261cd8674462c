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
// words into its half row: GEMV_LOAD16), multiplies them with 8 tokens' digits (COOP_PRODUCT) and
// adds float(C) * d_row * s_b,token (q4_0: (C - 8 sum(xq)) ...) into per-invocation
// float sums, d_row staged beside the codes. COOP_U blocks are loaded before any is staged.
#extension GL_GOOGLE_include_directive : require
#include "coop_common.glsl"
#include "byte_words.glsl"

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

void main() {
    uint nb = P.k >> 5u, row_bytes = nb * BLOCK_BYTES;
    CoopPlace pl = coop_place(nb);
    uint r = pl.r, hf = pl.hf, row = pl.row;

    COOP_C pos = coop_positions();
    int n_el = COOP_LEN(pos);
    float acc[EL_MAX];
    for (int e = 0; e < EL_MAX; e++) acc[e] = 0.0;

    uint sbase = pl.sg * uint(COOP_U) * COOP_STAGE, dbase = pl.sg * uint(COOP_U) * 16u;
    for (uint i0 = 0u; i0 < pl.per; i0 += uint(COOP_U)) {
        uint b0 = pl.lo + i0;
        float d[COOP_U];
        uvec4 q[COOP_U];
        [[unroll]] for (int u = 0; u < COOP_U; u++) {
            uint b = b0 + uint(u);
            d[u] = 0.0;
            q[u] = uvec4(0u);
            if (pl.live && b < pl.hi) {
                uint o = row * row_bytes + b * BLOCK_BYTES;
                d[u] = GEMV_F16_AT(W, o);
#if COOP_FMT == 1
                q[u] = GEMV_LOAD16(W, o + 2u + 16u * hf); // this half's 16 codes
#else
                q[u] = GEMV_LOAD16(W, o + 2u); // all 16 bytes: low nibbles are codes 0..15, high 16..31
#endif
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
            if (b >= pl.hi) break; // uniform over the subgroup
            COOP_C c;
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
