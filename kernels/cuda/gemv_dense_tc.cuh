// Dense GEMV for T = 1..8 rows of x on the tensor cores: y[T, m] = x[T, k] .
// W[m, k]^T with bf16 or f16 weights, f32 x and y (kernels/cuda/gemv_bf16_tc.cu,
// gemv_f16_tc.cu). The FMA kernels (gemv_dense.cuh) run out of FMA issue at
// T > 2: every weight meets T x values. Here one mma.m16n8k16 (bf16 in, fp32
// accumulate) multiplies 16 weight rows by 8 B columns; design and
// measurements: docs/kernels/cuda-gemv.md, "Dense tensor-core kernels".
//
// Precision: x is split into bf16 hi + lo (x - hi - lo within 2^-18 |x|) in
// the B columns, so y keeps about 17 bits of x rather than bf16's 8; an f16
// weight is split exactly into bf16 hi + lo (f16 has 11 significant bits)
// and both parts meet B. An infinite x gives NaN (inf - inf in its lo part).
// B columns: T <= 4, one tile, column g = token g / 2, part g % 2 (hi, lo),
// so lane (g, t) ends with token t's hi and lo sums side by side (c0 + c1,
// c2 + c3); T > 4, two tiles over the same A, column g = token g's hi (tile
// 0) and lo (tile 1), summed per accumulator. Either way one x load per lane
// and chunk, and no shuffle in the epilogue.
//
// The k permutation, row setup and the k slices are the SwiGLU kernels'
// (swiglu_common.cuh): lane (g, t) loads the 16-byte word at k = 32c + 8t of
// rows g and g + 8 and the matching 8 x values. The index helpers are
// __host__ __device__ so that tests/cuda_host/gemv_tc_emulate.cu runs this
// loop on the CPU against a host model of the mma.
#ifndef GPUBENCH_GEMV_DENSE_TC_CUH
#define GPUBENCH_GEMV_DENSE_TC_CUH

#include "dynamic_shared.cuh"
#include "gemv_bits.cuh"
#include "swiglu_common.cuh"

// Two f32 to a bf16x2 word (a in the low half), round to nearest even.
SW_HD sw_u32 gb_tc_bf16x2(float a, float b)
{
#ifdef __CUDA_ARCH__
    sw_u32 r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));
    return r;
#else
    return sw_bf16(a) | (sw_bf16(b) << 16);
#endif
}

// (a, b) = hi + lo as two bf16x2 words (a in the low halves).
SW_HD void gb_tc_split2(float a, float b, sw_u32& hi, sw_u32& lo)
{
    hi = gb_tc_bf16x2(a, b);
    lo = gb_tc_bf16x2(a - sw_lo(hi), b - sw_hi(hi));
}

// x = hi + lo for 8 values (two 16-byte words of f32) as two uint4 of bf16x2.
SW_HD void gb_tc_split_x(const uint4& x0, const uint4& x1, uint4& hi, uint4& lo)
{
    const sw_u32 v[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
    sw_u32 h[4], l[4];
#pragma unroll
    for (int i = 0; i < 4; i++) gb_tc_split2(sw_as_float(v[2 * i]), sw_as_float(v[2 * i + 1]), h[i], l[i]);
    hi = make_uint4(h[0], h[1], h[2], h[3]);
    lo = make_uint4(l[0], l[1], l[2], l[3]);
}

// The weight formats: AP bf16 parts per 16-byte word of 8 weights.
struct GbTcBF16 {
    enum { AP = 1 };
    SW_HD static void split(const uint4& w, uint4 (&p)[1]) { p[0] = w; }
};
struct GbTcF16 {
    enum { AP = 2 };
    // w = hi + lo exactly: hi keeps 8 of an f16's 11 significant bits, lo the rest.
    SW_HD static void split(const uint4& w, uint4 (&p)[2])
    {
        const sw_u32 v[4] = {w.x, w.y, w.z, w.w};
        sw_u32 h[4], l[4];
#pragma unroll
        for (int i = 0; i < 4; i++) gb_tc_split2(gb_half_to_float(v[i] & 0xFFFFu), gb_half_to_float(v[i] >> 16), h[i], l[i]);
        p[0] = make_uint4(h[0], h[1], h[2], h[3]);
        p[1] = make_uint4(l[0], l[1], l[2], l[3]);
    }
};

// The B columns for T rows of x (see the header comment).
template <int T>
struct GbTcB {
    enum { NB = T <= 4 ? 1 : 2 };
    SW_HD static sw_u32 token(sw_u32 g) { return NB == 1 ? g >> 1 : g; }
    // The lane's B words of one chunk from its x values' hi and lo.
    SW_HD static void words(sw_u32 g, const uint4& hi, const uint4& lo, uint4 (&b)[NB])
    {
        if constexpr (NB == 1) {
            b[0] = (g & 1u) ? lo : hi;
        } else {
            b[0] = hi;
            b[NB - 1] = lo;
        }
    }
};

// One chunk (32 k) of 16 rows: every A part with every B tile, accumulator
// ap * NB + nb (cx.mma receives base + that: the row tile's first).
template <class D, int NB, class Cx>
SW_HD void gb_tc_chunk(Cx& cx, float (&acc)[D::AP * NB][4], int base, const uint4& wa, const uint4& wb,
                       const uint4 (&xb)[NB])
{
    uint4 pa[D::AP], pb[D::AP];
    D::split(wa, pa);
    D::split(wb, pb);
#pragma unroll
    for (int ap = 0; ap < D::AP; ap++)
#pragma unroll
        for (int nb = 0; nb < NB; nb++) sw_chunk(cx, acc[ap * NB + nb], base + ap * NB + nb, pa[ap], pb[ap], xb[nb]);
}

// The B side of a chunk for the lane (g, t): its token's 8 x values at the
// lane word (f32, two 16-byte loads), split into hi and lo and laid out in
// the B columns by chunk(). Lanes whose token does not exist load nothing and
// pass zeros. Used by the direct loop below and by the staged one
// (sw_staged_loop, through load_x and chunk).
template <class D, int T>
struct GbTcX {
    enum { NB = GbTcB<T>::NB, NA = D::AP * NB };
    struct X {
        uint4 x0, x1;
    };
    const float* xr; // the token's row, at the slice's first column
    bool has_x;
    sw_u32 g;
    SW_HD GbTcX(const float* X0, sw_u32 k, sw_u32 lane) : g(sw_g(lane))
    {
        has_x = GbTcB<T>::token(g) < (sw_u32)T;
        xr = X0 + (sw_u64)(has_x ? GbTcB<T>::token(g) : 0) * k;
    }
    // x at slice column kx (the lane word's first), zeros when !valid.
    template <class Cx>
    SW_HD X load_x(Cx& cx, sw_u32 kx, bool valid)
    {
        X v;
        const uint4 zero = make_uint4(0, 0, 0, 0);
        v.x0 = has_x && valid ? cx.ld_x(xr + kx) : zero;
        v.x1 = has_x && valid ? cx.ld_x(xr + kx + 4) : zero;
        return v;
    }
    // Row tile j's mmas (accumulators acc[j]); with several tiles the x split
    // is repeated per tile (cheap next to the x loads it shares).
    template <class Cx, int TL>
    SW_HD void chunk(Cx& cx, float (&acc)[TL][NA][4], int j, const uint4& wa, const uint4& wb, const X& v)
    {
        uint4 hi, lo, xb[NB];
        gb_tc_split_x(v.x0, v.x1, hi, lo);
        GbTcB<T>::words(g, hi, lo, xb);
        gb_tc_chunk<D, NB>(cx, acc[j], j * NA, wa, wb, xb);
    }
};

// The warp's TL tiles of 16 rows (tile j at byte offsets ra[j]: A rows 0..7,
// one per g; rb[j]: rows 8..15), each x load shared by the tiles, over kl columns of k (W and X already advanced to the slice's first column,
// rows still k long), with direct loads: U chunks are loaded before any is
// used, 2 TL + 2 16-byte loads per chunk and lane. In the last, perhaps partial
// chunk a lane whose word is past kl passes zeros (the loop condition is the
// same for every lane, so the mma sees a converged warp).
template <class D, int T, int U, int TL, class Cx>
SW_HD void gb_tc_warp_range(Cx& cx, sw_u32 lane, const unsigned char* W, const float* X, sw_u32 k, sw_u32 kl,
                            const sw_u64 (&ra)[TL], const sw_u64 (&rb)[TL], float (&acc)[TL][GbTcX<D, T>::NA][4])
{
    GbTcX<D, T> op(X, k, lane);
    const sw_u32 t = sw_t(lane);
    const uint4 zero = make_uint4(0, 0, 0, 0);
    const sw_u32 full = kl / 32;
    sw_u32 c = 0;
    for (; c + U <= full; c += U) {
        uint4 wa[U][TL], wb[U][TL];
        typename GbTcX<D, T>::X xv[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const sw_u64 off = sw_word_off(c + u, t);
#pragma unroll
            for (int j = 0; j < TL; j++) {
                wa[u][j] = cx.ld_w(W + ra[j] + off);
                wb[u][j] = cx.ld_w(W + rb[j] + off);
            }
            xv[u] = op.load_x(cx, 32u * (c + u) + 8u * t, true);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int j = 0; j < TL; j++) op.chunk(cx, acc, j, wa[u][j], wb[u][j], xv[u]);
    }
    const sw_u32 words = kl / 8;
    for (; 4 * c < words; c++) {
        const bool in = 4 * c + t < words;
        const sw_u64 off = sw_word_off(c, t);
        const typename GbTcX<D, T>::X xv = op.load_x(cx, 32u * c + 8u * t, in);
#pragma unroll
        for (int j = 0; j < TL; j++) {
            const uint4 wa = in ? cx.ld_w(W + ra[j] + off) : zero, wb = in ? cx.ld_w(W + rb[j] + off) : zero;
            op.chunk(cx, acc, j, wa, wb, xv);
        }
    }
}

// The staged loop's rows: the warp's 16 TL consecutive rows from r0 (tile j's
// A row a is row r0 + 16 j + a).
struct GbTcStageRows {
    sw_u32 r0, m;
    SW_HD sw_u64 operator()(sw_u32 j, sw_u32 a) const { return sw_clamp(r0 + 16u * j + a, m); }
};

// The lane's outputs from its accumulators: v[i] belongs to token
// gb_tc_token<T>(lane, i) (T: none) and row r0 + sw_c_row(lane, i).
template <int T>
SW_HD sw_u32 gb_tc_token(sw_u32 lane, int i)
{
    if (GbTcB<T>::NB == 1) return (i & 1) ? (sw_u32)T : sw_t(lane);
    return 2u * sw_t(lane) + (sw_u32)(i & 1);
}

template <class D, int T>
SW_HD void gb_tc_outputs(const float (&acc)[D::AP * GbTcB<T>::NB][4], float (&v)[4])
{
    enum { NB = GbTcB<T>::NB };
#pragma unroll
    for (int i = 0; i < 4; i++) v[i] = 0.0f;
#pragma unroll
    for (int ap = 0; ap < D::AP; ap++) {
        const float* c = acc[ap * NB];
        if constexpr (NB == 1) {
            v[0] += c[0] + c[1]; // token t, row g: hi and lo columns
            v[2] += c[2] + c[3]; // token t, row g + 8
        } else {
            const float* d = acc[ap * NB + 1];
#pragma unroll
            for (int i = 0; i < 4; i++) v[i] += c[i] + d[i];
        }
    }
}

template <int T>
SW_HD void gb_tc_store(sw_u32 lane, sw_u32 r0, sw_u32 m, const float (&v)[4], float* y)
{
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const sw_u32 tok = gb_tc_token<T>(lane, i), r = r0 + sw_c_row(lane, i);
        if (tok < (sw_u32)T && r < m) y[(sw_u64)tok * m + r] = v[i];
    }
}

// ------------------------------------------------------------ the kernel

#if defined(__CUDA_ARCH__)
struct gb_tc_gpu : sw_gpu {
    using sw_gpu::ld_w;
    // x is re-read by every warp: through L1.
    __device__ __forceinline__ uint4 ld_x(const float* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }
};

// The end of a warp of NW x KS (row warp rw, k slice s) whose TL tiles from
// row r0 hold outputs v (gb_tc_token's layout): slices 1.. leave theirs in
// shared memory, slice 0 adds them in slice order and stores. Every warp of
// the block calls it (the barrier).
template <int T, int TL, int NW, int KS>
__device__ __forceinline__ void gb_tc_finish(sw_u32 lane, sw_u32 rw, sw_u32 s, sw_u32 r0, sw_u32 m, float (&v)[TL][4],
                                             float* y)
{
    if constexpr (KS > 1) {
        __shared__ float red[KS - 1][NW][4 * TL][32];
        if (s > 0)
            for (int j = 0; j < TL; j++)
                for (int i = 0; i < 4; i++) red[s - 1][rw][4 * j + i][lane] = v[j][i];
        __syncthreads();
        if (s > 0) return;
        for (int q = 1; q < KS; q++) // slice order, as the host emulations add them
            for (int j = 0; j < TL; j++)
                for (int i = 0; i < 4; i++) v[j][i] += red[q - 1][rw][4 * j + i][lane];
    }
    for (int j = 0; j < TL; j++)
        if (r0 + 16u * j < m) gb_tc_store<T>(lane, r0 + 16u * j, m, v[j], y);
}

// NW warps of TL tiles of 16 rows per block, times KS slices of k (sw_slice); the
// slices' sums meet in shared memory in slice order and the first stores.
// S = 0: direct loads, U chunks in flight; S >= 2: the weights through S
// warp-private shared-memory stages of U chunks (sw_staged_loop: cp.async of
// whole row runs, S - 1 stages in flight, no registers held for them).
// Launch: block 32 * NW * KS, grid ceil(m / (16 * TL * NW)).
template <class D, int T, int U, int TL, int NW, int KS, int S>
__device__ __forceinline__ void gb_gemv_tc(const unsigned char* W, const float* x, float* y, sw_u32 m, sw_u32 k)
{
    enum { NA = GbTcX<D, T>::NA };
    const sw_u32 lane = threadIdx.x & 31, wid = threadIdx.x >> 5, rw = wid % NW, s = wid / NW;
    const sw_u32 r0 = (blockIdx.x * NW + rw) * 16u * TL;
    sw_u64 ra[TL], rb[TL];
    float acc[TL][NA][4];
#pragma unroll
    for (int j = 0; j < TL; j++) {
        sw_gemv_rows(r0, (sw_u32)j, sw_g(lane), m, k, ra[j], rb[j]);
#pragma unroll
        for (int a = 0; a < NA; a++) acc[j][a][0] = acc[j][a][1] = acc[j][a][2] = acc[j][a][3] = 0.0f;
    }
    sw_u32 k0, kl;
    sw_slice(k, KS, s, k0, kl);
    gb_tc_gpu cx;
    if constexpr (S >= 2) {
        // warp-private stages: no block barrier until the k-slice reduction
        unsigned char* st;
        GB_WARP_STAGES(st, NW * KS, SW_STAGE_BYTES(TL, U) * S, sw_red_bytes(NW, KS, TL), wid)
        GbTcX<D, T> op(x + k0, k, lane);
        if (r0 < m) sw_staged_loop<TL, U, S>(cx, lane, GbTcStageRows{r0, m}, op, W + 2ull * k0, k, kl, acc, st);
    } else {
        if (r0 < m) gb_tc_warp_range<D, T, U, TL>(cx, lane, W + 2ull * k0, x + k0, k, kl, ra, rb, acc);
    }
    float v[TL][4];
#pragma unroll
    for (int j = 0; j < TL; j++) gb_tc_outputs<D, T>(acc[j], v[j]);
    gb_tc_finish<T, TL, NW, KS>(lane, rw, s, r0, m, v, y);
}
#endif

// ------------------------------------------------------------ the entries
// A format's kernel file (gemv_bf16_tc.cu, gemv_f16_tc.cu) defines GB_TC_KERNEL_FILE
// before including this header, which then checks the geometry defines
// lib/gpubench/gemv_cuda.lua passes; the file spells out its extern "C" entry (the
// parameter reflection reads it from the source).
#if defined(GB_TC_KERNEL_FILE) && defined(__CUDA_ARCH__)
#if !defined(MMA) || MMA != 1 || !defined(WARPS) || !defined(KSPLIT) || !defined(TILES) || !defined(UNROLL) || \
    !defined(STAGES) || !defined(GEMV_TOKENS)
#error "the dense tensor-core GEMV takes -DMMA=1, -DWARPS, -DKSPLIT, -DTILES, -DUNROLL, -DSTAGES and -DGEMV_TOKENS (lib/gpubench/gemv_cuda.lua)"
#endif
#if GEMV_TOKENS < 1 || GEMV_TOKENS > 8
#error "GEMV_TOKENS must be 1..8"
#endif
#if TILES < 1 || TILES > 4
#error "TILES (row tiles of 16 per warp) must be 1..4"
#endif
#if STAGES == 1 || STAGES > 8
#error "STAGES is 0 (direct loads) or 2..8 (shared-memory stages of UNROLL chunks)"
#endif
GB_WARP_STAGES_SHARED(WARPS * KSPLIT, SW_STAGE_BYTES(TILES, UNROLL) * STAGES, sw_red_bytes(WARPS, KSPLIT, TILES))
#endif

#endif
