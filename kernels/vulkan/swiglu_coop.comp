#version 450
// The Vulkan SwiGLU kernels on fp16 cooperative matrices (SW_COOP=1; docs/kernels/swiglu.md,
// "Cooperative matrices filled from registers"): SW_CHAIN=0 the fused kernel,
// y[t, n] = bf16(silu(W[n] . x[t]) * (W[N + n] . x[t])) over the packed gate/up weight W [2N, K];
// SW_CHAIN=1 the chain's GEMV, h[t, r] = bf16(W[r] . x[t]) over W [R, K] (R even). bf16 in,
// x [MT, K], fp32 accumulation.
//
// A subgroup owns a tile of 16 weight rows (fused: 8 outputs' gate rows, then their up rows;
// chain: 16 consecutive rows) and a slice of K, in steps of 16 k: A (16 rows x 16 k) and
// B (16 k x 8 tokens) are filled from registers (coop_frag.glsl), A two components from one
// 32-bit word of two bf16 where its layout pairs k (else one a word), B one a word; a weight becomes f16 times 2^8 (exact for 2^-22 <= |w| < 256), x
// f16 (exact for 2^-14 <= |x| <= 65504; outside, the FP64 check before timing finds the
// path wrong), and C accumulates over the slice. SW_U steps are loaded before any is used.
// A workgroup is SW_WR tiles x SW_KS slices; the slices meet in shared memory. K a multiple
// of 8 (a last half step reads zeros).
// Launch: (W, x, y or h, u32 N or R, u32 K), block 32 SW_WR SW_KS,
// grid ceil(N / 8 / SW_WR) (fused) or ceil(R / 16 / SW_WR) (chain).
#extension GL_GOOGLE_include_directive : require

#if !defined(MT) || !defined(SW_WR) || !defined(SW_KS) || !defined(SW_U) || !defined(SW_CHAIN)
#error "swiglu_coop takes MT, SW_WR, SW_KS, SW_U and SW_CHAIN as defines (lib/gpubench/swiglu_vulkan.lua)"
#endif
#if MT < 1 || MT > 8 || (SW_CHAIN != 0 && SW_CHAIN != 1)
#error "MT must be 1..8, SW_CHAIN 0 (fused) or 1 (the chain's GEMV)"
#endif
#if SW_WR < 1 || SW_KS < 1 || SW_WR * SW_KS > 32 || SW_U < 1 || SW_U > 8
#error "SW_WR x SW_KS subgroups of 32 must make a workgroup of at most 1024; SW_U in 1..8"
#endif

#define SGS (SW_WR * SW_KS)
#define COOP_FLOAT 1
#define FRAG_W_BF16 1 // bf16 weights: f16 times 2^8, which y divides out
#include "coop_core.glsl"
#include "coop_frag.glsl"
#include "swiglu_bf16.glsl"
#include "swiglu_coop_sums.glsl"

layout(local_size_x = SGS * 32, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer WBuf { uint W[]; };
layout(set = 0, binding = 1) readonly buffer XBuf { uint X[]; };
#if SW_CHAIN
layout(set = 0, binding = 2) writeonly buffer HBuf { uint H[]; };
#else
#include "swiglu_ystore.glsl"
#endif
layout(push_constant) uniform Params {
    uint n; // outputs N (fused), rows R (chain)
    uint k;
} P;

void main() {
    uint sg = COOP_SG, g = sg % uint(SW_WR), ks = sg / uint(SW_WR);
    uint tile = gl_WorkGroupID.x * uint(SW_WR) + g;
    uint kw = P.k >> 1u, steps = (P.k + 15u) >> 4u;
    uint per = (steps + uint(SW_KS) - 1u) / uint(SW_KS);
    uint lo = min(steps, ks * per), hi = min(steps, lo + per);

    FRAG_A apos = frag_a_positions();
    FRAG_B bpos = frag_b_positions();
    bool a_ok;
    FRAG_A_PAIRS_OK(apos, a_ok)
    int a_len = min(FRAG_LEN(apos), FRAG_A_MAX), b_len = min(FRAG_LEN(bpos), FRAG_B_MAX);
    // per component of A: its row's first word (rows past the last clamped to it: read, never
    // stored), its word within a step and its half; where A's components pair k (a_ok, the
    // fast path) a pair's first gives the word of both; per component of B (any layout: the
    // driver's 16 x 8 f16 type need not pair B's k): its token's row (t < MT), word and half
    uint wrow[FRAG_A_MAX], wcol[FRAG_A_MAX], wsh[FRAG_A_MAX], xrow[FRAG_B_MAX], xcol[FRAG_B_MAX], xsh[FRAG_B_MAX];
    bool xlive[FRAG_B_MAX];
    [[unroll]] for (int e = 0; e < FRAG_A_MAX; e++) if (e < a_len) {
        uint p = FRAG_AT(apos, e), r = p >> 4u;
#if SW_CHAIN
        uint row = min(16u * tile + r, P.n - 1u);
#else
        uint row = min(8u * tile + (r & 7u), P.n - 1u) + (r >> 3u) * P.n; // gate rows, then up rows
#endif
        wrow[e] = row * kw;
        wcol[e] = (p & 15u) >> 1u;
        wsh[e] = (p & 1u) * 16u;
    }
    [[unroll]] for (int e = 0; e < FRAG_B_MAX; e++) if (e < b_len) {
        uint p = FRAG_AT(bpos, e), t = p & 7u, kk = p >> 3u; // p = k * 8 + token
        xlive[e] = t < uint(MT);
        xrow[e] = min(t, uint(MT) - 1u) * kw;
        xcol[e] = kk >> 1u;
        xsh[e] = (kk & 1u) * 16u;
    }

    COOP_C c;
#if COOP_EMULATE
    for (int e = 0; e < 4; e++) c.v[e] = 0.0;
#else
    c = COOP_C(0.0);
#endif
    for (uint i0 = 0u; i0 < per; i0 += uint(SW_U)) {
        uint w[SW_U][FRAG_A_MAX], x[SW_U][FRAG_B_MAX];
        [[unroll]] for (int u = 0; u < SW_U; u++) {
            uint st = min(lo + i0 + uint(u), max(hi, 1u) - 1u); // past the slice: not used (in range)
            // a_ok: one word a pair (components 2j, 2j + 1); else one a component, its bf16 low
            [[unroll]] for (int e = 0; e < FRAG_A_MAX; e++) if (e < a_len && (!a_ok || (e & 1) == 0)) {
                uint kk = 8u * st + wcol[e]; // the word in its row
                w[u][e] = kk < kw ? W[wrow[e] + kk] >> (a_ok ? 0u : wsh[e]) : 0u;
            }
            [[unroll]] for (int e = 0; e < FRAG_B_MAX; e++) if (e < b_len) {
                uint kk = 8u * st + xcol[e];
                x[u][e] = xlive[e] && kk < kw ? X[xrow[e] + kk] >> xsh[e] : 0u; // its bf16 in the low half
            }
        }
        [[unroll]] for (int u = 0; u < SW_U; u++) {
            uint st = lo + i0 + uint(u);
#if !COOP_EMULATE
            if (st >= hi) break; // uniform over the subgroup
#endif
            FRAG_A a;
            FRAG_B b;
            FRAG_FILL_A(a, w[u], a_ok, a_len, frag_w_pair)
            [[unroll]] for (int e = 0; e < FRAG_B_MAX; e++) if (e < b_len) FRAG_SET(b, e, sw_lo(x[u][e]));
#if COOP_EMULATE
            if (st >= hi) { // every subgroup runs every step (the barriers are the workgroup's)
                for (int e = 0; e < 8; e++) a.v[e] = 0.0;
            }
#endif
            FRAG_MMA(c, a, b, apos, bpos);
        }
    }

    // the slices' sums (sw_sum_: tile gi's row p >> 3, token p & 7 at gi * 128 + p)
    sw_slice_sums(c, false);

    // each invocation stores two outputs (chain: rows) of one token of one tile
#define SW_PAIRS (4 + 4 * SW_CHAIN) // fused: 8 outputs; chain: 16 rows
    for (uint i = gl_LocalInvocationIndex; i < uint(SW_WR * SW_PAIRS * MT); i += uint(SGS * 32)) {
        uint gi = i / uint(SW_PAIRS * MT), rem = i % uint(SW_PAIRS * MT), pr = rem / uint(MT), t = rem % uint(MT);
        uint tl = gl_WorkGroupID.x * uint(SW_WR) + gi, sb = gi * 128u;
#if SW_CHAIN
        uint r = 16u * tl + 2u * pr; // R even: rows r, r + 1 are the halves of one word
        if (r < P.n)
            H[(t * P.n + r) >> 1] = sw_bf16(sw_sum_[sb + 2u * pr * 8u + t]) | (sw_bf16(sw_sum_[sb + (2u * pr + 1u) * 8u + t]) << 16);
#else
        uint o = 2u * pr, na = 8u * tl + o;
        if (na >= P.n) continue;
        float y0 = sw_silu(sw_sum_[sb + o * 8u + t]) * sw_sum_[sb + (8u + o) * 8u + t];
        float y1 = sw_silu(sw_sum_[sb + (o + 1u) * 8u + t]) * sw_sum_[sb + (9u + o) * 8u + t];
        sw_store_pair(t * P.n + na, y0, y1, na + 1u < P.n);
#endif
    }
}
