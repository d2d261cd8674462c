// gpubench-compile: entry=moe_q4k_grouped defines=GWARPS=4,GSTAGES=3,GTOK=4,GPACK=0
// gpubench-compile: entry=moe_q4k_grouped defines=GWARPS=2,GSTAGES=3,GTOK=8,GPACK=0
// gpubench-compile: entry=moe_q4k_grouped defines=GWARPS=4,GSTAGES=2,GTOK=8,GPACK=0
// gpubench-compile: entry=moe_q4k_grouped defines=GWARPS=1,GSTAGES=4,GTOK=4,GPACK=0
// gpubench-compile: entry=moe_q4k_grouped defines=GWARPS=4,GSTAGES=3,GTOK=8,GPACK=0
// gpubench-compile: entry=moe_q4k_grouped defines=GWARPS=4,GSTAGES=3,GTOK=4,GPACK=1
// gpubench-compile: entry=moe_q4k_grouped defines=GWARPS=4,GSTAGES=3,GTOK=2,GPACK=1
// Mixture-of-experts Q4_K GEMV grouped by expert: the `grouped` variant of
// experiments/moe_scaling.lua, one launch per step (docs/kernels/moe.md,
// "grouped"; moe_q4k.cuh has the stack layout).
//
// Block (x, y) takes the y-th expert present in ids (ascending; blocks past
// the last present expert exit), finds its pairs by scanning ids itself (no
// grouping launch) and computes rows x * 16 * GWARPS .. of that expert for
// GTOK of its pairs at a time, so an expert's weights stream from memory once
// for all its tokens (once per GTOK pairs; later passes re-read them from
// L2). A warp owns 16 rows (the mma's M) and the pass's tokens are its N:
// mma.sync m16n8k16 with A = the q4_k codes as f16 subnormals (q 2^-24, one
// mask per two codes; high nibbles masked in place are 16 q and their B is
// x'/16) and B = the activations split as x_hi = f16(x'), x_lo = f16(x' - x_hi)
// (22 bits of x' = x 2^s, one power of two per token and super-block of 256
// columns, max |x'| in [2^14, 2^15)): two mma per k-step, or one with
// GPACK=1 (GTOK <= 4), where columns 0..3 take the tokens' x_hi and 4..7 their
// x_lo and the two halves of the sums meet once, at the end. The sum of x' per
// token and sub-block, for the mins, comes from the conversion. Per sub-block
// of 32: acc_sb += (d sc) D - (dmin m) D1; per super-block acc += acc_sb 2^(24 - s). The weights of a
// super-block are staged with cp.async GSTAGES deep; the pass's x is loaded a
// super-block ahead into registers and converted to B fragments in shared
// memory by the warps, warp w taking tokens w, w + GWARPS, ...: one block
// barrier per super-block.
//
// Launch: block 32 * GWARPS, grid (ceil(n / (16 * GWARPS)), min(experts,
// pairs)). k a multiple of 256, n any, experts <= 1024, activation rows
// 16-byte aligned (outer, inner multiples of 4); max |x| per token and 256
// columns below 2^117 (larger finite values give an infinite back-scale).
#include "moe_q4k.cuh"
#include "dynamic_shared.cuh"

#if !defined(GWARPS) || !defined(GSTAGES) || !defined(GTOK) || !defined(GPACK)
#error "moe_q4k_grouped takes -DGWARPS, -DGSTAGES, -DGTOK and -DGPACK (defaults: lib/gpubench/moe_cuda.lua)"
#endif
#if GPACK && GTOK > 4
#error "GPACK=1 puts x_hi and x_lo of up to 4 tokens in the mma's 8 columns: GTOK must be 1..4"
#endif

enum {
    MOE_SB = 144,   // bytes of a q4_k super-block
    MOE_XU = 1024,  // bytes of one token's B fragments for one super-block (256 x (f16 hi + f16 lo))
    MOE_MAXE = 1024, // experts the presence mask holds
    // Shared-memory strides padded by 16 bytes: rows 40 words apart put the 16
    // lanes of a 64-bit load's phase (rows g, g + 1, ... at word 8g + 2t) on
    // distinct banks (144 bytes, 36 words, gave 4g + 2t: two-way conflicts),
    // and tokens 260 words apart do the same for the 128-bit B loads.
    MOE_SROW = MOE_SB + 16,
    MOE_SXU = MOE_XU + 16
};

// The kernel's arithmetic is in __host__ __device__ helpers over one lane's
// values, so that a host build can run it lane by lane with a CPU model of
// mma.sync (docs/kernels/moe.md, "How it was checked without a GPU"); such a
// build supplies moe_host_f16x2 (cvt.rn.f16x2.f32: two floats to f16, nearest
// even).
#ifndef __CUDA_ARCH__
gb_u32 moe_host_f16x2(float lo, float hi);
#endif

GB_HD gb_u32 moe_f16x2(float lo, float hi)
{
#ifdef __CUDA_ARCH__
    gb_u32 r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#else
    return moe_host_f16x2(lo, hi);
#endif
}

// ------------------------------------------------------------ x to B fragments
// One warp per (token, super-block): lane (s, t) = (lane / 4, lane % 4) takes
// elements 32 s + 8 t .. + 7 and writes the 32 bytes its mma lane (g, t)
// reads for sub-block s: for mma j = 0, 1 the B registers (b0, b1) of x_hi,
// then of x_lo, where b0 = elements (8t + 4j, 8t + 4j + 2) and
// b1 = (8t + 4j + 1, 8t + 4j + 3), the k slots (2t, 2t+1) and (2t+8, 2t+9)
// that the A registers (moe_regs) hold for the same bytes.

// E: the biased exponent of max|x| (bits mb), clamped so that zero and
// subnormal units get a finite scale; NaN or infinite x stays NaN or
// infinite through x'.
GB_HD gb_u32 moe_xprep_exp(gb_u32 mb) { return (mb >> 23) < 15 ? 15u : (mb >> 23); }

// The back-scale 2^(E - 117) = 2^-(141 - E) * 2^24 (the codes' subnormal
// 2^-24 undone): NaN for a NaN or infinite unit, infinite past f32's range.
GB_HD float moe_xprep_back(gb_u32 mb)
{
    const gb_u32 E = moe_xprep_exp(mb);
    return mb >= 0x7F800000u ? gb_as_float(0x7FC00000u) : E > 244 ? gb_as_float(0x7F800000u)
                                                                    : gb_as_float((E + 10) << 23);
}

// Lane (s, t)'s 8 words from its values v[i] = x[32 s + 8 t + i] and the
// unit's max bits mb: x' = x 2^(141 - E) puts max|x| in [2^14, 2^15) (odd
// sub-blocks / 16: their A is 16 q); for mma j = 0, 1: x_hi of b0, b1, then
// x_lo of b0, b1 (b0 = elements 4j, 4j + 2 of the lane's 8, b1 = 4j + 1, 4j + 3).
// Returns the sum of the lane's 8 x' 2^-24 (the scale of the codes' A), its
// share of the sub-block's sum of x for the mins.
GB_HD float moe_xprep_lane(const float* v, gb_u32 s, gb_u32 mb, gb_u32* o)
{
    const gb_u32 E = moe_xprep_exp(mb);
    const float mul = gb_as_float(((s & 1) ? 264u - E : 268u - E) << 23);
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < 2; j++) {
        const float p0 = v[4 * j] * mul, p1 = v[4 * j + 1] * mul, p2 = v[4 * j + 2] * mul, p3 = v[4 * j + 3] * mul;
        sum += (p0 + p1) + (p2 + p3);
        const gb_u32 h0 = moe_f16x2(p0, p2), h1 = moe_f16x2(p1, p3);
        o[4 * j] = h0, o[4 * j + 1] = h1;
        // x' - x_hi is exact in f32; its f16 keeps 11 more bits
        o[4 * j + 2] = moe_f16x2(p0 - gb_half_to_float(h0 & 0xFFFF), p2 - gb_half_to_float(h0 >> 16));
        o[4 * j + 3] = moe_f16x2(p1 - gb_half_to_float(h1 & 0xFFFF), p3 - gb_half_to_float(h1 >> 16));
    }
    return sum * 0x1p-24f;
}

// ------------------------------------------------------------ the grouped GEMV

// One lane's operands for sub-block 2c + h of a super-block: its A registers
// for mma j = 0, 1 (rows g and g + 8: rl, rh point to those rows' super-blocks;
// the lane's bytes are qs[32c + 8t .. + 7]: word j's bytes 0, 2 then 1, 3;
// h = 1 takes the high nibbles masked in place, 16 q) and its B registers
// (xg: the B fragments of its token column g): b[j] = x_hi b0, x_hi b1,
// x_lo b0, x_lo b1.
struct MoeRegs {
    gb_u32 a[2][4];
    uint4 b[2];
};

GB_HD void moe_a(const unsigned char* rl, const unsigned char* rh, gb_u32 t, int c, int h, gb_u32 (&a)[2][4])
{
    const uint2 wl = *reinterpret_cast<const uint2*>(rl + 16 + 32 * c + 8 * t);
    const uint2 wh = *reinterpret_cast<const uint2*>(rh + 16 + 32 * c + 8 * t);
    const gb_u32 M = h ? 0x00F000F0u : 0x000F000Fu;
    a[0][0] = wl.x & M, a[0][1] = wh.x & M, a[0][2] = (wl.x >> 8) & M, a[0][3] = (wh.x >> 8) & M;
    a[1][0] = wl.y & M, a[1][1] = wh.y & M, a[1][2] = (wl.y >> 8) & M, a[1][3] = (wh.y >> 8) & M;
}

GB_HD void moe_regs(const unsigned char* rl, const unsigned char* rh, const unsigned char* xg, gb_u32 t, int c,
                    int h, MoeRegs& r)
{
    moe_a(rl, rh, t, c, h, r.a);
    const uint4* bp = reinterpret_cast<const uint4*>(xg + 128 * (2 * c + h) + 32 * t);
    r.b[0] = bp[0], r.b[1] = bp[1];
}

// GPACK=1: B column g is x_hi (g < 4) or x_lo (g >= 4) of token g % 4, so xg
// points 8 bytes into the token's fragments for g >= 4: b[j] = (b0, b1) of
// mma j, one mma per k-step for both halves.
struct MoeRegsPacked {
    gb_u32 a[2][4];
    uint2 b[2];
};

GB_HD void moe_regs_packed(const unsigned char* rl, const unsigned char* rh, const unsigned char* xg, gb_u32 t,
                           int c, int h, MoeRegsPacked& r)
{
    moe_a(rl, rh, t, c, h, r.a);
    const unsigned char* bp = xg + 128 * (2 * c + h) + 32 * t;
    r.b[0] = *reinterpret_cast<const uint2*>(bp), r.b[1] = *reinterpret_cast<const uint2*>(bp + 16);
}

// The sub-block's share of the lane's four sums (rows g, g, g+8, g+8 x
// columns 2t, 2t+1, 2t, 2t+1): sb += (d sc) dw - (dmin m) d1, from the prep
// floats of rows g (pl) and g + 8 (ph) for sub-blocks (2c, 2c + 1); the odd
// sub-block's sum of x came in sixteenths.
GB_HD void moe_epilogue(float* sb, const float* dw, const float* d1, const float4& pl, const float4& ph, int h)
{
    const float sl = h ? pl.y : pl.x, sh = h ? ph.y : ph.x;
    const float ml = h ? -16.0f * pl.w : -pl.z, mh = h ? -16.0f * ph.w : -ph.z;
    sb[0] = fmaf(ml, d1[0], fmaf(sl, dw[0], sb[0]));
    sb[1] = fmaf(ml, d1[1], fmaf(sl, dw[1], sb[1]));
    sb[2] = fmaf(mh, d1[2], fmaf(sh, dw[2], sb[2]));
    sb[3] = fmaf(mh, d1[3], fmaf(sh, dw[3], sb[3]));
}

// c += A B: A = (a0, a1, a2, a3) = rows (g, g+8) x k slots (2t, 2t+1), then (2t+8, 2t+9);
// B = (b0, b1) = column g, the same k slots; c = rows (g, g+8) x columns (2t, 2t+1).
__device__ __forceinline__ void moe_mma(float* c, gb_u32 a0, gb_u32 a1, gb_u32 a2, gb_u32 a3, gb_u32 b0, gb_u32 b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// c = A B (a zero accumulator without zeroing registers first).
__device__ __forceinline__ void moe_mma0(float* c, gb_u32 a0, gb_u32 a1, gb_u32 a2, gb_u32 a3, gb_u32 b0, gb_u32 b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%10,%10,%10,%10};"
        : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(0.0f));
}

template <int W, int S, int TK>
struct MoeGroupedSmem {
    unsigned char w[S][16 * W][MOE_SROW]; // a super-block of the block's rows, S stages
    unsigned char x[2][TK][MOE_SXU];      // the pass's tokens' B fragments for a super-block, 2 stages
    float xi[2][TK];                    // ... and their back-scales
    float xsum[2][8][8];                // ... and sum x' 2^-24 per sub-block and token (8 columns: the mma's N)
    float prep[W][16][16];              // gb_k_prep of each warp's rows for the current super-block
    gb_u32 mask[MOE_MAXE / 32];         // experts present in ids
    gb_u32 pair[TK];                    // the pass's pairs
    int expert, count;
    gb_u32 cursor;                      // where the next pass's scan of ids starts
};

// Warp 0 of the block: the next (up to) TK pairs of expert ex at or after
// sm.cursor, in pair order, into sm.pair / sm.count.
template <int W, int S, int TK>
__device__ __forceinline__ void moe_next_pairs(MoeGroupedSmem<W, S, TK>& sm, const int* ids, gb_u32 ex,
                                               gb_u32 pairs, gb_u32 experts, gb_u32 lane)
{
    gb_u32 have = 0, cur = sm.cursor;
    while (have < (gb_u32)TK && cur < pairs) {
        const gb_u32 p = cur + lane;
        const bool match = p < pairs && moe_expert(ids, p, experts) == ex;
        const gb_u32 bal = __ballot_sync(0xFFFFFFFFu, match);
        const gb_u32 rank = __popc(bal & ((1u << lane) - 1u)), need = TK - have, got = __popc(bal);
        if (match && rank < need) sm.pair[have + rank] = p;
        if (got > need) { // stop right after the need-th match
            const gb_u32 last = __ffs(__ballot_sync(0xFFFFFFFFu, match && rank == need - 1)) - 1;
            cur += last + 1;
            have = TK;
        } else {
            cur += 32;
            have += got;
        }
    }
    if (lane == 0) sm.count = (int)have, sm.cursor = cur;
}

// The warp's share of a pass's x: tokens warp, warp + W, ... (XT of them at
// most), each lane's 8 values of one super-block in registers, loaded a
// super-block before they are converted into shared memory.
template <int W, int TK>
struct MoeXLoad {
    enum { XT = (TK + W - 1) / W };
    float v[XT][8];
};

// Past the static 48 KiB the whole layout is dynamic shared memory.
constexpr unsigned MOE_GROUPED_DYNAMIC = gb_stage_dynamic_bytes(sizeof(MoeGroupedSmem<GWARPS, GSTAGES, GTOK>), 0);
GB_DYNAMIC_SHARED(MOE_GROUPED_DYNAMIC)

extern "C" __global__ void __launch_bounds__(32 * GWARPS)
    moe_q4k_grouped(const unsigned char* __restrict__ w, const float* __restrict__ x, const int* __restrict__ ids,
                    float* __restrict__ y, unsigned n, unsigned k, unsigned experts, unsigned nb01,
                    unsigned long long nb02, unsigned top_k, unsigned pairs, unsigned outer, unsigned inner)
{
    constexpr int W = GWARPS, S = GSTAGES, TK = GTOK, NT = 32 * W;
    typedef MoeXLoad<W, TK> XL;
    static_assert(S >= 2, "GSTAGES must be at least 2");
    static_assert(TK >= 1 && TK <= 8, "GTOK (tokens per pass) is the mma's N: 1 to 8");
    typedef MoeGroupedSmem<W, S, TK> Smem;
    Smem* smp;
    if constexpr (MOE_GROUPED_DYNAMIC > 0) {
        smp = reinterpret_cast<Smem*>(gb_dynamic_shared(sizeof(Smem)));
    } else {
        __shared__ __align__(16) Smem static_sm;
        smp = &static_sm;
    }
    Smem& sm = *smp;
    const gb_u32 tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const gb_u32 words = (experts + 31) / 32;

    // The grouping: which experts ids holds, and which of them is this block's.
    for (gb_u32 i = tid; i < MOE_MAXE / 32; i += NT) sm.mask[i] = 0;
    if constexpr (GPACK != 0) // the x_lo columns' sums of x stay zero: the mins count once per token
        for (gb_u32 i = tid; i < 2 * 8 * 4; i += NT) sm.xsum[i >> 5][(i >> 2) & 7][4 + (i & 3)] = 0.0f;
    __syncthreads();
    for (gb_u32 p = tid; p < pairs; p += NT) {
        const gb_u32 e = moe_expert(ids, p, experts);
        atomicOr(&sm.mask[e >> 5], 1u << (e & 31));
    }
    __syncthreads();
    if (warp == 0) {
        gb_u32 wd = lane < words ? sm.mask[lane] : 0u;
        const gb_u32 c = __popc(wd);
        gb_u32 incl = c;
#pragma unroll
        for (int o = 1; o < 32; o *= 2) {
            const gb_u32 v = __shfl_up_sync(0xFFFFFFFFu, incl, o);
            if (lane >= (gb_u32)o) incl += v;
        }
        const gb_u32 u = blockIdx.y, excl = incl - c;
        if (u >= excl && u < incl) {
            for (gb_u32 i = excl; i < u; i++) wd &= wd - 1; // drop the lower set bits
            sm.expert = (int)(32 * lane + __ffs(wd) - 1);
        }
        if (lane == 31 && u >= incl) sm.expert = -1; // past the last present expert
        if (lane == 0) sm.cursor = 0;
    }
    __syncthreads();
    if (sm.expert < 0) return;
    const gb_u32 ex = (gb_u32)sm.expert;
    const unsigned char* We = w + (gb_u64)ex * nb02;
    const gb_u32 nsb = k >> 8, row0 = blockIdx.x * 16 * W;
    const gb_u32 g = lane >> 2, t = lane & 3, rl = 16 * warp + g, rh = rl + 8;
    const gb_u32 xs = lane >> 2; // the sub-block this lane converts (lane (s, t) of moe_xprep_lane)
    // This thread's 16-byte chunks of a stage (the block's rows x 9 chunks),
    // the same for every super-block but for + 144 b: sources and shared
    // addresses once, not per copy (rows past n copy row n - 1).
    constexpr int CH = (144 * W + NT - 1) / NT;
    const unsigned char* csrc[CH];
    gb_u32 cdst[CH];
#pragma unroll
    for (int i = 0; i < CH; i++) {
        const gb_u32 q = tid + NT * i, r = q / 9, c = q - 9 * r, row = row0 + r < n ? row0 + r : n - 1;
        csrc[i] = q < 144u * W ? We + (gb_u64)row * nb01 + 16 * c : nullptr;
        cdst[i] = (gb_u32)__cvta_generic_to_shared(&sm.w[0][q < 144u * W ? r : 0][16 * c]);
    }
    constexpr gb_u32 STAGE = sizeof(sm.w[0]);

    for (;;) { // passes of up to TK pairs
        if (warp == 0) moe_next_pairs(sm, ids, ex, pairs, experts, lane);
        __syncthreads();
        const int T = sm.count;
        if (T == 0) break;
        // the rows of x this warp converts: tokens warp + W i of the pass
        const float* xr[XL::XT];
#pragma unroll
        for (int i = 0; i < XL::XT; i++) {
            const gb_u32 j = warp + W * i;
            xr[i] = j < (gb_u32)T ? moe_x_row(x, sm.pair[j], top_k, outer, inner) + 8 * lane : nullptr;
        }
        XL xl;
        auto load_x = [&](gb_u32 b) { // this lane's values of super-block b (32 s + 8 t .. + 7 = 8 lane ..)
#pragma unroll
            for (int i = 0; i < XL::XT; i++)
                if (xr[i] && b < nsb) gb_load_x<8>(xr[i] + 256 * b, xl.v[i]);
        };
        auto convert_x = [&](gb_u32 b) { // ... into B fragments, stage b % 2
#pragma unroll
            for (int i = 0; i < XL::XT; i++) {
                if (!xr[i] || b >= nsb) continue; // the same for the whole warp
                float mx = 0.0f;
#pragma unroll
                for (int e = 0; e < 8; e++) mx = gb_absmax_nan(xl.v[i][e], mx);
#pragma unroll
                for (int o = 16; o >= 1; o /= 2) mx = gb_absmax_nan(__shfl_xor_sync(0xFFFFFFFFu, mx, o), mx);
                const gb_u32 mb = gb_bits(mx), j = warp + W * i;
                gb_u32 o[8];
                float sum = moe_xprep_lane(xl.v[i], xs, mb, o);
                sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1); // the 4 lanes of sub-block xs
                sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 2);
                if ((lane & 3) == 0) sm.xsum[b & 1][xs][j] = sum;
                uint4* dst = reinterpret_cast<uint4*>(&sm.x[b & 1][j][32 * lane]); // 128 s + 32 t
                dst[0] = make_uint4(o[0], o[1], o[2], o[3]);
                dst[1] = make_uint4(o[4], o[5], o[6], o[7]);
                if (lane == 0) sm.xi[b & 1][j] = moe_xprep_back(mb);
            }
        };
        // Copies super-block b of the block's rows into stage b % S, as one
        // cp.async group (empty past the last super-block, so that every
        // thread commits the same groups).
        auto stage = [&](gb_u32 b) {
            if (b < nsb) {
                const gb_u32 st = (b % S) * STAGE;
#pragma unroll
                for (int i = 0; i < CH; i++)
                    if (csrc[i]) gb_cp_async16(cdst[i] + st, csrc[i] + MOE_SB * b, true);
            }
            gb_cp_async_commit();
        };
#pragma unroll
        for (int i = 0; i < S - 1; i++) stage(i);
        load_x(0);
        convert_x(0);
        load_x(1);
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (gb_u32 b = 0; b < nsb; b++) {
            gb_cp_async_wait<S - 2>(); // this thread's copies of super-block b
            // ... and everyone's, and x's stage b % 2; everyone is done with
            // super-block b - 1: its weight stage and x stage are free
            __syncthreads();
            stage(b + S - 1); // into weight stage (b - 1) % S
            convert_x(b + 1); // into x stage (b + 1) % 2, read after the next barrier
            load_x(b + 2);
            const gb_u32 st = b % S, xb = b & 1;
            // GPACK: column g is token (g % 4) % TK, its x_hi words (g < 4) or x_lo (8 bytes on)
            const unsigned char* xg_packed = &sm.x[xb][(g & 3) % TK][g >= 4 ? 8 : 0];
            if (lane < 16) gb_k_prep(&sm.w[st][16 * warp + lane][0], &sm.prep[warp][lane][0]);
            __syncwarp();
            float sb[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const float4 pl = *reinterpret_cast<const float4*>(&sm.prep[warp][g][4 * c]);
                const float4 ph = *reinterpret_cast<const float4*>(&sm.prep[warp][g + 8][4 * c]);
#pragma unroll
                for (int h = 0; h < 2; h++) { // sub-block 2c + h: low nibbles, then high (16 q)
                    // columns past TK read another token's B (kept apart by the mma, never stored):
                    // no zeroing and no branch
                    float dw[4], d1[4];
                    if constexpr (GPACK != 0) {
                        MoeRegsPacked r;
                        moe_regs_packed(&sm.w[st][rl][0], &sm.w[st][rh][0], xg_packed, t, c, h, r);
                        moe_mma0(dw, r.a[0][0], r.a[0][1], r.a[0][2], r.a[0][3], r.b[0].x, r.b[0].y);
                        moe_mma(dw, r.a[1][0], r.a[1][1], r.a[1][2], r.a[1][3], r.b[1].x, r.b[1].y);
                    } else {
                        MoeRegs r;
                        moe_regs(&sm.w[st][rl][0], &sm.w[st][rh][0], &sm.x[xb][g % TK][0], t, c, h, r);
                        moe_mma0(dw, r.a[0][0], r.a[0][1], r.a[0][2], r.a[0][3], r.b[0].x, r.b[0].y); // x_hi
                        moe_mma(dw, r.a[0][0], r.a[0][1], r.a[0][2], r.a[0][3], r.b[0].z, r.b[0].w);  // x_lo
                        moe_mma(dw, r.a[1][0], r.a[1][1], r.a[1][2], r.a[1][3], r.b[1].x, r.b[1].y);
                        moe_mma(dw, r.a[1][0], r.a[1][1], r.a[1][2], r.a[1][3], r.b[1].z, r.b[1].w);
                    }
                    // columns 2t, 2t + 1 (GPACK: the x_lo columns' are zero)
                    const float2 sx = *reinterpret_cast<const float2*>(&sm.xsum[xb][2 * c + h][2 * t]);
                    d1[0] = d1[2] = sx.x, d1[1] = d1[3] = sx.y;
                    moe_epilogue(sb, dw, d1, pl, ph, h);
                }
            }
            // C columns 2t, 2t+1 are tokens 2t, 2t+1 of the pass (GPACK: tokens 2t % 4, 2t % 4 + 1;
            // unused ones never stored)
            const gb_u32 c0 = GPACK ? (2 * t) & 3 : 2 * t;
            const float i0 = c0 < (gb_u32)T ? sm.xi[xb][c0] : 0.0f;
            const float i1 = c0 + 1 < (gb_u32)T ? sm.xi[xb][c0 + 1] : 0.0f;
            acc[0] = fmaf(sb[0], i0, acc[0]), acc[1] = fmaf(sb[1], i1, acc[1]);
            acc[2] = fmaf(sb[2], i0, acc[2]), acc[3] = fmaf(sb[3], i1, acc[3]);
        }
        if constexpr (GPACK != 0) { // lane t + 2's x_lo sums join lane t's x_hi sums
#pragma unroll
            for (int i = 0; i < 4; i++) acc[i] += __shfl_xor_sync(0xFFFFFFFFu, acc[i], 2);
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const gb_u32 col = 2 * t + (i & 1), row = row0 + (i < 2 ? rl : rh);
            if ((!GPACK || t < 2) && col < (gb_u32)T && row < n) y[(gb_u64)sm.pair[col] * n + row] = acc[i];
        }
        __syncthreads(); // the pass's pairs and stages are free for the next pass
    }
}
