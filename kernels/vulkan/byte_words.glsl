// byte_words.glsl: reading the 2-byte-aligned block formats from 32-bit storage words,
// shared by the GEMV kernels (gemv_common.glsl) and the cooperative-matrix ones
// (gemv_b32_coop.comp, gemv_q6_k_coop.comp); no bindings of its own.
#ifndef BYTE_WORDS_GLSL
#define BYTE_WORDS_GLSL

// Four bytes starting `s` bits into `lo` (s = 0 or 16): how the 2-byte-aligned block
// formats (q4_0, q8_0, q6_k) read a 32-bit word at an even byte offset from 4-byte
// storage words, because the kernels must not require 8- or 16-bit storage
// (docs/kernels/vulkan-gemv.md, "Byte alignment"). The double shift keeps both shift
// counts below 32 for s = 0 and 16.
uint gemv_funnel(uint lo, uint hi, uint s) {
    return (lo >> s) | ((hi << 16u) << (16u - s));
}

// Bit position (0 or 16) of an even byte offset inside its 32-bit word.
uint gemv_half_shift(uint byte_off) {
    return (byte_off & 2u) << 3u;
}

// An fp16 stored at an even byte offset of a uint[] buffer, as a float (exact, including
// subnormals).
#define GEMV_F16_AT(buf, byte_off) \
    unpackHalf2x16((buf)[(byte_off) >> 2u] >> gemv_half_shift(byte_off)).x

// The 16 bytes at an even byte offset of a uint[] buffer: five words funnel-shifted (the
// fifth may lie past the row: the weight buffers carry 16 bytes of slack).
uvec4 gemv_funnel16(uint u0, uint u1, uint u2, uint u3, uint u4, uint s) {
    return uvec4(gemv_funnel(u0, u1, s), gemv_funnel(u1, u2, s), gemv_funnel(u2, u3, s), gemv_funnel(u3, u4, s));
}
#define GEMV_LOAD16(buf, byte_off) \
    gemv_funnel16((buf)[(byte_off) >> 2u], (buf)[((byte_off) >> 2u) + 1u], (buf)[((byte_off) >> 2u) + 2u], \
                  (buf)[((byte_off) >> 2u) + 3u], (buf)[((byte_off) >> 2u) + 4u], gemv_half_shift(byte_off))

#endif
