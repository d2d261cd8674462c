#version 450
// The f16 (COOP_FMT=6) and bf16 (7) GEMV for T = 1..8 rows of x on fp16 cooperative matrices
// with fp32 results (docs/kernels/vulkan-gemv.md, "The dense formats on cooperative
// matrices"; the shared parts: coop_common.glsl). x arrives from gemv_dense_coop_xprep.comp
// as f16 hi + lo of x / s_t per token (s_t a power of two), so C = W (hi + lo) accumulates
// as a matrix over all of the slice's k and y = s_t C at the end: no per-step work on the
// components. Per step of 16 k each lane stages 8 weights of its row (16 bytes) into a
// 16-byte aligned shared row; bf16 weights become f16 times 2^8 there (exact down to
// |w| >= 2^-22, 2^-33 absolute below), which y divides out. COOP_U steps are loaded
// before any is staged. k is a multiple of 16.
#extension GL_GOOGLE_include_directive : require
#define COOP_FLOAT 1
#include "coop_common.glsl"

#if !defined(COOP_FMT) || (COOP_FMT != 6 && COOP_FMT != 7) || !defined(COOP_U)
#error "COOP_FMT (6 f16, 7 bf16) and COOP_U must be defined (lib/gpubench/gemv_vulkan.lua)"
#endif
#if COOP_U < 1 || COOP_U > 8
#error "COOP_U must be in 1..8"
#endif
#ifndef COOP_DIRECT
#define COOP_DIRECT 0 // 1: f16's A loaded from W itself, no stage (m a multiple of 16)
#endif
#if COOP_DIRECT && COOP_FMT != 6
#error "COOP_DIRECT is f16's: bf16 is converted on its way into the stage"
#endif
#if !COOP_EMULATE
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif

#define BF16 (COOP_FMT == 7)

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

#if !COOP_DIRECT
shared uvec4 stage_[SGS * COOP_U * COOP_STAGE];
#endif

#if !COOP_EMULATE
// A (16 rows x 16 k) from abuf[at], astride uvec4s a row: the stage, or W itself (COOP_DIRECT)
#define COOP_PRODUCT16(c, abuf, at, astride, k0, n8) { \
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a_; \
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> bh_, bl_; \
    coopMatLoadNV(a_, abuf, at, astride, false); \
    coopMatLoadNV(bh_, XQ, 2u + ((k0) >> 3u), n8, true); \
    coopMatLoadNV(bl_, XQ, 2u + 8u * (n8) + ((k0) >> 3u), n8, true); \
    c = coopMatMulAddNV(a_, bh_, c); \
    c = coopMatMulAddNV(a_, bl_, c); }
#else
// f16 element i (0..7) of a uvec4
float coop_half(uvec4 v, uint i) {
    return unpackHalf2x16(v[i >> 1u])[i & 1u];
}
#define COOP_PRODUCT16(c, abuf, at, astride, k0, n8) { \
    for (uint e_ = 0u; e_ < 4u; e_++) { \
        uint p_ = uint(coop_emu_at(e_)), a0_ = (at) + (p_ >> 3u) * (astride); \
        uint h_ = 2u + (p_ & 7u) * (n8) + ((k0) >> 3u), l_ = h_ + 8u * (n8); \
        float s_ = 0.0; \
        for (uint k_ = 0u; k_ < 16u; k_++) { \
            uint w_ = k_ >> 3u, i_ = k_ & 7u; \
            float a = coop_half(abuf[a0_ + w_], i_); \
            s_ += a * coop_half(XQ[h_ + w_], i_) + a * coop_half(XQ[l_ + w_], i_); \
        } \
        c.v[e_] += s_; \
    } }
#endif

void main() {
    uint n8 = P.k >> 3u, steps = P.k >> 4u;
    CoopPlace pl = coop_place(steps);
    uint r = pl.r, hf = pl.hf, row = pl.row;

    COOP_C pos = coop_positions();
    int n_el = COOP_LEN(pos);
#if COOP_EMULATE
    COOP_C c;
    for (int e = 0; e < 4; e++) c.v[e] = 0.0;
#else
    COOP_C c = COOP_C(0.0);
#endif

#if COOP_DIRECT
    // A straight from W (f16, m a multiple of 16: no partial group to read past the buffer)
    for (uint st = pl.lo; st < pl.lo + pl.per; st++) {
        if (st >= pl.hi) break; // uniform over the subgroup
        COOP_PRODUCT16(c, W, pl.row0 * n8 + 2u * st, n8, 16u * st, n8)
    }
#else
    uint sbase = pl.sg * uint(COOP_U) * COOP_STAGE;
    for (uint i0 = 0u; i0 < pl.per; i0 += uint(COOP_U)) {
        uvec4 w[COOP_U];
        [[unroll]] for (int u = 0; u < COOP_U; u++) {
            uint st = pl.lo + i0 + uint(u);
            w[u] = pl.live && st < pl.hi ? W[row * n8 + 2u * st + hf] : uvec4(0u); // 8 weights: k 16 st + 8 hf ..
#if BF16
            // bf16 -> f32 (the high half of the word) times 2^8 -> f16
            uvec4 lo = w[u] << 16u, hi = w[u] & 0xFFFF0000u;
            w[u] = uvec4(packHalf2x16(vec2(uintBitsToFloat(lo.x), uintBitsToFloat(hi.x)) * 256.0),
                         packHalf2x16(vec2(uintBitsToFloat(lo.y), uintBitsToFloat(hi.y)) * 256.0),
                         packHalf2x16(vec2(uintBitsToFloat(lo.z), uintBitsToFloat(hi.z)) * 256.0),
                         packHalf2x16(vec2(uintBitsToFloat(lo.w), uintBitsToFloat(hi.w)) * 256.0));
#endif
        }
        COOP_WAIT(); // the previous step's matrix loads are done with the stage
        [[unroll]] for (int u = 0; u < COOP_U; u++) stage_[sbase + uint(u) * COOP_STAGE + r * COOP_ROW_STRIDE + hf] = w[u];
        COOP_SYNC();
        [[unroll]] for (int u = 0; u < COOP_U; u++) {
            uint st = pl.lo + i0 + uint(u);
            if (st >= pl.hi) break; // uniform over the subgroup
            COOP_PRODUCT16(c, stage_, sbase + uint(u) * COOP_STAGE, COOP_ROW_STRIDE, 16u * st, n8)
        }
    }
#endif

    float acc[EL_MAX];
    for (int e = 0; e < EL_MAX; e++) acc[e] = 0.0;
    for (int e = 0; e < min(n_el, EL_MAX); e++) {
        uint p = COOP_P(pos, e), t = p & 7u;
        float s = uintBitsToFloat(XQ[t >> 2u][t & 3u]);
        acc[e] = float(COOP_AT(c, e)) * s * (BF16 ? 1.0 / 256.0 : 1.0);
    }
    coop_store(acc, pos);
}
