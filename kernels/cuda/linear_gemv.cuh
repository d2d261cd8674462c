// The memory-bound route of the CUDA Linear kernels (small T): every weight
// byte is read once per call, straight into registers, and used for all T
// rows of x. docs/kernels/cuda-linear.md, "Memory-bound route".
//
// A block owns ROWS = 16 * RT consecutive rows of W and all T <= 8 * NJ
// columns; its NW warps split K into rounds of NW U units (a unit is 64
// elements of k): with KC = 1 warp w takes U consecutive units of a round
// (w U .. w U + U - 1, so its scales and a row's bytes are contiguous), with
// KC = 0 units w, w + NW, ...; all of a round's loads issued before any is
// decoded. Per unit a lane loads its run of 16 elements
// of each of its 2 RT rows (one 8-byte load of codes for the 4-, 5-, 6-bit
// formats, two for W8, two 16-byte loads for BF16, and the scales and high
// bits) and of the x rows t = 8j + g (16-byte loads, zero past K), and
// the tensor cores multiply: one mma.sync per (row tile, column tile,
// k-step), fp32 sums. At the end the warps' partial sums meet in shared
// memory and the block writes its ROWS x T outputs, once each.
#ifndef GPUBENCH_LINEAR_GEMV_CUH
#define GPUBENCH_LINEAR_GEMV_CUH

#include "linear_tile.cuh"

// One round: U units per warp, every load issued before any decode. The
// loads of a round are a base pointer per row (or x row) plus constant
// offsets; only the last round (TAIL) checks units past the matrix and x
// words past K.
#pragma nv_exec_check_disable
template <bool TAIL, class F, int NW, int RT, int NJ, int U, int KC, class Ctx>
GB_HD void ln_gemv_round(Ctx& ctx, const LnPtr (*P)[RT][2], const unsigned short* const (*XP)[NJ][2], gb_u32 K,
                         gb_u32 nunits, gb_u32 rd, const gb_u32* warp, const gb_u32* t, float (*acc)[RT][NJ][4])
{
    enum { NT = Ctx::NT };
    typedef typename F::Raw Raw;
    Raw raw[U][NT][RT][2];
    gb_u32 X[U][NT][NJ][8];
    bool live[U][NT];
    LN_EACH
    {
        enum { STEP = KC ? 1 : NW }; // units between a warp's loads v and v + 1
        const gb_u32 ub = KC ? (rd * NW + warp[q]) * U : rd * U * NW + warp[q]; // this warp's unit v = 0
#pragma unroll
        for (int i = 0; i < RT; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const LnPtr pr = ln_at<F>(P[q][i][h], ub);
#pragma unroll
                for (int v = 0; v < U; v++) {
                    const gb_u32 u = ub + v * STEP;
                    live[v][q] = !TAIL || u < nunits;
                    if (live[v][q])
                        F::template load<TAIL>(ctx, pr, v * STEP, (int)K - 64 * (int)u - 8 * (int)F::chunk(t[q], 0),
                                               raw[v][q][i][h]);
                    else raw[v][q][i][h] = Raw{};
                }
            }
#pragma unroll
        for (int j = 0; j < NJ; j++)
#pragma unroll
            for (int c = 0; c < 2; c++) {
                const unsigned short* xr = XP[q][j][c] + (gb_u64)64 * ub;
#pragma unroll
                for (int v = 0; v < U; v++) {
                    gb_u32* o = &X[v][q][j][4 * c];
                    const gb_u32 k = 64 * (ub + v * STEP) + 8 * F::chunk(t[q], c);
                    if (!TAIL || (live[v][q] && k < K)) ctx.ld_x(xr + 64 * v * STEP, o);
                    else o[0] = o[1] = o[2] = o[3] = 0;
                }
            }
    }
#pragma unroll
    for (int v = 0; v < U; v++) {
        bool any = false; // warp-uniform on the GPU (u depends on the warp only)
        LN_EACH any = any || live[v][q];
        if (!any) continue;
        gb_u32 A[NT][RT][4][4];
        float s[NT][RT][2][F::NG];
        ln_decode_unit<F, RT, Ctx>(raw[v], A, s);
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            gb_u32 B[NT][4][2];
            LN_EACH ln_bfrag(X[v][q][j], B[q]);
            ln_col<F::MODE, F::KG, F::NG, RT, NJ>(ctx, A, B, s, acc, j);
        }
    }
}

#pragma nv_exec_check_disable
template <class F, int NW, int RT, int NJ, int U, int KC = 1, class Ctx>
GB_HD void ln_gemv_block(Ctx& ctx, const unsigned char* W, const unsigned short* x, unsigned short* y, gb_u32 N,
                         gb_u32 K, gb_u32 T, float gscale, gb_u32 blk, float* red)
{
    enum { NT = Ctx::NT, ROWS = 16 * RT, COLS = 8 * NJ };
    static_assert(F::E == 16, "a lane's run is 16 elements of a unit of 64");
    const LnGeo geo = F::geo(W, N, K);
    const gb_u32 nunits = (K + 63) / 64; // units past K hold zero weights only: skipped
    const gb_u32 r0 = blk * ROWS;
    gb_u32 warp[NT], g[NT], t[NT];
    float acc[NT][RT][NJ][4];
    // Rows past N and x rows past T are read as row N - 1 and row T - 1: their
    // sums land in outputs that are never stored, and no load needs a test.
    LnPtr P[NT][RT][2];
    const unsigned short* XP[NT][NJ][2];
    LN_EACH
    {
        const gb_u32 tid = ctx.tid(q);
        warp[q] = tid >> 5, g[q] = (tid & 31) >> 2, t[q] = tid & 3;
#pragma unroll
        for (int i = 0; i < RT; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const gb_u32 row = r0 + 16 * i + 8 * h + g[q];
                P[q][i][h] = F::ptr(geo, row < N ? row : N - 1, t[q]);
            }
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            const gb_u32 tt = 8 * j + g[q] < T ? 8 * j + g[q] : T - 1;
#pragma unroll
            for (int c = 0; c < 2; c++) XP[q][j][c] = x + (gb_u64)tt * K + 8 * F::chunk(t[q], c);
        }
#pragma unroll
        for (int i = 0; i < RT; i++)
#pragma unroll
            for (int j = 0; j < NJ; j++)
#pragma unroll
                for (int c = 0; c < 4; c++) acc[q][i][j][c] = 0.0f;
    }
    // Full rounds need no checks: every unit of every warp exists and is
    // below K (a unit reaches past K only if it is the last).
    const gb_u32 full = nunits * 64 <= K ? nunits / (NW * U) : (nunits - 1) / (NW * U);
    const gb_u32 rounds = (nunits + NW * U - 1) / (NW * U);
    for (gb_u32 rd = 0; rd < full; rd++) ln_gemv_round<false, F, NW, RT, NJ, U, KC>(ctx, P, XP, K, nunits, rd, warp, t, acc);
    for (gb_u32 rd = full; rd < rounds; rd++) ln_gemv_round<true, F, NW, RT, NJ, U, KC>(ctx, P, XP, K, nunits, rd, warp, t, acc);
    // The warps' partial sums of C fragment (i, j): c0 = (row g, column 2t),
    // c1 = (g, 2t + 1), c2 = (g + 8, 2t), c3 = (g + 8, 2t + 1).
    LN_EACH
#pragma unroll
    for (int i = 0; i < RT; i++)
#pragma unroll
    for (int j = 0; j < NJ; j++)
#pragma unroll
    for (int c = 0; c < 4; c++)
    {
        const gb_u32 row = 16 * i + g[q] + 8 * (c >> 1), col = 8 * j + 2 * t[q] + (c & 1);
        red[(warp[q] * ROWS + row) * COLS + col] = acc[q][i][j][c];
    }
    ctx.barrier();
    // Consecutive threads write consecutive n of one row of y; warps summed in order.
    LN_EACH for (gb_u32 e = ctx.tid(q); e < (gb_u32)(ROWS * COLS); e += 32 * NW)
    {
        const gb_u32 col = e / ROWS, row = e % ROWS, n = r0 + row;
        if (n < N && col < T) {
            float sum = red[row * COLS + col];
            for (int w = 1; w < NW; w++) sum += red[(w * ROWS + row) * COLS + col];
            if (F::GSCALE) sum *= gscale;
            ctx.st_y(y + (gb_u64)col * N + n, ln_bf16(sum));
        }
    }
}

#ifdef __CUDACC__
template <class F, int NW, int RT, int NJ, int U, int KC>
__device__ __forceinline__ void ln_gemv(const unsigned char* W, const unsigned short* x, unsigned short* y, gb_u32 N,
                                        gb_u32 K, gb_u32 T, float gscale)
{
    static_assert(NW >= 1 && RT >= 1 && NJ >= 1 && U >= 1, "LN_NW, LN_RT, LN_NJ and LN_U must be positive");
    static_assert(NW * 16 * RT * 8 * NJ * 4 <= 48 * 1024,
                  "the reduction of LN_NW warps x 16 LN_RT rows x 8 LN_NJ columns exceeds 48 KiB of shared memory");
    __shared__ float red[NW * 16 * RT * 8 * NJ];
    LnDevCtx ctx;
    ln_gemv_block<F, NW, RT, NJ, U, KC>(ctx, W, x, y, N, K, T, gscale, blockIdx.x, red);
}
#endif

#endif
