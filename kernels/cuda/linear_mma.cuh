// The tensor-core route of the CUDA Linear kernels (large T): a tiled GEMM on
// mma.sync m16n8k16 bf16 with the weights decoded in registers.
// docs/kernels/cuda-linear.md, "Tensor-core route".
//
// A block computes a tile of BM = 32 NW rows of W by BN rows t of x, K walked
// in units of 64. Warp w owns rows [32 w, 32 w + 32) of the tile (two m16
// tiles) and all BN columns (BN / 8 n8 tiles): each weight is loaded and
// decoded by exactly one warp of the block, straight from global memory into
// registers (the next unit's loads are issued as soon as this unit is
// decoded, before its mmas), and used for BN columns. The x tile (BN x 64 bf16) is shared by the warps: S
// shared-memory stages filled with 16-byte cp.async, S - 1 units in flight,
// one barrier per unit; zero-filled past T and past K, so x is never read
// there. The 16-byte chunks of a stage row are XOR-swizzled by the row's
// parity (ln_xswz).
#ifndef GPUBENCH_LINEAR_MMA_CUH
#define GPUBENCH_LINEAR_MMA_CUH

#include "linear_tile.cuh"

template <int BN, int S>
struct LnMmaSmem {
    unsigned char x[S][BN][128]; // stage, row t, 64 bf16 (8 chunks, swizzled)
};

// Byte offset of chunk c in stage row r: swizzled by the row's parity with
// the format's SWZ (1 or 4), so that a quarter-warp's 8 LDS.128 (two rows,
// F::chunk(t, h) for t = 0..3) hit 8 different 16-byte bank groups.
template <int SWZ>
GB_HD gb_u32 ln_xswz(gb_u32 r, gb_u32 c) { return 16 * (c ^ ((r & 1) * SWZ)); }

// Copies x unit u (k = 64 u .. 64 u + 63) of rows t0 .. t0 + BN - 1 into stage st.
#pragma nv_exec_check_disable
template <int SWZ, int NW, int BN, int S, class Ctx>
GB_HD void ln_stage_x(Ctx& ctx, const unsigned short* x, gb_u32 K, gb_u32 T, gb_u32 t0, gb_u32 u,
                      LnMmaSmem<BN, S>& sm, int st)
{
    enum { CPT = BN * 8 / (32 * NW) }; // chunks per thread
    static_assert(CPT * 32 * NW == BN * 8, "LN_BN * 8 chunks must split evenly over the block's threads");
    LN_EACH
    {
#pragma unroll
        for (int m = 0; m < CPT; m++) {
            const gb_u32 id = ctx.tid(q) + 32 * NW * m, r = id / 8, c = id % 8;
            const gb_u32 k = 64 * u + 8 * c, tt = t0 + r;
            const bool p = tt < T && k < K;
            ctx.cp_x(&sm.x[st][r][ln_xswz<SWZ>(r, c)], p ? x + (gb_u64)tt * K + k : x, p);
        }
    }
}

#pragma nv_exec_check_disable
template <class F, int NW, int BN, int S, class Ctx>
GB_HD void ln_mma_block(Ctx& ctx, const unsigned char* W, const unsigned short* x, unsigned short* y, gb_u32 N,
                        gb_u32 K, gb_u32 T, float gscale, gb_u32 bx, gb_u32 by, LnMmaSmem<BN, S>& sm)
{
    enum { NT = Ctx::NT, RT = 2, NJ = BN / 8, BM = 32 * NW };
    static_assert(F::E == 16, "the tensor-core route takes runs of 16 (units of 64)");
    static_assert(BN % 8 == 0 && S >= 2, "LN_BN must be a multiple of 8 and LN_STAGES at least 2");
    typedef typename F::Raw Raw;
    const LnGeo geo = F::geo(W, N, K);
    const gb_u32 nunits = (K + 63) / 64, n0 = bx * BM, t0 = by * BN;
    gb_u32 g[NT], t[NT], rowb[NT];
    float acc[NT][RT][NJ][4];
    LN_EACH
    {
        const gb_u32 tid = ctx.tid(q);
        g[q] = (tid & 31) >> 2, t[q] = tid & 3, rowb[q] = n0 + 32 * (tid >> 5) + g[q];
#pragma unroll
        for (int i = 0; i < RT; i++)
#pragma unroll
            for (int j = 0; j < NJ; j++)
#pragma unroll
                for (int c = 0; c < 4; c++) acc[q][i][j][c] = 0.0f;
    }
    // Rows past N are read as row N - 1: their sums are never stored.
    LnPtr P[NT][RT][2];
    Raw cur[NT][RT][2]; // the next unit's runs: reloaded as soon as this unit's are decoded
    LN_EACH
#pragma unroll
    for (int i = 0; i < RT; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const gb_u32 row = rowb[q] + 16 * i + 8 * h;
            P[q][i][h] = F::ptr(geo, row < N ? row : N - 1, t[q]);
            if (nunits == 1) F::template load<true>(ctx, P[q][i][h], 0, (int)K - 8 * (int)F::chunk(t[q], 0), cur[q][i][h]);
            else F::template load<false>(ctx, P[q][i][h], 0, 0, cur[q][i][h]);
        }
#pragma unroll
    for (int st = 0; st < S - 1; st++) {
        if ((gb_u32)st < nunits) ln_stage_x<F::SWZ, NW, BN, S>(ctx, x, K, T, t0, st, sm, st);
        ctx.commit();
    }
    for (gb_u32 u = 0; u < nunits; u++) {
        ctx.template wait<S - 2>();
        ctx.barrier(); // unit u's stage has landed for every thread; unit u - 1's stage is free
        const gb_u32 un = u + S - 1;
        if (un < nunits) ln_stage_x<F::SWZ, NW, BN, S>(ctx, x, K, T, t0, un, sm, (int)(un % S));
        ctx.commit();
        gb_u32 A[NT][RT][4][4];
        float s[NT][RT][2][F::NG];
        ln_decode_unit<F, RT, Ctx>(cur, A, s);
        if (u + 1 < nunits) {
            // one load whatever the unit, except for TAIL_CUT formats (as
            // linear_wgmma.cuh's load_unit)
            const bool last = u + 2 == nunits; // the only unit that can reach past K
            LN_EACH
#pragma unroll
            for (int i = 0; i < RT; i++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const LnPtr pr = ln_at<F>(P[q][i][h], u + 1);
                    if (F::TAIL_CUT && !last) F::template load<false>(ctx, pr, 0, 0, cur[q][i][h]);
                    else F::template load<true>(ctx, pr, 0, (int)K - 64 * (int)(u + 1) - 8 * (int)F::chunk(t[q], 0), cur[q][i][h]);
                }
        }
        const int st = (int)(u % S);
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            gb_u32 B[NT][4][2];
            LN_EACH
            {
                const gb_u32 r = 8 * j + g[q];
                gb_u32 X[8];
                ctx.lds128(&sm.x[st][r][ln_xswz<F::SWZ>(r, F::chunk(t[q], 0))], X);
                ctx.lds128(&sm.x[st][r][ln_xswz<F::SWZ>(r, F::chunk(t[q], 1))], X + 4);
                ln_bfrag(X, B[q]);
            }
            ln_col<F::MODE, F::KG, F::NG, RT, NJ>(ctx, A, B, s, acc, j);
        }
    }
    LN_EACH
#pragma unroll
    for (int i = 0; i < RT; i++)
#pragma unroll
    for (int j = 0; j < NJ; j++)
#pragma unroll
    for (int c = 0; c < 4; c++)
    {
        const gb_u32 n = rowb[q] + 16 * i + 8 * (c >> 1), tt = t0 + 8 * j + 2 * t[q] + (c & 1);
        if (n < N && tt < T) {
            const float v = F::GSCALE ? acc[q][i][j][c] * gscale : acc[q][i][j][c];
            ctx.st_y(y + (gb_u64)tt * N + n, ln_bf16(v));
        }
    }
}

#ifdef __CUDACC__
template <class F, int NW, int BN, int S>
__device__ __forceinline__ void ln_mma(const unsigned char* W, const unsigned short* x, unsigned short* y, gb_u32 N,
                                       gb_u32 K, gb_u32 T, float gscale)
{
    static_assert(sizeof(LnMmaSmem<BN, S>) <= 48 * 1024,
                  "LN_STAGES x LN_BN rows of 128 bytes exceed the 48 KiB of static shared memory");
    __shared__ __align__(16) LnMmaSmem<BN, S> sm;
    LnDevCtx ctx;
    ln_mma_block<F, NW, BN, S>(ctx, W, x, y, N, K, T, gscale, blockIdx.x, blockIdx.y, sm);
}
#endif

#endif
