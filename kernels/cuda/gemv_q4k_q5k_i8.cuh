// Multi-token q4_k and q5_k GEMV on the int8 tensor cores: y[T, m] =
// x[T, k] . W^T for T = 1..8 rows of x, each weight read once
// (gemv_q4_k_i8.cu, gemv_q5_k_i8.cu; the design and its instruction budget:
// docs/kernels/cuda-gemv.md, "T = 8 on the H200" and "q5_k on the int8 path").
//
// mma.sync m16n8k32 .s8.s8.s32: A = 16 weight rows x 32 columns of one
// sub-block as their codes (q4_k: one mask per 4 codes; q5_k: the fifth bit
// of each from qh joined in by one shift and mask, codes 0..31 still fit s8),
// B = the same 32 columns of the T x rows (columns of the mma; zero past T),
// as 16-bit integers split into two int8 digits, x ~ dx (256 h + l): two mmas
// (h, l), whose sum 256 C_h + C_l is exactly sum q * round(x / dx), so x keeps
// 16 bits like the scalar path's integer dot. Per (row, sub-block) the result
// is scaled by d sc dx; the mins subtract dmin m sum(x) with sum(x) exact.
//
// Which column sits in which k slot is free as long as A and B agree: lane
// (g, t) = (lane / 4, lane % 4) takes bytes 8t .. 8t + 7 of a 32-byte run of
// its rows g and g + 8 (low nibbles: sub-block 2c, high: 2c + 1), so its
// k slots 4t .. 4t + 3 hold columns 8t .. 8t + 3 and slots 16 + 4t .. those of
// 8t + 4 .. 8t + 7, and B's lane reads x row g at the same 8 columns: one
// 8-byte load each. q5_k's fifth bits of those columns are bytes 8t .. 8t + 7
// of qh (bit j for sub-block j): one more 8-byte load per row.
//
// The block loop (gemv_i8_common.cuh, gb_i8_block) is shared with the q8_0
// and q4_0 kernels: NW warps of 16 rows times KS slices of k, a step one
// super-block per slice. More slices put more warps on the same rows (14336
// rows are only 896 warps of 16) while x's quantization stays shared by the
// block's 16 NW rows. Here: the two formats' loads and their step (GbI8QK).
#ifndef GPUBENCH_GEMV_Q4K_Q5K_I8_CUH
#define GPUBENCH_GEMV_Q4K_Q5K_I8_CUH

#include "gemv_i8_common.cuh" // the x digits, the block loop, the GPU context; gb_k_scales

// A lane's loads of one super-block of its rows g and g + 8: the 16-byte
// headers (d, dmin, scales), 4 code words of 8 bytes each and (q5_k) the
// 8 bytes of qh that hold its columns' fifth bits.
struct GbI8Raw {
    uint4 xa, xb;
    uint2 va[4], vb[4];
    uint2 ha, hb;
};

// q4_k (Q5 = 0) and q5_k (Q5 = 1) for gb_i8_block: a chunk is one
// super-block (d, dmin, 12 scale bytes, q5_k's 32 bytes of qh, 128 code
// bytes); step runs its 8 sub-blocks (A: the lane's code words masked to one
// nibble, q5_k's fifth bit put above it), the epilogue scales by d sc dx and
// subtracts dmin m sum(x).
template <int Q5>
struct GbI8QK {
    // SSTRIDE: a row's bytes in a staged ring (STG > 0, gemv_i8_common.cuh): 40 and 56 words,
    // 8 and 24 mod 32, so that the rows of a half-warp's 8-byte loads take distinct banks
    enum { BPC = Q5 ? 176 : 144, CODES = Q5 ? 48 : 16, SX = GB_I8_SX_FLOAT, PERM = 0, SSTRIDE = Q5 ? 224 : 160 };
    typedef float S;
    typedef GbI8Raw Raw;
    // Super-block sb of the rows starting at ra and rb into r; nothing where
    // sb is past the last (nsb), r then keeps what it held.
    template <class Ctx>
    GB_HD static void load(Ctx& ctx, const unsigned char* ra, const unsigned char* rb, gb_u32 sb, gb_u32 nsb,
                           gb_u32 tq, Raw& r)
    {
        if (sb >= nsb) return;
        const unsigned char *a = ra + (gb_u64)sb * BPC, *b = rb + (gb_u64)sb * BPC;
        r.xa = ctx.ld16(a), r.xb = ctx.ld16(b);
        #pragma unroll
        for (int c = 0; c < 4; c++)
            r.va[c] = ctx.ld8(a + CODES + 32 * c + 8 * tq), r.vb[c] = ctx.ld8(b + CODES + 32 * c + 8 * tq);
        if (Q5) r.ha = ctx.ld8(a + 16 + 8 * tq), r.hb = ctx.ld8(b + 16 + 8 * tq);
    }
    template <int T, class Ctx, class X>
    GB_HD static void step(Ctx& ctx, const Raw* cur, const bool* go, const gb_u32* r0, gb_u32 m, const gb_u32* g,
                           const gb_u32* tq, const gb_u32* sl, const X* xs, float (*acc)[4])
    {
        enum { NT = Ctx::NT };
        // the scales of the lane's two rows and its code words (zero for a warp past m or a missing super-block)
        float da[NT], db[NT], ma[NT], mb[NT];
        gb_u32 sca[NT][2], mna[NT][2], scb[NT][2], mnb[NT][2], wa[NT][4][2], wb[NT][4][2]; // [j / 4]: byte j % 4
        gb_u32 ha[NT][2], hb[NT][2]; // q5_k's fifth bits
        GB_I8_EACH
        {
            const bool live = r0[q] < m && go[q];
            const uint4 xa = cur[q].xa, xb = cur[q].xb;
#pragma unroll
            for (int u = 0; u < 2; u++) {
                gb_k_scales(xa.y, xa.z, xa.w, u == 1, sca[q][u], mna[q][u]);
                gb_k_scales(xb.y, xb.z, xb.w, u == 1, scb[q][u], mnb[q][u]);
            }
            da[q] = gb_half_to_float(xa.x & 0xFFFF), ma[q] = gb_half_to_float(xa.x >> 16);
            db[q] = gb_half_to_float(xb.x & 0xFFFF), mb[q] = gb_half_to_float(xb.x >> 16);
            #pragma unroll
            for (int c = 0; c < 4; c++) {
                wa[q][c][0] = live ? cur[q].va[c].x : 0, wa[q][c][1] = live ? cur[q].va[c].y : 0;
                wb[q][c][0] = live ? cur[q].vb[c].x : 0, wb[q][c][1] = live ? cur[q].vb[c].y : 0;
            }
            if (Q5) {
                ha[q][0] = live ? cur[q].ha.x : 0, ha[q][1] = live ? cur[q].ha.y : 0;
                hb[q][0] = live ? cur[q].hb.x : 0, hb[q][1] = live ? cur[q].hb.y : 0;
            }
        }
        #pragma unroll
        for (int c = 0; c < 4; c++) {
            #pragma unroll
            for (int h = 0; h < 2; h++) {
                const int j = 2 * c + h;
                gb_u32 A[NT][4], Bh[NT][2], Bl[NT][2];
                GbI8Bx<float> bx[NT];
                int Ch[NT][4], Cl[NT][4];
                GB_I8_EACH
                {
                    const gb_u32 M = 0x0F0F0F0Fu, s = 4u * h;
                    A[q][0] = (wa[q][c][0] >> s) & M, A[q][1] = (wb[q][c][0] >> s) & M;
                    A[q][2] = (wa[q][c][1] >> s) & M, A[q][3] = (wb[q][c][1] >> s) & M;
                    if (Q5) { // bit j of each qh byte to bit 4 of the code byte
                        const gb_u32 H = 0x10101010u;
                        A[q][0] |= ((ha[q][0] >> j) << 4) & H, A[q][1] |= ((hb[q][0] >> j) << 4) & H;
                        A[q][2] |= ((ha[q][1] >> j) << 4) & H, A[q][3] |= ((hb[q][1] >> j) << 4) & H;
                    }
                    gb_i8_bx<T>(ctx, xs[sl[q]], j, g[q], tq[q], bx[q]);
                    Bh[q][0] = bx[q].h[0], Bh[q][1] = bx[q].h[1], Bl[q][0] = bx[q].l[0], Bl[q][1] = bx[q].l[1];
                }
                ctx.mma_s8(Ch, A, Bh);
                ctx.mma_s8(Cl, A, Bl);
                GB_I8_EACH
                {
                    if (!go[q]) continue;
                    const gb_u32 sh = 8u * (j & 3);
                    const float ka = (float)((sca[q][j >> 2] >> sh) & 0xFF), kma = (float)((mna[q][j >> 2] >> sh) & 0xFF);
                    const float kb = (float)((scb[q][j >> 2] >> sh) & 0xFF), kmb = (float)((mnb[q][j >> 2] >> sh) & 0xFF);
                    #pragma unroll
                    for (int i = 0; i < 4; i++) {
                        if (GB_I8_PAST_T(tq[q], i)) continue;
                        const float ds = i < 2 ? da[q] * ka : db[q] * kb;
                        const float dm = i < 2 ? ma[q] * kma : mb[q] * kmb;
                        const float v = (float)(256 * Ch[q][i] + Cl[q][i]);
                        acc[q][i] = fmaf(ds * bx[q].dx[i & 1], v, fmaf(-dm, bx[q].sx[i & 1], acc[q][i]));
                    }
                }
            }
        }
    }
};

typedef GbI8QK<0> GbI8Q4K;
typedef GbI8QK<1> GbI8Q5K;

#endif
