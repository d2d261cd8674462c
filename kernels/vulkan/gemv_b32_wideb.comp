#version 450
// The q8_0 (COOP_FMT=1) and q4_0 (2) GEMV for T = 1..8 rows of x on int8 cooperative matrices
// with W in B (COOP_REG=3; docs/kernels/vulkan-gemv.md, "q8_0 with W in B"), f16's
// gemv_dense_wideb.comp for 34- and 18-byte blocks. B (32 k x 8 columns) gives lane L (g = L /
// 4, q = L % 4) column g at k 4q..4q + 3 and 16 + 4q..19 + 4q: one block of one row is a step,
// 8 codes a lane (q8_0: bytes 4q.. and 16 + 4q..; q4_0: the low and high nibbles of bytes
// 4q..4q + 3, one word), so the loads that fill B straight from W would read 8 rows x 32 (16)
// bytes an instruction, half of them 2 bytes off a word. Instead a subgroup copies its COOP_RT
// tiles of 8 rows x 8 blocks (272 or 144 bytes a row, 17 or 9 aligned uvec4s: k a multiple of
// 256) into shared memory in row order, 512 contiguous bytes an instruction, and each lane reads
// its words back (a funnel where the block's codes start 2 bytes into a word). q4_0's codes are
// the nibbles as they are (0..15): each block's sum takes 8 sum(xq) off. A (16 x 32) holds x:
// row t < 8 token t's high digits, row t + 8 its low ones (xq = 256 h + l, gemv_idot_xprep.comp
// with XPREP_COOP=2, whose record order is A's), so one mma gives both, and a lane holds a
// token's high and low sums of two rows: 256 h + l times s_b of the token and d of each row
// into float sums. The next
// unit's loads are in flight while this one is multiplied. The loads and the result's use
// assume NVIDIA's layouts (coop_frag8.glsl, coop_core.glsl): another one makes y NaN; the
// emulation holds them (FRAG_MMA_LAYOUT).
#extension GL_GOOGLE_include_directive : require
#ifndef FRAG_MMA_LAYOUT
#define FRAG_MMA_LAYOUT 1 // the emulation in NVIDIA's layout (0: another, the NaN test of the layout check)
#endif
#define COOP_TILE_ROWS 8
#include "coop_common.glsl"
#include "coop_frag8.glsl"

#if !defined(COOP_FMT) || (COOP_FMT != 1 && COOP_FMT != 2)
#error "gemv_b32_wideb.comp is q8_0's (COOP_FMT=1) and q4_0's (2) (lib/gpubench/gemv_vulkan.lua)"
#endif

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

#define Q4 (COOP_FMT == 2)
#define BLOCK_BYTES (Q4 ? 18 : 34)
#define ROW_U4 uint(BLOCK_BYTES / 2)           // uvec4s of a row's unit (8 blocks)
#define ROW_WORDS uint(2 * BLOCK_BYTES)
#define UNIT_U4 (8u * ROW_U4 * uint(COOP_RT)) // a subgroup's unit: its tiles' rows
#define LOADS ((4 * BLOCK_BYTES * COOP_RT + 31) / 32) // uvec4s a lane loads a unit

shared uint stage_[SGS * 16 * BLOCK_BYTES * COOP_RT];

// The 4 bytes at byte o of the stage (o even)
uint stage_word(uint o) {
    uint w = o >> 2u;
    return (o & 2u) == 0u ? stage_[w] : (stage_[w] >> 16u) | (stage_[w + 1u] << 16u);
}

void main() {
    uint nb = P.k >> 5u, units = P.k >> 8u, row_u4s = units * ROW_U4;
    CoopPlace pl = coop_place(units);
    uint lane = COOP_LANE, g = lane >> 2u, q = lane & 3u;

    // The result's layout too is assumed NVIDIA's: components 0, 1 token g's high-digit sums of
    // the tile's rows 2q, 2q + 1, components 2, 3 its low-digit ones (row g + 8), so a lane adds
    // 256 h + l itself and scales the sum by token g's s_b and its two rows' d
    COOP_C pos = coop_positions();
    bool layout_ok;
    FRAG8_LAYOUT_OK(layout_ok)
    layout_ok = layout_ok && COOP_LEN(pos) == 4;
    [[unroll]] for (int e = 0; e < 4; e++)
        if (e < COOP_LEN(pos)) layout_ok = layout_ok && COOP_P(pos, e) == (g + 8u * uint(e >> 1)) * 8u + 2u * q + uint(e & 1);
    uint srec = 5u * g * nb + 4u; // token g's record of block 0: s_b in .x
    float acc[COOP_RT][2];
    for (int i = 0; i < COOP_RT; i++) acc[i][0] = acc[i][1] = 0.0;

    // the uvec4s a lane loads: index f of the subgroup's unit, tile f / (8 ROW_U4), row (f /
    // ROW_U4) % 8 (rows past m clamped: read, never stored), uvec4 f % ROW_U4
    uint src[LOADS];
    [[unroll]] for (int l = 0; l < LOADS; l++) {
        uint f = min(uint(32 * l) + lane, UNIT_U4 - 1u);
        src[l] = min(pl.row0 + f / ROW_U4, P.m - 1u) * row_u4s + f % ROW_U4;
    }
    uint sb = pl.sg * UNIT_U4 * 4u; // the subgroup's stage, in words

    uvec4 v[LOADS];
    uint cu0 = min(pl.lo, max(pl.hi, 1u) - 1u);
    [[unroll]] for (int l = 0; l < LOADS; l++) v[l] = W[src[l] + ROW_U4 * cu0];
    for (uint i0 = 0u; i0 < pl.per; i0++) {
        COOP_WAIT(); // the last unit's reads of the stage are done
        [[unroll]] for (int l = 0; l < LOADS; l++) {
            uint f = uint(32 * l) + lane;
            if (f < UNIT_U4) {
                uint o = sb + 4u * f;
                stage_[o] = v[l].x; stage_[o + 1u] = v[l].y; stage_[o + 2u] = v[l].z; stage_[o + 3u] = v[l].w;
            }
        }
        COOP_SYNC();
        uint cu = min(pl.lo + i0, max(pl.hi, 1u) - 1u);
        // the next unit's loads before this one's products (past the slice: clamped, not used)
        uint nu = min(pl.lo + i0 + 1u, max(pl.hi, 1u) - 1u);
        [[unroll]] for (int l = 0; l < LOADS; l++) v[l] = W[src[l] + ROW_U4 * nu];
        // a unit past the slice (clamped onto its last) adds nothing; emulated, its products still run
        // (the barriers are the workgroup's)
        float live = pl.lo + i0 < pl.hi ? 1.0 : 0.0;
#if !COOP_EMULATE
        if (pl.lo + i0 >= pl.hi) break; // uniform over the subgroup
#endif
        COOP_UNROLL for (uint j = 0u; j < 8u; j++) {
            uint b = 8u * cu + j;
            uvec4 xa = XQ[5u * (g * nb + b) + q];
            uint aw[4] = uint[4](xa.x, xa.y, xa.z, xa.w);
            FRAG8_A a;
            FRAG8_FILL_A(a, aw)
            uvec2 sr = XQ[srec + 5u * b].xy; // s_b, the sum of xq
            float s = uintBitsToFloat(sr.x) * live;
            int off = Q4 ? 8 * int(sr.y) : 0; // q4_0: the codes' 8 times the sum of xq
            [[unroll]] for (int i = 0; i < COOP_RT; i++) {
                uint tile = sb + uint(i) * 8u * ROW_WORDS;
                uint ob = 4u * (tile + g * ROW_WORDS) + uint(BLOCK_BYTES) * j + 2u + 4u * q; // the lane's first code byte
                FRAG8_B bm;
#if Q4
                uint nw = stage_word(ob);
                FRAG8_FILL_B(bm, nw & 0x0F0F0F0Fu, (nw >> 4u) & 0x0F0F0F0Fu)
#else
                FRAG8_FILL_B(bm, stage_word(ob), stage_word(ob + 16u))
#endif
#if COOP_EMULATE
                COOP_C c;
                for (int e = 0; e < 4; e++) c.v[e] = 0;
#else
                COOP_C c = COOP_C(0);
#endif
                FRAG8_MMA(c, a, bm);
                // |h| <= 32 * 127 * 128: 256 h + l is exact in int32
                int h0 = COOP_AT(c, 0) * 256 + COOP_AT(c, 2) - off, h1 = COOP_AT(c, 1) * 256 + COOP_AT(c, 3) - off;
                // d of rows 2q and 2q + 1: the f16 at byte BLOCK_BYTES j of the row (the word's high half where j is odd)
                uint dw = tile + 2u * q * ROW_WORDS + ((uint(BLOCK_BYTES) * j) >> 2u);
                acc[i][0] += float(h0) * s * unpackHalf2x16(stage_[dw])[j & 1u];
                acc[i][1] += float(h1) * s * unpackHalf2x16(stage_[dw + ROW_WORDS])[j & 1u];
            }
        }
    }

    // each tile's sums of token g, rows 2q and 2q + 1 into shared memory (NaN where the layouts
    // are not NVIDIA's), then per row and token the slices' added (coop_store8)
    for (int i = 0; i < COOP_RT; i++)
        for (int c = 0; c < 2; c++)
            coop_red_[(pl.sg * uint(COOP_RT) + uint(i)) * 64u + g * 8u + 2u * q + uint(c)] =
                layout_ok ? acc[i][c] : uintBitsToFloat(0x7FC00000u);
    coop_store8(64u, false);
}
