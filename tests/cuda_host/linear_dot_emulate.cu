// Host emulation of the integer-dot route of the CUDA Linear kernels
// (kernels/cuda/linear_dot.cuh, linear_dot_<q>.cu), run by
// tests/cli/test_linear_dot_emulate.sh: compiled with nvcc as host code, it
// runs the kernel body (ln_dot_block, a __host__ __device__ template) over a
// whole block's threads with the checking context of the other Linear
// routes (linear_emu_ctx.cuh) and the same checks (linear_emu_checks.cuh):
//   - one-hot x: y equals the bf16 of every decoded weight, bit for bit;
//   - random weights and x at ragged N, K not a multiple of 128 (nor of a
//     tile) and T = 1, 3 and the route's largest T, and T past it (the
//     kernel takes x rows TT at a time), under docs/LINEAR.md's bound (the
//     worst ratio is printed);
//   - a NaN or an infinity in x makes exactly its row of y non-finite;
//   - every output written exactly once and nothing else; every weight load
//     inside the weight bytes and aligned, every x load a whole 16-byte word
//     inside a row t < T's first K elements;
//   - x with outliers (runs whose elements span up to 2^20 in magnitude):
//     the error stays inside docs/LINEAR.md's bound plus the route's own
//     x-rounding term sum_k |w_k| sx_k / 2 (sx_k: the power-of-two x scale
//     of element k's run, docs/kernels/cuda-linear.md, "Integer-dot route");
//     how many outputs exceed the plain bound is printed, not asserted.
// What it cannot check (the real dp2a, max.NaN.xorsign.abs.bf16x2, the
// barrier) is tests/lua/test_linear_cuda.lua's, on a GPU.
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "linear_gemv.cuh"
#include "linear_mma.cuh"
#include "linear_dot.cuh"

extern "C" {
#include "random.h"
#include "ref_planar.h"
}

#include "emu_report.cuh"
#include "emu_guard.cuh"
#include "emu_mma.cuh"
#include "linear_emu_ctx.cuh"
#include "linear_emu_checks.cuh"

// Every block of the integer-dot route: grid ceil(N / (NW R)); the
// reduction buffer poisoned with NaN before each block.
template <class F, int NW, int R, int TT, int U, int KS>
static void run_dot(LnCall& c, float)
{
    const gb_u32 rows = NW * R, blocks = (c.N + rows - 1) / rows;
    std::vector<float> red((size_t)KS * NW * 32 * (R * TT + 1));
    for (gb_u32 blk = 0; blk < blocks; blk++) {
        std::fill(red.begin(), red.end(), NAN);
        HostLnCtx<NW * KS> ctx{&c};
        ln_dot_block<F, NW, R, TT, U, KS>(ctx, c.w, c.x, c.y, c.N, c.K, c.T, blk, red.data());
    }
}

#define DVK(F, q, NW, R, TT, U, KS) \
    Route{q, "dot " #F " NW=" #NW " R=" #R " TT=" #TT " U=" #U " KS=" #KS, run_dot<F, NW, R, TT, U, KS>, TT}
#define DV(F, q, NW, R, TT, U) DVK(F, q, NW, R, TT, U, 1)
static const std::vector<Route>& dot_routes()
{
    static const std::vector<Route> r = {
        // the route table's geometries (lib/gpubench/linear_cuda.lua)
        DV(LnDotQ4, "q4", 8, 8, 1, 1), DV(LnDotQ4, "q4", 4, 8, 2, 1),
        DV(LnDotQ5, "q5", 4, 16, 1, 1), DV(LnDotQ5, "q5", 4, 8, 2, 1),
        DV(LnDotQ6, "q6", 4, 4, 1, 1),
        DV(LnDotW8, "w8", 4, 16, 1, 1), DV(LnDotW8, "w8", 4, 8, 2, 1),
        // others: the first untimed defaults (two tiles a round), more and fewer warps and rows,
        // one tile or three a round, more x rows
        DV(LnDotQ4, "q4", 4, 8, 1, 2), DV(LnDotQ5, "q5", 4, 8, 1, 2), DV(LnDotQ6, "q6", 4, 8, 1, 2),
        DV(LnDotQ6, "q6", 4, 8, 2, 1), DV(LnDotW8, "w8", 4, 8, 1, 2),
        DV(LnDotQ4, "q4", 4, 16, 1, 1), DV(LnDotQ4, "q4", 1, 3, 3, 3),
        DV(LnDotQ4, "q4", 2, 8, 4, 1), DV(LnDotQ4, "q4", 8, 32, 1, 1),
        DV(LnDotQ5, "q5", 1, 3, 3, 3), DV(LnDotQ5, "q5", 2, 8, 4, 1),
        DV(LnDotQ6, "q6", 4, 16, 1, 1), DV(LnDotQ6, "q6", 1, 3, 3, 3),
        DV(LnDotW8, "w8", 1, 3, 3, 3), DV(LnDotW8, "w8", 2, 8, 4, 1),
        // slices of K: 2 to 5 warps on each row group (K of 1 to 100+ tiles: slices past the last tile add zeros)
        DVK(LnDotQ4, "q4", 2, 4, 1, 2, 3), DVK(LnDotQ4, "q4", 4, 8, 2, 1, 2), DVK(LnDotQ5, "q5", 4, 16, 1, 1, 4),
        DVK(LnDotQ6, "q6", 4, 4, 1, 1, 2), DVK(LnDotW8, "w8", 4, 16, 1, 1, 4), DVK(LnDotW8, "w8", 1, 3, 3, 3, 5),
    };
    return r;
}

// The x scale of element k of an x row: the power of two of its lane's run
// (E elements from a multiple of E), as ln_dot_xq computes it.
static double run_sx(const unsigned short* xr, gb_u32 K, gb_u32 E, gb_u32 k)
{
    gb_u32 mx = 0;
    for (gb_u32 i = k / E * E; i < std::min(K, k / E * E + E); i++) mx = std::max(mx, (gb_u32)(xr[i] & 0x7FFF));
    gb_u32 e = mx >> 7;
    e = e < 15 ? 15 : e;
    return std::ldexp(1.0, (int)e - 141);
}

static int outlier_over_plain = 0, outlier_outputs = 0;
static double outlier_worst_plain = 0;

// x with outliers: one element in 16 (at random) is 2^a times larger, a
// uniform in 0 .. amax. Checked against the bound plus the x-rounding term;
// the plain bound is only reported (outputs whose outliers meet zero
// weights, code = offset, are where the x rounding hurts most).
static void check_outliers(const Route& r, gb_u32 n, gb_u32 k, gb_u32 t, gb_u32 E, int amax)
{
    Problem p(r, n, k, t);
    gb_rng rng;
    gb_rng_seed(&rng, seed_counter++);
    for (size_t i = 0; i < (size_t)t * k; i++)
        if (gb_rng_next(&rng) % 16 == 0) {
            const int a = (int)(gb_rng_next(&rng) % (gb_u64)(amax + 1));
            const float v = gb_as_float((gb_u32)p.x[i] << 16) * std::ldexp(1.0f, a);
            p.x[i] = (unsigned short)(gb_bits(v) >> 16); // exact: a power of two
        }
    p.run(r, GSCALE);
    std::vector<float> deq((size_t)n * k);
    gb_err e = {0};
    if (gb_ref_planar_dequantize(p.f, p.wb.p, p.wbytes, n, k, GSCALE, deq.data(), &e) != 0) abort();
    int bad = 0;
    for (gb_u32 tt = 0; tt < t; tt++) {
        const unsigned short* xr = p.x + (size_t)tt * k;
        for (gb_u32 i = 0; i < n; i++) {
            double ref = 0, s2 = 0, extra = 0;
            for (gb_u32 j = 0; j < k; j++) {
                const double w = deq[(size_t)i * k + j], xv = gb_as_float((gb_u32)xr[j] << 16);
                ref += w * xv, s2 += (w * xv) * (w * xv);
                extra += std::fabs(w) * run_sx(xr, k, E, j) / 2;
            }
            const double y = gb_as_float((gb_u32)p.y[(size_t)tt * n + i] << 16);
            const double plain = std::ldexp(std::fabs(ref), -8) + std::ldexp(std::sqrt(s2), -7);
            const double err = std::fabs(y - ref);
            outlier_outputs++;
            if (err > plain) outlier_over_plain++;
            outlier_worst_plain = std::max(outlier_worst_plain, err / plain);
            if (!(err <= plain + extra) && bad++ < 5)
                fprintf(stderr, "FAIL outliers %s %s N=%u K=%u T=%u: y[%u][%u] = %.9g, ref %.9g, bound %.3g + %.3g\n",
                        r.qtype, r.label, n, k, t, tt, i, y, ref, plain, extra);
        }
    }
    if (bad) failures++;
}

int main()
{
    printf("one-hot x: y is the bf16 of every decoded weight, bit for bit\n");
    for (const Route& r : dot_routes()) {
        check_exact(r, 37, 200, std::min(3u, r.max_t));
        check_exact(r, 20, 1096, r.max_t); // a full tile and a partial one (w8: two and a partial)
    }
    printf("random weights and x against the FP64 reference\n");
    for (const Route& r : dot_routes()) {
        std::vector<gb_u32> ts = {1};
        if (r.max_t >= 3) ts.push_back(3);
        if (r.max_t != 1 && r.max_t != 3) ts.push_back(r.max_t);
        for (gb_u32 t : ts) {
            check_linear(r, 37, 200, t);
            check_linear(r, 100, 4304, t);  // 4 full q4 tiles (8 of w8) and a partial one
            check_linear(r, 1, 8, t);
            check_linear(r, 33, 136, t);
            check_linear(r, 70, 2048, t);   // whole tiles only
            check_linear(r, 65, 3080, t);   // K % 1024 = 8: the last lane run of 8 elements
        }
        check_linear(r, 300, 1152, r.max_t);
        check_linear(r, 37, 200, 2 * r.max_t + 1); // T past the route's range: x rows TT at a time
        check_linear(r, 20, 1096, r.max_t + 1);
    }
    printf("non-finite x\n");
    for (const Route& r : dot_routes()) {
        check_nonfinite(r, 21, 264, r.max_t);
        check_nonfinite(r, 40, 1040, 1);
        check_nonfinite(r, 19, 200, r.max_t + 2);
    }
    printf("x with outliers: inside the bound plus the x-rounding term\n");
    for (const Route& r : dot_routes()) {
        const gb_u32 E = strcmp(r.qtype, "w8") == 0 ? 16 : 32;
        check_outliers(r, 37, 1096, r.max_t, E, 7);  // within 2^7 of the run's maximum: x coded exactly
        check_outliers(r, 37, 1096, r.max_t, E, 20);
    }
    printf("  %d of %d outputs with outliers past the plain bound (worst %.3g of it)\n", outlier_over_plain,
           outlier_outputs, outlier_worst_plain);
    printf("worst |y - r| / bound: %.3g\n", worst_seen);
    printf("%s: %d failures\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
