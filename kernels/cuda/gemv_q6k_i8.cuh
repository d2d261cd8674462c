// Multi-token q6_k GEMV on the int8 tensor cores (gemv_q6_k_i8.cu): the
// block loop, x digits and quantization of gemv_i8_common.cuh with q6_k's
// loads and step (design and measurements: docs/kernels/cuda-gemv.md, "q6_k
// on the int8 path").
//
// A super-block (210 bytes: ql[128], qh[64], 16 int8 scales, d) is 8 runs of
// 32 columns; run j = 4n + r takes column l's low 4 bits from ql[64n + 32(r & 1)
// + l] (nibble r >> 1) and its high 2 from qh[32n + l] (bits 2r, 2r + 1), and
// the value is d sc (q - 32) with sc = scales[8n + 2r + l / 16]: a scale per
// 16 columns. So a run is two mma.m16n8k16 per digit of x, one per half of
// 16 columns, each scaled by its own sc: lane (g, t)'s k slots 4t .. 4t + 3
// are columns 4t .. 4t + 3 in the first half and 16 + 4t .. in the second,
// and x's digits are stored permuted (PERM = 1: those two words side by
// side at 8t), so B stays one 8-byte load that serves both halves. A is the
// signed code q - 32 (in [-32, 31]) made per byte without a borrow.
//
// 210-byte super-blocks start at 2 mod 4 in every other one: a word that
// sits there is joined from the two aligned words around it (a byte
// permute), d is a 2-byte load (a 4-byte one could pass the weights' end).
#ifndef GPUBENCH_GEMV_Q6K_I8_CUH
#define GPUBENCH_GEMV_Q6K_I8_CUH

#include "gemv_i8_common.cuh"

struct GbI8Q6K {
    enum { BPC = 210, SX = GB_I8_SX_NONE, PERM = 1 };
    typedef float S;
    struct Raw {
        gb_u32 ql[2][2][2][2]; // [row g, g + 8][n][run pair p][half s]: ql bytes 64n + 32p + 16s + 4t ..
        gb_u32 qh[2][2][2];    // [row][n][half s]: qh bytes 32n + 16s + 4t ..
        gb_u32 sc[2][4];       // [row]: the 16 scale bytes
        gb_u32 d[2];           // [row]: d's 16 bits
    };
    // The 4 bytes at p, p 2-byte aligned.
    template <class Ctx>
    GB_HD static gb_u32 ld4u(Ctx& ctx, const unsigned char* p)
    {
        if ((reinterpret_cast<unsigned long long>(p) & 2) == 0) return ctx.ld4(p);
        return gb_prmt(ctx.ld4(p - 2), ctx.ld4(p + 2), 0x5432u); // bytes 2, 3 of the first, 0, 1 of the second
    }
    template <class Ctx>
    GB_HD static void load(Ctx& ctx, const unsigned char* ra, const unsigned char* rb, gb_u32 sb, gb_u32 nsb,
                           gb_u32 tq, Raw& r)
    {
        if (sb >= nsb) return;
        #pragma unroll
        for (int h = 0; h < 2; h++) {
            const unsigned char* b = (h ? rb : ra) + (gb_u64)sb * BPC;
            #pragma unroll
            for (int n = 0; n < 2; n++)
                #pragma unroll
                for (int s = 0; s < 2; s++) {
                    #pragma unroll
                    for (int p = 0; p < 2; p++) r.ql[h][n][p][s] = ld4u(ctx, b + 64 * n + 32 * p + 16 * s + 4 * tq);
                    r.qh[h][n][s] = ld4u(ctx, b + 128 + 32 * n + 16 * s + 4 * tq);
                }
            #pragma unroll
            for (int w = 0; w < 4; w++) r.sc[h][w] = ld4u(ctx, b + 192 + 4 * w);
            r.d[h] = ctx.ld2(b + 208);
        }
    }
    // The signed codes q - 32 of run (n, r), half s, row h: 4 bytes.
    GB_HD static gb_u32 codes(const Raw& w, int h, int n, int r, int s)
    {
        const gb_u32 q = ((w.ql[h][n][r & 1][s] >> (4 * (r >> 1))) & 0x0F0F0F0Fu) |
                         (((w.qh[h][n][s] >> (2 * r)) & 0x03030303u) << 4);
        // q - 32 per byte: flip bit 5; where it is then set (q < 32) bits 6 and 7 too
        const gb_u32 c = q ^ 0x20202020u, b5 = c & 0x20202020u;
        return c | (b5 << 1) | (b5 << 2);
    }
    GB_HD static float scale(const Raw& w, int h, int i) // scales[i] as a float
    {
        return (float)(int)(signed char)((w.sc[h][i >> 2] >> (8 * (i & 3))) & 0xFF);
    }
    template <int T, class Ctx, class X>
    GB_HD static void step(Ctx& ctx, const Raw* cur, const bool* go, const gb_u32* r0, gb_u32 m, const gb_u32* g,
                           const gb_u32* tq, const gb_u32* sl, const X* xs, float (*acc)[4])
    {
        enum { NT = Ctx::NT };
        bool live[NT]; // zero A for a warp past m (its loads are the last row's)
        GB_I8_EACH live[q] = r0[q] < m && go[q];
        #pragma unroll
        for (int j = 0; j < 8; j++) {
            const int n = j >> 2, r = j & 3;
            gb_u32 A0[NT][2], A1[NT][2], Bh0[NT], Bh1[NT], Bl0[NT], Bl1[NT];
            GbI8Bx<float> bx[NT];
            int Ch0[NT][4], Ch1[NT][4], Cl0[NT][4], Cl1[NT][4];
            GB_I8_EACH
            {
                A0[q][0] = live[q] ? codes(cur[q], 0, n, r, 0) : 0, A0[q][1] = live[q] ? codes(cur[q], 1, n, r, 0) : 0;
                A1[q][0] = live[q] ? codes(cur[q], 0, n, r, 1) : 0, A1[q][1] = live[q] ? codes(cur[q], 1, n, r, 1) : 0;
                gb_i8_bx<T>(ctx, xs[sl[q]], j, g[q], tq[q], bx[q]);
                Bh0[q] = bx[q].h[0], Bh1[q] = bx[q].h[1]; // x: half 0 in the first word, half 1 in the second
                Bl0[q] = bx[q].l[0], Bl1[q] = bx[q].l[1];
            }
            ctx.mma_s8k16(Ch0, A0, Bh0);
            ctx.mma_s8k16(Cl0, A0, Bl0);
            ctx.mma_s8k16(Ch1, A1, Bh1);
            ctx.mma_s8k16(Cl1, A1, Bl1);
            GB_I8_EACH
            {
                if (!go[q]) continue;
                const int si = 8 * n + 2 * r;
                const float sa0 = scale(cur[q], 0, si), sa1 = scale(cur[q], 0, si + 1);
                const float sb0 = scale(cur[q], 1, si), sb1 = scale(cur[q], 1, si + 1);
                const float da = gb_half_to_float(cur[q].d[0] & 0xFFFF), db = gb_half_to_float(cur[q].d[1] & 0xFFFF);
                #pragma unroll
                for (int i = 0; i < 4; i++) {
                    if (GB_I8_PAST_T(tq[q], i)) continue;
                    // each half's sum is exact in float: |sum| <= 16 * 32 * 32639 < 2^24
                    const float v0 = (float)(256 * Ch0[q][i] + Cl0[q][i]), v1 = (float)(256 * Ch1[q][i] + Cl1[q][i]);
                    const float v = i < 2 ? fmaf(sa1, v1, sa0 * v0) : fmaf(sb1, v1, sb0 * v0);
                    acc[q][i] = fmaf((i < 2 ? da : db) * bx[q].dx[i & 1], v, acc[q][i]);
                }
            }
        }
    }
};


#endif
