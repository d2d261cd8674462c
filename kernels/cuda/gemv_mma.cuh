// Tensor-core path of the quantized CUDA GEMV kernels (gemv_q4_0/q8_0/q4_k/
// q5_k/q6_k.cu with MMA=1): the per-weight multiply-add runs on the tensor
// cores (mma.sync m16n8k16, f16 inputs, f32 accumulation), so the FP32 pipe
// and the issue slots only see the decode. Design, numbers and precision
// argument: docs/kernels/cuda-gemv.md, "Tensor-core path". It is a variant,
// not the default: its per-tile overhead left it behind the scalar path's
// integer dot in every format (same document, "Each format's default, step
// by step").
//
// Shape of the computation. A warp owns 16 consecutive rows (the mma's M). The
// columns are cut into tiles of 256 (GB_MT); a tile is cut into units of U
// columns (32, or 16 for q6_k: the columns that share one scale) and units into
// groups of four. For a group the warp accumulates ONE 16x8 C fragment:
//   - A (16 rows x 16 k) holds the decoded codes q of one mma's 16 columns as
//     f16. With SUBN=1 the code bits themselves are the f16 bit pattern, a
//     subnormal q * 2^-24 (exact: q < 1024), so decoding is one mask per two
//     weights; SUBN=0 adds 0x6400 and subtracts 1024 (one HSUB2 per two
//     weights) for hardware that would flush f16 subnormals.
//   - B (16 k x 8 columns) has x of those columns in column 2b (x_hi = f16(x'))
//     and 2b+1 (x_lo = f16(x' - x_hi)) for the group's unit b, zero elsewhere,
//     so after the group's mmas C[r][2b] + C[r][2b+1] = 2^-24 sum q x' over unit
//     b: lane (g, t) holds exactly unit t's sums of rows g and g+8, and its
//     epilogue is one FADD + one FFMA by the (row, unit) scale per row.
//   - Which column of the unit sits in which k slot is free (the sum does not
//     care), so every format maps the lane's natural bytes to its k slots
//     (F::kcol) and the x conversion writes B in the same order.
//   - Codes with an offset (q - 8, q - 32, q8_0 as q + 128) are decoded without
//     it; one more mma per group and mma slice, with a constant A = -offset and
//     the lane's own unit's B, adds -offset * sum x' to C. The k-quants' mins use
//     the same trick with A = 1 into a second accumulator (sum x' per unit).
//   - A high nibble masked in place is 16 q: those k slots ("class 16") get
//     x'/16 in B instead of a shift per word.
// x' = x * 2^s with one power of two s per launch (from max |x|, computed by
// every block at the start), so x_hi and x_lo stay inside the f16 normal range
// for any finite x: |x'| < 2^15, and y = acc * 2^24 * 2^-s at the end.
//
// A block has NW warps (NW * 16 rows). They share the x conversion: each tile
// of x is converted once per block into shared memory (double-buffered, one
// __syncthreads per tile), while each warp stages its own rows' weight tiles
// with cp.async as the scalar path does (S slots per warp, S-1 tiles in flight).
//
// All per-thread code is written over arrays of Ctx::NT threads: on the GPU
// NT = 1 (the calling thread); the host emulation (tests/cuda_host/
// gemv_emulate.cu) runs the same code with NT = the whole block and its own
// model of mma.sync, barriers being no-ops there because each phase runs to
// completion for all threads before the next starts.
#ifndef GPUBENCH_GEMV_MMA_CUH
#define GPUBENCH_GEMV_MMA_CUH

#include "gemv_common.cuh"

enum { GB_MT = 256 }; // columns per tile

// ------------------------------------------------------------ f16 helpers

// Bits of the f16 of a small integer n (|n| < 2048: exact).
GB_HD gb_u32 gb_f16_int(int n)
{
    if (n == 0) return 0;
    const gb_u32 sign = n < 0 ? 0x8000u : 0, a = (gb_u32)(n < 0 ? -n : n);
    gb_u32 e = 0;
    while ((a >> (e + 1)) != 0) e++;
    return sign | ((e + 15) << 10) | ((a << (10 - e)) & 0x3FFu);
}

// The A value of code n (signed, |n| < 1024) in the A encoding: n * 2^-24
// (subnormal bits) with SUBN, else n.
GB_HD gb_u32 gb_acode(int n)
{
#if SUBN
    return n < 0 ? 0x8000u | (gb_u32)(-n) : (gb_u32)n;
#else
    return gb_f16_int(n);
#endif
}

// Two masked codes (bits 0..9 of each half) as an A register.
GB_HD gb_u32 gb_afix(gb_u32 bits)
{
#if SUBN
    return bits;
#else
#ifdef __CUDA_ARCH__
    gb_u32 r;
    asm("sub.f16x2 %0, %1, %2;" : "=r"(r) : "r"(bits | 0x64006400u), "r"(0x64006400u));
    return r;
#else
    return gb_f16_int((int)(bits & 0x3FF)) | gb_f16_int((int)((bits >> 16) & 0x3FF)) << 16;
#endif
#endif
}

// Two f32 as an f16x2 register (lo in bits 0..15).
GB_HD gb_u32 gb_f16x2(float lo, float hi)
{
#ifdef __CUDA_ARCH__
    gb_u32 r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#else
    return gb_h_from_f32(lo) | gb_h_from_f32(hi) << 16;
#endif
}

// One word at byte offset o (2-byte aligned) of a staged row, w, and the same
// word shifted right by 8 (bytes 1 and 3 in the places of 0 and 2), w8: two
// funnel shifts of the two aligned words around it.
GB_HD void gb_ld_w8(const unsigned char* base, gb_u32 o, gb_u32& w, gb_u32& w8)
{
    const gb_u32* p = reinterpret_cast<const gb_u32*>(base + (o & ~3u));
    const gb_u32 sh = (o & 3) * 8, a = p[0], b = p[1];
    w = gb_funnel_r(a, b, sh);
    w8 = gb_funnel_r(a, b, sh + 8);
}

// ------------------------------------------------------------ shared memory

// The x tile in B-fragment order: for unit b of group G, part p (0: x_hi,
// 1: x_lo) and lane quad position t, the U/2 bytes a lane loads at once (its
// two B registers of each of the unit's U/16 mmas) at
//   G*GSTRIDE + b*4U + p*2U + t*U/2,
// and after each group's 16U bytes U/2 zero bytes, which the lanes whose
// column is not the unit's read instead.
template <class F>
struct GbMmaX {
    enum {
        J = F::U / 16,                // mmas per unit
        GROUPS = GB_MT / (4 * F::U),  // groups per tile
        LB = F::U / 2,                // bytes per (unit, part, t)
        GSTRIDE = 16 * F::U + F::U / 2,
        BYTES = GROUPS * GSTRIDE,
        ITEMS = GB_MT / 2,            // B registers (2 values) per part per tile
    };
};

// T > 1 x rows (gemv_mma_tokens.cuh): unit u of x row t, part p, lane quad
// position tq at (t * UNITS + u) * UB + p * 2U + tq * LB, the J mmas' two B
// registers each; then LB zero bytes for the columns past the T rows.
template <class F, int T>
struct GbMmaXT {
    enum {
        J = F::U / 16,            // mmas per unit
        UNITS = GB_MT / F::U,     // units per tile
        LB = F::U / 2,            // bytes per (unit, part, quad position)
        UB = 4 * F::U,            // bytes of one unit of one x row
        ZERO = T * UNITS * UB,
        BYTES = ZERO + 16,
        NB = (T + 3) / 4,         // B fragments per unit: 4 x rows (x_hi, x_lo columns) each
        ITEMS = T * (GB_MT / 2),  // B registers per part per tile, all x rows
    };
};

template <class F, int NW, int S, int T = 1>
struct GbMmaShared {
    enum {
        TB = GB_MT / F::QK * F::BPB,        // bytes of one row's tile
        WORDS = (TB + 15 + 15) / 16,        // 16-byte words covering it at any alignment
        SLOT = (WORDS + 1) * 16,            // + one word for the decoders' over-read
    };
    unsigned char slots[NW][S][16][SLOT];
    unsigned char xb[2][T == 1 ? (int)GbMmaX<F>::BYTES : (int)GbMmaXT<F, T>::BYTES];
    gb_u32 xmax[T]; // max |x| bits of each x row
};

// ------------------------------------------------------------ the block

#define GB_EACH for (int q = 0; q < Ctx::NT; q++)

// Converts x tile tt (x * xs, class-16 slots / 16) into buffer xb (one thread's
// share of the ITEMS B registers of each part).
#pragma nv_exec_check_disable
template <class F, int NW, class Ctx>
GB_HD void gb_mma_convert(Ctx& ctx, const float* x, gb_u32 k, gb_u32 tt, float xs, unsigned char* xb)
{
    typedef GbMmaX<F> X;
    GB_EACH
    {
        for (gb_u32 item = ctx.tid(q); item < (gb_u32)X::ITEMS; item += 32 * NW) {
            const gb_u32 p = item & 1, rest = item >> 1, j = rest % X::J, t = (rest / X::J) & 3,
                         u = rest / X::J >> 2;
            const gb_u32 c0 = F::kcol(u, j, t, 2 * p), c1 = F::kcol(u, j, t, 2 * p + 1);
            const float f = F::k16(u, 2 * p) ? xs * 0.0625f : xs;
            const gb_u32 col0 = tt * GB_MT + c0, col1 = tt * GB_MT + c1;
            const float v0 = (col0 < k ? x[col0] : 0.0f) * f, v1 = (col1 < k ? x[col1] : 0.0f) * f;
            const gb_u32 hi = gb_f16x2(v0, v1);
            const gb_u32 lo = gb_f16x2(v0 - gb_half_to_float(hi & 0xFFFF), v1 - gb_half_to_float(hi >> 16));
            const gb_u32 o = (u >> 2) * X::GSTRIDE + (u & 3) * 4 * F::U + t * X::LB + (j * 2 + p) * 4;
            *reinterpret_cast<gb_u32*>(xb + o) = hi;
            *reinterpret_cast<gb_u32*>(xb + o + 2 * F::U) = lo;
        }
    }
}

// Loads N (2 or 4) words from 8/16-byte aligned shared memory.
template <int N>
GB_HD void gb_lds_n(const unsigned char* p, gb_u32* out)
{
    if constexpr (N == 4) {
        gb_ld_u32x4(p, out);
    } else {
        const uint2 v = *reinterpret_cast<const uint2*>(p);
        out[0] = v.x, out[1] = v.y;
    }
}

// Copies weight tile tt of each warp's 16 rows into its slot `slot`: word i of
// the warp's 16 x WORDS words (row i / WORDS) by lane i % 32, as 16-byte
// cp.async of the words covering the row's tile bytes, which land at byte
// (row offset + tt * TB) & 15 of the slot row. coff holds the row offset of
// each of the thread's words.
#pragma nv_exec_check_disable
template <class F, int NW, int S, class Ctx, int ITERS, int T>
GB_HD void gb_mma_stage(Ctx& ctx, const unsigned char* const* Wb, const gb_u32 (*coff)[ITERS], const gb_u32* warp,
                        gb_u32 row_bytes, gb_u32 tt, gb_u32 slot, GbMmaShared<F, NW, S, T>& sm)
{
    typedef GbMmaShared<F, NW, S, T> SM;
    const gb_u32 TB = SM::TB, left = row_bytes - tt * TB, tb = left < TB ? left : TB;
    GB_EACH
    {
        const gb_u32 lane = ctx.tid(q) & 31;
#pragma unroll
        for (int it = 0; it < ITERS; it++) {
            const gb_u32 i = lane + 32 * it, r = i / SM::WORDS, w = i % SM::WORDS;
            if (r >= 16) break;
            const gb_u32 rs = coff[q][it] + tt * TB, a16 = rs & ~15u;
            ctx.copy16(q, &sm.slots[warp[q]][slot][r][16 * w], Wb[q] + a16 + 16 * w, a16 + 16 * w < rs + tb);
        }
    }
}

#pragma nv_exec_check_disable
template <class F, int NW, int S, class Ctx>
GB_HD void gb_mma_block(Ctx& ctx, const unsigned char* W, const float* x, float* y, gb_u32 m, gb_u32 k,
                        gb_u32 blk, GbMmaShared<F, NW, S, 1>& sm)
{
    typedef GbMmaShared<F, NW, S> SM;
    typedef GbMmaX<F> X;
    enum { NT = Ctx::NT, J = X::J, ITERS = (16 * SM::WORDS + 31) / 32 };
    const gb_u32 row_bytes = k / F::QK * F::BPB;
    const gb_u32 ntiles = (k + GB_MT - 1) / GB_MT;
    const gb_u32 TB = SM::TB;
    const gb_u32 last0 = (m - 1) / 16 * 16; // first row of the last warp with rows

    // ---- per-thread constants
    gb_u32 warp[NT], g[NT], tq[NT], row0[NT], off[NT][2], coff[NT][ITERS], boff[NT][4], breal[NT];
    const unsigned char* Wb[NT];
    bool active[NT];
    GB_EACH
    {
        const gb_u32 tid = ctx.tid(q), lane = tid & 31;
        warp[q] = tid >> 5, g[q] = lane >> 2, tq[q] = lane & 3;
        const gb_u32 r0 = (blk * NW + warp[q]) * 16;
        // A warp past m still takes part in the x conversion and the barriers:
        // it recomputes the last warp's rows and writes nothing.
        active[q] = r0 < m;
        row0[q] = active[q] ? r0 : last0;
        const gb_u64 first = (gb_u64)row0[q] * row_bytes;
        Wb[q] = W + (first & ~(gb_u64)15);
        for (int h = 0; h < 2; h++) {
            const gb_u32 r = row0[q] + g[q] + 8 * h;
            off[q][h] = (gb_u32)(first & 15) + ((r < m ? r : m - 1) - row0[q]) * row_bytes;
        }
        // Copies: the warp's 16 rows x WORDS words, word i = lane + 32 * it.
        for (int it = 0; it < ITERS; it++) {
            const gb_u32 i = lane + 32 * it, r = i / SM::WORDS;
            const gb_u32 rr = row0[q] + (r < 16 ? r : 15);
            coff[q][it] = (gb_u32)(first & 15) + ((rr < m ? rr : m - 1) - row0[q]) * row_bytes;
        }
        for (gb_u32 b = 0; b < 4; b++)
            boff[q][b] = g[q] >> 1 == b ? b * 4 * F::U + (g[q] & 1) * 2 * F::U + tq[q] * X::LB : 16 * F::U;
        breal[q] = (g[q] >> 1) * 4 * F::U + (g[q] & 1) * 2 * F::U + tq[q] * X::LB;
    }

    // ---- x scale: 2^s with max|x| * 2^s in [2^14, 2^15)
    GB_EACH
    {
        if (ctx.tid(q) == 0) sm.xmax[0] = 0;
        // zero chunks of both x buffers (never written again)
        for (gb_u32 i = ctx.tid(q); i < 2 * X::GROUPS * (X::LB / 4); i += 32 * NW) {
            const gb_u32 buf = i / (X::GROUPS * (X::LB / 4)), r = i % (X::GROUPS * (X::LB / 4));
            *reinterpret_cast<gb_u32*>(&sm.xb[buf][(r / (X::LB / 4)) * X::GSTRIDE + 16 * F::U + 4 * (r % (X::LB / 4))]) = 0;
        }
    }
    ctx.barrier();
    GB_EACH
    {
        gb_u32 mx = 0;
        for (gb_u32 i = 4 * ctx.tid(q); i < k; i += 4 * 32 * NW) {
            float v[4];
            gb_load_x<4>(x + i, v);
            for (int e = 0; e < 4; e++) {
                const gb_u32 b = *reinterpret_cast<const gb_u32*>(&v[e]) & 0x7FFFFFFFu;
                mx = mx > b ? mx : b;
            }
        }
        ctx.atomic_max(&sm.xmax[0], mx);
    }
    ctx.barrier();
    const int ex = (int)(sm.xmax[0] >> 23) - 127;
    int s = 14 - ex;
    s = s < -100 ? -100 : s > 100 ? 100 : s;
    const float xs = gb_as_float((gb_u32)(127 + s) << 23);
    const float ys = gb_as_float((gb_u32)(127 - s) << 23) * (SUBN ? 16777216.0f : 1.0f);

    // ---- prologue: weight tiles 0 .. S-2 in flight, x tile 0 converted
    for (int st = 0; st < S - 1; st++) {
        if ((gb_u32)st < ntiles) gb_mma_stage<F, NW, S>(ctx, Wb, coff, warp, row_bytes, st, st, sm);
        ctx.commit();
    }
    gb_mma_convert<F, NW>(ctx, x, k, 0, xs, sm.xb[0]);
    ctx.barrier();

    float acc[NT][2];
    GB_EACH acc[q][0] = acc[q][1] = 0.0f;

    // A constants of the offset mma (row-independent): slots 2t,2t+1 and 2t+8,2t+9
    gb_u32 aoff[NT][4], aone[NT][4];
    GB_EACH
    {
        const gb_u32 lo = gb_acode(F::OFF * (F::k16(0, 0) ? 16 : 1)) * 0x10001u;
        const gb_u32 hi = gb_acode(F::OFF * (F::k16(0, 2) ? 16 : 1)) * 0x10001u;
        aoff[q][0] = aoff[q][1] = lo, aoff[q][2] = aoff[q][3] = hi;
        aone[q][0] = aone[q][1] = aone[q][2] = aone[q][3] = gb_acode(1) * 0x10001u;
    }

    for (gb_u32 tt = 0; tt < ntiles; tt++) {
        const gb_u32 tn = tt + S - 1;
        if (tn < ntiles) gb_mma_stage<F, NW, S>(ctx, Wb, coff, warp, row_bytes, tn, tn % S, sm);
        ctx.commit();
        if (tt + 1 < ntiles) gb_mma_convert<F, NW>(ctx, x, k, tt + 1, xs, sm.xb[(tt + 1) & 1]);
        ctx.template wait<S - 1>();
        ctx.syncwarp();

        const unsigned char* xb = sm.xb[tt & 1];
        const gb_u32 left = k - tt * GB_MT;
        const unsigned char* srow[NT][2];
        gb_u32 delta[NT][2];
        typename F::P prep[NT][2];
        GB_EACH for (int h = 0; h < 2; h++)
        {
            srow[q][h] = sm.slots[warp[q]][tt % S][g[q] + 8 * h];
            delta[q][h] = (off[q][h] + tt * TB) & 15;
            F::prep(srow[q][h], delta[q][h], tq[q], prep[q][h]);
        }
#pragma unroll
        for (gb_u32 G = 0; G < (gb_u32)X::GROUPS; G++) {
            float C[NT][4], Cm[NT][4];
            GB_EACH for (int i = 0; i < 4; i++) C[q][i] = Cm[q][i] = 0.0f;
#pragma unroll
            for (gb_u32 b = 0; b < 4; b++) {
                gb_u32 A[NT][J][4], B[NT][2 * J];
                GB_EACH
                {
                    gb_lds_n<2 * J>(xb + G * X::GSTRIDE + boff[q][b], B[q]);
                    gb_u32 a0[J][2], a1[J][2];
                    F::afrag(srow[q][0], delta[q][0], 4 * G + b, tq[q], prep[q][0], a0);
                    F::afrag(srow[q][1], delta[q][1], 4 * G + b, tq[q], prep[q][1], a1);
                    for (int j = 0; j < J; j++)
                        A[q][j][0] = a0[j][0], A[q][j][1] = a1[j][0], A[q][j][2] = a0[j][1], A[q][j][3] = a1[j][1];
                }
#pragma unroll
                for (int j = 0; j < J; j++) {
                    gb_u32 Aj[NT][4], Bj[NT][2];
                    GB_EACH for (int i = 0; i < 4; i++) Aj[q][i] = A[q][j][i];
                    GB_EACH Bj[q][0] = B[q][2 * j], Bj[q][1] = B[q][2 * j + 1];
                    ctx.mma(C, Aj, Bj);
                }
            }
            if constexpr (F::OFF != 0 || F::MIN) {
                gb_u32 BR[NT][2 * J];
                GB_EACH gb_lds_n<2 * J>(xb + G * X::GSTRIDE + breal[q], BR[q]);
#pragma unroll
                for (int j = 0; j < J; j++) {
                    gb_u32 Bj[NT][2];
                    GB_EACH Bj[q][0] = BR[q][2 * j], Bj[q][1] = BR[q][2 * j + 1];
                    if constexpr (F::OFF != 0) ctx.mma(C, aoff, Bj);
                    if constexpr (F::MIN) ctx.mma(Cm, aone, Bj);
                }
            }
            GB_EACH
            {
                // Units past k (a partial last tile) hold stale bytes: their
                // scales may be anything, so they are replaced by 0 (their
                // sums are 0: B is 0 there).
                const bool valid = (4 * G + tq[q]) * F::U < left;
                float mc0 = 0.0f, mc1 = 0.0f;
                float sc0 = F::scale(srow[q][0], delta[q][0], G, tq[q], prep[q][0], mc0);
                float sc1 = F::scale(srow[q][1], delta[q][1], G, tq[q], prep[q][1], mc1);
                sc0 = valid ? sc0 : 0.0f, sc1 = valid ? sc1 : 0.0f;
                acc[q][0] = fmaf(sc0, C[q][0] + C[q][1], acc[q][0]);
                acc[q][1] = fmaf(sc1, C[q][2] + C[q][3], acc[q][1]);
                if constexpr (F::MIN) {
                    const float sx = (Cm[q][0] + Cm[q][1]) * (F::k16(4 * G + tq[q], 0) ? 16.0f : 1.0f);
                    acc[q][0] = fmaf(valid ? -mc0 : 0.0f, sx, acc[q][0]);
                    acc[q][1] = fmaf(valid ? -mc1 : 0.0f, sx, acc[q][1]);
                }
            }
        }
        ctx.barrier(); // x buffer tt&1 and weight slot tt%S are free; x tile tt+1 is written
    }

    // ---- the four lanes of a quad hold the row's units t = 0..3: sum, scale, store
    ctx.quad_sum(acc);
    GB_EACH
    {
        if (active[q] && tq[q] == 0) {
            const gb_u32 r = row0[q] + g[q];
            if (r < m) y[r] = acc[q][0] * ys;
            if (r + 8 < m) y[r + 8] = acc[q][1] * ys;
        }
    }
}

#undef GB_EACH

#include "gemv_mma_tokens.cuh"

// ------------------------------------------------------------ the GPU context

#ifdef __CUDACC__
__device__ __forceinline__ void gb_mma_16816(float* c, const gb_u32* a, const gb_u32* b)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

struct GbMmaDevCtx {
    enum { NT = 1 };
    gb_u32 smem_u32;
    const unsigned char* smem_ptr;
    __device__ __forceinline__ gb_u32 tid(int) const { return threadIdx.x; }
    __device__ __forceinline__ void copy16(int, unsigned char* dst, const unsigned char* src, bool pred)
    {
        gb_cp_async16(smem_u32 + (gb_u32)(dst - smem_ptr), src, pred);
    }
    __device__ __forceinline__ void commit() { gb_cp_async_commit(); }
    template <int N>
    __device__ __forceinline__ void wait() { gb_cp_async_wait<N>(); }
    __device__ __forceinline__ void syncwarp() { __syncwarp(); }
    __device__ __forceinline__ void barrier() { __syncthreads(); }
    __device__ __forceinline__ void atomic_max(gb_u32* p, gb_u32 v)
    {
        v = __reduce_max_sync(0xFFFFFFFFu, v);
        if ((threadIdx.x & 31) == 0) atomicMax(p, v);
    }
    __device__ __forceinline__ void mma(float (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2])
    {
        gb_mma_16816(C[0], A[0], B[0]);
    }
    __device__ __forceinline__ void quad_sum(float (*acc)[2])
    {
        for (int h = 0; h < 2; h++) {
            acc[0][h] += __shfl_xor_sync(0xFFFFFFFFu, acc[0][h], 1);
            acc[0][h] += __shfl_xor_sync(0xFFFFFFFFu, acc[0][h], 2);
        }
    }
};

template <class F, int NW, int S, int T = 1>
__device__ __forceinline__ void gb_gemv_mma(const unsigned char* W, const float* x, float* y, gb_u32 m,
                                            gb_u32 k)
{
    static_assert(S >= 2, "STAGES must be at least 2");
    static_assert(sizeof(GbMmaShared<F, NW, S, T>) <= 48 * 1024,
                  "WARPS * STAGES staging slots of 16 rows (and the x tiles of GEMV_TOKENS rows) exceed the 48 KiB of static shared memory");
    __shared__ __align__(16) GbMmaShared<F, NW, S, T> sm;
    GbMmaDevCtx ctx{(gb_u32)__cvta_generic_to_shared(&sm), reinterpret_cast<const unsigned char*>(&sm)};
    if constexpr (T == 1) gb_mma_block<F, NW, S>(ctx, W, x, y, m, k, blockIdx.x, sm);
    else gb_mma_block_tokens<F, NW, S, T>(ctx, W, x, y, m, k, blockIdx.x, sm);
}

// The body of every quantized kernel (kernels/cuda/gemv_<fmt>.cu): the decode
// its defines pick (gemv_geometry.cuh) with the format's struct for it,
// FS for the f32 magic decode (XQ=0), FI for the integer dot (XQ=1), FM for
// the tensor-core path (MMA=1), whose fixed geometry is checked here.
template <class FS, class FI, class FM>
__device__ __forceinline__ void gb_gemv_quant_kernel(const unsigned char* w, const float* x, float* y,
                                                     gb_u32 m, gb_u32 k)
{
#if MMA
    static_assert(ROWS == 16, "MMA=1 computes 16 rows per warp: ROWS must be 16");
    static_assert(KSPLIT == 1, "MMA=1 (the tensor-core path) has no split-K: KSPLIT must be 1");
    static_assert(PARTS == 1, "MMA=1 (the tensor-core path) stages whole tiles: PARTS must be 1");
    gb_gemv_mma<FM, WARPS, STAGES, GEMV_TOKENS>(w, x, y, m, k);
#elif XQ
    gb_gemv_quant<FI, ROWS, STAGES, WARPS, KSPLIT, PARTS, GEMV_TOKENS>(w, x, y, m, k);
#else
    gb_gemv_quant<FS, ROWS, STAGES, WARPS, KSPLIT, PARTS, GEMV_TOKENS>(w, x, y, m, k);
#endif
}
#endif

#endif
