#version 450
// GEMV for q5_k weights (docs/FORMATS.md): 176-byte super-blocks of 256 weights = 11 uvec4:
// [0] fp16 d, fp16 dmin, 12 bytes of packed 6-bit scales/mins; [1..2] 32 bytes qh;
// [3..10] 128 bytes qs. The low 4 bits of q come from qs as in q4_k, the fifth is
// (qh[e%32] >> (e/32)) & 1; value (d*sc[s]) * q - dmin*m[s]. k is a multiple of 256,
// so rows are 16-byte aligned.
// y[t] = W x[t] for each of the GEMV_TOKENS rows t of x (gemv_common.glsl, "Tokens").
//
// A chunk is one qs uvec4 (v = 0..7): 32 weights, 16 of sub-block 2c (low nibbles) and
// 16 of sub-block 2c+1 (high nibbles), c = v/2, at l = 16(v&1) + 0..15 within their
// sub-blocks; their fifth bits are bits 2c and 2c+1 of qh[l], which is exactly qh
// uvec4 (v & 1). Three 16-byte loads per 32 weights (the header from L1), decoded once
// per row and used for every token.
//
// -DGEMV_IDOT=1 (with GEMV_XB) compiles the integer-dot-product kernel instead (q4_k's, the
// fifth bit added to each code; any GEMV_TOKENS). Without GEMV_IDOT, or with 0, the float
// kernel below.
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

#ifndef GEMV_IDOT
#define GEMV_IDOT 0
#endif

#if GEMV_IDOT
#if GEMV_IDOT != 1
#error "q5_k has one integer layout, GEMV_IDOT=1: its rows are 16-byte aligned, nothing to funnel"
#endif
#if (GEMV_XB % 8) != 0
#error "q5_k's GEMV_XB must be a multiple of 8 (whole super-blocks per slice of x)"
#endif
// The integer path: q4_k's (gemv_idot.glsl, gemv_idot_kquant.glsl; docs/kernels/vulkan-gemv.md,
// "q5_k"), with each code's fifth bit OR-ed into its byte: bit 2c (2c + 1) of qh byte l is
// the fifth bit of element l of sub-block 2c (2c + 1), and qh words j (uvec4 1 and 2) line up
// with the pair's qs words j. Codes 0..31, so no shift (GEMV_K_HI_SHIFT 0). |dot| <= 32 * 31 *
// 32767 < 2^25: its conversion to float may round by one ulp (6e-8 of it), inside the bound.
#define GEMV_IDOT_SUM
#define GEMV_IDOT_PAIRS
#define GEMV_IDOT_TOKENS
#define GEMV_IDOT_XPRE_LOOP
#include "gemv_idot.glsl"
#define GEMV_K_SB_UVEC4 11
#define GEMV_K_HI_SHIFT 0
void gemv_k_codes(uint sbw, uint c, out uint lo[8], out uint hi[8]) {
    uvec4 h0 = W[sbw + 1u], h1 = W[sbw + 2u], q0 = W[sbw + 3u + 2u * c], q1 = W[sbw + 4u + 2u * c];
    uint u[8] = uint[8](q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w);
    uint qh[8] = uint[8](h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w);
    uint bl = 2u * c, bh = bl + 1u;
    [[unroll]] for (int j = 0; j < 8; j++) {
        lo[j] = (u[j] & 0x0F0F0F0Fu) | (((qh[j] >> bl) & 0x01010101u) << 4u);
        hi[j] = ((u[j] >> 4u) & 0x0F0F0F0Fu) | (((qh[j] >> bh) & 0x01010101u) << 4u);
    }
}
// Half h of that chunk (GEMV_KHALF): elements 16h .. 16h + 15, one qs uvec4 and one qh uvec4.
void gemv_k_codes_half(uint sbw, uint c, uint h, out uint lo[4], out uint hi[4]) {
    uvec4 qh4 = W[sbw + 1u + h], q = W[sbw + 3u + 2u * c + h];
    uint u[4] = uint[4](q.x, q.y, q.z, q.w);
    uint qh[4] = uint[4](qh4.x, qh4.y, qh4.z, qh4.w);
    uint bl = 2u * c, bh = bl + 1u;
    [[unroll]] for (int j = 0; j < 4; j++) {
        lo[j] = (u[j] & 0x0F0F0F0Fu) | (((qh[j] >> bl) & 0x01010101u) << 4u);
        hi[j] = ((u[j] >> 4u) & 0x0F0F0F0Fu) | (((qh[j] >> bh) & 0x01010101u) << 4u);
    }
}
#include "gemv_idot_kquant.glsl"

void main() {
    gemv_idot_k_main();
}
#else

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint nsb = P.k >> 8u;  // super-blocks per row
    uint nchunks = nsb * 8u;
    uint base[GEMV_NR];
    float acc[GEMV_ACC];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++)
        base[r] = gemv_clamp_row(row0 + uint(r)) * nsb * 11u;
    [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
    const uint T = uint(GEMV_T);
    for (uint ch = tid % T; ch < nchunks; ch += T) {
        uint sb = ch >> 3u, v = ch & 7u, c = v >> 1u;
        uint bl = 2u * c, bh = bl + 1u; // qh bit of the low / high nibble's sub-block
        // Each row's chunk decoded: 5-bit values as floats, d, dmin, scales and mins.
        vec4 wl[GEMV_NR][4], wh[GEMV_NR][4];
        vec2 dd[GEMV_NR];
        vec4 sm[GEMV_NR];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
            uint sbw = base[r] + sb * 11u;
            uvec4 h = W[sbw], qh = W[sbw + 1u + (v & 1u)], q = W[sbw + 3u + v];
            dd[r] = vec2(unpackHalf2x16(h.x)); // d, dmin
            sm[r] = gemv_k4_scales(h, c);
            uvec4 lo = (q & 0x0F0F0F0Fu) | (((qh >> bl) & 0x01010101u) << 4u);
            uvec4 hi = ((q >> 4u) & 0x0F0F0F0Fu) | (((qh >> bh) & 0x01010101u) << 4u);
            wl[r][0] = gemv_bytes(lo.x, 0.0); wl[r][1] = gemv_bytes(lo.y, 0.0);
            wl[r][2] = gemv_bytes(lo.z, 0.0); wl[r][3] = gemv_bytes(lo.w, 0.0);
            wh[r][0] = gemv_bytes(hi.x, 0.0); wh[r][1] = gemv_bytes(hi.y, 0.0);
            wh[r][2] = gemv_bytes(hi.z, 0.0); wh[r][3] = gemv_bytes(hi.w, 0.0);
        }
        [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
            uint xb = gemv_xrow(t) + sb * 64u + 16u * c + 4u * (v & 1u);
            vec4 xl[4], xh[4];
            [[unroll]] for (int i = 0; i < 4; i++) {
                xl[i] = X[xb + uint(i)];
                xh[i] = X[xb + 8u + uint(i)];
            }
            vec4 ones = vec4(1.0);
            float sxl = dot(xl[0] + xl[1] + xl[2] + xl[3], ones);
            float sxh = dot(xh[0] + xh[1] + xh[2] + xh[3], ones);
            [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                float ql = dot(wl[r][0], xl[0]) + dot(wl[r][1], xl[1]) + dot(wl[r][2], xl[2]) +
                           dot(wl[r][3], xl[3]);
                float qhs = dot(wh[r][0], xh[0]) + dot(wh[r][1], xh[1]) + dot(wh[r][2], xh[2]) +
                            dot(wh[r][3], xh[3]);
                acc[GEMV_AT(t, r)] += dd[r].x * (sm[r].x * ql + sm[r].y * qhs) -
                                      dd[r].y * (sm[r].z * sxl + sm[r].w * sxh);
            }
        }
    }
    gemv_finish(acc, tid, row0);
}
#endif
