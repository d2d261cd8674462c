// kquant_scales.glsl: the q4_k / q5_k scale decode, shared by the GEMV kernels
// (gemv_common.glsl) and the cooperative-matrix q4_k and q5_k kernel (gemv_q4k_q5k_coop.comp).
#ifndef KQUANT_SCALES_GLSL
#define KQUANT_SCALES_GLSL

// q4_k / q5_k 6-bit scales and mins of sub-blocks 2c and 2c+1 (c = 0..3) from the
// 12 packed bytes S (header words y, z, w = S[0..3], S[4..7], S[8..11]); docs/FORMATS.md, q4_k:
//   s < 4:  sc = S[s] & 63,                         m = S[s+4] & 63
//   s >= 4: sc = (S[s+4] & 15) | ((S[s-4] >> 6) << 4), m = (S[s+4] >> 4) | ((S[s] >> 6) << 4)
// Both sub-blocks' bytes sit side by side in one 16-bit half of a word, so the two
// cases are computed two bytes at a time and chosen with a select, not a branch.
// Returns (sc[2c], sc[2c+1], m[2c], m[2c+1]) as floats.
vec4 gemv_k4_scales(uvec4 h, uint c) {
    uint sh = (c & 1u) << 4u;
    uint s0 = h.y >> sh, s1 = h.z >> sh, s2 = h.w >> sh;
    uint sc_lo = s0 & 0x3F3Fu, m_lo = s1 & 0x3F3Fu;
    uint sc_hi = (s2 & 0x0F0Fu) | ((s0 >> 2u) & 0x3030u);
    uint m_hi = ((s2 >> 4u) & 0x0F0Fu) | ((s1 >> 2u) & 0x3030u);
    bool hi = c >= 2u;
    uint sc = hi ? sc_hi : sc_lo, mn = hi ? m_hi : m_lo;
    return vec4(float(sc & 0xFFu), float(sc >> 8u), float(mn & 0xFFu), float(mn >> 8u));
}

#endif
