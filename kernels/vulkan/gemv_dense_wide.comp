#version 450
// The f16 (COOP_FMT=6) and bf16 (7) GEMV for T = 1..8 rows of x on fp16 cooperative matrices
// filled from 16-byte loads (COOP_REG=2; docs/kernels/vulkan-gemv.md, "Wide loads in the
// fragments' own k order"). A dot product does not care in which order its k are added, so
// the 16 k "slots" of a 16 x 16 A are not k, k + 1, ... but whatever one lane's load gives:
// in NVIDIA's layout (FRAG_MMA_A_AT) lane L holds rows L / 4 and L / 4 + 8 at slots 2 (L % 4)
// + {0, 1, 8, 9}, so one uvec4 of a row (8 weights, k 32 c + 8 (L % 4) ..) fills that row's
// four slots of two steps: word i of it is step i >> 1's slots 2 (L % 4) + 8 (i & 1) + {0, 1}.
// Slot s of step j is then k = 32 c + 8 ((s % 8) / 2) + 4 j + 2 (s / 8) + s % 2, and
// gemv_dense_wide_xprep.comp writes x's B components in that order, each lane's 16 bytes a
// step pair (hi, then lo) side by side: a warp's load of them is 512 contiguous bytes.
//
// A subgroup owns COOP_RT tiles of 16 rows (B loaded once for all of them) and a slice of the
// k / 32 units; COOP_U units loaded before the first is multiplied (COOP_PF = 1: and the next
// COOP_U while these are). x comes as f16 hi + lo
// of x / s_t (s_t a power of two), so C = W (hi + lo) and y = s_t C; bf16 weights become
// f16 times 2^8, which y divides out (as gemv_dense_coop.comp). k a multiple of 32.
// The loads assume NVIDIA's layout: a device whose A or B is laid out otherwise gets NaN in y
// (the oracle check refuses it), never a wrong number; the emulation (COOP_EMULATE) holds that
// layout (FRAG_MMA_LAYOUT), so lavapipe checks the k order and the workspace.
#extension GL_GOOGLE_include_directive : require
#define COOP_FLOAT 1
#ifndef FRAG_MMA_LAYOUT
#define FRAG_MMA_LAYOUT 1 // the emulation in NVIDIA's layout (0: scrambled, the NaN test of the layout check)
#endif
#define FRAG_W_BF16 (COOP_FMT == 7)
#include "coop_common.glsl"
#include "coop_frag.glsl"

#if !defined(COOP_FMT) || (COOP_FMT != 6 && COOP_FMT != 7) || !defined(COOP_U)
#error "COOP_FMT (6 f16, 7 bf16) and COOP_U must be defined (lib/gpubench/gemv_vulkan.lua)"
#endif
#if COOP_U < 1 || COOP_U > 8
#error "COOP_U must be in 1..8"
#endif
#ifndef COOP_PF
#define COOP_PF 0
#endif

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

#define BF16 (COOP_FMT == 7)

// A from rows L / 4 (a) and L / 4 + 8 (b) of a tile: step j's words are 2 j and 2 j + 1
#define WIDE_A(fa, a, b, j) \
    [[unroll]] for (int e_ = 0; e_ < 8; e_++) { \
        uvec4 r_ = ((e_ >> 2) & 1) == 0 ? (a) : (b); \
        FRAG_SET(fa, e_, frag_w_pair(r_[2 * (j) + ((e_ >> 1) & 1)])[e_ & 1]); \
    }

// B from a lane's uvec4 of the workspace: component e is word 2 j + (e >> 1), half e & 1
#define WIDE_B(fb, v, j) \
    [[unroll]] for (int e_ = 0; e_ < 4; e_++) FRAG_SET(fb, e_, FRAG_HALVES((v)[2 * (j) + (e_ >> 1)])[e_ & 1]);

// WIDE_DIAG (tools/gemv_parts.lua DIAG=...; a diagnostic build is not a GEMV, its y is not
// checked): 1 multiplies one A built before the loop (no per-unit component writes of A),
// 2 neither writes nor multiplies anything, 3 is 2 with each load of W 512 contiguous bytes of
// one row (the same rows, about the same bytes); all keep every load alive through `sink`
#ifndef WIDE_DIAG
#define WIDE_DIAG 0
#endif

// Row tile i's product for unit u, step j
#if WIDE_DIAG == 0
#define WIDE_TILE(i, cm) { \
        FRAG_A a_; \
        WIDE_A(a_, wv[u][i][0], wv[u][i][1], j) \
        FRAG_MMA(cm, a_, bh, apos, bpos); \
        FRAG_MMA(cm, a_, bl, apos, bpos); \
    }
#elif WIDE_DIAG == 1
#define WIDE_TILE(i, cm) { \
        sink ^= wv[u][i][0][2 * j] ^ wv[u][i][1][2 * j + 1]; \
        FRAG_MMA(cm, a_fixed, bh, apos, bpos); \
        FRAG_MMA(cm, a_fixed, bl, apos, bpos); \
    }
#else
#define WIDE_TILE(i, cm) sink ^= wv[u][i][0][2 * j] ^ wv[u][i][1][2 * j + 1] ^ xh[u][2 * j] ^ xl[u][2 * j + 1];
#endif

#if WIDE_DIAG == 3
#define WIDE_AT(i, h, cu) (min(pl.row0 + 16u * uint(i) + 8u * uint(h) + ((cu) & 7u), P.m - 1u) * n8 + 32u * ((cu) >> 3u) + lane)
#else
#define WIDE_AT(i, h, cu) (wa[i][h] + 4u * (cu))
#endif

// The COOP_U units from i0 of the slice: A's words of every tile, B's hi and lo (units past
// the slice clamped onto its last: loaded, not used)
#define WIDE_LOAD(wv, xh, xl, i0) { \
        [[unroll]] for (int u = 0; u < COOP_U; u++) { \
            uint cu = min(pl.lo + (i0) + uint(u), max(pl.hi, 1u) - 1u); \
            [[unroll]] for (int i = 0; i < COOP_RT; i++) { \
                wv[u][i][0] = W[WIDE_AT(i, 0, cu)]; \
                wv[u][i][1] = W[WIDE_AT(i, 1, cu)]; \
            } \
            xh[u] = XQ[xb + 64u * cu]; \
            xl[u] = XQ[xb + 64u * cu + 1u]; \
        } }

void main() {
    uint units = P.k >> 5u; // 32 k a unit, two steps of 16
    CoopPlace pl = coop_place(units);
    uint lane = COOP_LANE, g = lane >> 2u, q = lane & 3u, n8 = P.k >> 3u;

    COOP_C pos = coop_positions();
    FRAG_A apos = frag_a_positions();
    FRAG_B bpos = frag_b_positions();
    bool layout_ok;
    FRAG_MMA_LAYOUT_OK(apos, bpos, layout_ok)

#if COOP_EMULATE
    COOP_C c0, c1, c2, c3;
    for (int e = 0; e < 4; e++) c0.v[e] = c1.v[e] = c2.v[e] = c3.v[e] = 0.0;
#else
    COOP_C c0 = COOP_C(0.0), c1 = COOP_C(0.0), c2 = COOP_C(0.0), c3 = COOP_C(0.0);
#endif

    // uvec4 offsets of the lane's two rows in each tile (rows past m clamped: read, never
    // stored), and of its workspace entry (past the 2 uvec4s of scales; 64 a unit: 32 lanes
    // of hi + lo)
    uint wa[COOP_RT][2];
    [[unroll]] for (int i = 0; i < COOP_RT; i++) {
        [[unroll]] for (int h = 0; h < 2; h++)
            wa[i][h] = min(pl.row0 + 16u * uint(i) + g + 8u * uint(h), P.m - 1u) * n8 + q;
    }
    uint xb = 2u + 2u * lane;
    uint sink = 0u; // WIDE_DIAG's
#if WIDE_DIAG == 1
    FRAG_A a_fixed;
    WIDE_A(a_fixed, uvec4(lane), uvec4(g), 0)
#endif

    // COOP_PF = 1: the next COOP_U units' loads issued before this batch's products (two
    // batches of registers), so a subgroup has loads in flight while it multiplies
    uvec4 wv[COOP_U][COOP_RT][2], xh[COOP_U], xl[COOP_U];
#if COOP_PF
    uvec4 wn[COOP_U][COOP_RT][2], xhn[COOP_U], xln[COOP_U];
    WIDE_LOAD(wn, xhn, xln, 0u)
#endif
    for (uint i0 = 0u; i0 < pl.per; i0 += uint(COOP_U)) {
#if COOP_PF
        wv = wn;
        xh = xhn;
        xl = xln;
        if (i0 + uint(COOP_U) < pl.per) WIDE_LOAD(wn, xhn, xln, i0 + uint(COOP_U)) // uniform
#else
        WIDE_LOAD(wv, xh, xl, i0)
#endif
        COOP_UNROLL for (int u = 0; u < COOP_U; u++) {
#if !COOP_EMULATE
            if (pl.lo + i0 + uint(u) >= pl.hi) break; // uniform over the subgroup
#else
            if (pl.lo + i0 + uint(u) >= pl.hi) { // every subgroup runs every product (the barriers are the workgroup's)
                xh[u] = uvec4(0u);
                xl[u] = uvec4(0u);
            }
#endif
            COOP_UNROLL for (int j = 0; j < 2; j++) {
#if WIDE_DIAG != 2 && WIDE_DIAG != 3
                FRAG_B bh, bl;
                WIDE_B(bh, xh[u], j)
                WIDE_B(bl, xl[u], j)
#endif
                WIDE_TILE(0, c0)
#if COOP_RT > 1
                WIDE_TILE(1, c1)
#endif
#if COOP_RT > 2
                WIDE_TILE(2, c2)
#endif
#if COOP_RT > 3
                WIDE_TILE(3, c3)
#endif
            }
        }
    }

    float acc[EL_MAX * COOP_RT];
    for (int e = 0; e < EL_MAX * COOP_RT; e++) acc[e] = 0.0;
    int n_el = COOP_LEN(pos);
    for (int e = 0; e < min(n_el, EL_MAX); e++) {
        uint t = COOP_P(pos, e) & 7u;
        float s = layout_ok ? uintBitsToFloat(XQ[t >> 2u][t & 3u]) * (BF16 ? 1.0 / 256.0 : 1.0)
                            : uintBitsToFloat(0x7FC00000u); // another layout: NaN, not a wrong number
        acc[e] = float(COOP_AT(c0, e)) * s;
#if COOP_RT > 1
        acc[EL_MAX + e] = float(COOP_AT(c1, e)) * s;
#endif
#if COOP_RT > 2
        acc[2 * EL_MAX + e] = float(COOP_AT(c2, e)) * s;
#endif
#if COOP_RT > 3
        acc[3 * EL_MAX + e] = float(COOP_AT(c3, e)) * s;
#endif
    }
    if (sink == 0x9E3779B9u) acc[0] += 1.0; // WIDE_DIAG: the loads stay
    coop_store(acc, pos);
}
