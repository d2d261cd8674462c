// Part of the host emulation of the CUDA Linear kernels (tests/cuda_host/
// linear_emulate.cu, the only file that includes it, after linear_emu_ctx.cuh):
// the routes emulated and the checks each goes through.
#ifndef GPUBENCH_LINEAR_EMU_CHECKS_CUH
#define GPUBENCH_LINEAR_EMU_CHECKS_CUH

static gb_u64 seed_counter = 7000;
static double worst_seen = 0; // worst |y - r| / bound over the random checks

// The routes: the geometries of lib/gpubench/linear_cuda.lua's table and a few
// others (more or fewer warps, row tiles, units in flight, stages, the
// interleaved walk KC = 0).
#define GV(F, q, NW, RT, NJ, U) Route{q, "gemv " #F " NW=" #NW " RT=" #RT " NJ=" #NJ " U=" #U, run_gemv<F, NW, RT, NJ, U>, 8 * NJ}
#define GV0(F, q, NW, RT, NJ, U) Route{q, "gemv " #F " NW=" #NW " RT=" #RT " NJ=" #NJ " U=" #U " KC=0", run_gemv<F, NW, RT, NJ, U, 0>, 8 * NJ}
// Staged (LN_STAGE = S): the runner, and the unstaged runner of the same geometry.
#define GS(F, q, NW, RT, NJ, U, KC, S)                                                                             \
    Route{q, "gemv " #F " NW=" #NW " RT=" #RT " NJ=" #NJ " U=" #U " KC=" #KC " STAGE=" #S,                        \
          run_gemv<F, NW, RT, NJ, U, KC, S>, 8 * NJ, run_gemv<F, NW, RT, NJ, U, KC, 0>}
#define MV(F, q, NW, BN, S) Route{q, "mma " #F " NW=" #NW " BN=" #BN " S=" #S, run_mma<F, NW, BN, S>, 65535}
static const std::vector<Route>& routes()
{
    static const std::vector<Route> r = {
        GV(LnQ4, "q4", 4, 2, 1, 4), GV(LnQ4, "q4", 4, 2, 2, 2), GV(LnQ4, "q4", 2, 1, 1, 3), GV(LnQ4, "q4", 8, 4, 1, 1),
        GV(LnQ5, "q5", 4, 2, 1, 4), GV(LnQ5, "q5", 4, 2, 2, 2), GV(LnQ5, "q5", 1, 3, 1, 2),
        GV(LnQ6, "q6", 4, 2, 1, 4), GV(LnQ6, "q6", 4, 2, 2, 2), GV(LnQ6, "q6", 3, 1, 2, 1),
        GV(LnW8, "w8", 4, 2, 1, 4), GV(LnW8, "w8", 4, 2, 2, 2), GV(LnW8, "w8", 2, 2, 1, 5),
        GV(LnNvfp4, "nvfp4", 4, 2, 1, 4), GV(LnNvfp4, "nvfp4", 4, 2, 2, 2), GV(LnNvfp4, "nvfp4", 1, 1, 1, 1),
        GV(LnBf16, "bf16", 4, 2, 1, 4), GV(LnBf16, "bf16", 4, 2, 2, 2), GV(LnBf16, "bf16", 2, 3, 1, 2),
        GV0(LnQ4, "q4", 4, 2, 1, 4), GV0(LnQ6, "q6", 3, 1, 2, 1), GV0(LnW8, "w8", 2, 2, 1, 5), GV0(LnBf16, "bf16", 2, 3, 1, 2),
        GV(LnQ4, "q4", 4, 2, 1, 2), GV(LnQ6, "q6", 4, 2, 1, 2), GV(LnBf16, "bf16", 4, 2, 1, 2), GV(LnBf16, "bf16", 4, 1, 1, 2),
        // staged: the kernels' gpubench-compile geometries (w8 and bf16 at U = 1, bf16 S = 4 at RT = 1: the
        // larger spans exceed 48 KiB of stages), then odd ones (3 warps and row tiles, KC = 1, 1 warp, 5 stages)
        GS(LnQ4, "q4", 4, 2, 1, 2, 0, 3), GS(LnQ4, "q4", 4, 2, 2, 2, 0, 3), GS(LnQ4, "q4", 4, 2, 1, 2, 0, 4),
        GS(LnQ5, "q5", 4, 2, 1, 2, 0, 3), GS(LnQ5, "q5", 4, 2, 2, 2, 0, 3), GS(LnQ5, "q5", 4, 2, 2, 2, 0, 4),
        GS(LnQ6, "q6", 4, 2, 1, 2, 0, 3), GS(LnQ6, "q6", 4, 2, 2, 2, 0, 3), GS(LnQ6, "q6", 4, 2, 1, 1, 0, 4),
        GS(LnW8, "w8", 4, 2, 1, 1, 0, 3), GS(LnW8, "w8", 4, 2, 2, 1, 0, 3), GS(LnW8, "w8", 4, 2, 2, 1, 0, 4),
        GS(LnNvfp4, "nvfp4", 4, 2, 1, 2, 0, 3), GS(LnNvfp4, "nvfp4", 4, 2, 2, 2, 0, 3), GS(LnNvfp4, "nvfp4", 4, 2, 1, 2, 0, 4),
        GS(LnBf16, "bf16", 4, 2, 1, 1, 0, 3), GS(LnBf16, "bf16", 4, 2, 2, 1, 0, 3), GS(LnBf16, "bf16", 4, 1, 1, 1, 0, 4),
        GS(LnQ5, "q5", 3, 3, 1, 2, 1, 2), GS(LnW8, "w8", 2, 1, 2, 3, 1, 5), GS(LnNvfp4, "nvfp4", 1, 1, 1, 4, 1, 3),
        GS(LnBf16, "bf16", 3, 1, 1, 1, 0, 2),
        // host only (stages over 48 KiB on the device): the larger w8 and bf16 spans
        GS(LnW8, "w8", 4, 2, 1, 2, 0, 3), GS(LnW8, "w8", 4, 2, 2, 2, 0, 3),
        GS(LnBf16, "bf16", 4, 2, 1, 2, 0, 3), GS(LnBf16, "bf16", 4, 2, 2, 2, 0, 3),
        MV(LnQ4, "q4", 4, 64, 4), MV(LnW8, "w8", 4, 64, 4), MV(LnBf16, "bf16", 4, 64, 4),
        MV(LnQ4, "q4", 8, 128, 3), MV(LnQ4, "q4", 8, 64, 4), MV(LnQ4, "q4", 2, 32, 2),
        MV(LnQ5, "q5", 8, 128, 3), MV(LnQ5, "q5", 8, 64, 4),
        MV(LnQ6, "q6", 8, 128, 3), MV(LnQ6, "q6", 8, 64, 4),
        MV(LnW8, "w8", 8, 128, 3), MV(LnW8, "w8", 8, 64, 4), MV(LnW8, "w8", 4, 32, 3),
        MV(LnNvfp4, "nvfp4", 8, 128, 3), MV(LnNvfp4, "nvfp4", 8, 64, 4),
        MV(LnBf16, "bf16", 8, 128, 3), MV(LnBf16, "bf16", 8, 64, 4), MV(LnBf16, "bf16", 1, 16, 5),
    };
    return r;
}

// Random valid weights of a route's format in a guarded buffer of exactly the
// weight bytes, random bf16 x, and a y with poisoned slack around it.
struct Problem {
    const gb_planar_format* f;
    gb_u32 N, K, T;
    size_t wbytes;
    Guarded wb, xb, yb;
    unsigned short *x, *y;
    static size_t weight_bytes(const gb_planar_format* f, gb_u32 n, gb_u32 k)
    {
        gb_planar_layout l;
        gb_err e = {0};
        if (gb_planar_layout_of(f, n, k, &l, "emulate", &e) != 0) abort();
        return (size_t)l.bytes;
    }
    Problem(const Route& r, gb_u32 n, gb_u32 k, gb_u32 t) : Problem(r.qtype, n, k, t) {}
    Problem(const char* qtype, gb_u32 n, gb_u32 k, gb_u32 t)
        : f(gb_planar_find(qtype)), N(n), K(k), T(t), wbytes(weight_bytes(f, n, k)), wb(wbytes),
          xb(2 * (size_t)t * k), yb(2 * (size_t)t * n + 64)
    {
        gb_err e = {0};
        if (gb_ref_planar_random(f, n, k, seed_counter++, wb.p, wbytes, &e) != 0) abort();
        x = (unsigned short*)xb.p;
        gb_rng rng;
        gb_rng_seed(&rng, seed_counter++);
        gb_random_fill(xb.p, (size_t)t * k, GB_DT_BF16, GB_DIST_NORMAL, 0.0, 1.0, &rng);
        y = (unsigned short*)(yb.p + 32);
    }
    // Runs the route; checks the accesses, that every output was written
    // once and that the slack around y is untouched.
    void run(const Route& r, float gscale)
    {
        memset(yb.p, 0xA5, yb.n);
        LnCall c{wb.p, wbytes, x, y, N, K, T, std::vector<int>((size_t)T * N, 0), 0};
        r.fn(c, gscale);
        size_t off = 0;
        for (size_t i = 0; i < c.writes.size(); i++) off += c.writes[i] != 1;
        bool slack = true;
        for (size_t i = 0; i < 32; i++) slack = slack && yb.p[i] == 0xA5 && yb.p[yb.n - 1 - i] == 0xA5;
        CHECK(c.bad == 0 && off == 0 && slack, "%s %s N=%u K=%u T=%u: %d bad accesses, %zu outputs not written exactly once, slack %s",
              r.qtype, r.label, N, K, T, c.bad, off, slack ? "untouched" : "written");
    }
    // y (after run) against the FP64 reference of these weights and x, docs/LINEAR.md's bound.
    gb_linear_check against_reference(float gscale) const
    {
        std::vector<double> ref((size_t)T * N), s((size_t)T * N);
        gb_err e = {0};
        if (gb_ref_linear(f, wb.p, wbytes, N, K, gscale, x, (size_t)T * K, T, ref.data(), s.data(), &e) != 0) abort();
        gb_linear_check chk;
        gb_ref_check_linear(y, ref.data(), s.data(), T, N, GB_WEIGHTS_EXACT, &chk);
        return chk;
    }
};

static const float GSCALE = 0.3671875f; // NVFP4's tensor scale here (the other formats must ignore it)

// Random weights and x against the FP64 reference, docs/LINEAR.md's bound.
static void check_linear(const Route& r, gb_u32 n, gb_u32 k, gb_u32 t)
{
    Problem p(r, n, k, t);
    p.run(r, GSCALE);
    const gb_linear_check chk = p.against_reference(GSCALE);
    CHECK(chk.failures == 0, "%s %s N=%u K=%u T=%u: %llu outputs off, first (t=%llu, n=%llu) y=%.9g r=%.9g bound %.3g",
          r.qtype, r.label, n, k, t, (unsigned long long)chk.failures, (unsigned long long)chk.first_t,
          (unsigned long long)chk.first_n, chk.first_y, chk.first_r, chk.first_bound);
    if (chk.worst > worst_seen) {
        worst_seen = chk.worst;
        printf("  (worst so far %.3g of the bound: %s %s N=%u K=%u T=%u)\n", worst_seen, r.qtype, r.label, n, k, t);
    }
}

// One-hot x (row t has a 1 at column j0 + t): y[t][n] must be the bf16 of
// weight (n, j0 + t) exactly, for every column of the matrix (a -0 weight
// gives +0: the other products are +0, and -0 + +0 is +0). With `bracket`
// (a route that rescales its sums by ratios of scales, each rounded in
// fp32: the wgmma route's integer formats) y may instead be the other bf16
// neighbour of the weight: placement and decode are still exact, the last
// bit is not.
static void check_exact(const Route& r, gb_u32 n, gb_u32 k, gb_u32 t, bool bracket = false)
{
    Problem p(r, n, k, t);
    std::vector<float> deq((size_t)n * k);
    gb_err e = {0};
    if (gb_ref_planar_dequantize(p.f, p.wb.p, p.wbytes, n, k, GSCALE, deq.data(), &e) != 0) abort();
    int bad = 0;
    for (gb_u32 j0 = 0; j0 < k; j0 += t) {
        memset(p.x, 0, 2 * (size_t)t * k);
        for (gb_u32 tt = 0; tt < t; tt++) p.x[(size_t)tt * k + (j0 + tt) % k] = 0x3F80; // 1.0
        p.run(r, GSCALE);
        for (gb_u32 tt = 0; tt < t; tt++)
            for (gb_u32 i = 0; i < n; i++) {
                const float w = deq[(size_t)i * k + (j0 + tt) % k];
                const gb_u32 want = ln_bf16(w), got = p.y[(size_t)tt * n + i];
                const float gf = emu_bf16_elem(got), wf = emu_bf16_elem(want);
                const bool neighbour = bracket && (got == want + 1 || got + 1 == want) && (gf - w) * (wf - w) <= 0;
                if (got != want && (got | want) != 0x8000u && !neighbour && bad++ < 5)
                    fprintf(stderr, "FAIL exact %s %s N=%u K=%u T=%u: y[%u][%u] = %04x, the weight (%u, %u) is %04x\n", r.qtype,
                            r.label, n, k, t, tt, i, got, i, (j0 + tt) % k, want);
            }
    }
    if (bad) failures++;
}

// A route's y against its twin's (r.unstaged, named `twin`) on the same
// weights and x: a staged route and its unstaged geometry take the same units
// in the same order through the same decode and mma sequence; the wgmma
// route's slices added in a cluster and by the second launch add the same
// sums in the same order. Either way every output is the same bits.
static void check_identical(const Route& r, gb_u32 n, gb_u32 k, gb_u32 t, const char* twin = "unstaged")
{
    Problem p(r, n, k, t);
    p.run(r, GSCALE);
    const std::vector<unsigned short> mine(p.y, p.y + (size_t)t * n);
    const Route base{r.qtype, twin, r.unstaged, r.max_t};
    p.run(base, GSCALE);
    size_t off = 0, first = 0;
    for (size_t i = 0; i < mine.size(); i++)
        if (mine[i] != p.y[i] && off++ == 0) first = i;
    CHECK(off == 0, "%s %s N=%u K=%u T=%u: %zu outputs differ from the %s route's, first (t=%zu, n=%zu) %04x vs %04x",
          r.qtype, r.label, n, k, t, off, twin, first / n, first % n, off ? mine[first] : 0, off ? p.y[first] : 0);
}

// A NaN, then an infinity, in x row t - 1: that row of y is non-finite, the others finite.
static void check_nonfinite(const Route& r, gb_u32 n, gb_u32 k, gb_u32 t)
{
    for (int kind = 0; kind < 2; kind++) {
        Problem p(r, n, k, t);
        p.x[(size_t)(t - 1) * k + k / 3] = kind == 0 ? 0x7FC0 : 0x7F80;
        p.run(r, GSCALE);
        int bad = 0;
        for (gb_u32 tt = 0; tt < t; tt++)
            for (gb_u32 i = 0; i < n; i++) {
                const bool fin = std::isfinite(emu_bf16_elem(p.y[(size_t)tt * n + i]));
                bad += fin == (tt == t - 1);
            }
        CHECK(bad == 0, "%s %s N=%u K=%u T=%u: x holds %s in row %u, %d outputs wrongly finite or not", r.qtype, r.label, n, k,
              t, kind ? "inf" : "NaN", t - 1, bad);
    }
}

#endif
