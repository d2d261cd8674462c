// Host emulation of the wgmma Linear route (kernels/cuda/linear_wgmma_*.cu),
// run by tests/cli/test_linear_wgmma_emulate.sh: compiled with nvcc as host
// code, it runs the kernels' own bodies (kernels/cuda/linear_wgmma.cuh, both
// the lockstep kernel with its slices of K and the warp-specialized one)
// with every thread of a block a coroutine (emu_coro.cuh) and a context
// that models shared memory, cp.async, barriers, mbarriers and wgmma and
// checks each (linear_wgmma_emu_ctx.cuh says what), and compares y with the
// FP64 reference under docs/LINEAR.md's accuracy rule:
//   - one-hot x: y equals the bf16 of the exactly decoded weight, bit for
//     bit, for every weight of the matrix (nvfp4, bf16), or one of its two
//     bf16 neighbours (the integer formats, whose sums are rescaled by
//     ratios of scales rounded in fp32);
//   - random weights and x at ragged N, K not a multiple of 64 or 128, T of 1
//     .. 300 (a tile of x partly or wholly past T), K sliced into more slices
//     than units;
//   - rows whose scales are 0, all 0, or alternate between the smallest and
//     largest fp16 (the accumulators' rescaling);
//   - a NaN or infinity in x makes its row of y non-finite;
//   - the slices of a tile as one thread block cluster (LN_CLUSTER = 1), its
//     blocks run together, adding their sums through each other's shared
//     memory: the same bits as the slices added by the second launch;
//   - a launch of whole tiles over the first rows of W, then the rest in
//     slices, counted from the last tile (LN_TAIL = 1): every output once;
//   - x by one bulk copy a unit from the prepass's tiled copy (LN_XTILE = 1):
//     the copy's bytes read only after its mbarrier's wait, inside the copy;
//   - copies that land only at their wait, threads preempted at random, and
//     a second model of the tensor cores' rounding.
// What it cannot check (the real instructions' timing, the asynchronous
// proxy's actual ordering, register allocation, ptxas serializing products)
// is tests/lua/test_linear_cuda.lua's, on an sm_90 GPU.
//
// Build (from the repository root, as test_linear_wgmma_emulate.sh does): as
// linear_emulate.cu, with -arch=sm_90a (the header refuses plain sm_90).
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "linear_gemv.cuh"
#include "linear_mma.cuh"
#include "linear_wgmma.cuh"
#include "linear_reduce.cuh"
#include "linear_half_prep.cuh"

extern "C" {
#include "random.h"
#include "ref_planar.h"
}

#include "emu_report.cuh"
#include "emu_guard.cuh"
#include "emu_mma.cuh"
#include "emu_coro.cuh"
#include "linear_emu_ctx.cuh"
#include "linear_emu_checks.cuh"
#include "linear_wgmma_emu_ctx.cuh"

// The route table's geometries (lib/gpubench/linear_cuda.lua: 2 warpgroups,
// 128 or 256 rows of x, 4 stages, q4 4 units in registers, slices of K,
// staggered warpgroups for q5, q6, nvfp4 and bf16: WRS below) and the kernel
// files' other compile lines.
#define WR(F, q, WG, MT, BN, S, WPF, WS, KS, CL)                                                                    \
    Route{q, "wgmma " #F " WG=" #WG " MT=" #MT " BN=" #BN " S=" #S " WPF=" #WPF " WS=" #WS " KS=" #KS " CLOSE=" #CL, \
          run_wgmma<F, WG, MT, BN, S, WPF, WS, KS, CL>, 65535}
// the last warpgroup's products staggered half a unit (LN_STAGGER = 1)
#define WRS(F, q, MT, BN, S, WPF, KS)                                                                                  \
    Route{q, "wgmma " #F " WG=2 MT=" #MT " BN=" #BN " S=" #S " WPF=" #WPF " KS=" #KS " CLOSE=1 STAGGER=1",            \
          run_wgmma<F, 2, MT, BN, S, WPF, 0, KS, 1, 1>, 65535}
// weights and x in fp16 from the prepass (LN_HALF = 1), the integer formats
#define WRH(F, q, WG, MT, BN, S, WPF, WS, KS, STG)                                                                   \
    Route{q, "wgmma " #F " WG=" #WG " MT=" #MT " BN=" #BN " S=" #S " WPF=" #WPF " WS=" #WS " KS=" #KS " STAGGER=" #STG \
             " HALF=1",                                                                                              \
          run_wgmma<F, WG, MT, BN, S, WPF, WS, KS, 1, STG, 1>, 65535}
// x's copies from addresses set once per thread (LN_XCOPY = 1)
#define WRX(F, q, WG, MT, BN, S, WPF, WS, KS, STG, H)                                                                \
    Route{q, "wgmma " #F " WG=" #WG " MT=" #MT " BN=" #BN " S=" #S " WPF=" #WPF " WS=" #WS " KS=" #KS " STAGGER=" #STG \
             " HALF=" #H " XCOPY=1",                                                                                 \
          run_wgmma<F, WG, MT, BN, S, WPF, WS, KS, 1, STG, H, 1>, 65535}
// the slices of a tile one thread block cluster adding their sums in shared
// memory (LN_CLUSTER = 1), its twin the same geometry's slices added by the
// second launch (whose bits it must give)
#define WRC(F, q, BN, WPF, KS, STG, H)                                                                            \
    Route{q, "wgmma " #F " WG=2 MT=1 BN=" #BN " S=4 WPF=" #WPF " KS=" #KS " STAGGER=" #STG " HALF=" #H " XCOPY=1 CLUSTER=1", \
          run_wgmma<F, 2, 1, BN, 4, WPF, 0, KS, 1, STG, H, 1, 1>, 65535, run_wgmma<F, 2, 1, BN, 4, WPF, 0, KS, 1, STG, H, 1, 0>}
// whole tiles over the first half of W's tile rows, then the rest's KS
// slices in clusters counted from the last tile (LN_TAIL = 1)
#define WRT(F, q, BN, WPF, KS, STG, H)                                                                            \
    Route{q, "wgmma " #F " WG=2 MT=1 BN=" #BN " S=4 WPF=" #WPF " STAGGER=" #STG " HALF=" #H " XCOPY=1 then TAIL=1 KS=" #KS " CLUSTER=1", \
          run_tail<F, BN, WPF, KS, STG, H>, 65535}
// the same with x by bulk copies in both launches (LN_XTILE = 1: the table's for the fp16 formats)
#define WRTX(F, q, BN, WPF, KS)                                                                                   \
    Route{q, "wgmma " #F " WG=2 MT=1 BN=" #BN " S=4 WPF=" #WPF " STAGGER=1 HALF=1 XCOPY=1 XTILE=1 then TAIL=1 KS=" #KS " CLUSTER=1", \
          run_tail<F, BN, WPF, KS, 1, 1, 1>, 65535}
// x by one bulk copy a unit from the prepass's tiled copy (LN_XTILE = 1, LN_HALF = 1)
#define WRB(F, q, BN, WPF, KS, STG, CLU, XT)                                                                      \
    Route{q, "wgmma " #F " WG=2 MT=1 BN=" #BN " S=4 WPF=" #WPF " KS=" #KS " STAGGER=" #STG " HALF=1 CLUSTER=" #CLU " XTILE=" #XT, \
          run_wgmma<F, 2, 1, BN, 4, WPF, 0, KS, 1, STG, 1, 1, CLU, XT>, 65535}
// each sum stored from the fragment, the factors read there (LN_EPI = 0; the
// table and the other routes here take 1)
#define WRE(F, q, BN, WPF, KS, STG, H, CLU, XT)                                                                   \
    Route{q, "wgmma " #F " WG=2 MT=1 BN=" #BN " S=4 WPF=" #WPF " KS=" #KS " STAGGER=" #STG " HALF=" #H " CLUSTER=" #CLU " XTILE=" #XT " EPI=0", \
          run_wgmma<F, 2, 1, BN, 4, WPF, 0, KS, 1, STG, H, 1, CLU, XT, 0>, 65535}
// the weights from registers (LN_XTILE = 3, LN_HALF = 1; x's k permuted by the prepass): 5 or 6 stages of x
#define WRA(F, q, BN, S, KS, CLU)                                                                                \
    Route{q, "wgmma " #F " WG=2 MT=1 BN=" #BN " S=" #S " WPF=1 KS=" #KS " HALF=1 CLUSTER=" #CLU " XTILE=3",     \
          run_wgmma<F, 2, 1, BN, S, 1, 0, KS, 1, 0, 1, 1, CLU, 3>, 65535}
// its diagnostic twin, each unit's products waited for at its end (LN_XTILE = 4)
#define WRA4(F, q, BN, S, KS, CLU)                                                                               \
    Route{q, "wgmma " #F " WG=2 MT=1 BN=" #BN " S=" #S " WPF=1 KS=" #KS " HALF=1 CLUSTER=" #CLU " XTILE=4",     \
          run_wgmma<F, 2, 1, BN, S, 1, 0, KS, 1, 0, 1, 1, CLU, 4>, 65535}
static const std::vector<Route>& wgmma_routes()
{
    static const std::vector<Route> r = {
        WR(LnQ4, "q4", 2, 1, 256, 4, 4, 0, 1, 0), WR(LnQ4, "q4", 2, 1, 128, 4, 4, 0, 8, 0), WR(LnQ4, "q4", 2, 2, 128, 4, 2, 0, 1, 0),
        WR(LnQ4, "q4", 1, 1, 64, 3, 1, 0, 1, 0), WR(LnQ4, "q4", 2, 1, 128, 3, 4, 0, 1, 0), WR(LnQ4, "q4", 2, 1, 256, 4, 4, 1, 1, 0),
        WR(LnQ5, "q5", 2, 1, 256, 4, 2, 0, 1, 0), WR(LnQ5, "q5", 2, 1, 256, 4, 2, 0, 3, 0),
        WR(LnQ6, "q6", 2, 1, 256, 4, 2, 0, 1, 0), WR(LnQ6, "q6", 2, 1, 128, 4, 2, 0, 16, 0),
        WR(LnW8, "w8", 2, 1, 256, 4, 2, 0, 1, 0), WR(LnW8, "w8", 2, 1, 256, 4, 2, 0, 4, 0), WR(LnW8, "w8", 2, 1, 256, 4, 2, 1, 1, 0),
        WR(LnNvfp4, "nvfp4", 2, 1, 256, 4, 2, 1, 1, 0), WR(LnNvfp4, "nvfp4", 2, 1, 128, 4, 2, 0, 2, 0),
        WR(LnBf16, "bf16", 2, 1, 256, 4, 2, 0, 1, 0), WR(LnBf16, "bf16", 2, 1, 128, 4, 2, 0, 1, 0), WR(LnBf16, "bf16", 2, 1, 256, 4, 2, 0, 2, 0),
        // the pipeline closed after the loop (LN_CLOSE = 1): lockstep, warp-specialized, slices, odd geometries
        WR(LnQ4, "q4", 2, 1, 256, 4, 4, 0, 1, 1), WR(LnQ4, "q4", 2, 1, 128, 4, 4, 0, 16, 1), WR(LnQ4, "q4", 2, 1, 256, 4, 4, 1, 1, 1),
        WR(LnQ4, "q4", 1, 1, 64, 3, 1, 0, 1, 1), WR(LnQ5, "q5", 2, 1, 256, 4, 2, 0, 3, 1), WR(LnQ6, "q6", 2, 2, 128, 4, 2, 0, 1, 1),
        WR(LnW8, "w8", 2, 1, 256, 4, 2, 0, 1, 1), WR(LnW8, "w8", 2, 1, 256, 4, 2, 1, 1, 1),
        WR(LnNvfp4, "nvfp4", 2, 1, 256, 4, 2, 1, 1, 1), WR(LnNvfp4, "nvfp4", 2, 1, 128, 3, 4, 0, 2, 1),
        WR(LnBf16, "bf16", 2, 1, 256, 4, 2, 0, 1, 1), WR(LnBf16, "bf16", 2, 1, 256, 4, 2, 1, 1, 1),
        // staggered warpgroups: every format, 3 and 4 stages, slices of K, two m64 tiles a warpgroup
        WRS(LnQ4, "q4", 1, 256, 4, 4, 1), WRS(LnQ4, "q4", 1, 128, 3, 4, 16), WRS(LnQ5, "q5", 1, 256, 4, 2, 3),
        WRS(LnQ6, "q6", 2, 128, 4, 2, 1), WRS(LnQ6, "q6", 1, 256, 4, 2, 1), WRS(LnQ6, "q6", 1, 128, 4, 2, 16),
        WRS(LnW8, "w8", 1, 256, 4, 2, 1), WRS(LnW8, "w8", 1, 128, 3, 1, 4),
        WRS(LnNvfp4, "nvfp4", 1, 256, 4, 2, 1), WRS(LnBf16, "bf16", 1, 256, 4, 2, 1), WRS(LnBf16, "bf16", 1, 128, 3, 4, 2),
        // weights and x in fp16 (LN_HALF = 1): every integer format, staggered or not, slices, warp-specialized
        WRH(LnQ4, "q4", 2, 1, 256, 4, 4, 0, 1, 1), WRH(LnQ4, "q4", 2, 1, 128, 4, 4, 0, 8, 1), WRH(LnQ4, "q4", 2, 1, 256, 4, 4, 0, 1, 0),
        WRH(LnQ5, "q5", 2, 1, 256, 4, 2, 0, 3, 1), WRH(LnQ6, "q6", 2, 1, 256, 4, 2, 0, 1, 1), WRH(LnQ6, "q6", 2, 2, 128, 4, 2, 0, 1, 1),
        WRH(LnW8, "w8", 2, 1, 256, 4, 2, 0, 1, 1), WRH(LnW8, "w8", 2, 1, 256, 4, 2, 0, 4, 0), WRH(LnW8, "w8", 2, 1, 256, 4, 2, 1, 1, 0),
        WRH(LnQ4, "q4", 1, 1, 64, 3, 1, 0, 1, 0),
        // x's copies from addresses set once (LN_XCOPY = 1): 256 and 128 filling threads, 4 and 8 copies each
        WRX(LnQ4, "q4", 2, 1, 256, 4, 4, 0, 1, 1, 1), WRX(LnQ4, "q4", 2, 1, 128, 4, 4, 0, 16, 0, 0), WRX(LnQ4, "q4", 1, 1, 64, 3, 1, 0, 1, 0, 1),
        WRX(LnQ6, "q6", 2, 2, 128, 4, 2, 0, 1, 1, 1), WRX(LnW8, "w8", 2, 1, 256, 4, 2, 1, 1, 0, 1), WRX(LnW8, "w8", 2, 1, 256, 4, 2, 0, 4, 1, 1),
        WRX(LnNvfp4, "nvfp4", 2, 1, 256, 4, 2, 0, 1, 1, 0), WRX(LnBf16, "bf16", 2, 1, 256, 4, 2, 0, 1, 1, 0), WRX(LnBf16, "bf16", 2, 1, 128, 3, 4, 0, 2, 1, 0),
        // the slices' sums in a cluster (LN_CLUSTER = 1): every format, 2 to 8 slices, staggered or not, LN_HALF
        WRC(LnQ4, "q4", 256, 4, 2, 0, 0), WRC(LnQ4, "q4", 256, 4, 4, 1, 1), WRC(LnQ5, "q5", 256, 2, 3, 1, 0),
        WRC(LnQ6, "q6", 128, 2, 8, 1, 0), WRC(LnW8, "w8", 256, 2, 4, 1, 1), WRC(LnNvfp4, "nvfp4", 128, 2, 2, 1, 0),
        WRC(LnBf16, "bf16", 256, 2, 3, 0, 0),
        // the last tiles in slices (a second launch, LN_TAIL = 1): every format, 2 to 8 slices, LN_HALF or not
        WRT(LnQ4, "q4", 256, 4, 4, 1, 1), WRT(LnQ5, "q5", 256, 2, 2, 1, 1), WRT(LnQ6, "q6", 128, 2, 3, 1, 0),
        WRT(LnW8, "w8", 256, 2, 8, 1, 1), WRT(LnNvfp4, "nvfp4", 256, 2, 2, 1, 0), WRT(LnBf16, "bf16", 128, 2, 4, 1, 0),
        // x by bulk copies (LN_XTILE = 1): the integer formats, staggered or not, slices in a cluster, 128 rows of x
        WRB(LnQ4, "q4", 256, 4, 1, 1, 0, 1), WRB(LnW8, "w8", 256, 2, 1, 1, 0, 1), WRB(LnQ5, "q5", 256, 2, 1, 0, 0, 1),
        WRB(LnQ6, "q6", 128, 2, 1, 1, 0, 1), WRB(LnW8, "w8", 256, 2, 2, 1, 1, 1), WRB(LnQ4, "q4", 128, 4, 3, 0, 1, 1),
        // and without the block barrier (LN_XTILE = 2: each warpgroup its own rows, the stages released by mbarriers)
        WRB(LnQ4, "q4", 256, 4, 1, 1, 0, 2), WRB(LnW8, "w8", 256, 2, 1, 1, 0, 2), WRB(LnQ5, "q5", 128, 2, 3, 1, 1, 2),
        WRB(LnQ6, "q6", 256, 2, 4, 1, 0, 2), WRB(LnW8, "w8", 256, 1, 2, 1, 1, 2),
        // the table's fp16 geometries: x by bulk copies, staggered, at 256 rows of x, and the tails after them
        WRB(LnQ5, "q5", 256, 2, 1, 1, 0, 1), WRB(LnQ6, "q6", 256, 2, 1, 1, 0, 1), WRB(LnW8, "w8", 256, 2, 4, 1, 1, 1),
        WRTX(LnQ4, "q4", 256, 4, 8), WRTX(LnQ5, "q5", 256, 2, 2), WRTX(LnQ6, "q6", 256, 2, 4), WRTX(LnW8, "w8", 256, 2, 8),
        // LN_EPI = 0: one slice, a cluster's, LN_HALF or not
        WRE(LnQ4, "q4", 256, 4, 1, 0, 0, 0, 0), WRE(LnW8, "w8", 256, 2, 1, 1, 1, 0, 1), WRE(LnW8, "w8", 256, 2, 2, 1, 1, 1, 1),
        WRE(LnQ5, "q5", 256, 2, 3, 1, 0, 1, 0),
        // the weights from registers (LN_XTILE = 3): every integer format, one slice, slices in a cluster, 128 rows of x
        WRA(LnQ4, "q4", 256, 6, 1, 0), WRA(LnQ5, "q5", 256, 6, 1, 0), WRA(LnQ6, "q6", 128, 5, 1, 0), WRA(LnW8, "w8", 256, 6, 1, 0),
        WRA(LnW8, "w8", 256, 6, 2, 1), WRA(LnQ5, "q5", 128, 5, 3, 1), WRA(LnQ4, "q4", 256, 6, 4, 0),
        WRA4(LnQ4, "q4", 256, 6, 1, 0), WRA4(LnW8, "w8", 256, 6, 2, 1),
    };
    return r;
}

// Rows of scales 0, all 0, or alternating 2^-24 and 65504, written over
// random weights of the planar layout (docs/FORMATS.md): the accumulators'
// rescaling must carry the previous scale over a zero one and stay exact
// across 2^40.
static void check_scales(const Route& r, gb_u32 n, gb_u32 k, gb_u32 t)
{
    if (!strcmp(r.qtype, "nvfp4") || !strcmp(r.qtype, "bf16")) return; // no fp16 group scales
    Problem p(r, n, k, t);
    gb_planar_layout l;
    gb_err e = {0};
    if (gb_planar_layout_of(p.f, n, k, &l, "emulate", &e) != 0) abort();
    const gb_planar_plane& sp = l.planes[l.nplanes - 1]; // the scales: the last plane
    const gb_u32 groups = (gb_u32)l.groups;
    for (gb_u32 row = 0; row < n; row++) {
        unsigned short* s = (unsigned short*)(p.wb.p + sp.offset + (size_t)row * sp.row_bytes);
        for (gb_u32 gi = 0; gi < groups; gi++) {
            if (row % 4 == 1) s[gi] = 0;                                  // all zero
            else if (row % 4 == 2 && gi % 3 == 1) s[gi] = 0;             // some zero
            else if (row % 4 == 3) s[gi] = gi % 2 ? 0x7BFF : 0x0001;      // 65504, 2^-24
        }
    }
    p.run(r, GSCALE);
    const gb_linear_check chk = p.against_reference(GSCALE);
    int zero_rows_bad = 0;
    for (gb_u32 tt = 0; tt < t; tt++)
        for (gb_u32 row = 1; row < n; row += 4) zero_rows_bad += p.y[(size_t)tt * n + row] != 0;
    CHECK(chk.failures == 0 && zero_rows_bad == 0, "%s %s N=%u K=%u T=%u scales 0 / 2^-24 / 65504: %llu outputs off, %d of the all-zero rows not +0",
          r.qtype, r.label, n, k, t, (unsigned long long)chk.failures, zero_rows_bad);
}

// LN_HALF's exponents (linear_half_prep.cuh) for every bf16 and fp16
// magnitude against frexp: floor(log2) of the value (x's g 14 below it, at
// least -126), 0 for zero, infinity and NaN.
static void check_half_exponents()
{
    int bad = 0;
    for (gb_u32 m = 1; m < 0x7F80u; m++) {
        int e;
        std::frexp((double)gb_as_float(m << 16), &e);
        bad += ln_half_x_exp(m) != std::max(e - 1 - 14, -126);
    }
    for (gb_u32 m = 1; m < 0x7C00u; m++) {
        int e;
        std::frexp((double)gb_half_to_float(m), &e);
        bad += ln_half_w_exp(m) != e - 1;
    }
    for (gb_u32 m : {0u, 0x7F80u, 0x7FC0u}) bad += ln_half_x_exp(m) != 0;
    for (gb_u32 m : {0u, 0x7C00u, 0x7E00u}) bad += ln_half_w_exp(m) != 0;
    CHECK(bad == 0, "LN_HALF exponents: %d magnitudes off", bad);
}

// The prepass's kernel code (ln_half_prep_block) against its reference, each
// format, row by row and tiled (256 and 128 rows of x; 256 with k permuted,
// LN_PREP_PERM = 1), both LN_PREP_HOLD:
// ragged N (odd groups of scales: K = 200 has 7 of q4's), K past a unit, T
// not a multiple of the tile; rows held in registers (K = 16392) and past
// them (K = 24592: read twice in both); under preemption.
template <class F>
static void check_prepass_of(const char* q)
{
    struct Shape { gb_u32 n, k, t; };
    for (Shape sh : {Shape{37, 200, 5}, Shape{9, 16392, 3}, Shape{3, 24592, 2}}) {
        Problem p(q, sh.n, sh.k, sh.t);
        LnCall c{p.wb.p, p.wbytes, p.x, p.y, sh.n, sh.k, sh.t, {}, 0};
        const int bad = prep_against_reference<F, 0>(c) + prep_against_reference<F, 256>(c) + prep_against_reference<F, 128>(c) +
                        prep_against_reference<F, 256, 1>(c);
        CHECK(bad == 0, "%s prepass N=%u K=%u T=%u: %d of 8 geometries differ from the reference", q, sh.n, sh.k, sh.t, bad);
    }
}
static void check_prepass()
{
    check_prepass_of<LnQ4>("q4");
    check_prepass_of<LnQ5>("q5");
    check_prepass_of<LnQ6>("q6");
    check_prepass_of<LnW8>("w8");
}

int main()
{
    printf("LN_HALF's exponents: every bf16 and fp16 magnitude against frexp\n");
    check_half_exponents();
    printf("the prepass's kernel code against its reference (rows held and read twice; row by row and tiled)\n");
    check_prepass();
    wgmma_preempt = 0.05;
    check_prepass_of<LnQ5>("q5");
    wgmma_preempt = 0;
    printf("one-hot x: y is the bf16 of every decoded weight, bit for bit (the scaled formats: or its other bf16 neighbour)\n");
    for (const Route& r : wgmma_routes())
        check_exact(r, 37, 200, 17, strcmp(r.qtype, "nvfp4") != 0 && strcmp(r.qtype, "bf16") != 0);
    printf("random weights and x against the FP64 reference\n");
    for (const Route& r : wgmma_routes()) {
        check_linear(r, 37, 200, 1);
        check_linear(r, 37, 200, 17);
        check_linear(r, 130, 1032, 69);
        check_linear(r, 20, 136, 300);
    }
    printf("the last tiles in slices after a launch of whole tiles: three tile rows of W, two tiles of x\n");
    for (const Route& r : wgmma_routes())
        if (strstr(r.label, "TAIL=1")) {
            check_linear(r, 300, 200, 17);
            check_linear(r, 300, 136, 300);
        }
    printf("the slices' sums added in a cluster: the same bits as the second launch's\n");
    for (const Route& r : wgmma_routes())
        if (r.unstaged) {
            check_identical(r, 37, 200, 300, "second launch");
            check_identical(r, 130, 1032, 69, "second launch");
        }
    printf("scales 0, all 0, 2^-24 and 65504\n");
    for (const Route& r : wgmma_routes()) check_scales(r, 36, 520, 33);
    printf("non-finite x\n");
    for (const Route& r : wgmma_routes()) check_nonfinite(r, 21, 264, 19);
    printf("copies landing only at their wait\n");
    land_at_wait = true;
    for (const Route& r : wgmma_routes()) check_linear(r, 37, 520, 69);
    land_at_wait = false;
    printf("threads preempted at random\n");
    wgmma_preempt = 0.05;
    for (const Route& r : wgmma_routes()) { check_linear(r, 37, 520, 69); check_linear(r, 70, 264, 5); }
    land_at_wait = true;
    for (const Route& r : wgmma_routes()) check_linear(r, 37, 520, 69);
    land_at_wait = false;
    wgmma_preempt = 0;
    printf("the last warpgroup held back (preempted at 9 of 10 operations)\n");
    wgmma_lag = 0.9;
    for (const Route& r : wgmma_routes()) check_linear(r, 37, 1032, 69);
    wgmma_lag = 0;
    printf("one-rounding model of the tensor cores' sums\n");
    mma_round_nearest = true;
    for (const Route& r : wgmma_routes()) check_linear(r, 37, 1032, 69);
    mma_round_nearest = false;
    printf("worst |y - r| / bound: %.3g\n", worst_seen);
    printf("%s: %d failures\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
