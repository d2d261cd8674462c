// Host emulation of the multi-token CUDA GEMV kernels (GEMV_TOKENS = T > 1:
// y[T, m] = x[T, k] . W^T), run by tests/cli/test_gemv_tokens_emulate.sh. As
// gemv_emulate.cu (whose kernels, contexts and runners, gemv_emu_common.cuh
// and emu_host.cuh, it shares: the runners take T), the
// kernels' own __host__ __device__ code runs on the CPU for every lane of
// every warp: the scalar path's gb_quant_warp with T x rows (XQ integer dot,
// with x through shared memory and from global memory, split-K, row parts;
// the f32 magic decode), the dense gb_dense_lane, and the tensor-core path's
// gb_mma_block_tokens with the CPU model of mma.sync. Checks, at T = 2, 3, 5
// and 8 (one and two B fragments of four x rows, full and partial):
//   - every x row against the FP64 reference at the 1e-4 row tolerance, the
//     rows' magnitudes 2^-10 .. 2^25 apart (each row keeps its own scale);
//   - one-hot x, a different column per x row: y equals the reference
//     dequantization bit for bit (the rows land in the right places of y);
//   - the scalar and dense paths: x row t's results equal a T = 1 run on x
//     row t bit for bit (the same arithmetic, only shared weight reads).
// Build: as test_gemv_emulate.sh, with this file.
#include "gemv_emu_common.cuh"

// ------------------------------------------------------------ variants

struct TVariant {
    const char* fmt;
    const char* label;
    int T;
    runner fn;  // T x rows
    runner one; // the same kernel at T = 1 (for the bit-for-bit comparison), or null
};

static gb_u64 seed_counter = 5000;
static double worst_seen = 0;

// T rows of normal x, row t scaled by 2^(5t - 10): every row of y against the
// FP64 reference; with `one`, each row also against a T = 1 run bit for bit.
static void check_rows_t(const TVariant& v, gb_u32 m, gb_u32 k)
{
    const gb_format* f = gb_format_find(v.fmt);
    uint64_t wbytes = 0; gb_err e = {0};
    if (gb_format_matrix_bytes(f, m, k, &wbytes, &e)) { CHECK(0, "bad shape"); return; }
    const size_t nb = buffer_bytes(wbytes);
    const int T = v.T;
    Guarded wb(nb), xb(4ull * T * k), x1(4ull * k);
    gb_ref_random_blocks(f, (uint64_t)m * (k / f->qk), seed_counter++, wb.p, &e);
    memset(wb.p + wbytes, 0xFF, nb - wbytes);
    float* x = (float*)xb.p;
    for (int t = 0; t < T; t++) {
        gb_rng rng; gb_rng_seed(&rng, seed_counter++);
        gb_random_fill(x + (size_t)t * k, k, GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, &rng);
        const float sc = ldexpf(1.0f, 5 * t - 10);
        for (gb_u32 i = 0; i < k; i++) x[(size_t)t * k + i] *= sc;
    }
    std::vector<float> y((size_t)T * m, NAN), y1(m);
    v.fn(wb.p, nb, x, m, k, y.data());
    std::vector<double> yref(m), absdot(m);
    for (int t = 0; t < T; t++) {
        gb_ref_gemv(f, wb.p, wbytes, m, k, x + (size_t)t * k, yref.data(), absdot.data(), &e);
        gb_row_check rc;
        const float* yt = y.data() + (size_t)t * m;
        gb_ref_check_rows(yt, yref.data(), absdot.data(), m, 1e-4, &rc);
        CHECK(rc.failures == 0, "%s %s T=%d m=%u k=%u x row %d: %llu rows off, worst row %llu rel %.3g (y=%.9g ref=%.9g)",
              v.fmt, v.label, T, m, k, t, (unsigned long long)rc.failures, (unsigned long long)rc.worst_row, rc.worst_rel,
              yt[rc.worst_row], yref[rc.worst_row]);
        if (rc.worst_rel > worst_seen) worst_seen = rc.worst_rel;
        if (v.one) {
            memcpy(x1.p, x + (size_t)t * k, 4ull * k);
            v.one(wb.p, nb, (const float*)x1.p, m, k, y1.data());
            int bad = 0;
            for (gb_u32 i = 0; i < m; i++) bad += memcmp(&yt[i], &y1[i], 4) != 0;
            CHECK(bad == 0, "%s %s T=%d m=%u k=%u x row %d: %d rows differ from the T=1 run (row 0: %.9g vs %.9g)",
                  v.fmt, v.label, T, m, k, t, bad, yt[0], y1[0]);
        }
    }
}

// One-hot x rows, row t hot at column (j + t * 37) % k, for every j: each row
// of y is a column of the reference dequantization, bit for bit.
static void check_exact_t(const TVariant& v, gb_u32 m, gb_u32 k)
{
    const gb_format* f = gb_format_find(v.fmt);
    uint64_t wbytes = 0; gb_err e = {0};
    gb_format_matrix_bytes(f, m, k, &wbytes, &e);
    const size_t nb = buffer_bytes(wbytes);
    const int T = v.T;
    Guarded wb(nb), xb(4ull * T * k);
    gb_ref_random_blocks(f, (uint64_t)m * (k / f->qk), seed_counter++, wb.p, &e);
    memset(wb.p + wbytes, 0xFF, nb - wbytes);
    std::vector<float> deq((size_t)m * k), y((size_t)T * m);
    for (gb_u32 i = 0; i < m; i++) gb_ref_dequant_row(f, wb.p, m, k, i, &deq[(size_t)i * k], &e);
    float* x = (float*)xb.p;
    int bad = 0;
    for (gb_u32 j = 0; j < k; j++) {
        memset(x, 0, 4ull * T * k);
        for (int t = 0; t < T; t++) x[(size_t)t * k + (j + 37u * t) % k] = 1.0f;
        v.fn(wb.p, nb, x, m, k, y.data());
        for (int t = 0; t < T; t++)
            for (gb_u32 i = 0; i < m; i++) {
                const float want = deq[(size_t)i * k + (j + 37u * t) % k], got = y[(size_t)t * m + i];
                if (!(got == want) && bad++ < 5)
                    fprintf(stderr, "FAIL exact %s %s T=%d m=%u k=%u x row %d row %u col %u: got %.9g want %.9g\n", v.fmt,
                            v.label, T, m, k, t, i, (j + 37u * t) % k, got, want);
            }
    }
    if (bad) failures++;
}

#define QT(F, fmt, R, S, NW, KS, P, T) \
    TVariant{fmt, #F " R=" #R " S=" #S " W=" #NW " KSPLIT=" #KS " PARTS=" #P, T, run_quant<F, R, S, NW, KS, P, false, T>, run_quant<F, R, S, NW, KS, P>}
#define MT(F, fmt, NW, S, T) TVariant{fmt, #F " NW=" #NW " S=" #S, T, run_mma<F, NW, S, T>, nullptr}
#define DT(D, fmt, R, U, T) TVariant{fmt, #D " R=" #R " U=" #U, T, run_dense<D, R, U, T>, run_dense<D, R, U>}

int main()
{
    const TVariant scalar[] = {
        // the defaults' geometry (x from global memory at T = 3: its slots do not fit)
        QT(GbQ4_0I, "q4_0", 14, 2, 1, 1, 2, 3), QT(GbQ8_0I, "q8_0", 16, 2, 1, 1, 4, 3), QT(GbQ4KI, "q4_k", 14, 2, 1, 1, 2, 3),
        QT(GbQ5KI, "q5_k", 14, 2, 1, 1, 2, 3), QT(GbQ6KI, "q6_k", 14, 2, 1, 1, 2, 3),
        // x through shared memory (slots of T tiles), with parts and deeper rings
        QT(GbQ4_0I, "q4_0", 4, 2, 1, 1, 1, 3), QT(GbQ6KI, "q6_k", 4, 3, 1, 1, 2, 2), QT(GbQ4KI, "q4_k", 4, 2, 1, 1, 2, 2),
        QT(GbQ8_0I, "q8_0", 2, 3, 1, 1, 1, 3),
        // split-K (T partial arrays), the magic decode, T = 8
        QT(GbQ4KI, "q4_k", 8, 1, 1, 3, 1, 3), QT(GbQ8_0I, "q8_0", 4, 2, 2, 2, 2, 3), QT(GbQ5KI, "q5_k", 4, 2, 1, 2, 1, 8),
        QT(GbQ4_0, "q4_0", 8, 2, 1, 1, 2, 3), QT(GbQ6K, "q6_k", 4, 2, 2, 1, 1, 3), QT(GbQ4K, "q4_k", 8, 2, 1, 2, 1, 3),
        QT(GbQ5K, "q5_k", 4, 2, 1, 1, 1, 3), QT(GbQ8_0, "q8_0", 4, 3, 1, 1, 1, 3), QT(GbQ6KI, "q6_k", 14, 2, 1, 1, 2, 8),
        DT(GbF32, "f32", 4, 2, 3), DT(GbF16, "f16", 4, 2, 3), DT(GbBF16, "bf16", 4, 2, 3), DT(GbF16, "f16", 3, 3, 8),
        DT(GbF32, "f32", 1, 4, 2),
    };
    const TVariant mma[] = {
        MT(GbQ4_0M, "q4_0", 1, 2, 3), MT(GbQ8_0M, "q8_0", 2, 2, 3), MT(GbQ4KM, "q4_k", 1, 2, 3),
        MT(GbQ5KM, "q5_k", 1, 3, 3), MT(GbQ6KM, "q6_k", 2, 2, 3),
        MT(GbQ4_0M, "q4_0", 1, 2, 8), MT(GbQ6KM, "q6_k", 1, 3, 5), MT(GbQ4KM, "q4_k", 2, 2, 2), MT(GbQ8_0M, "q8_0", 1, 2, 8),
        MT(GbQ5KM, "q5_k", 1, 2, 8),
    };
    printf("scalar and dense paths: one-hot x rows\n");
    for (const TVariant& v : scalar) {
        const gb_format* f = gb_format_find(v.fmt);
        check_exact_t(v, 5, f->qk == 256 ? 512 : f->qk == 32 ? 96 : 40);
    }
    printf("scalar and dense paths: x rows vs FP64 and vs T=1 runs\n");
    for (const TVariant& v : scalar) {
        const gb_format* f = gb_format_find(v.fmt);
        const gb_u32 ks256[] = {256, 1280, 3072, 5120}, ks32[] = {32, 288, 1056, 3104}, ks1[] = {8, 264, 1000, 2816};
        const gb_u32* ks = f->qk == 256 ? ks256 : f->qk == 32 ? ks32 : ks1;
        for (gb_u32 m : {1u, 7u, 37u}) for (int i = 0; i < 4; i++) check_rows_t(v, m, ks[i]);
    }
    printf("scalar and dense paths: worst relative row error %.3g\n", worst_seen);
    worst_seen = 0;
    printf("tensor-core path (SUBN=%d): one-hot x rows\n", SUBN);
    for (const TVariant& v : mma) check_exact_t(v, 17, gb_format_find(v.fmt)->qk == 256 ? 512 : 96);
    printf("tensor-core path: x rows vs FP64\n");
    for (const TVariant& v : mma) {
        const gb_format* f = gb_format_find(v.fmt);
        const gb_u32 ks256[] = {256, 1280, 4096}, ks32[] = {32, 288, 1056};
        const gb_u32* ks = f->qk == 256 ? ks256 : ks32;
        for (gb_u32 m : {1u, 19u, 37u}) for (int i = 0; i < 3; i++) check_rows_t(v, m, ks[i]);
    }
    printf("tensor-core path: worst relative row error %.3g (round-toward-zero model)\n", worst_seen);
    worst_seen = 0;
    mma_round_nearest = true;
    for (const TVariant& v : mma) check_rows_t(v, 37, 1024);
    mma_round_nearest = false;
    printf("tensor-core path: worst relative row error %.3g (one-rounding model)\n", worst_seen);
    printf("%s: %d failures\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
