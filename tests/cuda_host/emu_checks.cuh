// Part of the host emulation of the CUDA GEMV kernels (tests/cuda_host/
// gemv_emulate.cu, the only file that includes it, after emu_host.cuh): the
// checks every variant goes through. Random GEMVs against the FP64 oracle at
// the 1e-4 row tolerance, one-hot x against the reference dequantization bit
// for bit, non-finite x reaching every row, and the adversarial q4_0 rows
// that measure the magic decode's worst case (docs/kernels/cuda-gemv.md,
// "Common structure", precision).
#ifndef GPUBENCH_EMU_CHECKS_CUH
#define GPUBENCH_EMU_CHECKS_CUH
static gb_u64 seed_counter = 1000;
static double worst_seen = 0; // worst relative row error of the current section

// Random weights and x: GEMV vs the FP64 oracle at tol 1e-4.
static void check_gemv(const Variant& v, gb_u32 m, gb_u32 k) {
    const gb_format* f = gb_format_find(v.fmt);
    uint64_t wbytes = 0; gb_err e = {0};
    if (gb_format_matrix_bytes(f, m, k, &wbytes, &e)) { CHECK(0, "bad shape"); return; }
    const size_t nb = buffer_bytes(wbytes);
    Guarded wb(nb), xb(4ull * k);
    gb_ref_random_blocks(f, (uint64_t)m * (k / f->qk), seed_counter++, wb.p, &e);
    memset(wb.p + wbytes, 0xFF, nb - wbytes); // slack: garbage that must not matter
    gb_rng rng; gb_rng_seed(&rng, seed_counter++);
    gb_random_fill(xb.p, k, GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, &rng);
    std::vector<float> y(m, NAN);
    std::vector<double> yref(m), absdot(m);
    v.fn(wb.p, nb, (const float*)xb.p, m, k, y.data());
    gb_ref_gemv(f, wb.p, wbytes, m, k, (const float*)xb.p, yref.data(), absdot.data(), &e);
    gb_row_check rc;
    gb_ref_check_rows(y.data(), yref.data(), absdot.data(), m, 1e-4, &rc);
    CHECK(rc.failures == 0, "%s %s m=%u k=%u: %llu rows off, worst row %llu rel %.3g (y=%.9g ref=%.9g)", v.fmt, v.label, m, k,
          (unsigned long long)rc.failures, (unsigned long long)rc.worst_row, rc.worst_rel, y[rc.worst_row], yref[rc.worst_row]);
    if (rc.worst_rel > worst_seen) { worst_seen = rc.worst_rel; printf("  (worst relative error so far %.3g: %s %s m=%u k=%u)\n", worst_seen, v.fmt, v.label, m, k); }
}

// Random valid weights of an m x k matrix of v's format in a guarded buffer,
// the slack past the weights filled with garbage that must not matter.
struct RandomWeights {
    const gb_format* f;
    uint64_t wbytes = 0;
    size_t nb;
    Guarded wb;
    static size_t bytes_of(const gb_format* f, gb_u32 m, gb_u32 k, uint64_t& wbytes) {
        gb_err e = {0};
        gb_format_matrix_bytes(f, m, k, &wbytes, &e);
        return buffer_bytes(wbytes);
    }
    RandomWeights(const Variant& v, gb_u32 m, gb_u32 k)
        : f(gb_format_find(v.fmt)), nb(bytes_of(f, m, k, wbytes)), wb(nb) {
        gb_err e = {0};
        gb_ref_random_blocks(f, (uint64_t)m * (k / f->qk), seed_counter++, wb.p, &e);
        memset(wb.p + wbytes, 0xFF, nb - wbytes);
    }
};

// One-hot x: y must equal column j of the reference dequantization bit for bit.
static void check_exact(const Variant& v, gb_u32 m, gb_u32 k) {
    RandomWeights rw(v, m, k);
    const gb_format* f = rw.f;
    const size_t nb = rw.nb;
    Guarded& wb = rw.wb;
    Guarded xb(4ull * k);
    gb_err e = {0};
    std::vector<float> deq((size_t)m * k);
    for (gb_u32 i = 0; i < m; i++) gb_ref_dequant_row(f, wb.p, m, k, i, &deq[(size_t)i * k], &e);
    float* x = (float*)xb.p;
    std::vector<float> y(m);
    int bad = 0;
    for (gb_u32 j = 0; j < k; j++) {
        memset(x, 0, 4ull * k);
        x[j] = 1.0f;
        v.fn(wb.p, nb, x, m, k, y.data());
        for (gb_u32 i = 0; i < m; i++) {
            const float want = deq[(size_t)i * k + j];
            if (!(y[i] == want)) { if (bad++ < 5) fprintf(stderr, "FAIL exact %s %s m=%u k=%u row %u col %u: got %.9g want %.9g\n", v.fmt, v.label, m, k, i, j, y[i], want); }
        }
    }
    if (bad) failures++;
}

// A NaN (or an infinity) anywhere in x makes every row's result non-finite,
// as the reference's: a kernel must not scale it away (the XQ path's x
// scale comes from max|x|).
static void check_nonfinite(const Variant& v, gb_u32 m, gb_u32 k) {
    RandomWeights rw(v, m, k);
    const gb_format* f = rw.f;
    const size_t nb = rw.nb;
    Guarded& wb = rw.wb;
    Guarded xb(4ull * k);
    gb_err e = {0};
    float* x = (float*)xb.p;
    std::vector<float> y(m);
    for (int kind = 0; kind < 2; kind++) {
        gb_rng rng; gb_rng_seed(&rng, seed_counter++);
        gb_random_fill(xb.p, k, GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, &rng);
        x[k / 3 + 1] = kind == 0 ? NAN : INFINITY;
        v.fn(wb.p, nb, x, m, k, y.data());
        for (gb_u32 i = 0; i < m; i++)
            CHECK(!std::isfinite(y[i]), "%s %s m=%u k=%u: x holds %s but row %u is %.9g", v.fmt, v.label, m, k,
                  kind == 0 ? "NaN" : "inf", i, y[i]);
    }
}

// Adversarial for the magic decode: q4_0 rows whose blocks are all zero weights
// (every nibble 8) except one block per row, so sum |w x| is small while the
// decode of every zero block still cancels 64 * S against 136 * X.
static double sparse_q4_0(runner fn, gb_u32 m, gb_u32 k) {
    const gb_format* f = gb_format_find("q4_0");
    uint64_t wbytes = 0; gb_err e = {0};
    gb_format_matrix_bytes(f, m, k, &wbytes, &e);
    const size_t nb = buffer_bytes(wbytes);
    Guarded wb(nb), xb(4ull * k);
    gb_ref_random_blocks(f, (uint64_t)m * (k / 32), seed_counter++, wb.p, &e);
    memset(wb.p + wbytes, 0xFF, nb - wbytes);
    gb_rng rng; gb_rng_seed(&rng, seed_counter++);
    for (gb_u32 i = 0; i < m; i++) {
        const gb_u32 keep = (gb_u32)(gb_rng_next(&rng) % (k / 32));
        for (gb_u32 b = 0; b < k / 32; b++)
            if (b != keep) memset(wb.p + ((size_t)i * (k / 32) + b) * 18 + 2, 0x88, 16);
    }
    gb_random_fill(xb.p, k, GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, &rng);
    std::vector<float> y(m);
    std::vector<double> yref(m), absdot(m);
    fn(wb.p, nb, (const float*)xb.p, m, k, y.data());
    gb_ref_gemv(f, wb.p, wbytes, m, k, (const float*)xb.p, yref.data(), absdot.data(), &e);
    gb_row_check rc;
    gb_ref_check_rows(y.data(), yref.data(), absdot.data(), m, 1e-4, &rc);
    // A measurement, not a check: the magic decode's error scales with |d| * sum |x|
    // of each block, so all-zero blocks with large d are outside the 1e-4 bound.
    return rc.worst_rel;
}

#endif
