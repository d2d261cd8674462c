// linear_gemv_decode.glsl: the memory-bound route's weight chunks (linear_gemv.comp).
//
// A chunk is 32 weights of one row, k = 32c .. 32c+31: inside one scale group of every
// quantized format but NVFP4 (two groups of 16). lin_chunk_load issues its loads (one
// 16-byte code word, two for w8, plus the high bits and the scale), so a lane has every
// row's loads in flight before it decodes any; lin_chunk_part decodes its sub-chunk s
// (weights 8s .. 8s+7) into even and odd elements, matching lin_bf16x8's x order.
//
// q4/q5/q6 decode a code c (< 128) to f = 0.5 + c/256 with one mask-and-or per weight
// (the byte at bits 16-22 of the float 0.5), w8 its byte b = code + 128 to f = 1 + b/256;
// lin_chunk_finish then takes sum((c - off) x) = A * sum(f x) - B * sum(x), with A, B
// folded into the scale. That saves the float subtraction the exact 2^23 trick needs
// per weight, for one sum of x per chunk shared by all rows. The cancellation costs at
// most about 8 of fp32's 24 bits, far inside the accuracy rule (docs/kernels/vulkan-linear.md).
#ifndef LINEAR_GEMV_DECODE_GLSL
#define LINEAR_GEMV_DECODE_GLSL
#if LIN_FMT != LIN_BF16 // bf16 reads its 16-byte words directly

struct LinChunk {
    uvec4 q;   // codes (w8: the first 16 of 32)
#if LIN_FMT == LIN_W8
    uvec4 q2;  // w8: the other 16 codes
#endif
    uvec2 h;   // q5: h.x fifth bits; q6: 64 bits of high pairs
    uint sw;   // the scale word
};

// Component i of v by selects rather than a dynamic index, which a driver may put in
// local memory when i is not a constant.
uint lin_pick(uvec4 v, uint i) { return i == 0u ? v.x : i == 1u ? v.y : i == 2u ? v.z : v.w; }

// Four bytes (< 128) of u as 0.5 + b/256.
vec4 lin_half_bytes(uint u) {
    uvec4 b = uvec4(u << 16u, u << 8u, u, u >> 8u) & 0x00FF0000u;
    return uintBitsToFloat(b | 0x3F000000u);
}

// Four bytes of u as 1 + b/256.
vec4 lin_one_bytes(uint u) {
    uvec4 b = uvec4(u << 15u, u << 7u, u >> 1u, u >> 9u) & 0x007F8000u;
    return uintBitsToFloat(b | 0x3F800000u);
}

LinChunk lin_chunk_load(uint n, uint c, uint kp) {
    LinChunk ch;
    ch.h = uvec2(0u);
#if LIN_FMT == LIN_W8
    uint base = n * (kp >> 4u) + 2u * c; // 16-byte words: K_pad / 16 per row
    ch.q = W[base];
    ch.q2 = W[base + 1u];
    ch.sw = LIN_WORD(lin_scales(kp) + n * (kp >> 6u) + (c >> 1u));
#else
    ch.q = W[n * (kp >> 5u) + c];
#if LIN_FMT == LIN_Q5
    ch.h.x = LIN_WORD(lin_plane2(kp) + n * lin_high_row(kp) + c);
#elif LIN_FMT == LIN_Q6
    uint hw = lin_plane2(kp) + n * lin_high_row(kp) + 2u * c;
    ch.h = uvec2(LIN_WORD(hw), LIN_WORD(hw + 1u));
#endif
#if LIN_FMT == LIN_NVFP4
    ch.sw = LIN_WORD(lin_scales(kp) + n * (kp >> 6u) + (c >> 1u));
#else
    ch.sw = LIN_WORD(lin_scales(kp) + n * (kp >> 7u) + (c >> 2u));
#endif
#endif
    return ch;
}

// The two code words of sub-chunk s (weights 8s .. 8s+7), bytes in the order the decoders
// and the integer route's x words (linear_dot.glsl) take them: q4/q5/q6 the codes (< 64,
// high bits merged) of the even elements in c0 and of the odd ones in c1; w8 the signed
// codes of elements 8s .. 8s+3 in c0 and 8s+4 .. 8s+7 in c1. (NVFP4 has no such words.)
#if LIN_FMT != LIN_NVFP4
void lin_chunk_codes(LinChunk ch, uint s, out uint c0, out uint c1) {
#if LIN_FMT == LIN_W8
    uvec4 q = s < 2u ? ch.q : ch.q2;
    c0 = lin_pick(q, 2u * (s & 1u));
    c1 = lin_pick(q, 2u * (s & 1u) + 1u);
#else
    uint v = lin_pick(ch.q, s);
    c0 = v & 0x0F0F0F0Fu;
    c1 = (v >> 4u) & 0x0F0F0F0Fu;
#if LIN_FMT == LIN_Q5
    uint hb = ch.h.x >> (8u * s);
    c0 |= lin_q5_spread(hb);
    c1 |= lin_q5_spread(hb >> 1u);
#elif LIN_FMT == LIN_Q6
    uint h = (s < 2u ? ch.h.x : ch.h.y) >> (16u * (s & 1u));
    c0 |= lin_q6_spread(h);
    c1 |= lin_q6_spread(h >> 2u);
#endif
#endif
}
#endif

// Weights 8s .. 8s+7 of the chunk: q4/q5/q6 as 0.5 + c/256, w8 as 1 + (code + 128)/256,
// NVFP4 as the exact E2M1 value times 2^-14 (the scale carries 2^14).
void lin_chunk_part(LinChunk ch, uint s, out vec4 even, out vec4 odd) {
#if LIN_FMT == LIN_NVFP4
    uint v = lin_pick(ch.q, s);
    vec2 p0 = unpackHalf2x16(lin_e2m1_pair(v, 0u)), p1 = unpackHalf2x16(lin_e2m1_pair(v, 1u));
    vec2 p2 = unpackHalf2x16(lin_e2m1_pair(v, 2u)), p3 = unpackHalf2x16(lin_e2m1_pair(v, 3u));
    even = vec4(p0.x, p2.x, p0.y, p2.y);
    odd = vec4(p1.x, p3.x, p1.y, p3.y);
#else
    uint c0, c1;
    lin_chunk_codes(ch, s, c0, c1);
#if LIN_FMT == LIN_W8
    vec4 a = lin_one_bytes(c0 ^ 0x80808080u), b = lin_one_bytes(c1 ^ 0x80808080u);
    even = vec4(a.x, a.z, b.x, b.z);
    odd = vec4(a.y, a.w, b.y, b.w);
#else
    even = lin_half_bytes(c0);
    odd = lin_half_bytes(c1);
#endif
#endif
}

// The chunk's fp16 group scale (q4/q5/q6: groups of 64, two chunks each; w8: of 32).
#if LIN_FMT != LIN_NVFP4
float lin_chunk_d(LinChunk ch, uint c) {
#if LIN_FMT == LIN_W8
    return lin_half(ch.sw, c & 1u);
#else
    return lin_half(ch.sw, (c >> 1u) & 1u);
#endif
}
#endif

// (A, B) with sum((c - off) * x) * scale = A * sum(f * x) - B * sum(x) over the chunk.
vec2 lin_chunk_scale(LinChunk ch, uint c) {
#if LIN_FMT == LIN_NVFP4
    return vec2(0.0); // two scales per chunk: lin_nvfp4_scales
#else
    float s = lin_chunk_d(ch, c);
#if LIN_FMT == LIN_W8
    return vec2(256.0 * s, 384.0 * s);
#else
    return vec2(256.0 * s, (128.0 + float(LIN_CODE_OFFSET)) * s);
#endif
#endif
}

#if LIN_FMT == LIN_NVFP4
// The E4M3 scales of the chunk's two 16-groups, times 2^14.
vec2 lin_nvfp4_scales(LinChunk ch, uint c) {
    uint b = ch.sw >> (16u * (c & 1u));
    return vec2(lin_e4m3(b & 0xFFu), lin_e4m3((b >> 8u) & 0xFFu)) * 16384.0;
}
#endif

#endif
#endif
