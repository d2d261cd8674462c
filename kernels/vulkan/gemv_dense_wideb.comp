#version 450
// The f16 (COOP_FMT=6), bf16 (7) and f32 (8) GEMV for T = 1..8 rows of x on fp16 cooperative matrices
// with W in B (COOP_REG=3; docs/kernels/vulkan-gemv.md, "W in B"). COOP_REG=2
// (gemv_dense_wide.comp) puts 16 rows of W in A, whose layout gives each load of W 8 rows of
// 64 bytes, a pattern the memory system serves poorly (the same doc, "What holds it"). B
// (16 k x 8 columns), kept like a result, gives lane L (g = L / 4, q = L % 4) columns 2q and
// 2q + 1 at k slots g and g + 8: over 4 steps (64 k, a unit) that is 8 values of each of two
// rows, one 16-byte load each, and the 8 lanes of a q read 128 contiguous bytes of their row.
// So here the columns are 8 rows of W, slot s of step j of unit c is k = 64c + 8 (s mod 8) +
// 2j + s / 8, and A (16 x 16) holds x: row t < 8 token t's f16 hi, row t + 8 its lo (of x /
// s_t, s_t a power of two), so C's rows t and t + 8 add to token t's sum: one mma multiplies
// both parts. In A's layout lane L holds tokens g (hi) and g (lo) at slots 2q + {0, 1, 8, 9}:
// per unit the 16 consecutive x values from k = 64c + 16q, which gemv_dense_wideb_xprep.comp
// writes as four uvec4 (one a step, components in A's order) at 2 + 4 (32c + L).
//
// A subgroup owns COOP_RT tiles of 8 rows (A loaded once for all of them) and a slice of the
// k / 64 units, COOP_U units loaded before the first is multiplied; bf16 weights become f16
// times 2^8, which y divides out. k a multiple of 64. As gemv_dense_wide.comp the loads
// assume NVIDIA's layout (FRAG_MMA_A_AT, FRAG_MMA_B_AT): another one makes y NaN; the
// emulation holds that layout.
#extension GL_GOOGLE_include_directive : require
#define COOP_FLOAT 1
#ifndef FRAG_MMA_LAYOUT
#define FRAG_MMA_LAYOUT 1 // the emulation in NVIDIA's layout (0: scrambled, the NaN test of the layout check)
#endif
#define FRAG_W_BF16 (COOP_FMT == 7)
#define COOP_TILE_ROWS 8
#include "coop_common.glsl"
#include "coop_frag.glsl"

#if !defined(COOP_FMT) || (COOP_FMT != 6 && COOP_FMT != 7 && COOP_FMT != 8) || !defined(COOP_U)
#error "COOP_FMT (6 f16, 7 bf16, 8 f32) and COOP_U must be defined (lib/gpubench/gemv_vulkan.lua)"
#endif
#if COOP_U < 1 || COOP_U > 8
#error "COOP_U must be in 1..8"
#endif

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

#define BF16 (COOP_FMT == 7)
#define F32 (COOP_FMT == 8)
// uvec4s a lane loads of each of its rows a unit: f32's 8 values are 32 bytes
#define WB_HALVES (F32 ? 2 : 1)

// f32 (COOP_FMT=8): slot s < 8 of step j is k = 64c + 4s + j, slot 8 + s k = 64c + 32 + 4s + j, so
// lane g's 8 values of a row are k 4g..4g + 3 (uvec4 g of the unit's 256 bytes) and 32 + 4g..
// (uvec4 8 + g): 8 lanes read 128 contiguous bytes of their row an instruction, as f16's do.
// Each weight times 2^8 becomes f16 hi + lo (two products, B's halves; exact to about 2^-22
// of w for 2^-14 <= |w| 2^8 < 65504: |w| >= 256 overflows hi to Inf, which the oracle refuses).

// Step j's B from rows 2q (r0) and 2q + 1 (r1) of a tile: component e is row e & 1's word j,
// half e >> 1
#define WIDEB_B(fb, r0, r1, j) \
    [[unroll]] for (int e_ = 0; e_ < 4; e_++) \
        FRAG_SET(fb, e_, frag_w_pair(((e_ & 1) == 0 ? (r0) : (r1))[j])[e_ >> 1]);

#if F32
// Step j's B pair from rows 2q (r0) and 2q + 1 (r1), each two uvec4s: component e is row e & 1's
// uvec4 e >> 1, word j, times 2^8, as hi (bh) + lo (bl)
#define WIDEB_B32(bh, bl, r0, r1, j) { \
        vec2 p0_ = vec2(uintBitsToFloat((r0)[0][j]), uintBitsToFloat((r1)[0][j])) * 256.0; \
        vec2 p1_ = vec2(uintBitsToFloat((r0)[1][j]), uintBitsToFloat((r1)[1][j])) * 256.0; \
        vec2 h0_ = unpackHalf2x16(packHalf2x16(p0_)), h1_ = unpackHalf2x16(packHalf2x16(p1_)); \
        vec2 l0_ = unpackHalf2x16(packHalf2x16(p0_ - h0_)), l1_ = unpackHalf2x16(packHalf2x16(p1_ - h1_)); \
        FRAG_SET(bh, 0, h0_.x); FRAG_SET(bh, 1, h0_.y); FRAG_SET(bh, 2, h1_.x); FRAG_SET(bh, 3, h1_.y); \
        FRAG_SET(bl, 0, l0_.x); FRAG_SET(bl, 1, l0_.y); FRAG_SET(bl, 2, l1_.x); FRAG_SET(bl, 3, l1_.y); }

// Row tile i's products for unit u, step j: W's hi, then its lo
#define WIDEB_TILE(i, cm) { \
        FRAG_B bh_, bl_; \
        WIDEB_B32(bh_, bl_, wv[u][i][0], wv[u][i][1], j) \
        FRAG_MMA(cm, a_, bh_, apos, bpos); \
        FRAG_MMA(cm, a_, bl_, apos, bpos); \
    }
#else
// Row tile i's product for unit u, step j
#define WIDEB_TILE(i, cm) { \
        FRAG_B b_; \
        WIDEB_B(b_, wv[u][i][0][0], wv[u][i][1][0], j) \
        FRAG_MMA(cm, a_, b_, apos, bpos); \
    }
#endif

// The COOP_U units from i0 of the slice: x's four uvec4 (shared by the tiles), then two rows'
// words of each tile (units past the slice clamped onto its last: loaded, not used)
#define WIDEB_LOAD(i0) { \
        [[unroll]] for (int u = 0; u < COOP_U; u++) { \
            uint cu = min(pl.lo + (i0) + uint(u), max(pl.hi, 1u) - 1u); \
            [[unroll]] for (int j = 0; j < 4; j++) xv[u][j] = XQ[xb + 128u * cu + uint(j)]; \
            [[unroll]] for (int i = 0; i < COOP_RT; i++) \
                [[unroll]] for (int r = 0; r < 2; r++) \
                    [[unroll]] for (int h = 0; h < WB_HALVES; h++) wv[u][i][r][h] = W[wa[i][r] + 8u * (WB_HALVES * cu + uint(h))]; \
        } }

void main() {
    uint units = P.k >> 6u; // 64 k a unit, four steps of 16
    CoopPlace pl = coop_place(units);
    uint lane = COOP_LANE, g = lane >> 2u, q = lane & 3u, n8 = P.k >> (F32 ? 2u : 3u); // uvec4s a row

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

    // uvec4 offsets of the lane's rows 2q and 2q + 1 in each tile, at its 16 bytes g of a unit
    // (rows past m clamped: read, never stored), and of its x entry (past the 2 uvec4s of
    // scales; 128 a unit: 32 lanes of 4)
    uint wa[COOP_RT][2];
    [[unroll]] for (int i = 0; i < COOP_RT; i++) {
        [[unroll]] for (int b = 0; b < 2; b++)
            wa[i][b] = min(pl.row0 + 8u * uint(i) + 2u * q + uint(b), P.m - 1u) * n8 + g;
    }
    uint xb = 2u + 4u * lane;

    uvec4 xv[COOP_U][4], wv[COOP_U][COOP_RT][2][WB_HALVES];
    for (uint i0 = 0u; i0 < pl.per; i0 += uint(COOP_U)) {
        WIDEB_LOAD(i0)
        COOP_UNROLL for (int u = 0; u < COOP_U; u++) {
#if !COOP_EMULATE
            if (pl.lo + i0 + uint(u) >= pl.hi) break; // uniform over the subgroup
#else
            if (pl.lo + i0 + uint(u) >= pl.hi) { // every subgroup runs every product (the barriers are the workgroup's)
                [[unroll]] for (int j = 0; j < 4; j++) xv[u][j] = uvec4(0u);
            }
#endif
            COOP_UNROLL for (int j = 0; j < 4; j++) {
                FRAG_A a_;
                [[unroll]] for (int e = 0; e < 8; e++) FRAG_SET(a_, e, FRAG_HALVES(xv[u][j][e >> 1])[e & 1]);
                WIDEB_TILE(0, c0)
#if COOP_RT > 1
                WIDEB_TILE(1, c1)
#endif
#if COOP_RT > 2
                WIDEB_TILE(2, c2)
#endif
#if COOP_RT > 3
                WIDEB_TILE(3, c3)
#endif
            }
        }
    }

    // Each component times its token's s_t (rows t and t + 8 of C are token t's hi and lo
    // sums) into the shared sums, tile by tile; then per row and token the slices' hi and lo
    // parts added
    int n_el = COOP_LEN(pos);
    for (int e = 0; e < min(n_el, EL_MAX); e++) {
        uint p = COOP_P(pos, e), t = (p >> 3u) & 7u;
        float s = layout_ok ? uintBitsToFloat(XQ[t >> 2u][t & 3u]) * (BF16 || F32 ? 1.0 / 256.0 : 1.0)
                            : uintBitsToFloat(0x7FC00000u); // another layout: NaN, not a wrong number
        uint at = pl.sg * uint(COOP_RT) * 128u + p;
        coop_red_[at] = float(COOP_AT(c0, e)) * s;
#if COOP_RT > 1
        coop_red_[at + 128u] = float(COOP_AT(c1, e)) * s;
#endif
#if COOP_RT > 2
        coop_red_[at + 256u] = float(COOP_AT(c2, e)) * s;
#endif
#if COOP_RT > 3
        coop_red_[at + 384u] = float(COOP_AT(c3, e)) * s;
#endif
    }
    // more components than EL_MAX would leave sums out: NaN, which the oracle check refuses
    coop_store8(128u, n_el > EL_MAX);
}
