#version 450
// GEMV for q4_0 weights (docs/FORMATS.md): 18-byte blocks of 32 weights, fp16 d then 16
// bytes qs; element j < 16 is ((qs[j] & 15) - 8) * d, element j + 16 is
// ((qs[j] >> 4) - 8) * d. k is a multiple of 32.
// y[t] = W x[t] for each of the GEMV_TOKENS rows t of x (gemv_common.glsl, "Tokens").
//
// A chunk is one block; lanes take consecutive blocks. Blocks start at even byte
// offsets only (18 bytes) and the shader must not need 8/16-bit storage
// (docs/kernels/vulkan-gemv.md, "Byte alignment"), so W is read as 32-bit words and
// each 4-byte group of qs is funnel-shifted out of two words (gemv_funnel); the shift
// is the same for every field of a block. The last word read may be the 4 bytes past
// the block: the weight buffer carries 16 bytes of slack (gemv.buffer_bytes).
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
// The integer path (gemv_idot.glsl): x quantized to int16 per block in shared memory.
// The unsigned nibbles u (0..15) go into the dots as they are and the -8 is taken out
// once per block and row through the block's sum of xq:
//   dot = 256 * SUDot(xh, u) + UDot(u, xl) - 8 * sum(xq),   y += d * s_b * dot
// (SUDot's first operand is the signed one). |256 * SUDot| <= 256 * 32 * 128 * 15 < 2^24,
// UDot <= 32 * 255 * 15, 8 * |sum| <= 8 * 32 * 32767 < 2^23: far inside int32.
#define GEMV_IDOT_SUM
#define GEMV_IDOT_SEG 16
#define GEMV_IDOT_TOKENS
#define GEMV_IDOT_XPRE_LOOP
#include "gemv_idot.glsl"

// The main loops (gemv_idot_blocks.glsl) take a block through these two.
#define GEMV_IDOT_BLOCK_BYTES 18
#define GEMV_IDOT_WORDS 5
// The row's block at byte offset o: its d, and the 5 words from the one holding qs's
// first byte (s: the shift of qs in them, 0 or 16).
float idot_block_load(uint o, out uint u[5], out uint s) {
    float d = GEMV_F16_AT(W, o);
    uint qo = o + 2u; // qs
    s = gemv_half_shift(qo);
    uint w = qo >> 2u;
    [[unroll]] for (int i = 0; i < 5; i++) u[i] = W[w + uint(i)];
    return d;
}

// 256 * SUDot(xh, u) + UDot(u, xl) - off over the block's 32 nibbles (off = 8 * sum xq).
int idot_block_dot(uint u[5], uint s, uint xh[GEMV_XW], uint xl[GEMV_XW], int off) {
#if GEMV_IDOT == 2
    // x is laid out like these 5 words, low nibbles then high (gemv_idot.glsl): the
    // nibbles of d and of the next block meet zeros.
    int dh = 0;
    uint dl = 0u;
    [[unroll]] for (int i = 0; i < 5; i++) {
        uint lo = u[i] & 0x0F0F0F0Fu, hi = (u[i] >> 4u) & 0x0F0F0F0Fu;
        dh += idot_su(xh[i], lo, 0) + idot_su(xh[5 + i], hi, 0);
        dl += idot_uu(lo, xl[i], 0) + idot_uu(hi, xl[5 + i], 0);
    }
#else
    uvec4 q = uvec4(gemv_funnel(u[0], u[1], s), gemv_funnel(u[1], u[2], s),
                    gemv_funnel(u[2], u[3], s), gemv_funnel(u[3], u[4], s));
    uvec4 lo = q & 0x0F0F0F0Fu, hi = (q >> 4u) & 0x0F0F0F0Fu;
    int dh = idot_su(xh[0], lo.x, 0) + idot_su(xh[1], lo.y, 0) +
             idot_su(xh[2], lo.z, 0) + idot_su(xh[3], lo.w, 0) +
             idot_su(xh[4], hi.x, 0) + idot_su(xh[5], hi.y, 0) +
             idot_su(xh[6], hi.z, 0) + idot_su(xh[7], hi.w, 0);
    uint dl = idot_uu(lo.x, xl[0], 0) + idot_uu(lo.y, xl[1], 0) +
              idot_uu(lo.z, xl[2], 0) + idot_uu(lo.w, xl[3], 0) +
              idot_uu(hi.x, xl[4], 0) + idot_uu(hi.y, xl[5], 0) +
              idot_uu(hi.z, xl[6], 0) + idot_uu(hi.w, xl[7], 0);
#endif
    return dh * 256 + int(dl) - off;
}

#include "gemv_idot_blocks.glsl"
#else

// The block at byte offset o decoded: its 32 weights q_j - 8 (the scale d not yet
// applied) as eight vec4 in x's order, and d.
float decode_block(uint o, out vec4 wq[8]) {
    float d = GEMV_F16_AT(W, o);
    uint qo = o + 2u; // qs
    uint s = gemv_half_shift(qo), w = qo >> 2u;
    uint u0 = W[w], u1 = W[w + 1u], u2 = W[w + 2u], u3 = W[w + 3u], u4 = W[w + 4u];
    uvec4 q = uvec4(gemv_funnel(u0, u1, s), gemv_funnel(u1, u2, s), gemv_funnel(u2, u3, s),
                    gemv_funnel(u3, u4, s));
    uvec4 lo = q & 0x0F0F0F0Fu, hi = (q >> 4u) & 0x0F0F0F0Fu;
    wq[0] = gemv_bytes(lo.x, 8.0); wq[1] = gemv_bytes(lo.y, 8.0);
    wq[2] = gemv_bytes(lo.z, 8.0); wq[3] = gemv_bytes(lo.w, 8.0);
    wq[4] = gemv_bytes(hi.x, 8.0); wq[5] = gemv_bytes(hi.y, 8.0);
    wq[6] = gemv_bytes(hi.z, 8.0); wq[7] = gemv_bytes(hi.w, 8.0);
    return d;
}

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint nb = P.k >> 5u;   // blocks per row
    uint row_bytes = nb * 18u;
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
            d[r] = decode_block(base[r] + 18u * b, wq[r]);
        [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
            vec4 xs[8];
            [[unroll]] for (int i = 0; i < 8; i++) xs[i] = X[gemv_xrow(t) + 8u * b + uint(i)];
            [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                float sum = dot(wq[r][0], xs[0]) + dot(wq[r][1], xs[1]) + dot(wq[r][2], xs[2]) +
                            dot(wq[r][3], xs[3]) + dot(wq[r][4], xs[4]) + dot(wq[r][5], xs[5]) +
                            dot(wq[r][6], xs[6]) + dot(wq[r][7], xs[7]);
                acc[GEMV_AT(t, r)] += d[r] * sum;
            }
        }
    }
    gemv_finish(acc, tid, row0);
}
#endif
