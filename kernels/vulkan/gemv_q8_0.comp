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
//
// -DGEMV_IDOT=1 or 2 (with GEMV_XB) compiles the integer-dot-product kernel instead
// (gemv_idot.glsl; any GEMV_TOKENS; gemv_vulkan.for_device picks it at one token on
// devices with shaderIntegerDotProduct). Without GEMV_IDOT, or with 0, the float kernel below.
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uint W[]; };

#ifndef GEMV_IDOT
#define GEMV_IDOT 0
#endif

#if GEMV_IDOT
// The integer path (gemv_idot.glsl): x quantized to int16 per block in shared memory;
// per block and row, y += d * s_b * (256 * SDot(w, xh) + SUDot(w, xl)), the 32 signed
// weight bytes against the signed high and unsigned low bytes of xq. |dot| <= 32 * 128 *
// 32767 < 2^27, far inside int32, and exact in the int-to-float conversion to 2^-24.
#define GEMV_IDOT_SEG 32
#define GEMV_IDOT_TOKENS
#define GEMV_IDOT_XPRE_LOOP
#include "gemv_idot.glsl"

// The main loops (gemv_idot_blocks.glsl) take a block through these two.
#define GEMV_IDOT_BLOCK_BYTES 34
#define GEMV_IDOT_WORDS 9
// The row's block at byte offset o: its d, and the 9 words from the one holding qs's
// first byte (s: the shift of qs in them, 0 or 16).
float idot_block_load(uint o, out uint u[9], out uint s) {
    float d = GEMV_F16_AT(W, o);
    uint qo = o + 2u; // qs
    s = gemv_half_shift(qo);
    uint w = qo >> 2u;
    [[unroll]] for (int i = 0; i < 9; i++) u[i] = W[w + uint(i)];
    return d;
}

// 256 * SDot(w, xh) + SUDot(w, xl) over the block's 32 weight bytes. off is always 0 here
// (q8_0 stores no block sums) and not subtracted, which glslc -O would keep as an ISub.
int idot_block_dot(uint u[9], uint s, uint xh[GEMV_XW], uint xl[GEMV_XW], int off) {
    int dh = 0, dl = 0;
#if GEMV_IDOT == 2
    // x is laid out like these 9 words (gemv_idot.glsl): the bytes of d and of the next
    // block meet zeros.
    [[unroll]] for (int i = 0; i < 9; i++) {
        dh += idot_ss(u[i], xh[i], 0);
        dl += idot_su(u[i], xl[i], 0);
    }
#else
    [[unroll]] for (int i = 0; i < 8; i++) {
        uint q = gemv_funnel(u[i], u[i + 1], s);
        dh += idot_ss(q, xh[i], 0);
        dl += idot_su(q, xl[i], 0);
    }
#endif
    return dh * 256 + dl;
}

#include "gemv_idot_blocks.glsl"
#else

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
#endif
