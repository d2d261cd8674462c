#version 450
// The f16 (COOP_FMT=6) and bf16 (7) GEMV for T = 1..8 rows of x on fp16 cooperative matrices
// with fp32 results (docs/kernels/vulkan-gemv.md, "The dense formats on cooperative
// matrices"; the shared parts: coop_common.glsl). x arrives from gemv_dense_coop_xprep.comp
// as f16 hi + lo of x / s_t per token (s_t a power of two), so C = W (hi + lo) accumulates
// as a matrix over all of the slice's k and y = s_t C at the end: no per-step work on the
// components. bf16 weights become f16 times 2^8 (exact down to |w| >= 2^-22, 2^-33 absolute
// below), which y divides out. k is a multiple of 16. A comes one of three ways: staged (the
// default: per step of 16 k each lane stages 8 weights of its row, 16 bytes, into a 16-byte
// aligned shared row; COOP_U steps loaded before any is staged), COOP_DIRECT (f16: the driver
// loads it from W), COOP_REG (A and B written component by component, coop_frag.glsl).
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
#ifndef COOP_REG
#define COOP_REG 0 // 1: A's and B's components written from registers (no stage, no matrix loads)
#endif
#if COOP_REG && COOP_DIRECT
#error "COOP_REG and COOP_DIRECT are two ways to fill A: one at a time"
#endif
#if !COOP_EMULATE
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

#if !COOP_DIRECT && !COOP_REG
shared uvec4 stage_[SGS * COOP_U * COOP_STAGE];
#endif

#define BF16 (COOP_FMT == 7)

// Two weights of a row (k, k + 1; k even) as f16, bf16's times 2^8
vec2 coop_pair(uint word) {
#if BF16
    return vec2(uintBitsToFloat(word << 16u), uintBitsToFloat(word & 0xFFFF0000u)) * 256.0;
#else
    return unpackHalf2x16(word);
#endif
}

#if COOP_REG
#define FRAG_W_BF16 BF16 // a word of W as A's two values: bf16 times 2^8, f16 as it is
#include "coop_frag.glsl"
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

#if COOP_REG
    // A's and B's components from registers (coop_frag.glsl): per component of A its row's
    // word offset in W (rows past m clamped: not stored), its word within a step and its half
    // (where A's components pair k, a_ok, a pair's first gives the word of both); per component
    // of B its token's word offset in the workspace's hi rows (lo: + 4k words), word and half
    FRAG_A apos = frag_a_positions();
    FRAG_B bpos = frag_b_positions();
    bool a_ok;
    FRAG_A_PAIRS_OK(apos, a_ok)
    int a_len = min(FRAG_LEN(apos), FRAG_A_MAX), b_len = min(FRAG_LEN(bpos), FRAG_B_MAX);
    uint kw = P.k >> 1u; // 32-bit words a row
    uint wrow[FRAG_A_MAX], wcol[FRAG_A_MAX], wsh[FRAG_A_MAX], xrow[FRAG_B_MAX], xcol[FRAG_B_MAX], xsh[FRAG_B_MAX];
    [[unroll]] for (int e = 0; e < FRAG_A_MAX; e++) if (e < a_len) {
        uint p = FRAG_AT(apos, e);
        wrow[e] = min(pl.row0 + (p >> 4u), P.m - 1u) * kw;
        wcol[e] = (p & 15u) >> 1u;
        wsh[e] = (p & 1u) * 16u;
    }
    [[unroll]] for (int e = 0; e < FRAG_B_MAX; e++) if (e < b_len) { // any layout: one component a word
        uint p = FRAG_AT(bpos, e), kk = p >> 3u; // k * 8 + token
        xrow[e] = 8u + (p & 7u) * kw;   // the hi rows start at word 8, a token's row is k / 2 words
        xcol[e] = kk >> 1u;
        xsh[e] = (kk & 1u) * 16u;
    }
    for (uint i0 = 0u; i0 < pl.per; i0 += uint(COOP_U)) {
        uint w[COOP_U][FRAG_A_MAX];
        [[unroll]] for (int u = 0; u < COOP_U; u++) {
            uint st = min(pl.lo + i0 + uint(u), max(pl.hi, 1u) - 1u); // past the slice: not used (in range)
            // a_ok: one word a pair (components 2j, 2j + 1); else one a component, its half low
            [[unroll]] for (int e = 0; e < FRAG_A_MAX; e++) if (e < a_len && (!a_ok || (e & 1) == 0)) {
                uint at = wrow[e] + 8u * st + wcol[e]; // 8 words a step of 16 k
                w[u][e] = W[at >> 2u][at & 3u] >> (a_ok ? 0u : wsh[e]);
            }
        }
        [[unroll]] for (int u = 0; u < COOP_U; u++) {
            uint st = pl.lo + i0 + uint(u);
#if !COOP_EMULATE
            if (st >= pl.hi) break; // uniform over the subgroup
#endif
            FRAG_A a;
            FRAG_B bh, bl;
            FRAG_FILL_A(a, w[u], a_ok, a_len, frag_w_pair)
            [[unroll]] for (int e = 0; e < FRAG_B_MAX; e++) if (e < b_len) {
                uint at = xrow[e] + 8u * min(st, pl.hi - 1u) + xcol[e];
                uint h = XQ[at >> 2u][at & 3u] >> xsh[e];
                at += 4u * P.k; // the lo rows: k uvec4s on
                uint l = XQ[at >> 2u][at & 3u] >> xsh[e];
                FRAG_SET(bh, e, FRAG_HALVES(h).x);
                FRAG_SET(bl, e, FRAG_HALVES(l).x);
            }
#if COOP_EMULATE
            if (st >= pl.hi) { // every subgroup runs every step (the barriers are the workgroup's)
                for (int e = 0; e < 8; e++) a.v[e] = 0.0;
            }
#endif
            FRAG_MMA(c, a, bh, apos, bpos);
            FRAG_MMA(c, a, bl, apos, bpos);
        }
    }
#elif COOP_DIRECT
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
            // bf16 -> f16 times 2^8
            w[u] = uvec4(packHalf2x16(coop_pair(w[u].x)), packHalf2x16(coop_pair(w[u].y)),
                         packHalf2x16(coop_pair(w[u].z)), packHalf2x16(coop_pair(w[u].w)));
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
