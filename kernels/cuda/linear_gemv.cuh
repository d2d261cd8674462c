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
//
// Staged (STG = LN_STAGE >= 2, "Staged memory-bound route"): the block
// copies each round's weights into shared memory with cp.async, STG - 1
// rounds ahead, and the lanes load their runs from there; the same units,
// decode and products, so y is the same bits as with STG = 0.
#ifndef GPUBENCH_LINEAR_GEMV_CUH
#define GPUBENCH_LINEAR_GEMV_CUH

#include "linear_tile.cuh"

// Thread q's x runs of a round's U units (zero past K and for dead units).
#pragma nv_exec_check_disable
template <bool TAIL, class F, int NJ, int U, int STEP, class Ctx>
GB_HD void ln_gemv_xload(Ctx& ctx, const unsigned short* const (*XP)[2], gb_u32 K, gb_u32 ub, gb_u32 t,
                         const bool (*live)[Ctx::NT], gb_u32 (*X)[Ctx::NT][NJ][8], int q)
{
#pragma unroll
    for (int j = 0; j < NJ; j++)
#pragma unroll
        for (int c = 0; c < 2; c++) {
            const unsigned short* xr = XP[j][c] + (gb_u64)64 * ub;
#pragma unroll
            for (int v = 0; v < U; v++) {
                gb_u32* o = &X[v][q][j][4 * c];
                const gb_u32 k = 64 * (ub + v * STEP) + 8 * F::chunk(t, c);
                if (!TAIL || (live[v][q] && k < K)) ctx.ld_x(xr + 64 * v * STEP, o);
                else o[0] = o[1] = o[2] = o[3] = 0;
            }
        }
}

// The decodes and products of a round's U units, in order (both paths).
#pragma nv_exec_check_disable
template <class F, int RT, int NJ, int U, class Ctx>
GB_HD void ln_gemv_units(Ctx& ctx, const typename F::Raw (*raw)[Ctx::NT][RT][2], const gb_u32 (*X)[Ctx::NT][NJ][8],
                         const bool (*live)[Ctx::NT], float (*acc)[RT][NJ][4])
{
    enum { NT = Ctx::NT };
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

// One round: U units per warp, every load issued before any decode. The
// loads of a round are a base pointer per row (or x row) plus constant
// offsets; only the last round (TAIL) checks units past the matrix and x
// words past K.
#pragma nv_exec_check_disable
template <bool TAIL, class F, int NW, int RT, int NJ, int U, int KC, class Ctx>
GB_HD void ln_gemv_round(Ctx& ctx, const LnPtr (*P)[RT][2], const unsigned short* const (*XP)[NJ][2], gb_u32 K,
                         gb_u32 nunits, gb_u32 rd, const gb_u32* warp, const gb_u32* t, float (*acc)[RT][NJ][4])
{
    enum { NT = Ctx::NT, STEP = KC ? 1 : NW }; // STEP: units between a warp's loads v and v + 1
    typedef typename F::Raw Raw;
    Raw raw[U][NT][RT][2];
    gb_u32 X[U][NT][NJ][8];
    bool live[U][NT];
    LN_EACH
    {
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
        ln_gemv_xload<TAIL, F, NJ, U, STEP>(ctx, XP[q], K, ub, t[q], live, X, q);
    }
    ln_gemv_units<F, RT, NJ, U, Ctx>(ctx, raw, X, live, acc);
}

// ------------------------------------------------------------ staged weights (LN_STAGE = S >= 2)
// A stage holds one round's span of SU = NW U units (contiguous in every
// row of every plane, whichever KC) of the block's ROWS rows; the block
// copies it with cp.async, S - 1 spans in flight, and the warps read their
// units' runs from it with the formats' own loads (docs/kernels/cuda-linear.md,
// "Staged memory-bound route").

// Small-plane row stride: 16-byte multiple with an odd count of 16, so that
// the 8 rows of a warp's load lie in 8 different 16-byte bank groups.
GB_HD constexpr int ln_odd16(int b) { return b == 0 ? 0 : (((b + 15) / 16) | 1) * 16; }
// The cp.async size of a plane of B bytes per unit and R per span: the
// largest of 16, 8, 4 that divides R and the plane's row alignment (a row
// holds an even number of units: 2 B); 0 if none does.
GB_HD constexpr int ln_piece(int B, int R)
{
    return B == 0 ? 0 : (2 * B) % 16 == 0 && R % 16 == 0 ? 16 : (2 * B) % 8 == 0 && R % 8 == 0 ? 8
                      : (2 * B) % 4 == 0 && R % 4 == 0   ? 4 : 0;
}

template <class F, int NW, int RT, int U>
struct LnStage {
    enum {
        ROWS = 16 * RT, SU = NW * U,
        CR = SU * F::CB, HR = SU * F::HB, SR = SU * F::SB, // bytes of a row's span per plane
        CS = (CR + 127) / 128 * 128, HS = ln_odd16(HR), SS = ln_odd16(SR), // row strides in the stage
        HO = ROWS * CS, SO = HO + ROWS * HS, BYTES = SO + ROWS * SS,      // plane offsets, bytes per stage
        GH = ln_piece(F::HB, HR), GS = ln_piece(F::SB, SR),
        // codes: byte o of row r at o ^ (r KEY mod 128), so that the rows of
        // one LDS phase (4 rows of 32 bytes, or 2 of 64) hit different banks
        KEY = 4 * F::LW
    };
    static_assert(CR % 16 == 0 && (HR == 0 || GH) && (SR == 0 || GS),
                  "LN_STAGE: LN_NW * LN_U units of a row's scales and high bits must be a multiple of 4 bytes "
                  "(LN_NW * LN_U even for q4, q5, q6)");
};

// The staged loads of thread q: the context's shared-memory reads (lds_*)
// under the names the formats' loads call, the code plane through the
// swizzle key of the thread's rows (g: every row of a lane has the same key).
template <class Ctx>
struct LnStRd {
    const Ctx& c;
    gb_u32 key;
#pragma nv_exec_check_disable
    GB_HD void ld_w64(const unsigned char* p, gb_u32* o) const { c.lds_w64(p, key, o); }
#pragma nv_exec_check_disable
    GB_HD void ld_w128(const unsigned char* p, gb_u32* o) const { c.lds_w128(p, key, o); }
#pragma nv_exec_check_disable
    GB_HD gb_u32 ld_c8(const unsigned char* p) const { return c.lds_c8(p); }
#pragma nv_exec_check_disable
    GB_HD gb_u32 ld_c16(const unsigned char* p) const { return c.lds_c16(p); }
#pragma nv_exec_check_disable
    GB_HD gb_u32 ld_c32(const unsigned char* p) const { return c.lds_c32(p); }
};

// One plane's copy (R bytes per row per span, B per unit, from plane row
// row0 + lr into stage row lr, row stride STRIDE), G bytes per cp.async:
// consecutive threads take consecutive pieces of a row (a quarter-warp one
// 128-byte line where the row's span is that long). Planned once per
// thread: per piece its source at span 0, its stage offset and the number
// of spans it exists in; past that (units past the last, bytes past the row:
// bf16 past K) and for rows past N it is zero-filled and nothing is read.
template <int G, int R, int STRIDE, int B, int KEY, int NW, int ROWS>
struct LnCpPlane {
    enum { PR = G ? R / G : 0, ALL = ROWS * PR, PT = (ALL + 32 * NW - 1) / (32 * NW), SU = B ? R / B : 0 };
    const unsigned char* src[PT ? PT : 1];
    gb_u32 dst[PT ? PT : 1], lim[PT ? PT : 1];
    GB_HD void plan(gb_u32 tid, const unsigned char* plane, gb_u64 rowbytes, gb_u32 N, gb_u32 nunits, gb_u32 row0)
    {
#pragma unroll
        for (int m = 0; m < PT; m++) {
            const gb_u32 p = tid + 32 * NW * m, lr = p / PR, j = p % PR, row = row0 + lr, u0 = j * G / B;
            lim[m] = 0;
            if (row < N && u0 < nunits && j * G + G <= rowbytes) {
                const gb_u32 lu = (nunits - u0 + SU - 1) / SU;    // spans r with r SU + u0 < nunits
                const gb_u64 lb = (rowbytes - j * G - G) / R + 1; // spans r with r R + j G + G <= rowbytes
                lim[m] = lb < lu ? (gb_u32)lb : lu;
            }
            src[m] = plane + (gb_u64)(row < N ? row : 0) * rowbytes + j * G;
            dst[m] = lr * STRIDE + ((j * G) ^ ((lr * KEY) & 127));
        }
    }
#pragma nv_exec_check_disable
    template <class Ctx>
    GB_HD void copy(Ctx& ctx, gb_u32 tid, unsigned char* st, gb_u32 r) const
    {
#pragma unroll
        for (int m = 0; m < PT; m++) {
            if (ALL % (32 * NW) != 0 && tid + 32 * NW * m >= (gb_u32)ALL) break;
            const bool ok = r < lim[m];
            ctx.template cp_w<G>(st + dst[m], ok ? src[m] + (gb_u64)r * R : src[m], ok);
        }
    }
};

// Thread q's copy plans of every plane of a format.
template <class F, int NW, int RT, int U>
struct LnCpPlan {
    typedef LnStage<F, NW, RT, U> L;
    LnCpPlane<16, L::CR, L::CS, F::CB, L::KEY, NW, L::ROWS> c;
    LnCpPlane<L::GH, L::HR, L::HS, F::HB, 0, NW, L::ROWS> h;
    LnCpPlane<L::GS, L::SR, L::SS, F::SB, 0, NW, L::ROWS> s;
    GB_HD void plan(gb_u32 tid, const LnGeo& geo, gb_u32 N, gb_u32 nunits, gb_u32 row0)
    {
        c.plan(tid, geo.p0, geo.r0, N, nunits, row0);
        if constexpr (F::HB != 0) h.plan(tid, geo.p1, geo.r1, N, nunits, row0);
        if constexpr (F::SB != 0) s.plan(tid, geo.ps, geo.rs, N, nunits, row0);
    }
    // copies span r (units r NW U .. r NW U + NW U - 1) into stage st
#pragma nv_exec_check_disable
    template <class Ctx>
    GB_HD void copy(Ctx& ctx, gb_u32 tid, unsigned char* st, gb_u32 r) const
    {
        c.copy(ctx, tid, st, r);
        if constexpr (F::HB != 0) h.copy(ctx, tid, st + L::HO, r);
        if constexpr (F::SB != 0) s.copy(ctx, tid, st + L::SO, r);
    }
};

// A round of the staged path: as ln_gemv_round, the runs read from the stage
// that holds span rd (SP: thread q's row pointers into stage 0, off: this
// stage's byte offset). Same units, loads, zeros and products.
#pragma nv_exec_check_disable
template <bool TAIL, class F, int NW, int RT, int NJ, int U, int KC, class Ctx>
GB_HD void ln_gemv_round_st(Ctx& ctx, const LnPtr (*SP)[RT][2], gb_u32 off, const gb_u32* key,
                            const unsigned short* const (*XP)[NJ][2], gb_u32 K, gb_u32 nunits, gb_u32 rd,
                            const gb_u32* warp, const gb_u32* t, float (*acc)[RT][NJ][4])
{
    enum { NT = Ctx::NT, STEP = KC ? 1 : NW };
    typedef typename F::Raw Raw;
    Raw raw[U][NT][RT][2];
    gb_u32 X[U][NT][NJ][8];
    bool live[U][NT];
    LN_EACH
    {
        const gb_u32 ub = KC ? (rd * NW + warp[q]) * U : rd * U * NW + warp[q];
        const gb_u32 lu = KC ? warp[q] * U : warp[q]; // unit v = 0 inside the span
        const LnStRd<Ctx> sr{ctx, key[q]};
#pragma unroll
        for (int i = 0; i < RT; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const LnPtr& s0 = SP[q][i][h];
                const LnPtr pr = ln_at<F>(LnPtr{s0.c + off, s0.h + off, s0.s + off}, lu);
#pragma unroll
                for (int v = 0; v < U; v++) {
                    const gb_u32 u = ub + v * STEP;
                    live[v][q] = !TAIL || u < nunits;
                    if (live[v][q])
                        F::template load<TAIL>(sr, pr, v * STEP, (int)K - 64 * (int)u - 8 * (int)F::chunk(t[q], 0),
                                               raw[v][q][i][h]);
                    else raw[v][q][i][h] = Raw{};
                }
            }
        ln_gemv_xload<TAIL, F, NJ, U, STEP>(ctx, XP[q], K, ub, t[q], live, X, q);
    }
    ln_gemv_units<F, RT, NJ, U, Ctx>(ctx, raw, X, live, acc);
}

#pragma nv_exec_check_disable
template <class F, int NW, int RT, int NJ, int U, int KC = 1, int STG = 0, class Ctx>
GB_HD void ln_gemv_block(Ctx& ctx, const unsigned char* W, const unsigned short* x, unsigned short* y, gb_u32 N,
                         gb_u32 K, gb_u32 T, float gscale, gb_u32 blk, float* red, unsigned char* stage = nullptr)
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
    if constexpr (STG == 0) {
        for (gb_u32 rd = 0; rd < full; rd++) ln_gemv_round<false, F, NW, RT, NJ, U, KC>(ctx, P, XP, K, nunits, rd, warp, t, acc);
        for (gb_u32 rd = full; rd < rounds; rd++) ln_gemv_round<true, F, NW, RT, NJ, U, KC>(ctx, P, XP, K, nunits, rd, warp, t, acc);
    } else {
        // Span rd lands in stage rd mod STG: STG - 1 spans copied ahead, one
        // barrier per round (after it every warp is done with the stage the
        // next copy overwrites: the one read in the round before).
        typedef LnStage<F, NW, RT, U> L;
        static_assert(STG >= 2, "LN_STAGE is 0 (weights straight into registers) or at least 2 stages");
        const LnGeo sg{stage, stage + L::HO, stage + L::SO, L::CS, L::HS, L::SS};
        LnPtr SP[NT][RT][2];
        gb_u32 key[NT];
        LN_EACH
        {
            key[q] = (g[q] * L::KEY) & 127; // rows 16 i + 8 h + g: the same key for every i, h
#pragma unroll
            for (int i = 0; i < RT; i++)
#pragma unroll
                for (int h = 0; h < 2; h++) SP[q][i][h] = F::ptr(sg, 16 * i + 8 * h + g[q], t[q]);
        }
        LnCpPlan<F, NW, RT, U> cp[NT];
        LN_EACH cp[q].plan(ctx.tid(q), geo, N, nunits, r0);
#pragma unroll
        for (int s = 0; s < STG - 1; s++) {
            if ((gb_u32)s < rounds) LN_EACH cp[q].copy(ctx, ctx.tid(q), stage + s * L::BYTES, s);
            ctx.commit();
        }
        gb_u32 rs = 0, ws = STG - 1; // the stages read and written this round
        for (gb_u32 rd = 0; rd < rounds; rd++) {
            ctx.template wait<STG - 2>();
            ctx.barrier();
            if (rd + STG - 1 < rounds) LN_EACH cp[q].copy(ctx, ctx.tid(q), stage + ws * L::BYTES, rd + STG - 1);
            ctx.commit();
            if (rd < full) ln_gemv_round_st<false, F, NW, RT, NJ, U, KC>(ctx, SP, rs * L::BYTES, key, XP, K, nunits, rd, warp, t, acc);
            else ln_gemv_round_st<true, F, NW, RT, NJ, U, KC>(ctx, SP, rs * L::BYTES, key, XP, K, nunits, rd, warp, t, acc);
            rs = rs == STG - 1 ? 0 : rs + 1, ws = ws == STG - 1 ? 0 : ws + 1;
        }
        ctx.template wait<0>();
        ctx.barrier(); // red may share the stages' memory
    }
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
template <class F, int NW, int RT, int NJ, int U, int KC, int STG>
__device__ __forceinline__ void ln_gemv(const unsigned char* W, const unsigned short* x, unsigned short* y, gb_u32 N,
                                        gb_u32 K, gb_u32 T, float gscale)
{
    static_assert(NW >= 1 && RT >= 1 && NJ >= 1 && U >= 1, "LN_NW, LN_RT, LN_NJ and LN_U must be positive");
    enum { RED = NW * 16 * RT * 8 * NJ * 4 };
    static_assert(RED <= 48 * 1024,
                  "the reduction of LN_NW warps x 16 LN_RT rows x 8 LN_NJ columns exceeds 48 KiB of shared memory");
    LnDevCtx ctx;
    if constexpr (STG == 0) {
        __shared__ float red[NW * 16 * RT * 8 * NJ];
        ln_gemv_block<F, NW, RT, NJ, U, KC>(ctx, W, x, y, N, K, T, gscale, blockIdx.x, red);
    } else {
        enum { ST = STG * LnStage<F, NW, RT, U>::BYTES, SM = ST > RED ? ST : RED };
        static_assert(ST <= 48 * 1024, "LN_STAGE stages of LN_NW x LN_U units of 16 LN_RT rows of weights exceed "
                                       "48 KiB of shared memory (fewer LN_STAGE, LN_U or LN_RT)");
        __shared__ __align__(128) unsigned char sm[SM]; // the stages, then the reduction
        ln_gemv_block<F, NW, RT, NJ, U, KC, STG>(ctx, W, x, y, N, K, T, gscale, blockIdx.x,
                                                 reinterpret_cast<float*>(sm), sm);
    }
}
#endif

#endif
