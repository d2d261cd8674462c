// linear_formats.glsl: the planar weight formats of docs/FORMATS.md ("Planar group
// formats") for the Linear kernels: where each plane starts, and lin_w8, the exact fp32
// values of 8 consecutive weights of a row. Needs linear_common.glsl first.
//
// Plane bases and row strides are in 32-bit words. K_pad = align_up(K, 128), so every
// code and high-bit plane row is a whole number of 16-byte words and every scale plane
// row a whole number of 32-bit words (K_pad / 32 bytes at least).
#ifndef LINEAR_FORMATS_GLSL
#define LINEAR_FORMATS_GLSL

uint lin_kpad() { return (P.K + 127u) & ~127u; }

// What a code stands for is code - LIN_CODE_OFFSET (times the group scale); w8's signed
// codes stand for themselves.
#if LIN_FMT == LIN_Q4
#define LIN_CODE_OFFSET 8
#elif LIN_FMT == LIN_Q5
#define LIN_CODE_OFFSET 16
#elif LIN_FMT == LIN_Q6
#define LIN_CODE_OFFSET 32
#else
#define LIN_CODE_OFFSET 0
#endif

// The scale the kernels multiply every finished sum by: the NVFP4 tensor scale, which
// lin_w8 leaves out (so the fp16 weights of the tensor-core route stay exact), else 1.
#if LIN_FMT == LIN_NVFP4
#define LIN_OUT_SCALE P.gscale
#else
#define LIN_OUT_SCALE 1.0
#endif

// The four bytes of u (little-endian order) as floats, minus bias: OR-ing a byte into
// the mantissa of 2^23 and subtracting 2^23 + bias is exact.
vec4 lin_bytes(uint u, float bias) {
    uvec4 b = (uvec4(u) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu;
    return uintBitsToFloat(b | 0x4B000000u) - (8388608.0 + bias);
}

// fp16 number h of a word (h = 0: bits 0-15, 1: bits 16-31).
float lin_half(uint w, uint h) { return unpackHalf2x16(w >> (h << 4u)).x; }

// E4M3 byte b as a float: its 7 low bits placed at fp16 bits 7-13 give the same
// exponent/mantissa split (subnormals included) scaled by 2^-8. 0x7F and 0xFF are NaN.
float lin_e4m3(uint b) {
    if ((b & 0x7Fu) == 0x7Fu) return uintBitsToFloat(0x7FC00000u);
    return unpackHalf2x16(((b & 0x7Fu) << 7u) | ((b & 0x80u) << 8u)).x * 256.0;
}

// E2M1 codes j and j+4 of the word u (its nibbles 0..7) as one pair of fp16 bit
// patterns (low half: code j): magnitude bits at fp16 bits 9-11, the sign at bit 15,
// which is the E2M1 value times 2^-14, its subnormal 0.5 included. Shifts by 9 - 4j and
// 12 - 4j, written as two shifts so that no count is negative.
uint lin_e2m1_pair(uint u, uint j) {
    uint t = (u >> (4u * j));
    return ((t << 9u) & 0x0E000E00u) | ((t << 12u) & 0x80008000u);
}

// Q5 fifth bits: byte hb holds bit j of element j of 8; returns the bits of the even
// (odd: hb >> 1) elements at bit 4 of bytes 0..3. Each bit 2b moves by 6b + 4; the
// stray products of the multiplication never land on the bits the mask keeps.
uint lin_q5_spread(uint hb) {
    return ((hb & 0x55u) * 0x00410410u) & 0x10101010u;
}

// Q6 high pairs: h holds bits 2j, 2j+1 for element j of 8; returns the pairs of the
// even elements (odd: h >> 2) at bits 4-5 of bytes 0..3.
uint lin_q6_spread(uint h) {
    uint x = h & 0x3333u;
    x = (x | (x << 8u)) & 0x00FF00FFu;
    x = (x | (x << 4u)) & 0x0F0F0F0Fu;
    return x << 4u;
}

// Word bases of the planes after the first (codes), and row strides, in words.
#if LIN_FMT == LIN_Q4 || LIN_FMT == LIN_Q5 || LIN_FMT == LIN_Q6 || LIN_FMT == LIN_NVFP4
uint lin_codes_row(uint kp) { return kp >> 3u; }           // K_pad / 2 bytes
uint lin_plane2(uint kp) { return P.N * (kp >> 3u); }      // after the codes
#endif
#if LIN_FMT == LIN_Q5
uint lin_high_row(uint kp) { return kp >> 5u; }            // K_pad / 8 bytes
uint lin_scales(uint kp) { return lin_plane2(kp) + P.N * (kp >> 5u); }
#elif LIN_FMT == LIN_Q6
uint lin_high_row(uint kp) { return kp >> 4u; }            // K_pad / 4 bytes
uint lin_scales(uint kp) { return lin_plane2(kp) + P.N * (kp >> 4u); }
#elif LIN_FMT == LIN_Q4 || LIN_FMT == LIN_NVFP4
uint lin_scales(uint kp) { return lin_plane2(kp); }
#elif LIN_FMT == LIN_W8
uint lin_scales(uint kp) { return P.N * (kp >> 2u); }      // after K_pad bytes per row
#endif

// The words holding weights k .. k+7 of row n (k % 8 == 0, k < K_pad; bf16: k < K, its
// rows are not padded): loaded by lin_raw8, decoded by lin_dec8, so a kernel can have
// the next slab's loads in flight while it works on the current one.
struct LinRaw8 {
    uvec4 q;  // bf16: the 8 values; else q.x the codes, q.y the high bits (q5, q6) or the
              // second code word (w8)
    uint sw;  // the scale word
};

LinRaw8 lin_raw8(uint n, uint k) {
    LinRaw8 r;
    r.q = uvec4(0u);
    r.sw = 0u;
#if LIN_FMT == LIN_BF16
    r.q = W[(n * P.K + k) >> 3u];
#else
    uint kp = lin_kpad();
#if LIN_FMT == LIN_W8
    uint base = n * (kp >> 2u) + (k >> 2u);
    r.q.x = LIN_WORD(base);
    r.q.y = LIN_WORD(base + 1u);
    r.sw = LIN_WORD(lin_scales(kp) + n * (kp >> 6u) + (k >> 6u));
#else
    r.q.x = LIN_WORD(n * lin_codes_row(kp) + (k >> 3u));
#if LIN_FMT == LIN_Q5
    r.q.y = LIN_WORD(lin_plane2(kp) + n * lin_high_row(kp) + (k >> 5u));
#elif LIN_FMT == LIN_Q6
    r.q.y = LIN_WORD(lin_plane2(kp) + n * lin_high_row(kp) + (k >> 4u));
#endif
#if LIN_FMT == LIN_NVFP4
    r.sw = LIN_WORD(lin_scales(kp) + n * (kp >> 6u) + (k >> 6u));
#else
    r.sw = LIN_WORD(lin_scales(kp) + n * (kp >> 7u) + (k >> 7u));
#endif
#endif
#endif
    return r;
}

// The exact values of the 8 weights: even elements (k, k+2, k+4, k+6) and odd ones.
// NVFP4 values leave out the tensor scale (LIN_OUT_SCALE).
void lin_dec8(LinRaw8 r, uint k, out vec4 even, out vec4 odd) {
#if LIN_FMT == LIN_BF16
    lin_bf16x8(r.q, even, odd);
#elif LIN_FMT == LIN_W8
    float s = lin_half(r.sw, (k >> 5u) & 1u);
    vec4 a = lin_bytes(r.q.x ^ 0x80808080u, 128.0), b = lin_bytes(r.q.y ^ 0x80808080u, 128.0);
    even = vec4(a.x, a.z, b.x, b.z) * s;
    odd = vec4(a.y, a.w, b.y, b.w) * s;
#elif LIN_FMT == LIN_NVFP4
    float s = lin_e4m3((r.sw >> (((k >> 4u) & 3u) << 3u)) & 0xFFu) * 16384.0;
    uint v = r.q.x;
    vec2 p0 = unpackHalf2x16(lin_e2m1_pair(v, 0u)), p1 = unpackHalf2x16(lin_e2m1_pair(v, 1u));
    vec2 p2 = unpackHalf2x16(lin_e2m1_pair(v, 2u)), p3 = unpackHalf2x16(lin_e2m1_pair(v, 3u));
    even = vec4(p0.x, p2.x, p0.y, p2.y) * s; // elements 0, 2, 4, 6
    odd = vec4(p1.x, p3.x, p1.y, p3.y) * s;  // elements 1, 3, 5, 7
#else
    uint v = r.q.x;
    uint lo = v & 0x0F0F0F0Fu, hi = (v >> 4u) & 0x0F0F0F0Fu;
#if LIN_FMT == LIN_Q5
    uint hb = (r.q.y >> (k & 24u)) & 0xFFu;
    lo |= lin_q5_spread(hb);
    hi |= lin_q5_spread(hb >> 1u);
#elif LIN_FMT == LIN_Q6
    uint h = (r.q.y >> (((k >> 3u) & 1u) << 4u)) & 0xFFFFu;
    lo |= lin_q6_spread(h);
    hi |= lin_q6_spread(h >> 2u);
#endif
    float s = lin_half(r.sw, (k >> 6u) & 1u);
    even = lin_bytes(lo, float(LIN_CODE_OFFSET)) * s;
    odd = lin_bytes(hi, float(LIN_CODE_OFFSET)) * s;
#endif
}

// Weights k .. k+7 of row n, exactly (zero for bf16 past K).
void lin_w8(uint n, uint k, out vec4 even, out vec4 odd) {
#if LIN_FMT == LIN_BF16
    if (k >= P.K) {
        even = odd = vec4(0.0);
        return;
    }
#endif
    lin_dec8(lin_raw8(n, k), k, even, odd);
}

#endif
