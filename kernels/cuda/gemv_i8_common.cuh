// The shared part of the int8 tensor-core GEMV kernels for T = 1..8 rows of x
// (y[T, m] = x[T, k] . W^T, each weight read once): gemv_q4_k_i8.cu,
// gemv_q5_k_i8.cu, gemv_q6_k_i8.cu, gemv_q8_0_i8.cu, gemv_q4_0_i8.cu. Design and instruction budgets:
// docs/kernels/cuda-gemv.md, "The int8 tensor-core q4_k kernel (I8=1)" and
// "The int8 tensor-core q8_0 and q4_0 kernels".
//
// mma.sync m16n8k32 .s8.s8.s32: A = 16 weight rows x 32 columns (one block or
// sub-block of 32 weights) as int8 codes, B = the same 32 columns of the T x
// rows (columns of the mma; zero past T), as 16-bit integers split into two
// int8 digits, x ~ dx (256 h + l): two mmas (h, l), whose sum 256 C_h + C_l
// is exactly sum q * round(x / dx), so x keeps 16 bits like the scalar path's
// integer dot. Lane (g, t) = (lane / 4, lane % 4) owns A rows g and g + 8 and
// B column (row of x) g; its B registers are 8 digit bytes of a column run,
// read from shared memory at 32 j + 8 t, so a format maps its A k slots to
// those columns (a format may store x's digits permuted, PERM, to make that
// hold).
//
// Here: the x digits in shared memory and their quantization, the GPU
// context, and the block loop every format runs (gb_i8_block): a block is NW
// warps of 16 rows times KS slices of k; per step of KS chunks of 256 columns
// its threads first quantize the T x rows' 8 runs of 32 of each into shared
// memory (one thread per (slice, row of x, run)), then each warp runs its
// slice's chunk (the format's step: 8 runs x 2 mmas and the epilogue): two
// barriers per step; at the end slices 1.. leave their sums in the digits'
// shared memory and slice 0 adds them. XP = 1, 2 (the kernels' XPRE): a first
// launch (gemv_i8_xprep.cu) quantizes x once per call into global memory, in
// the shared layout (1) or the mma's fragment order (2, GbI8Frag), and the
// blocks read it there: no quantization and no barrier in the loop. Every per-thread value is an array
// over Ctx::NT threads: NT = 1 on the GPU, a whole block in the host
// emulation (tests/cuda_host/gemv_i8_emulate.cu), where each phase runs for
// every thread before the next, which is what the barriers enforce here.
#ifndef GPUBENCH_GEMV_I8_COMMON_CUH
#define GPUBENCH_GEMV_I8_COMMON_CUH

#include "gemv_decode.cuh"     // gb_prmt, gb_half_to_float, gb_k_scales
#include "launch_overlap.cuh" // gb_overlap_wait: the GPU context's wait_inputs

#define GB_I8_EACH for (int q = 0; q < Ctx::NT; q++)

// I8_GUARD = 1 (the default): the formats' epilogues skip the mma columns of
// rows of x past T, a branch per run that the compiler leaves divergent at
// some T; 0: every column is computed, the sums past T never stored. Which is
// faster is for an A/B to say (docs/kernels/cuda-gemv.md, "x in fragment order").
#ifndef I8_GUARD
#define I8_GUARD 1
#endif
#define GB_I8_PAST_T(tq, i) (I8_GUARD && 2u * (tq) + ((i) & 1) >= (gb_u32)T)
// STAGED (an entry's define, 0 when absent): its weights copied through a ring of that many
// stages per warp (gb_i8_block's STG), with XPRE=2 only
#ifndef STAGED
#define STAGED 0
#endif

enum {
    GB_I8_XROW = 256 + 32, // bytes of one x row's digits per chunk of 256 columns: 32 of padding put the
                           // 8 rows of a half-warp's 8-byte B loads on distinct banks
    GB_I8_QMAX = 32639     // |round(x / dx)| <= QMAX keeps both digits in [-128, 127]
};

// What the quantization stores per (row of x, run of 32) besides dx (the
// format's SX): sum(x) as a float (q4_k's mins), nothing (q8_0), or
// -8 sum(x') as an int, x' = round(x / dx) (q4_0's offset, the l mma's C).
enum { GB_I8_SX_FLOAT = 0, GB_I8_SX_NONE = 1, GB_I8_SX_OFF8 = 2 };

template <int T, class S = float>
struct alignas(16) GbI8Smem { // the digit rows are read 8 bytes at a time
    signed char xh[T][GB_I8_XROW], xl[T][GB_I8_XROW]; // the digits of x' = round(x / dx)
    float dx[T][8];                                   // per (row of x, run): dx
    S sx[T][8];                                       // and the format's sum (SX)
};

// lib/gpubench/gemv_cuda.lua sizes XPRE=1's workspace at 640 T bytes a chunk of 256 columns.
static_assert(sizeof(GbI8Smem<1>) == 640 && sizeof(GbI8Smem<3, int>) == 3 * 640 && sizeof(GbI8Smem<8>) == 8 * 640,
              "a chunk of x's digits is 640 T bytes");

// The two digits of q in [-QMAX, QMAX]: q = 256 h + l, h and l in [-128, 127].
GB_HD void gb_i8_digits(int q, int& h, int& l)
{
    h = (q + 128) >> 8; // arithmetic shift: floor
    l = q - 256 * h;
}

// round to nearest even, as cvt.rni.s32.f32
GB_HD int gb_i8_round(float v)
{
#ifdef __CUDA_ARCH__
    return __float2int_rn(v);
#else
    return (int)nearbyintf(v);
#endif
}

// QMAX / mx for mx > 0, a little low: the fast reciprocal on the GPU errs by
// a few ulp, and 1 - 2^-20 keeps |x| inv below QMAX + 1/2, so |q| <= QMAX.
GB_HD float gb_i8_scale(float mx)
{
#ifdef __CUDA_ARCH__
    return __fdividef((float)GB_I8_QMAX * (1.0f - 0x1p-20f), mx);
#else
    return (float)GB_I8_QMAX * (1.0f - 0x1p-20f) / mx;
#endif
}

// The digits of four q as two words of four bytes: l = q's low byte (signed,
// q - 256 h), h = byte 1 of q + 128 (gb_i8_digits' h, which fits a byte).
GB_HD void gb_i8_pack(const int* qv, gb_u32& hw, gb_u32& lw)
{
    const gb_u32 l01 = gb_prmt((gb_u32)qv[0], (gb_u32)qv[1], 0x0040u), l23 = gb_prmt((gb_u32)qv[2], (gb_u32)qv[3], 0x0040u);
    const gb_u32 h0 = (gb_u32)(qv[0] + 128), h1 = (gb_u32)(qv[1] + 128), h2 = (gb_u32)(qv[2] + 128),
                 h3 = (gb_u32)(qv[3] + 128);
    const gb_u32 h01 = gb_prmt(h0, h1, 0x0051u), h23 = gb_prmt(h2, h3, 0x0051u);
    lw = gb_prmt(l01, l23, 0x5410u);
    hw = gb_prmt(h01, h23, 0x5410u);
}

// Where the digits of columns 4w .. 4w + 3 of a run go: in order (PERM = 0),
// or (PERM = 1, q4_0) columns 4t .. 4t + 3 and 16 + 4t .. 16 + 4t + 3 side by
// side at 8t, the two nibble halves of a lane's code word.
template <int PERM>
GB_HD gb_u32 gb_i8_xpos(int w)
{
    return PERM ? 8u * (w & 3) + 4u * (w >> 2) : 4u * w;
}

// The 32 values of (row of x t, run j) of chunk sb (columns 256 sb + 32 j ..)
// by 8 16-byte loads, their largest magnitude and (SX = GB_I8_SX_FLOAT) sum.
template <int SX>
GB_HD void gb_i8_run(const float* x, gb_u32 k, gb_u32 sb, gb_u32 t, gb_u32 j, float (&v)[32], float& mx, float& sum)
{
    const float4* v4 = reinterpret_cast<const float4*>(x + (gb_u64)t * k + 256u * sb + 32u * j);
    #pragma unroll
    for (int i = 0; i < 8; i++) {
        const float4 f = v4[i];
        v[4 * i] = f.x, v[4 * i + 1] = f.y, v[4 * i + 2] = f.z, v[4 * i + 3] = f.w;
    }
    mx = 0.0f, sum = 0.0f;
    #pragma unroll
    for (int i = 0; i < 32; i++) {
        mx = fmaxf(mx, fabsf(v[i]));
        if (SX == GB_I8_SX_FLOAT) sum += v[i];
    }
}

// dx for a run whose largest magnitude is mx: 1 / gb_i8_scale's (the product's
// constant folded), so that q dx = x to within x's step
GB_HD float gb_i8_dx(float mx)
{
    return mx * (1.0f / ((float)GB_I8_QMAX * (1.0f - 0x1p-20f)));
}

// Quantizes (row of x t, run j) of chunk sb into the shared digits: the run's
// 32 values (gb_i8_run), their digits stored 4 to a word; dx and the format's
// sum (SX) beside them.
template <int T, int SX, int PERM, class S>
GB_HD void gb_i8_quantize(const float* x, gb_u32 k, gb_u32 sb, gb_u32 t, gb_u32 j, GbI8Smem<T, S>& sm)
{
    float v[32], mx, sum;
    gb_i8_run<SX>(x, k, sb, t, j, v, mx, sum);
    const float inv = mx > 0.0f ? gb_i8_scale(mx) : 0.0f;
    int isum = 0;
    #pragma unroll
    for (int w = 0; w < 8; w++) {
        int qv[4];
        #pragma unroll
        for (int b = 0; b < 4; b++) qv[b] = gb_i8_round(v[4 * w + b] * inv);
        if (SX == GB_I8_SX_OFF8) isum += (qv[0] + qv[1]) + (qv[2] + qv[3]);
        gb_u32 hw, lw;
        gb_i8_pack(qv, hw, lw);
        const gb_u32 o = 32 * j + gb_i8_xpos<PERM>(w);
        *reinterpret_cast<gb_u32*>(&sm.xh[t][o]) = hw;
        *reinterpret_cast<gb_u32*>(&sm.xl[t][o]) = lw;
    }
    sm.dx[t][j] = gb_i8_dx(mx);
    if (SX == GB_I8_SX_FLOAT) sm.sx[t][j] = (S)sum;
    if (SX == GB_I8_SX_OFF8) sm.sx[t][j] = (S)(-8 * isum);
}

// A block's shared memory: the digits of KS chunks (one per k slice), and
// after the last chunk the slices' partial sums in the same bytes. With XP = 1, 2
// (x's digits quantized once per call into global memory, below) only the sums.
template <int T, int NW, int KS, class S = float, int XP = 0>
struct alignas(16) GbI8Block {
    union {
        GbI8Smem<T, S> s[KS];
        float red[KS > 1 ? KS - 1 : 1][NW][32][4];
    };
};
template <int T, int NW, int KS, class S>
struct alignas(16) GbI8Block<T, NW, KS, S, 1> {
    float red[KS > 1 ? KS - 1 : 1][NW][32][4];
};
template <int T, int NW, int KS, class S>
struct alignas(16) GbI8Block<T, NW, KS, S, 2> : GbI8Block<T, NW, KS, S, 1> {
};

// x's digits quantized once per call by the prepass (gemv_i8_xprep.cu), into
// a workspace of gb_i8_xq_chunks(k, KS) chunks: in the shared layout (XP = 1,
// GbI8Smem, gb_i8_xprep_unit), or (XP = 2) in the mma's fragment order, so
// that a warp's B registers of a run are one 16-byte load a lane, 512
// contiguous bytes (4 L1 wavefronts; the shared layout's rows of x 288 bytes
// apart cost 8 per 8-byte load: ncu found the XP = 1 kernels L1-bound,
// docs/kernels/cuda-gemv.md, "x in fragment order").
// Chunk sb (256 columns) is a GbI8Frag: b[j][4 g + t] = lane (g, t)'s digits of
// run j (row of x g, its 8 k slots: h in two words, l in two), s[j][t] = dx of
// rows 2t and 2t + 1 of x, then their sums (SX, S's bits). Rows past T are
// never written: the blocks do not load them (B) or discard them (s). The
// workspace holds gb_i8_xq_chunks(k, KS) chunks; the chunks past k / 256 pad
// it to whole steps: a warp whose chunk is missing still loads its B (and
// multiplies it by a zero A, discarding the sum), so those loads stay inside.
template <class S>
struct alignas(16) GbI8Frag {
    uint4 b[8][32];
    uint4 s[8][4];
};
// lib/gpubench/gemv_cuda.lua sizes XPRE=2's workspace at 4608 bytes a chunk.
static_assert(sizeof(GbI8Frag<float>) == 4608 && sizeof(GbI8Frag<int>) == 4608, "a chunk in fragment order is 4608 bytes");

GB_HD gb_u32 gb_i8_xq_chunks(gb_u32 k, gb_u32 ks)
{
    return (k / 256 + ks - 1) / ks * ks;
}

// Unit u of the XP = 1 prepass's nsb * 8 * T: chunk u / 8T, row of x (u % 8T) / 8,
// run u % 8 (the unit order of gb_i8_block's own quantization).
template <int T, int SX, int PERM, class S>
GB_HD void gb_i8_xprep_unit(const float* x, gb_u32 k, gb_u32 u, GbI8Smem<T, S>* xq)
{
    const gb_u32 sb = u / (8 * T), r = u % (8 * T);
    gb_i8_quantize<T, SX, PERM>(x, k, sb, r >> 3, r & 7, xq[sb]);
}

GB_HD gb_u32 gb_i8_sbits(float v) { return gb_bits(v); }
GB_HD gb_u32 gb_i8_sbits(int v) { return (gb_u32)v; }
GB_HD void gb_i8_sfrom(gb_u32 u, float& v) { v = gb_as_float(u); }
GB_HD void gb_i8_sfrom(gb_u32 u, int& v) { v = (int)u; }

// Unit u of the XP = 2 prepass's nsb * 8 * T * 4: chunk sb, run j, row of x t and
// lane quarter q (u = ((sb 8 + j) T + t) 4 + q, so that consecutive threads
// write consecutive lanes' 16 bytes): the run's dx (and SX) from its 32
// values, the digits of the lane's 8 k slots (the format's column groups, as
// gb_i8_xpos places them: PERM = 0 columns 8q .. 8q + 7, PERM = 1 4q .. 4q + 3
// and 16 + 4q ..), q = 0 also s[j][t / 2]'s two words of row t.
template <int T, int SX, int PERM, class S>
GB_HD void gb_i8_xfrag_unit(const float* x, gb_u32 k, gb_u32 u, GbI8Frag<S>* xq)
{
    const gb_u32 qq = u & 3, t = (u >> 2) % T, j = (u / (4 * T)) & 7, sb = u / (32 * T);
    float v[32], mx, sum;
    gb_i8_run<SX>(x, k, sb, t, j, v, mx, sum);
    const float inv = mx > 0.0f ? gb_i8_scale(mx) : 0.0f;
    gb_u32 hw[2], lw[2];
    #pragma unroll
    for (int e = 0; e < 2; e++) {
        const gb_u32 w = PERM ? qq + 4u * e : 2u * qq + e;
        int qv[4];
        #pragma unroll
        for (int b = 0; b < 4; b++) qv[b] = gb_i8_round(v[4 * w + b] * inv);
        gb_i8_pack(qv, hw[e], lw[e]);
    }
    xq[sb].b[j][4 * t + qq] = make_uint4(hw[0], hw[1], lw[0], lw[1]);
    if (qq == 0) {
        S sx = 0;
        if (SX == GB_I8_SX_FLOAT) sx = (S)sum;
        if (SX == GB_I8_SX_OFF8) {
            int isum = 0;
            #pragma unroll
            for (int i = 0; i < 32; i++) isum += gb_i8_round(v[i] * inv);
            sx = (S)(-8 * isum);
        }
        gb_u32* s = reinterpret_cast<gb_u32*>(&xq[sb].s[j][t >> 1]);
        s[t & 1] = gb_bits(gb_i8_dx(mx));
        s[2 + (t & 1)] = gb_i8_sbits(sx);
    }
}

// What a lane's mmas of run j take from x: its B digits (row of x g, zero past
// T) and dx and the format's sum of rows 2t and 2t + 1 of x (zero past T from
// the shared layout; unspecified from the fragment one, whose results there
// are discarded).
template <class S>
struct GbI8Bx {
    gb_u32 h[2], l[2];
    float dx[2];
    S sx[2];
};

// from the shared layout (the block's own digits, XP = 0, or the XP = 1 workspace's)
template <int T, class Ctx, class S>
GB_HD void gb_i8_bx(Ctx& ctx, const GbI8Smem<T, S>& d, int j, gb_u32 g, gb_u32 tq, GbI8Bx<S>& b)
{
    const bool has = g < (gb_u32)T;
    const gb_u32 o = 32u * j + 8u * tq, r = has ? g : 0;
    const uint2 vh = ctx.ld8s(&d.xh[r][o]), vl = ctx.ld8s(&d.xl[r][o]);
    b.h[0] = has ? vh.x : 0, b.h[1] = has ? vh.y : 0;
    b.l[0] = has ? vl.x : 0, b.l[1] = has ? vl.y : 0;
    #pragma unroll
    for (int e = 0; e < 2; e++) {
        const gb_u32 t = 2u * tq + e;
        b.dx[e] = t < (gb_u32)T ? d.dx[t][j] : 0.0f;
        b.sx[e] = t < (gb_u32)T ? d.sx[t][j] : (S)0;
    }
}

// from the prepass's fragment order (XP = 2): two 16-byte loads
template <int T, class Ctx, class S>
GB_HD void gb_i8_bx(Ctx& ctx, const GbI8Frag<S>& d, int j, gb_u32 g, gb_u32 tq, GbI8Bx<S>& b)
{
    const bool has = g < (gb_u32)T;
    const uint4 v = has ? ctx.ldx16(&d.b[j][4 * g + tq]) : make_uint4(0, 0, 0, 0);
    const uint4 s = ctx.ldx16(&d.s[j][tq]);
    b.h[0] = v.x, b.h[1] = v.y, b.l[0] = v.z, b.l[1] = v.w;
    b.dx[0] = gb_as_float(s.x), b.dx[1] = gb_as_float(s.y);
    gb_i8_sfrom(s.z, b.sx[0]), gb_i8_sfrom(s.w, b.sx[1]);
}

// Where gb_i8_block's steps read x: the shared layout (the block's own
// digits, XP = 0, or the prepass's, XP = 1) or the fragment order (XP = 2).
template <int XP, int T, class S>
struct GbI8XSource {
    typedef GbI8Smem<T, S> type;
};
template <int T, class S>
struct GbI8XSource<2, T, S> {
    typedef GbI8Frag<S> type;
};

// STG > 0 (the kernels' STAGED; q4_k, q5_k, q8_0, q4_0, XP = 2 only): each warp
// copies its 16 rows' chunk of a step into its own ring of STG stages in
// shared memory with 16-byte cp.async copies, consecutive lanes on
// consecutive bytes (16 rows x F::BPC bytes, 4-5 L1 wavefronts per 512
// bytes, against 8 per 256 for the fragments' loads from global memory), STG
// - 1 steps ahead of its mmas and without holding registers for them, then
// loads its fragments from there (F::load through GbI8RingLd). A row's stage
// bytes are F::SSTRIDE apart so that a half-warp's 8-byte fragment loads fall
// on distinct banks (docs/kernels/cuda-gemv.md, "Weights staged in shared memory").
template <class F, int NWARPS, int STG>
struct alignas(16) GbI8Ring {
    unsigned char b[NWARPS][STG][16 * F::SSTRIDE];
};
template <class F, int NWARPS>
struct alignas(16) GbI8Ring<F, NWARPS, 0> {
    unsigned char b[1][1][16];
};

// F::load's loads, from a warp's stage in shared memory
template <class Ctx>
struct GbI8RingLd {
    Ctx& c;
    GB_HD uint4 ld16(const unsigned char* p) { return c.lds16(p); }
    GB_HD uint2 ld8(const unsigned char* p) { return c.lds8(p); }
    GB_HD gb_u32 ld4(const unsigned char* p) { return c.lds4(p); }
};

// Thread q's share of warp w's copies of chunk sb (rows r0 .. r0 + 15, the
// last row where those are past m) into stage buffer dst; none where sb is past
// the last (nsb); then its commit.
template <class F, class Ctx>
GB_HD void gb_i8_stage(Ctx& ctx, int q, const unsigned char* W, gb_u32 row_bytes, gb_u32 m, gb_u32 r0, gb_u32 sb,
                       gb_u32 nsb, gb_u32 lane, unsigned char* dst)
{
    enum { NCK = F::BPC / 16 };
    static_assert(F::BPC % 16 == 0, "a staged format's chunk is whole 16-byte copies");
    #pragma unroll
    for (gb_u32 i = lane; i < 16 * NCK; i += 32) {
        const gb_u32 r = i / NCK, c = i % NCK, row = r0 + r < m ? r0 + r : m - 1;
        ctx.cp16(q, dst + r * F::SSTRIDE + 16 * c, W + (gb_u64)row * row_bytes + (gb_u64)sb * F::BPC + 16 * c, sb < nsb);
    }
    ctx.commit(q);
}

// Block blk: NW row warps x KS k slices (warp w: rows of w % NW, slice w / NW)
// of a format F (F::BPC bytes per row per chunk of 256 columns; F::Raw a
// lane's loads of one chunk of its rows g and g + 8, F::load issues them,
// F::step runs a chunk's mmas into acc). Step i takes chunks i KS ..
// i KS + KS - 1, one per slice: the block quantizes their x digits, each warp
// runs its own; the slices' sums meet in shared memory at the end. A step's
// weights are loaded before its quantization (PF = 0), or during the
// previous step's mmas (PF = 1). XP = 1, 2: x is not the f32 rows but the
// digits the prepass wrote (gb_i8_xq_chunks chunks of GbI8XSource): no
// quantization and no barrier in the loop, each warp streams on its own.
// ctx.wait_inputs() comes after the first weights' loads, before x is read:
// under launch overlap the wait for the launch before (the prepass).
template <class F, int NW, int KS, int PF, int T, class Ctx, int XP = 0, int STG = 0>
GB_HD void gb_i8_block(Ctx& ctx, const unsigned char* W, const void* xin, float* y, gb_u32 m, gb_u32 k, gb_u32 blk,
                       GbI8Block<T, NW, KS, typename F::S, XP>& sm, GbI8Ring<F, NW * KS, STG>* ring = nullptr)
{
    static_assert(T >= 1 && T <= 8, "GEMV_TOKENS must be 1..8: the mma has 8 columns");
    static_assert(STG == 0 || (STG >= 2 && XP == 2 && PF == 0), "STAGED is 2 or more stages, with XPRE=2 and no PREFETCH");
    enum { NT = Ctx::NT, UNITS = 8 * T * KS, THREADS = 32 * NW * KS };
    typedef GbI8Smem<T, typename F::S> D;
    typedef typename GbI8XSource<XP, T, typename F::S>::type X; // where the steps read x
    const float* x = static_cast<const float*>(xin);
    const X* xq = static_cast<const X*>(xin);
    const gb_u32 nsb = k / 256, row_bytes = nsb * F::BPC, steps = (nsb + KS - 1) / KS;
    gb_u32 g[NT], tq[NT], r0[NT], sl[NT], rw[NT];
    const unsigned char *pa[NT], *pb[NT]; // rows g and g + 8 (the last row where those are past m)
    float acc[NT][4];
    typename F::Raw cur[NT];
    GB_I8_EACH
    {
        const gb_u32 tid = ctx.tid(q), lane = tid & 31, w = tid >> 5;
        g[q] = lane >> 2, tq[q] = lane & 3, rw[q] = w % NW, sl[q] = w / NW;
        r0[q] = (blk * NW + rw[q]) * 16;
        const gb_u32 ra = r0[q] + g[q], rb = ra + 8;
        pa[q] = W + (gb_u64)(ra < m ? ra : m - 1) * row_bytes;
        pb[q] = W + (gb_u64)(rb < m ? rb : m - 1) * row_bytes;
        #pragma unroll
        for (int i = 0; i < 4; i++) acc[q][i] = 0.0f;
        if constexpr (STG > 0) {
            for (int s = 0; s < STG - 1; s++)
                gb_i8_stage<F>(ctx, q, W, row_bytes, m, r0[q], s * KS + sl[q], nsb, lane, ring->b[w][s]);
        } else {
            F::load(ctx, pa[q], pb[q], sl[q], nsb, tq[q], cur[q]);
        }
    }
    ctx.wait_inputs();
    for (gb_u32 st = 0; st < steps; st++) {
        if constexpr (STG > 0) {
            // every lane done with the stage read a step ago before it is refilled; this step's copies landed
            ctx.warp_sync();
            GB_I8_EACH
            {
                const gb_u32 tid = ctx.tid(q), s2 = st + STG - 1;
                gb_i8_stage<F>(ctx, q, W, row_bytes, m, r0[q], s2 * KS + sl[q], nsb, tid & 31, ring->b[tid >> 5][s2 % STG]);
            }
            ctx.template cp_wait<STG - 1>();
            ctx.warp_sync();
            GB_I8_EACH
            {
                const unsigned char* b = ring->b[ctx.tid(q) >> 5][st % STG];
                GbI8RingLd<Ctx> rl{ ctx };
                F::load(rl, b + g[q] * F::SSTRIDE, b + (g[q] + 8) * F::SSTRIDE, 0, 1, tq[q], cur[q]);
            }
        }
        const X* xs;
        if constexpr (XP) {
            xs = xq + st * KS;
        } else {
            GB_I8_EACH for (gb_u32 u = ctx.tid(q); u < (gb_u32)UNITS; u += THREADS)
            {
                const gb_u32 ss = u / (8 * T), r = u % (8 * T), sbq = st * KS + ss;
                if (sbq < nsb) gb_i8_quantize<T, F::SX, F::PERM>(x, k, sbq, r >> 3, r & 7, sm.s[ss]);
            }
            ctx.barrier();
            xs = sm.s;
        }
        typename F::Raw nxt[NT];
        bool go[NT], any = false; // go: the warp's chunk of this step exists (warp-uniform on the GPU)
        GB_I8_EACH
        {
            if (PF) F::load(ctx, pa[q], pb[q], (st + 1) * KS + sl[q], nsb, tq[q], nxt[q]);
            go[q] = st * KS + sl[q] < nsb;
            any = any || go[q];
        }
        if (any) F::template step<T>(ctx, cur, go, r0, m, g, tq, sl, xs, acc);
        if constexpr (!XP) ctx.barrier(); // every warp done with this step's digits before the next overwrite them
        if constexpr (STG == 0) {
            GB_I8_EACH
            {
                if (PF) cur[q] = nxt[q];
                else F::load(ctx, pa[q], pb[q], (st + 1) * KS + sl[q], nsb, tq[q], cur[q]);
            }
        }
    }
    if (KS > 1) { // the last barrier above freed the digits (XP = 0): slices 1.. leave their sums there
        GB_I8_EACH if (sl[q] > 0)
        {
            const gb_u32 lane = ctx.tid(q) & 31;
            #pragma unroll
            for (int i = 0; i < 4; i++) sm.red[sl[q] - 1][rw[q]][lane][i] = acc[q][i];
        }
        ctx.barrier();
    }
    GB_I8_EACH if (sl[q] == 0)
    {
        const gb_u32 lane = ctx.tid(q) & 31;
        #pragma unroll
        for (int i = 0; i < 4; i++) {
            float v = acc[q][i];
            #pragma unroll
            for (int s = 1; s < KS; s++) v += sm.red[s - 1][rw[q]][lane][i];
            const gb_u32 row = r0[q] + g[q] + 8u * (i >> 1), t = 2u * tq[q] + (i & 1);
            if (row < m && t < (gb_u32)T) y[(gb_u64)t * m + row] = v;
        }
    }
}

#ifdef __CUDA_ARCH__
// The GPU context: the calling thread (NT = 1), its loads, the block barrier
// and the warp's mma (C = A B, or with mma_s8c C = A B + C0).
struct GbI8DevCtx {
    enum { NT = 1 };
    __device__ __forceinline__ gb_u32 tid(int) const { return threadIdx.x; }
    __device__ __forceinline__ void barrier() { __syncthreads(); }
    __device__ __forceinline__ void wait_inputs() { gb_overlap_wait(); }
    __device__ __forceinline__ uint4 ld16(const unsigned char* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }
    __device__ __forceinline__ uint2 ld8(const unsigned char* p) { return __ldg(reinterpret_cast<const uint2*>(p)); }
    __device__ __forceinline__ gb_u32 ld4(const unsigned char* p) { return __ldg(reinterpret_cast<const unsigned*>(p)); }
    __device__ __forceinline__ gb_u32 ld2(const unsigned char* p) { return __ldg(reinterpret_cast<const unsigned short*>(p)); }
    __device__ __forceinline__ uint2 ld8s(const signed char* p) { return *reinterpret_cast<const uint2*>(p); }
    __device__ __forceinline__ uint4 ldx16(const uint4* p) { return __ldg(p); }
    // the staged weights (STG > 0): cp.async.cg (L1 not allocated: read once), shared loads
    __device__ __forceinline__ void cp16(int, unsigned char* dst, const unsigned char* src, bool pred)
    {
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t"
                     "@p cp.async.cg.shared.global [%0], [%1], 16;\n\t}\n" ::"r"((gb_u32)__cvta_generic_to_shared(dst)),
                     "l"(src), "r"((int)pred)
                     : "memory");
    }
    __device__ __forceinline__ void commit(int) { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
    template <int N>
    __device__ __forceinline__ void cp_wait()
    {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
    }
    __device__ __forceinline__ void warp_sync() { __syncwarp(); }
    __device__ __forceinline__ uint4 lds16(const unsigned char* p) { return *reinterpret_cast<const uint4*>(p); }
    __device__ __forceinline__ uint2 lds8(const unsigned char* p) { return *reinterpret_cast<const uint2*>(p); }
    __device__ __forceinline__ gb_u32 lds4(const unsigned char* p) { return *reinterpret_cast<const gb_u32*>(p); }
    __device__ __forceinline__ void mma_s8(int (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2])
    {
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%10,%10,%10,%10};"
                     : "=r"(C[0][0]), "=r"(C[0][1]), "=r"(C[0][2]), "=r"(C[0][3])
                     : "r"(A[0][0]), "r"(A[0][1]), "r"(A[0][2]), "r"(A[0][3]), "r"(B[0][0]), "r"(B[0][1]), "r"(0));
    }
    // m16n8k16: A = rows g, g + 8 at k slots 4t .. 4t + 3, B = k slots 4t .. of column g (q6_k's halves)
    __device__ __forceinline__ void mma_s8k16(int (*C)[4], const gb_u32 (*A)[2], const gb_u32* B)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};"
                     : "=r"(C[0][0]), "=r"(C[0][1]), "=r"(C[0][2]), "=r"(C[0][3])
                     : "r"(A[0][0]), "r"(A[0][1]), "r"(B[0]), "r"(0));
    }
    __device__ __forceinline__ void mma_s8c(int (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2],
                                            const int (*C0)[4])
    {
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%10,%11,%12,%13};"
                     : "=r"(C[0][0]), "=r"(C[0][1]), "=r"(C[0][2]), "=r"(C[0][3])
                     : "r"(A[0][0]), "r"(A[0][1]), "r"(A[0][2]), "r"(A[0][3]), "r"(B[0][0]), "r"(B[0][1]),
                       "r"(C0[0][0]), "r"(C0[0][1]), "r"(C0[0][2]), "r"(C0[0][3]));
    }
};

// The body of every int8 entry (gemv_<fmt>_i8.cu): the block's shared memory, with a ring per
// warp where STG > 0 (the entries' STAGED), and gb_i8_block for block blockIdx.x.
template <class F, int NW, int KS, int PF, int T, int XP, int STG>
__device__ __forceinline__ void gb_i8_entry(const unsigned char* w, const float* x, float* y, gb_u32 m, gb_u32 k)
{
    __shared__ GbI8Block<T, NW, KS, typename F::S, XP> sm;
    GbI8DevCtx ctx;
    if constexpr (STG > 0) {
        __shared__ GbI8Ring<F, NW * KS, STG> ring;
        gb_i8_block<F, NW, KS, PF, T, GbI8DevCtx, XP, STG>(ctx, w, x, y, m, k, blockIdx.x, sm, &ring);
    } else {
        gb_i8_block<F, NW, KS, PF, T, GbI8DevCtx, XP>(ctx, w, x, y, m, k, blockIdx.x, sm);
    }
}
#endif

#endif
