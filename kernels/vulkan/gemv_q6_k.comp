#version 450
// GEMV for q6_k weights (docs/FORMATS.md): 210-byte super-blocks of 256 weights: bytes
// 0..127 ql, 128..191 qh, 192..207 16 signed 8-bit scales, 208..209 fp16 d. Weight
// e = 128h + 32k + l (h < 2, k < 4, l < 32): low 4 bits from ql[64h + 32(k&1) + l]
// (low nibble for k < 2, high for k >= 2), high 2 bits (qh[32h + l] >> 2k) & 3,
// q = (low | high << 4) - 32, value (d * scales[e/16]) * q. k is a multiple of 256.
// y[t] = W x[t] for each of the GEMV_TOKENS rows t of x (gemv_common.glsl, "Tokens").
//
// A chunk is 1/8 of a super-block, v = 0..7, h = v/4, j = v%4: the 32 weights with
// l = 8j..8j+7 and k = 0..3. They need 8 bytes of ql at 64h+8j, 8 at 64h+32+8j, 8 of
// qh at 128+32h+8j, the 8 scales at 192+8h and d. A super-block is 210 bytes, so it
// starts at an even byte offset only; W is read as 32-bit words and every field is
// funnel-shifted out of them (one shift per super-block). The last word read may be
// the 4 bytes past the super-block: the weight buffer carries 16 bytes of slack
// (gemv.buffer_bytes). Each row's chunk is decoded once and used for every token.
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uint W[]; };

// The 8 bytes at byte offset off (even), whose half-word shift is s.
uvec2 load8(uint off, uint s) {
    uint w = off >> 2u;
    uint u0 = W[w], u1 = W[w + 1u], u2 = W[w + 2u];
    return uvec2(gemv_funnel(u0, u1, s), gemv_funnel(u1, u2, s));
}

// Signed byte `b` (0..3) of w as a float.
float sbyte(uint w, uint b) {
    return float(int(w << (24u - 8u * b)) >> 24);
}

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint nsb = P.k >> 8u;  // super-blocks per row
    uint nchunks = nsb * 8u;
    uint row_bytes = nsb * 210u;
    uint base[GEMV_NR];
    float acc[GEMV_ACC];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++)
        base[r] = gemv_clamp_row(row0 + uint(r)) * row_bytes;
    [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
    const uint T = uint(GEMV_T);
    for (uint ch = tid % T; ch < nchunks; ch += T) {
        uint sb = ch >> 3u, v = ch & 7u, h = v >> 2u, j = v & 3u;
        uint sbyte0 = j >> 1u; // scale byte of k = 0 inside the 8-byte scale window
        // Each row's chunk decoded: q - 32 as floats (two vec4 per k), the scale of each
        // k, and d.
        vec4 wq[GEMV_NR][8];
        float scl[GEMV_NR][4];
        float d[GEMV_NR];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
            uint o = base[r] + sb * 210u;
            uint s = gemv_half_shift(o);
            uvec2 ql0 = load8(o + 64u * h + 8u * j, s);        // k = 0, 2
            uvec2 ql1 = load8(o + 64u * h + 32u + 8u * j, s);  // k = 1, 3
            uvec2 qh = load8(o + 128u + 32u * h + 8u * j, s);
            uvec2 sc = load8(o + 192u + 8u * h, s);
            d[r] = GEMV_F16_AT(W, o + 208u);
            [[unroll]] for (int kk = 0; kk < 4; kk++) {
                uvec2 src = (kk & 1) != 0 ? ql1 : ql0;
                uvec2 low = (kk >= 2 ? (src >> 4u) : src) & 0x0F0F0F0Fu;
                uvec2 q = low | (((qh >> (2u * uint(kk))) & 0x03030303u) << 4u);
                wq[r][2 * kk] = gemv_bytes(q.x, 32.0);
                wq[r][2 * kk + 1] = gemv_bytes(q.y, 32.0);
                uint scw = kk >= 2 ? sc.y : sc.x;
                scl[r][kk] = sbyte(scw, 2u * uint(kk & 1) + sbyte0);
            }
        }
        [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
            // x of the chunk: for each k, the 8 weights at 128h + 32k + 8j.
            uint xb = gemv_xrow(t) + sb * 64u + 32u * h + 2u * j;
            vec4 xs[8];
            [[unroll]] for (int kk = 0; kk < 4; kk++) {
                xs[2 * kk] = X[xb + 8u * uint(kk)];
                xs[2 * kk + 1] = X[xb + 8u * uint(kk) + 1u];
            }
            [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                float sum = 0.0;
                [[unroll]] for (int kk = 0; kk < 4; kk++) {
                    float part = dot(wq[r][2 * kk], xs[2 * kk]) +
                                 dot(wq[r][2 * kk + 1], xs[2 * kk + 1]);
                    sum += scl[r][kk] * part;
                }
                acc[GEMV_AT(t, r)] += d[r] * sum;
            }
        }
    }
    gemv_finish(acc, tid, row0);
}
