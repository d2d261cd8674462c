// q8_0 GEMV for T = 1..8 rows of x on the f16 tensor cores, every warp on its
// own (kernels/cuda/gemv_q8_0_tc.cu): y[T, m] = x[T, k] . W^T, f32 x and y.
// The int8 kernel (gemv_b32_i8.cuh) quantizes x once per block and waits at
// two block barriers per step, which holds it far below the memory bound;
// here no warp waits for another until the k-slice sums. Design and
// measurements: docs/kernels/cuda-gemv.md, "The f16 tensor-core q8_0 kernel".
//
// One mma.m16n8k16 (f16 in, f32 accumulate) multiplies 16 weight rows by 8 B
// columns, with the dense tensor-core kernels' k permutation and B columns
// (gemv_dense_tc.cuh): lane (g, t) takes codes 8t .. 8t + 7 of a block of its
// rows g and g + 8 and the same 8 columns of x.
//   A: a code q is exact in f16: byte q + 128 (q xor 0x80) under the exponent
//      byte 0x64 is 1024 + q + 128, and one subtraction of 1152 per two codes
//      leaves q.
//   B: x scaled per row of x and k slice by a power of two s that puts
//      max |x s| in [2^14, 2^15), then split into f16 hi + lo: about 22 bits
//      of every x relative to the row's largest, where an unscaled f16 split
//      would lose small x to f16's subnormals. y = (sum over blocks of
//      d * A B) / s, exactly the reference's sum up to the mma's rounding.
//      (A scale per block of 32 columns, its max by quad shuffles, needs no
//      pass over x first but measured slower: the doc above.)
//   Per block the mmas start from zero and the lane adds d of its row times
//   the result: d changes every 32 columns.
// Loads: blocks are 34 bytes, so the lane's codes are 2-byte aligned in every
// other block; a pair of blocks (68 bytes, 4-byte aligned as k is a multiple
// of 256) is 7 words per row and lane (the int8 kernel's: GbI8Q8_0 there),
// from global memory with U pairs in flight (STAGES = 0), or from
// warp-private shared-memory stages filled by whole-row cp.async (STAGES >=
// 2): 7 scattered 4-byte loads per row are many L1 wavefronts per byte.
//
// The index helpers and the warp loop are __host__ __device__ over a context
// (loads, mma, shuffles) so that tests/cuda_host/gemv_b32_tc_emulate.cu runs
// them for every lane on the CPU against a model of the mma.
#ifndef GPUBENCH_GEMV_B32_TC_CUH
#define GPUBENCH_GEMV_B32_TC_CUH

#include "gemv_dense_tc.cuh"

// A pair of q8_0 blocks: 17 words V0 .. V16, V0 = d0 | codes 0, 1; V8 = codes
// 30, 31 of block 0 | d1; block 1's codes are V9 .. V16. The lane keeps V0,
// V8, V2t .. V2t+2 (block 0's codes 8t .. at byte 2 + 8t) and V9+2t, V10+2t.
struct GbTcQ8_0 {
    enum { PAIR_BYTES = 68, WORDS = 7 };
    enum : sw_u32 { BIAS2 = 0x64806480u }; // f16x2 1152: a code's byte xor 0x80 under 0x64 is 1152 + q
    template <class Cx>
    SW_HD static void load(Cx& cx, const unsigned char* p, sw_u32 t, sw_u32 (&w)[WORDS])
    {
        w[0] = cx.ld_w4(p), w[1] = cx.ld_w4(p + 32);
        w[2] = cx.ld_w4(p + 8 * t), w[3] = cx.ld_w4(p + 8 * t + 4), w[4] = cx.ld_w4(p + 8 * t + 8);
        w[5] = cx.ld_w4(p + 36 + 8 * t), w[6] = cx.ld_w4(p + 40 + 8 * t);
    }
    // block b's codes 8t .. 8t + 3 (lo) and 8t + 4 .. 8t + 7 (hi), one per byte, as BIAS2 - 1024 + code
    SW_HD static void codes(const sw_u32 (&w)[WORDS], sw_u32 t, int b, sw_u32& lo, sw_u32& hi)
    {
        if (b) lo = w[5], hi = w[6];
        else lo = gb_prmt(w[2], w[3], 0x5432u), hi = gb_prmt(w[3], w[4], 0x5432u); // bytes 2 .. 5: a shift by 16
        lo ^= 0x80808080u, hi ^= 0x80808080u;
    }
    SW_HD static float d(const sw_u32 (&w)[WORDS], int b) { return gb_half_to_float(b ? w[1] >> 16 : w[0] & 0xFFFFu); }
};

// A pair of q4_0 blocks: 9 words V0 .. V8, V0 = d0 | qs bytes 0, 1 of block
// 0 (whose 16 qs bytes start at byte 2), V4 = its qs 14, 15 | d1, block 1's qs
// V5 .. V8. Codes 8t .. 8t + 7 of a block are the low (t < 2) or high (t >= 2)
// nibbles of its qs bytes 8h .. 8h + 7, h = t & 1: the lane keeps V0, V4,
// V2h .. V2h+2 (block 0's bytes at 2 + 8h) and V5+2h, V6+2h.
struct GbTcQ4_0 {
    enum { PAIR_BYTES = 36, WORDS = 7 };
    enum : sw_u32 { BIAS2 = 0x64086408u }; // f16x2 1032: a nibble n under 0x64 is 1024 + n, and q = n - 8
    template <class Cx>
    SW_HD static void load(Cx& cx, const unsigned char* p, sw_u32 t, sw_u32 (&w)[WORDS])
    {
        const sw_u32 h = 8u * (t & 1u);
        w[0] = cx.ld_w4(p), w[1] = cx.ld_w4(p + 16);
        w[2] = cx.ld_w4(p + h), w[3] = cx.ld_w4(p + h + 4), w[4] = cx.ld_w4(p + h + 8);
        w[5] = cx.ld_w4(p + 20 + h), w[6] = cx.ld_w4(p + 24 + h);
    }
    // block b's codes 8t .. 8t + 3 (lo) and 8t + 4 .. 8t + 7 (hi), one nibble per byte
    SW_HD static void codes(const sw_u32 (&w)[WORDS], sw_u32 t, int b, sw_u32& lo, sw_u32& hi)
    {
        if (b) lo = w[5], hi = w[6];
        else lo = gb_prmt(w[2], w[3], 0x5432u), hi = gb_prmt(w[3], w[4], 0x5432u);
        const sw_u32 sh = 4u * (t >> 1);
        lo = (lo >> sh) & 0x0F0F0F0Fu, hi = (hi >> sh) & 0x0F0F0F0Fu;
    }
    SW_HD static float d(const sw_u32 (&w)[WORDS], int b) { return gb_half_to_float(b ? w[1] >> 16 : w[0] & 0xFFFFu); }
};

// Four codes (one byte each, as Fm::codes gives them) as two f16x2 words,
// exactly: the byte under the exponent byte 0x64 is 1024 + byte, then minus
// the format's BIAS2.
template <class Fm, class Cx>
SW_HD void gb_b32tc_f16(Cx& cx, sw_u32 u, sw_u32& lo2, sw_u32& hi2)
{
    lo2 = cx.hsub2(gb_prmt(u, 0x64646464u, 0x4140u), Fm::BIAS2);
    hi2 = cx.hsub2(gb_prmt(u, 0x64646464u, 0x4342u), Fm::BIAS2);
}

// The power of two s that puts mx (> 0, finite) in [2^14, 2^15) times s, as
// f32 bits; 2^126 where mx < 2^-112 (so that 1 / s stays a normal float); 1
// where mx is 0, infinite or NaN.
SW_HD sw_u32 gb_b32tc_scale_bits(float mx)
{
    const sw_u32 eb = sw_as_u32(mx) >> 23; // mx >= 0: the biased exponent
    if (!(mx > 0.0f) || eb >= 255u) return 0x3F800000u;
    return (268u - (eb < 15u ? 15u : eb)) << 23;
}
// 1 / s exactly, for s = gb_b32tc_scale_bits(...) (biased exponent 14 .. 253 or 127)
SW_HD float gb_b32tc_inverse(sw_u32 sbits) { return sw_as_float((254u << 23) - sbits); }

// 8 x values (two 16-byte words of f32) times s, as f16x2 hi and lo words:
// v s = hi + lo within 2^-22 of max |x s| (lo within f16's subnormal step).
template <class Cx>
SW_HD void gb_b32tc_split_x(Cx& cx, const uint4& x0, const uint4& x1, float s, uint4& hi, uint4& lo)
{
    const sw_u32 v[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
    sw_u32 h[4], l[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const float a = sw_as_float(v[2 * i]) * s, b = sw_as_float(v[2 * i + 1]) * s;
        h[i] = cx.f16x2(a, b);
        l[i] = cx.f16x2(a - gb_half_to_float(h[i] & 0xFFFFu), b - gb_half_to_float(h[i] >> 16));
    }
    hi = make_uint4(h[0], h[1], h[2], h[3]);
    lo = make_uint4(l[0], l[1], l[2], l[3]);
}

// max |x| of the lane's row of x over the slice's kl columns (a multiple of
// 256; the 4 lanes of a quad share a row and take every fourth word). 8
// steps unrolled: 16 loads in flight, as the scan waits on x before the
// first weight is used.
template <class Cx>
SW_HD float gb_b32tc_max(Cx& cx, const float* xr, sw_u32 t, sw_u32 kl)
{
    float mx = 0.0f;
#pragma unroll 8
        for (sw_u32 c = 0; c < kl / 32; c++) {
            const uint4 a = cx.ld_x(xr + 32u * c + 8u * t), b = cx.ld_x(xr + 32u * c + 8u * t + 4);
            const sw_u32 v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
            for (int i = 0; i < 8; i++) mx = fmaxf(mx, fabsf(sw_as_float(v[i])));
        }
    mx = fmaxf(mx, cx.shfl_xor(mx, 1));
    return fmaxf(mx, cx.shfl_xor(mx, 2));
}

// Pair p of the warp's TL tiles (w: the lane's words of rows g and g + 8 of
// each tile), xr the lane's row of x (at column 0), s its scale: acc[j][i]
// += d * C per block (C of the lane's rows and B columns, hi and lo summed in
// place for T > 4, side by side in columns 2t, 2t + 1 for T <= 4).
template <class Fm, int T, int TL, class Cx>
SW_HD void gb_b32tc_pair(Cx& cx, sw_u32 lane, const sw_u32 (&w)[TL][2][Fm::WORDS], const float* xr, float s,
                         sw_u32 p, float (&acc)[TL][4])
{
    enum { NB = GbTcB<T>::NB };
    const sw_u32 g = sw_g(lane), t = sw_t(lane);
    const uint4 zero = make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int b = 0; b < 2; b++) {
        const sw_u32 col = 64u * p + 32u * b + 8u * t;
        uint4 hi, lo;
        gb_b32tc_split_x(cx, cx.ld_x(xr + col), cx.ld_x(xr + col + 4), s, hi, lo);
        uint4 xb[NB];
        GbTcB<T>::words(g, hi, lo, xb);
#pragma unroll
        for (int j = 0; j < TL; j++) {
            sw_u32 c[2][2]; // [row g, g + 8][codes 8t .., 8t + 4 ..]
            Fm::codes(w[j][0], t, b, c[0][0], c[0][1]);
            Fm::codes(w[j][1], t, b, c[1][0], c[1][1]);
            uint4 wa, wb;
            gb_b32tc_f16<Fm>(cx, c[0][0], wa.x, wa.y);
            gb_b32tc_f16<Fm>(cx, c[0][1], wa.z, wa.w);
            gb_b32tc_f16<Fm>(cx, c[1][0], wb.x, wb.y);
            gb_b32tc_f16<Fm>(cx, c[1][1], wb.z, wb.w);
            float C[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int nb = 0; nb < NB; nb++)
#pragma unroll
                for (int half = 0; half < 2; half++) {
                    sw_u32 a[4], bb[2];
                    sw_operands(wa, wb, xb[nb], half, a, bb);
                    cx.mma16(C, a, bb);
                }
            const float da = Fm::d(w[j][0], b), db = Fm::d(w[j][1], b);
            acc[j][0] = fmaf(da, C[0], acc[j][0]);
            acc[j][1] = fmaf(da, C[1], acc[j][1]);
            acc[j][2] = fmaf(db, C[2], acc[j][2]);
            acc[j][3] = fmaf(db, C[3], acc[j][3]);
        }
    }
}

// The direct loop (STAGES = 0) over the pairs p0 .. p1 - 1 of the slice:
// rows[j][0] / rows[j][1] the byte offsets of tile j's rows g and g + 8, U
// pairs loaded before any is used.
template <class Fm, int T, int U, int TL, class Cx>
SW_HD void gb_b32tc_warp(Cx& cx, sw_u32 lane, const unsigned char* W, const sw_u64 (&rows)[TL][2], const float* xr,
                         float s, sw_u32 p0, sw_u32 p1, float (&acc)[TL][4])
{
    const sw_u32 t = sw_t(lane);
    for (sw_u32 p = p0; p < p1; p += U) {
        sw_u32 w[U][TL][2][Fm::WORDS];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int j = 0; j < TL; j++)
#pragma unroll
                for (int h = 0; h < 2; h++)
                    if (p + u < p1) Fm::load(cx, W + rows[j][h] + (sw_u64)(p + u) * Fm::PAIR_BYTES, t, w[u][j][h]);
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (p + u >= p1) break; // the same for every lane
            gb_b32tc_pair<Fm, T, TL>(cx, lane, w[u], xr, s, p + u, acc);
        }
    }
}

// The staged loop (STAGES = S >= 2): the warp's 16 TL rows go through S
// warp-private shared-memory stages of U pairs (U a multiple of 4: a stage
// row is PB U bytes, PB = PAIR_BYTES (68 q8_0, 36 q4_0), whole 16-byte pieces
// at a 16-byte aligned place in the weight row), S - 1 in flight while one is
// read. Copy: lane l takes pieces q = l + 32 i, stage row q / (PB U / 16), so
// one cp.async instruction reads 512 contiguous bytes; pieces past the slice
// read nothing. Stage rows are PB U + 16 bytes apart (the 16 spread the 8
// rows of a load over the banks).
// Read: the direct loop's words, from the stage, IL pairs at a time (their
// words loaded before either is used: IL independent chains of loads, mma and
// shuffles for the scheduler to interleave).
#define GB_B32TC_SROW(PB, U) ((PB) * (U) + 16)
#define GB_B32TC_STAGE_BYTES(PB, TL, U) (16 * (TL) * GB_B32TC_SROW(PB, U))

template <int PB, int TL, int U, class Cx>
SW_HD void gb_b32tc_copy(Cx& cx, sw_u32 lane, const unsigned char* W, sw_u64 row_bytes, sw_u32 r0, sw_u32 m, sw_u32 ps,
                         sw_u32 p1, unsigned char* buf)
{
    enum { PIECES = PB * U / 16, TOTAL = 16 * TL * PIECES, ITER = (TOTAL + 31) / 32 };
    static_assert(U % 4 == 0 && PB % 4 == 0, "a stage is whole groups of 4 pairs (whole 16-byte pieces a row)");
    const sw_u32 live = (p1 - ps) * (sw_u32)PB; // bytes of the stage's rows inside the slice
#pragma unroll
    for (int i = 0; i < ITER; i++) {
        const sw_u32 q = lane + 32u * i;
        if (TOTAL % 32 == 0 || q < (sw_u32)TOTAL) {
            const sw_u32 r = q / PIECES, u = q % PIECES;
            const bool valid = 16u * u < live;
            const unsigned char* src = W + (sw_u64)sw_clamp(r0 + r, m) * row_bytes + (sw_u64)ps * PB + 16u * u;
            cx.cp16(buf + r * GB_B32TC_SROW(PB, U) + 16u * u, valid ? src : W, valid);
        }
    }
}

// Loads from a stage through a format's load(): ld_w4 reads shared memory.
template <class Cx>
struct GbB32StageLd {
    Cx& cx;
    SW_HD sw_u32 ld_w4(const unsigned char* p) { return cx.lds4(p); }
};

// The first S - 1 stages' copies: issued before x's scan, so that they are
// in flight while it waits.
template <int PB, int U, int TL, int S, class Cx>
SW_HD void gb_b32tc_first_stages(Cx& cx, sw_u32 lane, const unsigned char* W, sw_u64 row_bytes, sw_u32 r0, sw_u32 m,
                                 sw_u32 p0, sw_u32 p1, unsigned char* stages)
{
    const sw_u32 nst = (p1 - p0 + U - 1) / U;
#pragma unroll
    for (int i = 0; i < S - 1; i++) {
        if ((sw_u32)i < nst)
            gb_b32tc_copy<PB, TL, U>(cx, lane, W, row_bytes, r0, m, p0 + U * i, p1,
                                     stages + i * GB_B32TC_STAGE_BYTES(PB, TL, U));
        cx.commit();
    }
}

// The loop over the stages (gb_b32tc_first_stages issued the first S - 1).
template <class Fm, int T, int U, int TL, int S, int IL, class Cx>
SW_HD void gb_b32tc_staged(Cx& cx, sw_u32 lane, const unsigned char* W, sw_u64 row_bytes, sw_u32 r0, sw_u32 m,
                           const float* xr, float s, sw_u32 p0, sw_u32 p1, float (&acc)[TL][4],
                           unsigned char* stages)
{
    enum { PB = Fm::PAIR_BYTES, BYTES = GB_B32TC_STAGE_BYTES(PB, TL, U) };
    const sw_u32 g = sw_g(lane), t = sw_t(lane), nst = (p1 - p0 + U - 1) / U;
    GbB32StageLd<Cx> sl{cx};
    for (sw_u32 i = 0; i < nst; i++) {
        cx.template wait<S - 2>(); // this lane's pieces of stage i have landed
        cx.syncwarp();             // ... every lane's, and every lane is done with stage i - 1's buffer
        if (i + S - 1 < nst)
            gb_b32tc_copy<PB, TL, U>(cx, lane, W, row_bytes, r0, m, p0 + U * (i + S - 1), p1,
                                     stages + ((i + S - 1) % S) * BYTES);
        cx.commit();
        const unsigned char* buf = stages + (i % S) * BYTES;
        // IL pairs' words at a time: fully unrolled, the loads of every pair would be hoisted (registers)
#pragma unroll 1
        for (int u0 = 0; u0 < U; u0 += IL) {
            if (p0 + U * i + u0 >= p1) break; // the same for every lane
            sw_u32 w[IL][TL][2][Fm::WORDS];
#pragma unroll
            for (int v = 0; v < IL; v++)
#pragma unroll
                for (int j = 0; j < TL; j++)
#pragma unroll
                    for (int h = 0; h < 2; h++)
                        Fm::load(sl, buf + (16u * j + 8u * h + g) * GB_B32TC_SROW(PB, U) + (sw_u32)PB * (u0 + v), t,
                                 w[v][j][h]);
#pragma unroll
            for (int v = 0; v < IL; v++) {
                const sw_u32 p = p0 + U * i + u0 + v;
                if (p >= p1) break; // the same for every lane (a pair past the slice reads stage bytes, never used)
                gb_b32tc_pair<Fm, T, TL>(cx, lane, w[v], xr, s, p, acc);
            }
        }
    }
    cx.template wait<0>();
}

// The lane's outputs v (gb_tc_token's layout) from acc: T <= 4 adds the hi
// and lo columns; every output is divided by its token's scale, which the
// quad of that token's B column holds (inv: 1 / s of the lane's own token).
template <int T, class Cx>
SW_HD void gb_b32tc_outputs(Cx& cx, sw_u32 lane, const float (&acc)[4], float inv, float (&v)[4])
{
    const sw_u32 t = sw_t(lane);
    if constexpr (GbTcB<T>::NB == 1) {
        const float i0 = cx.shfl(inv, 8u * t); // token t is B column 2t (hi)
        v[0] = (acc[0] + acc[1]) * i0, v[2] = (acc[2] + acc[3]) * i0;
        v[1] = v[3] = 0.0f;
    } else {
        const float i0 = cx.shfl(inv, 8u * t), i1 = cx.shfl(inv, 8u * t + 4u); // tokens 2t, 2t + 1
        v[0] = acc[0] * i0, v[1] = acc[1] * i1, v[2] = acc[2] * i0, v[3] = acc[3] * i1;
    }
}

// A warp's whole part: slice s of KS (whole groups of 4 pairs of blocks),
// its scale, its loop (direct or staged through `stages`) and its outputs
// v[TL][4] for gb_tc_finish.
template <class Fm, int T, int U, int TL, int KS, int S, int IL = 1, class Cx>
SW_HD void gb_b32tc_part(Cx& cx, sw_u32 lane, const unsigned char* W, const float* x, sw_u32 m, sw_u32 k, sw_u32 r0,
                         sw_u32 s, float (&v)[TL][4], unsigned char* stages)
{
    // slices of whole groups of 4 pairs, so that every stage starts 16-byte aligned
    const sw_u32 g = sw_g(lane), t = sw_t(lane), pairs = k / 64, per = 4u * ((pairs / 4 + KS - 1) / KS);
    const sw_u32 p0 = per * s < pairs ? per * s : pairs, p1 = p0 + per < pairs ? p0 + per : pairs;
    const sw_u64 row_bytes = (sw_u64)pairs * Fm::PAIR_BYTES;
    sw_u64 rows[TL][2];
    float acc[TL][4];
#pragma unroll
    for (int j = 0; j < TL; j++) {
        rows[j][0] = sw_clamp(r0 + 16u * j + g, m) * row_bytes;
        rows[j][1] = sw_clamp(r0 + 16u * j + 8u + g, m) * row_bytes;
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    }
    const sw_u32 tok = GbTcB<T>::token(g);
    // A lane whose B column has no token (T < 4, 4 < T < 8) reads the last row of x like the others, with
    // scale 0: no branch around its loads, which cost T = 5..7 a quarter more time than T = 8 (the doc above);
    // its columns' results (0, or NaN from an infinite x) are never stored.
    const bool has_x = tok < (sw_u32)T;
    const float* xr = x + (sw_u64)(has_x ? tok : T - 1) * k;
    if constexpr (S >= 2) gb_b32tc_first_stages<Fm::PAIR_BYTES, U, TL, S>(cx, lane, W, row_bytes, r0, m, p0, p1, stages);
    const float mx = gb_b32tc_max(cx, xr + 64u * p0, t, 64u * (p1 - p0));
    const sw_u32 sb = has_x ? gb_b32tc_scale_bits(mx) : 0u;
    if constexpr (S >= 2)
        gb_b32tc_staged<Fm, T, U, TL, S, IL>(cx, lane, W, row_bytes, r0, m, xr, sw_as_float(sb), p0, p1, acc, stages);
    else gb_b32tc_warp<Fm, T, U, TL>(cx, lane, W, rows, xr, sw_as_float(sb), p0, p1, acc);
#pragma unroll
    for (int j = 0; j < TL; j++) gb_b32tc_outputs<T>(cx, lane, acc[j], gb_b32tc_inverse(sb), v[j]);
}

// ------------------------------------------------------------ the kernel

#if defined(__CUDA_ARCH__)
struct gb_b32tc_gpu : gb_tc_gpu {
    // weights are read once: no L1 allocation, so L1 keeps x
    __device__ __forceinline__ sw_u32 ld_w4(const unsigned char* p)
    {
        sw_u32 v;
        asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p));
        return v;
    }
    __device__ __forceinline__ sw_u32 hsub2(sw_u32 v, sw_u32 bias)
    {
        sw_u32 r;
        asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(bias));
        return r;
    }
    __device__ __forceinline__ sw_u32 f16x2(float a, float b)
    {
        sw_u32 r;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));
        return r;
    }
    __device__ __forceinline__ void mma16(float (&c)[4], const sw_u32 (&a)[4], const sw_u32 (&b)[2])
    {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
            "{%8, %9}, {%0, %1, %2, %3};"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    __device__ __forceinline__ sw_u32 lds4(const unsigned char* p) { return *reinterpret_cast<const sw_u32*>(p); }
    __device__ __forceinline__ float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xFFFFFFFFu, v, mask); }
    __device__ __forceinline__ float shfl(float v, sw_u32 src) { return __shfl_sync(0xFFFFFFFFu, v, (int)src); }
};

// NW warps of TL tiles of 16 rows per block, times KS slices of k, direct
// loads (S = 0) or S stages read IL pairs at a time; launch:
// block 32 * NW * KS, grid ceil(m / (16 * TL * NW)).
template <class Fm, int T, int U, int TL, int NW, int KS, int S, int IL>
__device__ __forceinline__ void gb_gemv_b32tc(const unsigned char* W, const float* x, float* y, sw_u32 m, sw_u32 k)
{
    const sw_u32 lane = threadIdx.x & 31, wid = threadIdx.x >> 5, rw = wid % NW, s = wid / NW;
    const sw_u32 r0 = (blockIdx.x * NW + rw) * 16u * TL;
    gb_b32tc_gpu cx;
    float v[TL][4] = {};
    unsigned char* st = nullptr;
    if constexpr (S >= 2) { // warp-private stages: no block barrier until the k-slice sums
        GB_WARP_STAGES(st, NW * KS, GB_B32TC_STAGE_BYTES(Fm::PAIR_BYTES, TL, U) * S, sw_red_bytes(NW, KS, TL), wid)
    }
    if (r0 < m) gb_b32tc_part<Fm, T, U, TL, KS, S, IL>(cx, lane, W, x, m, k, r0, s, v, st);
    gb_tc_finish<T, TL, NW, KS>(lane, rw, s, r0, m, v, y);
}
#endif

// ------------------------------------------------------------ the entries
// A format's kernel file (gemv_q8_0_tc.cu, gemv_q4_0_tc.cu) defines
// GB_B32TC_FORMAT (its GbTc struct) before including this header, which then
// checks the geometry defines lib/gpubench/gemv_cuda.lua passes and states the
// block's dynamic shared memory; the file spells out its extern "C" entry (the
// parameter reflection reads it from the source).
#if defined(GB_B32TC_FORMAT) && defined(__CUDA_ARCH__)
#if !defined(TC) || TC != 1 || !defined(WARPS) || !defined(KSPLIT) || !defined(TILES) || !defined(UNROLL) || \
    !defined(STAGES) || !defined(INTERLEAVE) || !defined(GEMV_TOKENS)
#error "the f16 tensor-core GEMV takes -DTC=1, -DWARPS, -DKSPLIT, -DTILES, -DUNROLL, -DSTAGES, -DINTERLEAVE and -DGEMV_TOKENS (lib/gpubench/gemv_cuda.lua)"
#endif
#if GEMV_TOKENS < 1 || GEMV_TOKENS > 8
#error "GEMV_TOKENS must be 1..8"
#endif
#if TILES < 1 || TILES > 4 || UNROLL < 1 || UNROLL > 8
#error "TILES (row tiles of 16 per warp) must be 1..4 and UNROLL (pairs of blocks in flight) 1..8"
#endif
#if STAGES == 1 || STAGES > 8 || (STAGES >= 2 && UNROLL % 4 != 0)
#error "STAGES is 0 (direct loads) or 2..8 (shared-memory stages of UNROLL pairs, a multiple of 4)"
#endif
#if (INTERLEAVE != 1 && INTERLEAVE != 2 && INTERLEAVE != 4) || (STAGES == 0 && INTERLEAVE != 1)
#error "INTERLEAVE (pairs of a stage read together) is 1, 2 or 4, and 1 with direct loads"
#endif

GB_WARP_STAGES_SHARED(WARPS * KSPLIT, GB_B32TC_STAGE_BYTES(GB_B32TC_FORMAT::PAIR_BYTES, TILES, UNROLL) * STAGES,
                      sw_red_bytes(WARPS, KSPLIT, TILES))
#endif

#endif
