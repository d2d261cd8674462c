// Multi-token q8_0 and q4_0 GEMV on the int8 tensor cores (gemv_q8_0_i8.cu,
// gemv_q4_0_i8.cu): the q4_k kernel's block loop, x digits and mma layout
// (gemv_i8_common.cuh) with a chunk of 256 columns = 8 blocks of 32, one mma
// pair per block (A = the block's codes, B = its 32 columns of x), scaled by
// the row's d and the run's dx. Design and instruction estimate:
// docs/kernels/cuda-gemv.md, "The int8 tensor-core q8_0 and q4_0 kernels".
//
// Blocks are 34 (q8_0) or 18 (q4_0) bytes, so a lane's code bytes are only
// 2-byte aligned in every other block. The loads go by pairs of blocks (68
// or 36 bytes, 4-byte aligned where k is a multiple of 256): 4-byte words,
// and a byte permute joins two where the codes sit at 2 mod 4; every lane
// also loads the two words holding the pair's scales.
//   q8_0: lane t takes code bytes 8t .. 8t + 7 (columns 8t ..): k slots
//         4t .. 4t + 3 = columns 8t .. 8t + 3, slots 16 + 4t .. = 8t + 4 ..,
//         the q4_k kernel's mapping; A is the signed codes as they are.
//   q4_0: lane t takes code bytes 4t .. 4t + 3: low nibbles = columns 4t ..
//         (slots 4t ..), high nibbles = columns 16 + 4t .. (slots 16 + 4t ..);
//         x's digits are stored permuted (PERM = 1) so that B is still one
//         8-byte load. The codes' offset of 8 is not taken out of A (that
//         would cost 2 instructions per A register, 8 per lane and block)
//         but goes into the l mma's C input as -8 sum(x') per row of x,
//         x' = round(x / dx) the quantized digits (exact integers, stored by
//         the quantization): C = sum q x' - 8 sum x' = sum (q - 8) x', so the
//         result is that of A = q - 8 exactly, at no instruction in the step.
#ifndef GPUBENCH_GEMV_B32_I8_CUH
#define GPUBENCH_GEMV_B32_I8_CUH

#include "gemv_i8_common.cuh"

// q8_0: a pair of blocks is 17 words V0 .. V16: V0 = d0 | codes 0, 1;
// V8 = codes 30, 31 of block 0 | d1; block 1's codes are V9 .. V16.
struct GbI8Q8_0 {
    // SSTRIDE: a row's bytes in a staged ring (STG > 0, gemv_i8_common.cuh): 72 words, 8 mod 32
    // (a half-warp's 4-byte loads of 4 rows x 4 lanes on distinct banks)
    enum { BPC = 8 * 34, SX = GB_I8_SX_NONE, PERM = 0, SSTRIDE = 288 };
    typedef float S;
    struct Raw {
        gb_u32 w[2][4][7]; // [row g, g + 8][pair]: V0, V8, V2t, V2t+1, V2t+2, V9+2t, V10+2t
    };
    template <class Ctx>
    GB_HD static void load(Ctx& ctx, const unsigned char* ra, const unsigned char* rb, gb_u32 sb, gb_u32 nsb,
                           gb_u32 tq, Raw& r)
    {
        if (sb >= nsb) return;
        #pragma unroll
        for (int h = 0; h < 2; h++) {
            const unsigned char* base = (h ? rb : ra) + (gb_u64)sb * BPC;
            #pragma unroll
            for (int c = 0; c < 4; c++) {
                const unsigned char* p = base + 68 * c;
                r.w[h][c][0] = ctx.ld4(p), r.w[h][c][1] = ctx.ld4(p + 32);
                r.w[h][c][2] = ctx.ld4(p + 8 * tq), r.w[h][c][3] = ctx.ld4(p + 8 * tq + 4);
                r.w[h][c][4] = ctx.ld4(p + 8 * tq + 8);
                r.w[h][c][5] = ctx.ld4(p + 36 + 8 * tq), r.w[h][c][6] = ctx.ld4(p + 40 + 8 * tq);
            }
        }
    }
    // the lane's A words of block j of row h: k slots 4t .. and 16 + 4t ..
    GB_HD static void codes(const Raw& r, int h, int j, gb_u32& lo, gb_u32& hi)
    {
        const gb_u32* w = r.w[h][j >> 1];
        if (j & 1) lo = w[5], hi = w[6];
        else lo = gb_prmt(w[2], w[3], 0x5432u), hi = gb_prmt(w[3], w[4], 0x5432u); // bytes 2 .. 5: a shift by 16
    }
    GB_HD static gb_u32 dbits(const Raw& r, int h, int j) { return (j & 1) ? r.w[h][j >> 1][1] >> 16 : r.w[h][j >> 1][0] & 0xFFFF; }
};

// q4_0: a pair of blocks is 9 words W0 .. W8: W0 = d0 | codes 0, 1; W1 .. W3
// codes 2 .. 13; W4 = codes 14, 15 | d1; block 1's codes are W5 .. W8.
struct GbI8Q4_0 {
    enum { BPC = 8 * 18, SX = GB_I8_SX_OFF8, PERM = 1, SSTRIDE = 160 }; // SSTRIDE: 40 words, as q4_k's
    typedef int S;
    struct Raw {
        gb_u32 w[2][4][5]; // [row g, g + 8][pair]: W0, W4, Wt, Wt+1, W5+t
    };
    template <class Ctx>
    GB_HD static void load(Ctx& ctx, const unsigned char* ra, const unsigned char* rb, gb_u32 sb, gb_u32 nsb,
                           gb_u32 tq, Raw& r)
    {
        if (sb >= nsb) return;
        #pragma unroll
        for (int h = 0; h < 2; h++) {
            const unsigned char* base = (h ? rb : ra) + (gb_u64)sb * BPC;
            #pragma unroll
            for (int c = 0; c < 4; c++) {
                const unsigned char* p = base + 36 * c;
                r.w[h][c][0] = ctx.ld4(p), r.w[h][c][1] = ctx.ld4(p + 16);
                r.w[h][c][2] = ctx.ld4(p + 4 * tq), r.w[h][c][3] = ctx.ld4(p + 4 * tq + 4);
                r.w[h][c][4] = ctx.ld4(p + 20 + 4 * tq);
            }
        }
    }
    GB_HD static void codes(const Raw& r, int h, int j, gb_u32& lo, gb_u32& hi)
    {
        const gb_u32* w = r.w[h][j >> 1];
        const gb_u32 v = (j & 1) ? w[4] : gb_prmt(w[2], w[3], 0x5432u);
        lo = v & 0x0F0F0F0Fu, hi = (v >> 4) & 0x0F0F0F0Fu;
    }
    GB_HD static gb_u32 dbits(const Raw& r, int h, int j) { return (j & 1) ? r.w[h][j >> 1][1] >> 16 : r.w[h][j >> 1][0] & 0xFFFF; }
};

// The step of a 32-weight-block format Fm for gb_i8_block: per block j of
// the chunk, two mmas and y += d dx (256 C_h + C_l) for the lane's 2 rows x
// 2 rows of x (the C fragment: rows g, g + 8, columns 2t, 2t + 1).
template <class Fm>
struct GbI8B32 : Fm {
    template <int T, class Ctx, class X>
    GB_HD static void step(Ctx& ctx, const typename Fm::Raw* cur, const bool* go, const gb_u32* r0, gb_u32 m,
                           const gb_u32* g, const gb_u32* tq, const gb_u32* sl, const X* xs, float (*acc)[4])
    {
        enum { NT = Ctx::NT };
        bool live[NT]; // zero A for a warp past m (its loads are the last row's)
        GB_I8_EACH live[q] = r0[q] < m && go[q];
        #pragma unroll
        for (int j = 0; j < 8; j++) {
            gb_u32 A[NT][4], Bh[NT][2], Bl[NT][2];
            GbI8Bx<typename Fm::S> bx[NT];
            int Ch[NT][4], Cl[NT][4], C0[NT][4];
            GB_I8_EACH
            {
                gb_u32 a0, a2, b0, b2;
                Fm::codes(cur[q], 0, j, a0, a2);
                Fm::codes(cur[q], 1, j, b0, b2);
                A[q][0] = live[q] ? a0 : 0, A[q][1] = live[q] ? b0 : 0;
                A[q][2] = live[q] ? a2 : 0, A[q][3] = live[q] ? b2 : 0;
                gb_i8_bx<T>(ctx, xs[sl[q]], j, g[q], tq[q], bx[q]);
                Bh[q][0] = bx[q].h[0], Bh[q][1] = bx[q].h[1], Bl[q][0] = bx[q].l[0], Bl[q][1] = bx[q].l[1];
                if ((int)Fm::SX == (int)GB_I8_SX_OFF8) { // -8 sum(x') of the C columns' rows of x (any value past T)
                    C0[q][0] = C0[q][2] = (int)bx[q].sx[0];
                    C0[q][1] = C0[q][3] = (int)bx[q].sx[1];
                }
            }
            ctx.mma_s8(Ch, A, Bh);
            if ((int)Fm::SX == (int)GB_I8_SX_OFF8) ctx.mma_s8c(Cl, A, Bl, C0);
            else ctx.mma_s8(Cl, A, Bl);
            GB_I8_EACH
            {
                if (!go[q]) continue;
                const float da = gb_half_to_float(Fm::dbits(cur[q], 0, j)), db = gb_half_to_float(Fm::dbits(cur[q], 1, j));
                #pragma unroll
                for (int i = 0; i < 4; i++) {
                    if (GB_I8_PAST_T(tq[q], i)) continue;
                    const float v = (float)(256 * Ch[q][i] + Cl[q][i]);
                    acc[q][i] = fmaf((i < 2 ? da : db) * bx[q].dx[i & 1], v, acc[q][i]);
                }
            }
        }
    }
};

#endif
