// linear_dot.glsl: the integer-dot Linear route (linear_gemv.comp with LIN_DOT = 1, q4, q5,
// q6 and w8; docs/kernels/vulkan-linear.md, "Route dot"). Each weight's code byte meets x
// through packed 4x8-bit dots (dp4a on NVIDIA) instead of a decode to float and an FMA.
//
// x is quantized per lane, chunk (32 elements) and row of x, in registers: one power-of-two
// scale sx = 2^(e - 141) from the exponent field e of the chunk's max|x| (at least 15), so
// max|x| / sx lies in [2^14, 2^15) and q = round(x / sx) is an int16; elements within 2^7
// of the maximum are exact (bf16 has 8 significant bits), the others are off by at most
// sx / 2. This is the CUDA dot route's quantization (docs/kernels/cuda-linear.md,
// "Integer-dot route"), so its accuracy argument holds here. q is split into a signed
// high byte and an unsigned low byte, q = 256 h + l: one code word meets two x words.
// An infinity or NaN in the chunk makes sx NaN, so the rows' y are NaN, as the reference's.
#ifndef LINEAR_DOT_GLSL
#define LINEAR_DOT_GLSL
#include "idot_ops.glsl"

#if LIN_FMT == LIN_NVFP4 || LIN_FMT == LIN_BF16
#error "the integer-dot route takes q4, q5, q6 and w8"
#endif
// q6: LIN_Q6_SPLIT = 1 dots the nibbles and the high pairs apart, sum = sum(nib x) +
// 16 sum(pair x), the pairs taken from the high plane with a shift and a mask per 4 (x
// packed a second time in their order) instead of spread into the code bytes
// (lin_q6_spread, two shift-or-mask steps a word); 0 merges them first.
#if LIN_FMT == LIN_Q6 && !defined(LIN_Q6_SPLIT)
#error "LIN_Q6_SPLIT must be defined for q6 (1: nibbles and high pairs dotted apart, 0: merged)"
#endif
#if LIN_FMT == LIN_Q6 && LIN_Q6_SPLIT
#define LIN_SPLIT 1
#else
#define LIN_SPLIT 0
#endif

// A chunk of x as bytes: component s of h0/l0 and h1/l1 meets sub-chunk s's code words
// c0 and c1 (lin_chunk_codes: q4/q5/q6 even and odd elements, w8 two runs of 4).
struct LinXq {
    uvec4 h0, h1; // high bytes of q (signed)
    uvec4 l0, l1; // low bytes of q (unsigned)
#if LIN_SPLIT
    // the same in the high pairs' order: component k of ph0/pl0 holds elements k, k+4,
    // k+8, k+12, of ph1/pl1 those plus 16
    uvec4 ph0, ph1, pl0, pl1;
#endif
    int sum;      // sum of q over the chunk (for the code offset)
    float sx;     // the scale
};

// The int16 codes in the low halves of a, b, c, d as four bytes in that order: the high
// bytes into h, the low bytes into l.
void lin_pack4(uint a, uint b, uint c, uint d, out uint h, out uint l) {
    uint p = (a & 0xFFFFu) | (c << 16u), q = (b & 0xFFFFu) | (d << 16u);
    l = (p & 0x00FF00FFu) | ((q << 8u) & 0xFF00FF00u);
    h = ((p >> 8u) & 0x00FF00FFu) | (q & 0xFF00FF00u);
}

// x[t][32c .. 32c + 31], zero past K and for t >= T (rows a kernel must not read).
LinXq lin_xq(uint t, uint c, uint T) {
    uvec4 v[4];
    // max|x| on the bf16 bits: magnitudes order as integers, and NaN and infinity (exponent
    // field 255) come out on top, which a float max would not promise for NaN.
    uvec4 mh = uvec4(0u), ml = uvec4(0u);
    [[unroll]] for (int s = 0; s < 4; s++) {
        v[s] = t < T ? lin_x8(t, 32u * c + 8u * uint(s)) : uvec4(0u);
        mh = max(mh, v[s] & 0x7FFF0000u);
        ml = max(ml, v[s] & 0x7FFFu);
    }
    uint m = max(max(max(mh.x, mh.y), max(mh.z, mh.w)) >> 16u, max(max(ml.x, ml.y), max(ml.z, ml.w)));
    uint e = max(m >> 7u, 15u);
    float mul = uintBitsToFloat((268u - e) << 23u); // 1 / sx = 2^(141 - e)
    LinXq r;
    r.sx = e == 255u ? uintBitsToFloat(0x7FC00000u) : uintBitsToFloat((e - 14u) << 23u);
    // x * mul is exact (a power of two times 8 significant bits, below 2^15); adding 1.5 * 2^23
    // rounds it to an integer (to nearest even) held in the low mantissa bits, two's complement.
    const float MAGIC = 12582912.0;
    uvec4 qe[4], qo[4]; // the codes of sub-chunk s's even and odd elements
    [[unroll]] for (int s = 0; s < 4; s++) {
        vec4 ev, od;
        lin_bf16x8(v[s], ev, od);
        qe[s] = floatBitsToUint(ev * mul + MAGIC);
        qo[s] = floatBitsToUint(od * mul + MAGIC);
#if LIN_FMT == LIN_W8
        lin_pack4(qe[s].x, qo[s].x, qe[s].y, qo[s].y, r.h0[s], r.l0[s]);
        lin_pack4(qe[s].z, qo[s].z, qe[s].w, qo[s].w, r.h1[s], r.l1[s]);
#else
        lin_pack4(qe[s].x, qe[s].y, qe[s].z, qe[s].w, r.h0[s], r.l0[s]);
        lin_pack4(qo[s].x, qo[s].y, qo[s].z, qo[s].w, r.h1[s], r.l1[s]);
#endif
    }
#if LIN_SPLIT
    // element 8s + j is qe[s][j / 2] (j even) or qo[s][j / 2]; k and k + 4 have one parity
    [[unroll]] for (int k = 0; k < 4; k++) {
        uvec4 a0 = (k & 1) == 0 ? qe[0] : qo[0], a1 = (k & 1) == 0 ? qe[1] : qo[1];
        uvec4 a2 = (k & 1) == 0 ? qe[2] : qo[2], a3 = (k & 1) == 0 ? qe[3] : qo[3];
        int i = k >> 1;
        lin_pack4(a0[i], a0[i + 2], a1[i], a1[i + 2], r.ph0[k], r.pl0[k]);
        lin_pack4(a2[i], a2[i + 2], a3[i], a3[i + 2], r.ph1[k], r.pl1[k]);
    }
#endif
#if LIN_CODE_OFFSET != 0
    int hsum = 0;
    uint lsum = 0u;
    [[unroll]] for (int s = 0; s < 4; s++) {
        hsum += idot_ss(r.h0[s], 0x01010101u, 0) + idot_ss(r.h1[s], 0x01010101u, 0);
        lsum += idot_uu(r.l0[s], 0x01010101u, 0) + idot_uu(r.l1[s], 0x01010101u, 0);
    }
    r.sum = 256 * hsum + int(lsum);
#else
    r.sum = 0;
#endif
    return r;
}

// sum over the chunk of (code - LIN_CODE_OFFSET) * q, exactly: |code| <= 128 and |q| < 2^15, so
// every partial stays below 32 * 2^7 * 2^15 = 2^27.
int lin_dot_chunk(LinChunk ch, LinXq x) {
    int ih = 0;
    uint il = 0u;
    int is = 0;
#if LIN_SPLIT
    // the high pairs: element 4m + k of each 16 at bits 8m + 2k of its word
    int ph = 0;
    uint pl = 0u;
    [[unroll]] for (uint k = 0u; k < 4u; k++) {
        uint p0 = (ch.h.x >> (2u * k)) & 0x03030303u, p1 = (ch.h.y >> (2u * k)) & 0x03030303u;
        ph += idot_su(x.ph0[k], p0, 0) + idot_su(x.ph1[k], p1, 0);
        pl += idot_uu(p0, x.pl0[k], 0) + idot_uu(p1, x.pl1[k], 0);
    }
    ih += 16 * ph;
    il += 16u * pl;
#endif
    [[unroll]] for (uint s = 0u; s < 4u; s++) {
        uint c0, c1;
#if LIN_SPLIT
        uint v = lin_pick(ch.q, s);
        c0 = v & 0x0F0F0F0Fu;
        c1 = (v >> 4u) & 0x0F0F0F0Fu;
#else
        lin_chunk_codes(ch, s, c0, c1);
#endif
#if LIN_FMT == LIN_W8
        ih += idot_ss(c0, x.h0[s], 0) + idot_ss(c1, x.h1[s], 0);
        is += idot_su(c0, x.l0[s], 0) + idot_su(c1, x.l1[s], 0);
#else
        ih += idot_su(x.h0[s], c0, 0) + idot_su(x.h1[s], c1, 0);
        il += idot_uu(c0, x.l0[s], 0) + idot_uu(c1, x.l1[s], 0);
#endif
    }
    return 256 * ih + is + int(il) - LIN_CODE_OFFSET * x.sum;
}

#endif
