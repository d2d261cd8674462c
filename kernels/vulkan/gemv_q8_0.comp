#version 450
// GEMV for q8_0 weights (docs/FORMATS.md): 34-byte blocks of 32 weights, fp16 d then 32
// signed bytes qs; element j is qs[j] * d. k is a multiple of 32.
// y[t] = W x[t] for each of the GEMV_TOKENS rows t of x (gemv_common.glsl, "Tokens").
//
// A chunk is one block; lanes take consecutive blocks. Blocks start at even byte
// offsets only (34 bytes) and the shader must not need 8/16-bit storage
// (docs/kernels/vulkan-gemv.md, "Byte alignment"), so W is read as 32-bit words and
// each 4-byte group of qs is funnel-shifted out of two words (gemv_funnel). The last
// word read may be the 4 bytes past the block: the weight buffer carries 16 bytes of
// slack (gemv.buffer_bytes).
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uint W[]; };

// The block at byte offset o decoded: its 32 signed weights qs_j (the scale d not yet
// applied) as eight vec4 in x's order, and d.
float decode_block(uint o, out vec4 wq[8]) {
    float d = GEMV_F16_AT(W, o);
    uint qo = o + 2u; // qs
    uint s = gemv_half_shift(qo), w = qo >> 2u;
    uint u[9];
    [[unroll]] for (int i = 0; i < 9; i++) u[i] = W[w + uint(i)];
    [[unroll]] for (int i = 0; i < 8; i++) wq[i] = gemv_sbytes(gemv_funnel(u[i], u[i + 1], s));
    return d;
}

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint nb = P.k >> 5u;   // blocks per row
    uint row_bytes = nb * 34u;
    uint base[GEMV_NR];
    float acc[GEMV_ACC];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++)
        base[r] = gemv_clamp_row(row0 + uint(r)) * row_bytes;
    [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
    const uint T = uint(GEMV_T);
    for (uint b = tid % T; b < nb; b += T) {
        // Each row's block decoded once, then each token's x loaded once for all rows.
        vec4 wq[GEMV_NR][8];
        float d[GEMV_NR];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++)
            d[r] = decode_block(base[r] + 34u * b, wq[r]);
        [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
            vec4 xs[8];
            [[unroll]] for (int i = 0; i < 8; i++) xs[i] = X[gemv_xrow(t) + 8u * b + uint(i)];
            [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                float sum = 0.0;
                [[unroll]] for (int i = 0; i < 8; i++) sum += dot(wq[r][i], xs[i]);
                acc[GEMV_AT(t, r)] += d[r] * sum;
            }
        }
    }
    gemv_finish(acc, tid, row0);
}
