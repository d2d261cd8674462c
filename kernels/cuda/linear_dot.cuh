// The integer-dot route of the CUDA Linear kernels (small T, the integer
// formats q4, q5, q6, w8): y[T, N] = x[T, K] . W[N, K]^T with every weight
// byte read once, the weight codes kept as bytes and multiplied by 16-bit
// integer codes of x with dp2a, each group's fp16 scale applied after the
// integer sum. docs/kernels/cuda-linear.md, "Integer-dot route".
//
// A block of NW row warps owns NW R consecutive rows of W, warp w rows
// (blk NW + w) R .. + R - 1, and all T <= TT rows of x; with KS > 1 slices
// the block has KS NW warps, KS on each row group, one slice of K each. K is cut into tiles of
// 32 E elements (E = 32 for q4, q5, q6, E = 16 for w8): lane l of the warp
// owns elements E l .. E l + E - 1 of every tile, which are 16 contiguous
// code bytes of each of its R rows (one 16-byte load; a warp's load of one
// row is 512 contiguous bytes), half of one scale group (lanes 2m, 2m + 1
// share group m's scale), plus the high bits of q5 (4 bytes) and q6 (8).
// Per tile a lane loads its E elements of each x row (2E bytes, 16-byte
// loads, zero past K), quantizes them to int16 codes with one power-of-two
// scale (ln_dot_xq), and for each row: decodes the codes into bytes
// (F::decode, once for all x rows), dp2a's them against the x codes
// (F::dot: an int32 sum, the code offset included exactly) and adds
// float(sum) * (scale * x scale) to an fp32 accumulator. At the end the
// lanes' R TT sums meet in shared memory; lane v of a warp adds output v's 32
// partial sums in lane order and stores it.
//
// Like the other routes the body is a __host__ __device__ template over
// Ctx::NT threads (linear_base.cuh): on the GPU NT = 1; the host emulation
// (tests/cuda_host/linear_dot_emulate.cu) runs a whole block with a context
// that checks every access. The threads are independent until the
// reduction, so each runs its whole K loop inside one LN_EACH.
#ifndef GPUBENCH_LINEAR_DOT_CUH
#define GPUBENCH_LINEAR_DOT_CUH

#if defined(LN_ROUTE_DOT) && (!defined(LN_NW) || !defined(LN_R) || !defined(LN_TT) || !defined(LN_U) || !defined(LN_KS))
#error "integer-dot Linear kernels take their geometry from -DLN_NW, -DLN_R, -DLN_TT, -DLN_U and -DLN_KS (defaults: lib/gpubench/linear_cuda.lua)"
#endif

#include "linear_formats.cuh"

// The 4 bytes of w against the x code pairs x2[0] (bytes 0, 1) and x2[1] (bytes 2, 3).
template <bool U>
GB_HD int ln_dot4(gb_u32 w, const gb_u32* x2, int acc)
{
    return gb_dp2a<true, U>(x2[1], w, gb_dp2a<false, U>(x2[0], w, acc));
}

// max(|a|, |b|) per bf16 half, NaN when either is NaN (max.NaN.xorsign.abs:
// the sign bit is the XOR of the signs; only the magnitude is used).
GB_HD gb_u32 ln_absmax2(gb_u32 a, gb_u32 b)
{
#ifdef __CUDA_ARCH__
    gb_u32 r;
    asm("max.NaN.xorsign.abs.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    gb_u32 r = 0;
    for (int h = 0; h < 2; h++) {
        const gb_u32 ma = (a >> (16 * h)) & 0x7FFFu, mb = (b >> (16 * h)) & 0x7FFFu;
        const gb_u32 s = ((a ^ b) >> (16 * h)) & 0x8000u;
        const gb_u32 m = ma > 0x7F80u || mb > 0x7F80u ? 0x7FFFu : ma > mb ? ma : mb;
        r |= (s | m) << (16 * h);
    }
    return r;
#endif
}

// m[0] = the halfwise absolute maximum of m[0 .. W - 1], as a tree.
template <int W>
GB_HD void ln_absmax_tree(gb_u32* m)
{
    if constexpr (W > 1) {
#pragma unroll
        for (int i = 0; i < W / 2; i++) m[i] = ln_absmax2(m[i], m[i + W / 2]);
        ln_absmax_tree<W / 2>(m);
    }
}

// ------------------------------------------------------------ x, quantized
// A lane's E elements of one x row (E / 2 bf16x2 words, element e in word
// e / 2, half e % 2) as E / 2 pairs of int16 codes c with x ~ sx * c, in the
// pair order of the format (F::pe: pair p holds elements pe(p, 0) in its low
// and pe(p, 1) in its high half), and -o * sum(c) for the code offset o.
//
// sx is a power of two read off max|x|'s exponent field e: 2^(e - 141), so
// that max|x| / sx lies in [2^14, 2^15) and every element within 2^7 of the
// maximum (8 significant bits) is coded exactly; a smaller one is rounded to
// the nearest multiple of sx (error <= sx / 2 <= 2^-15 max|x|). e is clamped
// to >= 15 so that 1 / sx stays a finite float (runs of x below 2^-112 lose
// what lies below 2^-127). A NaN or infinity in the run makes sx NaN, and
// with it every contribution of the run, as the reference's sum is not
// finite either. fmaf(v, 1 / sx, 1.5 * 2^23) holds rint(v / sx) in its low
// 16 bits (two's complement; v / sx is exact, |v / sx| < 2^15).
struct LnXq {
    float sx;
    int init; // -o * sum of the codes: the start of the row's integer sum
};

template <class F>
GB_HD float ln_dot_xelem(const gb_u32* xw, int e)
{
    return (e & 1) ? gb_as_float(xw[e >> 1] & 0xFFFF0000u) : gb_as_float(xw[e >> 1] << 16);
}

template <class F>
GB_HD LnXq ln_dot_xq(const gb_u32* xw, gb_u32* xq)
{
    enum { NP = F::E / 2 };
    gb_u32 m[NP];
#pragma unroll
    for (int i = 0; i < NP; i++) m[i] = xw[i];
    ln_absmax_tree<NP>(m); // m[0]: the maxima of the halves
    const gb_u32 mx = ln_absmax2(m[0], m[0] >> 16) & 0x7FFFu; // low half: max over the run
    gb_u32 E = mx >> 7;
    E = E < 15 ? 15 : E;
    const float inv = gb_as_float((268u - E) << 23); // 2^(141 - E)
    LnXq r;
    r.sx = mx >= 0x7F80u ? gb_as_float(0x7FC00000u) : gb_as_float((E - 14u) << 23);
    int s0 = 0, s1 = 0;
#pragma unroll
    for (int p = 0; p < NP; p++) {
        const gb_u32 c0 = gb_bits(fmaf(ln_dot_xelem<F>(xw, F::pe(p, 0)), inv, 12582912.0f));
        const gb_u32 c1 = gb_bits(fmaf(ln_dot_xelem<F>(xw, F::pe(p, 1)), inv, 12582912.0f));
        xq[p] = ln_prmt(c0, c1, 0x5410u);
        if constexpr (F::OFF != 0) {
            if (p & 1) s1 = gb_dp2a<false, false>(xq[p], 0x0101u, s1);
            else s0 = gb_dp2a<false, false>(xq[p], 0x0101u, s0);
        }
    }
    r.init = -(int)F::OFF * (s0 + s1);
    return r;
}

// ------------------------------------------------------------ the formats
// Each: E elements a lane per tile; P, the planes (linear_formats.cuh's
// struct of the same format: its geo); OFF, the code offset; Raw, a lane's
// loaded bytes of one row and tile; load; NB byte words from decode; dot,
// the integer sum sum (c - OFF) xq over the lane's run; pe, the x pair order.
// Byte word i meets x pairs 2i (its bytes 0, 1) and 2i + 1 (bytes 2, 3).

// Lane pointers at tile `tile` of row `row`: codes (16 bytes a lane), high
// bits (HL bytes a lane), the scale of the lane's group.
struct LnDotPtr {
    const unsigned char *c, *h, *s;
};
template <int HL>
GB_HD LnDotPtr ln_dot_ptr(const LnGeo& g, gb_u32 row, gb_u32 lane, gb_u32 tile)
{
    LnDotPtr p{g.p0 + row * g.r0 + 512u * tile + 16u * lane, g.p1 + row * g.r1 + (32u * HL) * tile + HL * lane,
               g.ps + row * g.rs + 32u * tile + 2u * (lane >> 1)};
    return p;
}

// The formats without high bits (q4, w8): a lane's 16 code bytes and its
// group's fp16 scale.
struct LnDotCodes {
    struct Raw { gb_u32 c[4], s; };
#pragma nv_exec_check_disable
    template <class Ctx>
    GB_HD static void load(const Ctx& ctx, const LnGeo& g, gb_u32 row, gb_u32 lane, gb_u32 tile, Raw& r)
    {
        const LnDotPtr p = ln_dot_ptr<0>(g, row, lane, tile);
        ctx.ld_w128(p.c, r.c);
        r.s = ctx.ld_c16(p.s);
    }
};

// Q4G64_F16S. Code word w (bytes 4w .. 4w + 3 of the lane's 16) holds
// elements 8w .. 8w + 7, element 8w + 2b + s in nibble s of byte b: masked in
// place, A_w = w & 0x0F0F0F0F has bytes c(8w + 2b) and B_w = w & 0xF0F0F0F0
// bytes 16 c(8w + 2b + 1) (unsigned), so sum c x = ia + ib / 16 exactly:
// 2 LOP3 and 4 dp2a per 8 weights, no shift.
struct LnDotQ4 : LnDotCodes {
    typedef LnQ4 P;
    enum { E = 32, OFF = 8, NB = 8 };
    // byte word i = 2w + s, pair half h: elements 8w + s + 4h + {0, 2}
    GB_HD static constexpr int pe(int p, int j) { return 8 * (p >> 2) + ((p >> 1) & 1) + 4 * (p & 1) + 2 * j; }
    GB_HD static void decode(const Raw& r, gb_u32* b)
    {
#pragma unroll
        for (int w = 0; w < 4; w++) b[2 * w] = r.c[w] & 0x0F0F0F0Fu, b[2 * w + 1] = r.c[w] & 0xF0F0F0F0u;
    }
    GB_HD static int dot(const gb_u32* b, const gb_u32* xq, int init)
    {
        int ia = init, ib = 0;
#pragma unroll
        for (int w = 0; w < 4; w++) {
            ia = ln_dot4<false>(b[2 * w], xq + 4 * w, ia);
            ib = ln_dot4<true>(b[2 * w + 1], xq + 4 * w + 2, ib);
        }
        return ia + (ib >> 4); // ib = 16 sum c x: exact
    }
};

// W8G32_F16S: the 16 code bytes are 16 consecutive signed codes, byte b of
// word w element 4w + b; no offset. 4 dp2a per 8 weights, no decode.
struct LnDotW8 : LnDotCodes {
    typedef LnW8 P;
    enum { E = 16, OFF = 0, NB = 4 };
    GB_HD static constexpr int pe(int p, int j) { return 2 * p + j; }
    GB_HD static void decode(const Raw& r, gb_u32* b)
    {
#pragma unroll
        for (int w = 0; w < 4; w++) b[w] = r.c[w];
    }
    GB_HD static int dot(const gb_u32* b, const gb_u32* xq, int init)
    {
        int i0 = init, i1 = 0;
#pragma unroll
        for (int w = 0; w < 4; w += 2) {
            i0 = ln_dot4<false>(b[w], xq + 2 * w, i0);
            i1 = ln_dot4<false>(b[w + 1], xq + 2 * w + 2, i1);
        }
        return i0 + i1;
    }
};

// Q5G64_F16S and Q6G64_F16S (B = 1, 2 high bits a code). The high bits of
// element 8b + k sit at the same bit offset k (q5) or 2(k mod 4) (q6) of one
// byte for every b, so the byte words are built with stride 8: word k holds
// elements k, 8 + k, 16 + k, 24 + k. The 16 code bytes are transposed once
// (8 PRMT: byte b of T_j is byte j of code word b), T_j masked (k = 2j) or
// shifted and masked (k = 2j + 1) gives the low nibbles of word k, and one
// shift, one mask and one LOP3 put the high bits at bits 4 (.. 5) of each
// byte: c in 0 .. 63, a signed byte.
template <int B>
struct LnDotQh {
    typedef LnQk<B> P;
    enum { E = 32, OFF = B == 1 ? 16 : 32, NB = 8, HL = 4 * B };
    struct Raw { gb_u32 c[4], h[B], s; };
    GB_HD static constexpr int pe(int p, int j) { return (p >> 1) + 16 * (p & 1) + 8 * j; }
#pragma nv_exec_check_disable
    template <class Ctx>
    GB_HD static void load(const Ctx& ctx, const LnGeo& g, gb_u32 row, gb_u32 lane, gb_u32 tile, Raw& r)
    {
        const LnDotPtr p = ln_dot_ptr<HL>(g, row, lane, tile);
        ctx.ld_w128(p.c, r.c);
        if constexpr (B == 1) r.h[0] = ctx.ld_c32(p.h);
        else ctx.ld_w64(p.h, r.h);
        r.s = ctx.ld_c16(p.s);
    }
    GB_HD static gb_u32 shl(gb_u32 v, int s) { return s >= 0 ? v << s : v >> -s; }
    GB_HD static void decode(const Raw& r, gb_u32* b)
    {
        const gb_u32 lo01 = ln_prmt(r.c[0], r.c[1], 0x5140u), lo23 = ln_prmt(r.c[2], r.c[3], 0x5140u);
        const gb_u32 hi01 = ln_prmt(r.c[0], r.c[1], 0x7362u), hi23 = ln_prmt(r.c[2], r.c[3], 0x7362u);
        const gb_u32 T[4] = {ln_prmt(lo01, lo23, 0x5410u), ln_prmt(lo01, lo23, 0x7632u), ln_prmt(hi01, hi23, 0x5410u),
                             ln_prmt(hi01, hi23, 0x7632u)};
        // q5: byte b of the high word holds elements 8b .. 8b + 7, bit k = element 8b + k.
        // q6: the lane's 64 high bits, element e at bits 2e, 2e + 1: byte b of Z[0]
        // holds elements 8b .. 8b + 3, of Z[1] elements 8b + 4 .. 8b + 7.
        gb_u32 Z[2];
        if constexpr (B == 1) Z[0] = Z[1] = r.h[0];
        else Z[0] = ln_prmt(r.h[0], r.h[1], 0x6420u), Z[1] = ln_prmt(r.h[0], r.h[1], 0x7531u);
#pragma unroll
        for (int k = 0; k < 8; k++) {
            const gb_u32 n = (k & 1) ? T[k >> 1] >> 4 : T[k >> 1];
            const gb_u32 h = B == 1 ? shl(Z[0], 4 - k) & 0x10101010u : shl(Z[k >> 2], 4 - 2 * (k & 3)) & 0x30303030u;
            b[k] = ln_andor(n, 0x0F0F0F0Fu, h);
        }
    }
    GB_HD static int dot(const gb_u32* b, const gb_u32* xq, int init)
    {
        int i0 = init, i1 = 0;
#pragma unroll
        for (int k = 0; k < 8; k += 2) {
            i0 = ln_dot4<false>(b[k], xq + 2 * k, i0);
            i1 = ln_dot4<false>(b[k + 1], xq + 2 * k + 2, i1);
        }
        return i0 + i1;
    }
};
struct LnDotQ5 : LnDotQh<1> {};
struct LnDotQ6 : LnDotQh<2> {};

// ------------------------------------------------------------ the kernel body

// One round of UU tiles from tile0 of thread q's R rows (rows[] clamped to
// N - 1) against its TT x rows (xr[]: rows clamped to T - 1): every load of
// the round first, then per tile the x codes and per row the decode and the
// TT integer sums. TAIL: the last, partial tile (lanes past K idle, x words
// past K zero).
#pragma nv_exec_check_disable
template <bool TAIL, int UU, class F, int R, int TT, class Ctx>
GB_HD void ln_dot_round(const Ctx& ctx, const LnGeo& g, const gb_u32* rows, const unsigned short* const* xr,
                        gb_u32 K, gb_u32 lane, gb_u32 tile0, float* acc)
{
    enum { E = F::E, KT = 32 * E };
    typename F::Raw raw[UU][R];
    gb_u32 xw[UU][TT][E / 2];
    bool live[UU];
#pragma unroll
    for (int u = 0; u < UU; u++) {
        const gb_u32 k0 = KT * (tile0 + u) + E * lane;
        live[u] = !TAIL || k0 < K;
#pragma unroll
        for (int r = 0; r < R; r++)
            if (live[u]) F::load(ctx, g, rows[r], lane, tile0 + u, raw[u][r]);
#pragma unroll
        for (int t = 0; t < TT; t++)
#pragma unroll
            for (int c = 0; c < E / 8; c++) {
                gb_u32* o = &xw[u][t][4 * c];
                if (!TAIL || k0 + 8 * c < K) ctx.ld_x(xr[t] + k0 + 8 * c, o);
                else o[0] = o[1] = o[2] = o[3] = 0;
            }
    }
#pragma unroll
    for (int u = 0; u < UU; u++) {
        if (!live[u]) continue;
        gb_u32 xq[TT][E / 2];
        LnXq xs[TT];
#pragma unroll
        for (int t = 0; t < TT; t++) xs[t] = ln_dot_xq<F>(xw[u][t], xq[t]);
#pragma unroll
        for (int r = 0; r < R; r++) {
            gb_u32 b[F::NB];
            F::decode(raw[u][r], b);
            const float d = gb_half_to_float(raw[u][r].s);
#pragma unroll
            for (int t = 0; t < TT; t++)
                acc[t * R + r] = fmaf((float)F::dot(b, xq[t], xs[t].init), d * xs[t].sx, acc[t * R + r]);
        }
    }
}

// One block (blk) of the route: NW row warps of R rows times KS slices of K
// (warp w: rows of w % NW, slice w / NW; slice s takes tiles s P .. s P + P - 1,
// P = ceil(tiles / KS), so more warps share the rows where N is small). The
// x rows go TT at a time (T <= TT: once; a larger T, outside the route
// table's range for it, is still computed, the weights read again for each
// group of TT rows). red: shared memory of KS * NW * 32 * (R TT + 1) floats
// (a lane's R TT partial sums at a stride of R TT + 1: the writes fall in 32
// different banks).
#pragma nv_exec_check_disable
template <class F, int NW, int R, int TT, int U, int KS, class Ctx>
GB_HD void ln_dot_block(Ctx& ctx, const unsigned char* W, const unsigned short* x, unsigned short* y, gb_u32 N,
                        gb_u32 K, gb_u32 T, gb_u32 blk, float* red)
{
    enum { NT = Ctx::NT, V = R * TT, VS = V + 1, KT = 32 * F::E };
    static_assert(R >= 1 && TT >= 1 && U >= 1 && NW >= 1 && KS >= 1, "LN_NW, LN_R, LN_TT, LN_U and LN_KS must be positive");
    const LnGeo g = F::P::geo(W, N, K);
    const gb_u32 full = K / KT, tiles = (K + KT - 1) / KT, per = (tiles + KS - 1) / KS;
    for (gb_u32 t0 = 0; t0 < T; t0 += TT) {
        if (t0 > 0) ctx.barrier(); // every lane has read the previous group's sums
        LN_EACH
        {
            const gb_u32 tid = ctx.tid(q), warp = tid >> 5, lane = tid & 31, rw = warp % NW, sl = warp / NW;
            const gb_u32 row0 = (blk * NW + rw) * R;
            // this slice's tiles [s0, s1), its full ones [s0, f1), and the partial last tile if it holds it
            const gb_u32 s0 = sl * per < tiles ? sl * per : tiles, s1 = s0 + per < tiles ? s0 + per : tiles;
            const gb_u32 f1 = s1 < full ? s1 : full;
            float acc[V];
#pragma unroll
            for (int v = 0; v < V; v++) acc[v] = 0.0f;
            if (row0 < N) { // warp-uniform: a warp wholly past N only takes part in the barriers
                gb_u32 rows[R];
                const unsigned short* xr[TT];
#pragma unroll
                for (int r = 0; r < R; r++) rows[r] = row0 + r < N ? row0 + r : N - 1;
#pragma unroll
                for (int t = 0; t < TT; t++) xr[t] = x + (gb_u64)(t0 + t < T ? t0 + t : T - 1) * K;
                gb_u32 i = s0;
                for (; i + U <= f1; i += U) ln_dot_round<false, U, F, R, TT>(ctx, g, rows, xr, K, lane, i, acc);
                if constexpr (U > 1)
                    for (; i < f1; i++) ln_dot_round<false, 1, F, R, TT>(ctx, g, rows, xr, K, lane, i, acc);
                if (full < tiles && full >= s0 && full < s1)
                    ln_dot_round<true, 1, F, R, TT>(ctx, g, rows, xr, K, lane, full, acc);
            }
#pragma unroll
            for (int v = 0; v < V; v++) red[(warp * 32 + lane) * VS + v] = acc[v];
        }
        ctx.barrier();
        // Output v = t R + r of row warp w: lane v (v + 32, ...) of slice 0's warp adds the 32 lanes' sums of
        // each slice in order, slice by slice.
        LN_EACH
        {
            const gb_u32 tid = ctx.tid(q), warp = tid >> 5, lane = tid & 31, row0 = (blk * NW + warp) * R;
            if (warp < (gb_u32)NW)
                for (gb_u32 v = lane; v < (gb_u32)V; v += 32) {
                    const gb_u32 t = t0 + v / R, n = row0 + v % R;
                    if (n < N && t < T) {
                        float s = red[warp * 32 * VS + v];
                        for (int j = 1; j < 32; j++) s += red[(warp * 32 + j) * VS + v];
                        for (int sl = 1; sl < KS; sl++)
                            for (int j = 0; j < 32; j++) s += red[((sl * NW + warp) * 32 + j) * VS + v];
                        ctx.st_y(y + (gb_u64)t * N + n, ln_bf16(s));
                    }
                }
        }
    }
}

#ifdef __CUDACC__
template <class F, int NW, int R, int TT, int U, int KS>
__device__ __forceinline__ void ln_dot(const unsigned char* W, const unsigned short* x, unsigned short* y, gb_u32 N,
                                       gb_u32 K, gb_u32 T)
{
    enum { RED = KS * NW * 32 * (R * TT + 1) * 4 };
    static_assert(RED <= 48 * 1024, "the reduction of LN_KS x LN_NW warps x 32 lanes x LN_R LN_TT sums exceeds 48 KiB "
                                    "of shared memory (fewer LN_KS, LN_NW, LN_R or LN_TT)");
    __shared__ float red[KS * NW * 32 * (R * TT + 1)];
    LnDevCtx ctx;
    ln_dot_block<F, NW, R, TT, U, KS>(ctx, W, x, y, N, K, T, blockIdx.x, red);
}
#endif

#endif
