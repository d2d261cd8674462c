#version 450
// The Vulkan SwiGLU kernels on fp16 cooperative matrices with W in B (SW_COOP=1 SW_WB=1;
// docs/kernels/swiglu.md, "W in B"): SW_CHAIN=0 the fused kernel, y[t, n] =
// bf16(silu(W[n] . x[t]) * (W[N + n] . x[t])) over the packed gate/up weight W [2N, K];
// SW_CHAIN=1 the chain's GEMV, h[t, r] = bf16(W[r] . x[t]) over W [R, K] (R even). bf16 in,
// x [MT, K], fp32 accumulation. The GEMV's COOP_REG=3 (kernels/vulkan/gemv_dense_wideb.comp)
// for bf16 x: B's 8 columns are 8 weight rows (fused: column 2o output o's gate row, 2o + 1
// its up row, so a lane's result components pair them), and lane (g, q) loads 16 bytes of
// each of its columns 2q, 2q + 1 a unit of 64 k (the 8 lanes of a q: 128 contiguous bytes);
// A's row t < MT is token t's x, read straight from x (the 16 values from k = 64c + 16q, two
// 16-byte loads), rows MT.. 15 zeros. Slot s of step j of unit c is k = 64c + 8 (s mod 8) +
// 2j + s / 8 (the GEMV's header derives it). A weight becomes f16 times 2^8 (exact for 2^-22
// <= |w| < 256), x f16 (exact for 2^-14 <= |x| <= 65504; outside, the FP64 check before
// timing finds the path wrong). The loads assume NVIDIA's layout: another one makes every
// output NaN; the emulation holds it (FRAG_MMA_LAYOUT).
//
// A workgroup is SW_WR tiles (8 columns) x SW_KS slices of the K / 64 units, SW_U units
// loaded before the first is multiplied; the slices meet in shared memory. K a multiple of 64.
// Launch: (W, x, y or h, u32 N or R, u32 K), block 32 SW_WR SW_KS,
// grid ceil(N / 4 / SW_WR) (fused) or ceil(R / 8 / SW_WR) (chain).
#extension GL_GOOGLE_include_directive : require

#if !defined(MT) || !defined(SW_WR) || !defined(SW_KS) || !defined(SW_U) || !defined(SW_CHAIN)
#error "swiglu_wideb takes MT, SW_WR, SW_KS, SW_U and SW_CHAIN as defines (lib/gpubench/swiglu_vulkan.lua)"
#endif
#if MT < 1 || MT > 8 || (SW_CHAIN != 0 && SW_CHAIN != 1)
#error "MT must be 1..8, SW_CHAIN 0 (fused) or 1 (the chain's GEMV)"
#endif
#if SW_WR < 1 || SW_KS < 1 || SW_WR * SW_KS > 32 || SW_U < 1 || SW_U > 8
#error "SW_WR x SW_KS subgroups of 32 must make a workgroup of at most 1024; SW_U in 1..8"
#endif

#define SGS (SW_WR * SW_KS)
#define COOP_FLOAT 1
#ifndef FRAG_MMA_LAYOUT
#define FRAG_MMA_LAYOUT 1
#endif
#define FRAG_W_BF16 1
#include "coop_core.glsl"
#include "coop_frag.glsl"
#include "swiglu_bf16.glsl"
#include "swiglu_coop_sums.glsl"

layout(local_size_x = SGS * 32, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };
layout(set = 0, binding = 1) readonly buffer XBuf { uvec4 X[]; };
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
    uint sg = COOP_SG, lane = COOP_LANE, g = lane >> 2u, q = lane & 3u;
    uint wi = sg % uint(SW_WR), ks = sg / uint(SW_WR), tile = gl_WorkGroupID.x * uint(SW_WR) + wi;
    uint k8 = P.k >> 3u, units = P.k >> 6u;
    uint per = (units + uint(SW_KS) - 1u) / uint(SW_KS);
    uint lo = min(units, ks * per), hi = min(units, lo + per);

    FRAG_A apos = frag_a_positions();
    FRAG_B bpos = frag_b_positions();
    bool layout_ok;
    FRAG_MMA_LAYOUT_OK(apos, bpos, layout_ok)

    // the lane's two weight rows (columns 2q, 2q + 1; past the last clamped to it: read, never
    // stored) at its 16 bytes g of a unit, and its token's x at 16 q
    uint wr[2];
#if SW_CHAIN
    [[unroll]] for (int b = 0; b < 2; b++) wr[b] = min(8u * tile + 2u * q + uint(b), P.n - 1u) * k8 + g;
#else
    uint out_n = min(4u * tile + q, P.n - 1u);
    wr[0] = out_n * k8 + g;             // gate
    wr[1] = (P.n + out_n) * k8 + g;     // up
#endif
    // rows past MT: token MT - 1's x loaded and masked to zeros, the loads unconditional (conditional
    // ones made M < 8 slower than M = 8 at one shape: docs/kernels/swiglu.md, "W in B")
    uvec4 xmask = uvec4(g < uint(MT) ? 0xFFFFFFFFu : 0u);
    uint xr = min(g, uint(MT) - 1u) * k8 + 2u * q;

    COOP_C c;
#if COOP_EMULATE
    for (int e = 0; e < 4; e++) c.v[e] = 0.0;
#else
    c = COOP_C(0.0);
#endif
    for (uint i0 = 0u; i0 < per; i0 += uint(SW_U)) {
        uvec4 w[SW_U][2], x[SW_U][2];
        [[unroll]] for (int u = 0; u < SW_U; u++) {
            uint cu = min(lo + i0 + uint(u), max(hi, 1u) - 1u); // past the slice: not used (in range)
            w[u][0] = W[wr[0] + 8u * cu];
            w[u][1] = W[wr[1] + 8u * cu];
            x[u][0] = X[xr + 8u * cu] & xmask;
            x[u][1] = X[xr + 8u * cu + 1u] & xmask;
        }
        COOP_UNROLL for (int u = 0; u < SW_U; u++) {
#if !COOP_EMULATE
            if (lo + i0 + uint(u) >= hi) break; // uniform over the subgroup
#else
            if (lo + i0 + uint(u) >= hi) { // every subgroup runs every product (the barriers are the workgroup's)
                x[u][0] = uvec4(0u);
                x[u][1] = uvec4(0u);
            }
#endif
            COOP_UNROLL for (int j = 0; j < 4; j++) {
                FRAG_A a;
                FRAG_B b;
                // A component e < 4: x at local k 8 (e & 1) + 2j + ((e >> 1) & 1), i.e. uvec4 e & 1,
                // word j, half (e >> 1) & 1; components 4..7 (rows 8..15) zeros
                [[unroll]] for (int e = 0; e < 8; e++) {
                    uint wd = x[u][e & 1][j];
                    FRAG_SET(a, e, e < 4 ? (((e >> 1) & 1) == 0 ? sw_lo(wd) : sw_hi(wd)) : 0.0);
                }
                // B component e: column 2q + (e & 1)'s word j, half e >> 1
                [[unroll]] for (int e = 0; e < 4; e++) FRAG_SET(b, e, frag_w_pair(w[u][e & 1][j])[e >> 1]);
                FRAG_MMA(c, a, b, apos, bpos);
            }
        }
    }

    // the slices' sums (sw_sum_: tile gi's token p >> 3, column p & 7 at gi * 128 + p)
    sw_slice_sums(c, !layout_ok);

    // each invocation stores two outputs (chain: rows) of one token of one tile
#define SW_PAIRS (2 + 2 * SW_CHAIN) // fused: 4 outputs; chain: 8 rows
    for (uint i = gl_LocalInvocationIndex; i < uint(SW_WR * SW_PAIRS * MT); i += uint(SGS * 32)) {
        uint gi = i / uint(SW_PAIRS * MT), rem = i % uint(SW_PAIRS * MT), pr = rem / uint(MT), t = rem % uint(MT);
        uint tl = gl_WorkGroupID.x * uint(SW_WR) + gi, sb = gi * 128u + t * 8u;
#if SW_CHAIN
        uint r = 8u * tl + 2u * pr; // R even: rows r, r + 1 are the halves of one word
        if (r < P.n) H[(t * P.n + r) >> 1] = sw_bf16(sw_sum_[sb + 2u * pr]) | (sw_bf16(sw_sum_[sb + 2u * pr + 1u]) << 16);
#else
        uint o = 2u * pr, na = 4u * tl + o; // outputs o, o + 1: columns 2o, 2o + 1 and 2o + 2, 2o + 3
        if (na >= P.n) continue;
        float y0 = sw_silu(sw_sum_[sb + 2u * o]) * sw_sum_[sb + 2u * o + 1u];
        float y1 = sw_silu(sw_sum_[sb + 2u * o + 2u]) * sw_sum_[sb + 2u * o + 3u];
        sw_store_pair(t * P.n + na, y0, y1, na + 1u < P.n);
#endif
    }
}
