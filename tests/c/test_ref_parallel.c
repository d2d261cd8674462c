/* The references' rows over several threads (host/ref/parallel.c): every row
 * computed once, the lowest failing chunk's error, the thread count's rules,
 * and GEMV, Linear and MoE references bit-identical to one thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "formats.h"
#include "parallel.h"
#include "ref_blocks.h"
#include "ref_gemv.h"
#include "ref_moe.h"
#include "ref_planar.h"

static long cpus(void) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? c : 1;
}

static void test_thread_count(void) {
    unsetenv("GPUBENCH_THREADS");
    const unsigned all = gb_ref_threads(1u << 30, 1);
    CHECK(all == (unsigned)(cpus() < 256 ? cpus() : 256), "unset: %u threads for %ld CPUs", all, cpus());
    CHECK(gb_ref_threads(3, 1) == (cpus() < 3 ? cpus() : 3), "3 rows: at most 3 threads");
    CHECK(gb_ref_threads(100, 60) == 1, "100 rows of at least 60: one thread");
    CHECK(gb_ref_threads(0, 1) == 1, "no rows: one thread");
    setenv("GPUBENCH_THREADS", "1", 1);
    CHECK(gb_ref_threads(1u << 30, 1) == 1, "GPUBENCH_THREADS=1: one thread");
    setenv("GPUBENCH_THREADS", "100000", 1);
    CHECK(gb_ref_threads(1u << 30, 1) == all, "a cap above the CPUs: the CPUs");
    setenv("GPUBENCH_THREADS", "two", 1);
    CHECK(gb_ref_threads(1u << 30, 1) == all, "an unparsable cap is ignored");
    setenv("GPUBENCH_THREADS", "0", 1);
    CHECK(gb_ref_threads(1u << 30, 1) == all, "0 is ignored");
    unsetenv("GPUBENCH_THREADS");
}

typedef struct {
    unsigned char *hits;
    uint64_t fail_from; /* rows from here fail (UINT64_MAX: none) */
    size_t row_floats;
} rows_ctx;

static int mark_rows(void *ctx, uint64_t lo, uint64_t hi, float *row, gb_err *e) {
    rows_ctx *c = ctx;
    row[c->row_floats - 1] = 1.0f; /* the scratch row holds row_floats floats */
    for (uint64_t i = lo; i < hi; i++) {
        if (i >= c->fail_from) return GB_FAIL(e, "row %llu failed", (unsigned long long)i);
        c->hits[i]++;
    }
    return 0;
}

static void test_rows_once_and_errors(void) {
    enum { N = 1001 };
    unsigned char hits[N];
    rows_ctx c = {hits, UINT64_MAX, 7};
    gb_err e = {0};
    memset(hits, 0, sizeof hits);
    CHECK(gb_ref_parallel_rows("test", N, 1, 7, mark_rows, &c, &e) == 0, "%s", e.msg ? e.msg : "");
    int once = 1;
    for (int i = 0; i < N; i++) once &= hits[i] == 1;
    CHECK(once, "every row computed exactly once over %u threads", gb_ref_threads(N, 1));
    CHECK(gb_ref_parallel_rows("test", 0, 1, 7, mark_rows, &c, &e) == 0, "no rows: nothing to do");

    /* rows from 300 on fail: every chunk from the one holding 300 fails, and
     * the message is the lowest one's, as a sequential run would report */
    c.fail_from = 300;
    CHECK(gb_ref_parallel_rows("test", N, 1, 7, mark_rows, &c, &e) == -1, "a failing row fails the call");
    const unsigned t = gb_ref_threads(N, 1);
    uint64_t first = 0;
    for (unsigned i = 0; i < t; i++) {
        const uint64_t lo = (uint64_t)N * i / t, hi = (uint64_t)N * (i + 1) / t;
        if (hi > 300) {
            first = lo > 300 ? lo : 300;
            break;
        }
    }
    char want[64];
    snprintf(want, sizeof want, "row %llu failed", (unsigned long long)first);
    CHECK(e.msg && strncmp(e.msg, want, strlen(want)) == 0, "error %s, expected %s", e.msg ? e.msg : "(none)", want);
    gb_err_clear(&e);
}

/* Runs a reference with GPUBENCH_THREADS=1, then with every CPU. */
#define BOTH_WAYS(call_one, call_all)  \
    do {                               \
        setenv("GPUBENCH_THREADS", "1", 1); \
        call_one;                      \
        unsetenv("GPUBENCH_THREADS");  \
        call_all;                      \
    } while (0)

static void test_bit_identical(void) {
    gb_err e = {0};
    /* GEMV, q4_k 2048 x 2048 */
    {
        const gb_format *f = gb_format_find("q4_k");
        const uint64_t m = 2048, k = 2048, nb = m * k / f->qk;
        CHECK(cpus() == 1 || gb_ref_threads(m, 1 + (1u << 20) / k) > 1, "gemv: the case runs on several threads");
        unsigned char *w = malloc(nb * f->block_bytes);
        float *x = malloc(k * sizeof(float));
        double *y1 = malloc(m * 8), *a1 = malloc(m * 8), *y2 = malloc(m * 8), *a2 = malloc(m * 8);
        CHECK(gb_ref_random_blocks(f, nb, 5, w, &e) == 0, "%s", e.msg ? e.msg : "");
        for (uint64_t j = 0; j < k; j++) x[j] = (float)((j * 37 % 101) - 50) / 17.0f;
        int r1 = 0, r2 = 0;
        BOTH_WAYS(r1 = gb_ref_gemv(f, w, nb * f->block_bytes, m, k, x, y1, a1, &e),
                  r2 = gb_ref_gemv(f, w, nb * f->block_bytes, m, k, x, y2, a2, &e));
        CHECK(r1 == 0 && r2 == 0, "gemv: %s", e.msg ? e.msg : "");
        CHECK(!memcmp(y1, y2, m * 8) && !memcmp(a1, a2, m * 8), "gemv: one thread and %u threads differ",
              gb_ref_threads(m, 1 + (1u << 20) / k));
        free(w), free(x), free(y1), free(a1), free(y2), free(a2);
    }
    /* Linear, Q4G64_F16S 700 x 1024, T = 3 */
    {
        const gb_planar_format *f;
        CHECK(gb_planar_lookup("q4", &f, &e) == 0, "%s", e.msg ? e.msg : "");
        const uint64_t n = 700, k = 1024, t = 3;
        CHECK(cpus() == 1 || gb_ref_threads(n, 1 + (1u << 20) / (k * t)) > 1, "linear: the case runs on several threads");
        gb_planar_layout l;
        CHECK(gb_planar_layout_of(f, n, k, &l, "test", &e) == 0, "%s", e.msg ? e.msg : "");
        unsigned char *w = malloc(l.bytes);
        uint16_t *x = malloc(t * k * 2);
        double *r1 = malloc(t * n * 8), *s1 = malloc(t * n * 8), *r2 = malloc(t * n * 8), *s2 = malloc(t * n * 8);
        CHECK(gb_ref_planar_random(f, n, k, 9, w, l.bytes, &e) == 0, "%s", e.msg ? e.msg : "");
        for (uint64_t j = 0; j < t * k; j++) x[j] = (uint16_t)(0x3C00 + (j * 13 % 200)) ^ (j & 1 ? 0x8000 : 0);
        int q1 = 0, q2 = 0;
        BOTH_WAYS(q1 = gb_ref_linear(f, w, l.bytes, n, k, 1.0f, x, t * k, t, r1, s1, &e),
                  q2 = gb_ref_linear(f, w, l.bytes, n, k, 1.0f, x, t * k, t, r2, s2, &e));
        CHECK(q1 == 0 && q2 == 0, "linear: %s", e.msg ? e.msg : "");
        CHECK(!memcmp(r1, r2, t * n * 8) && !memcmp(s1, s2, t * n * 8), "linear: one thread and many differ");
        free(w), free(x), free(r1), free(s1), free(r2), free(s2);
    }
    /* MoE, q4_k 6 experts of 256 x 1024, 5 tokens x top-3 (one expert unused,
     * one shared by every token) */
    {
        const gb_format *f = gb_format_find("q4_k");
        const uint64_t E = 6, n = 256, k = 1024, top = 3, m = 5, pairs = m * top;
        const uint64_t nb = E * n * k / f->qk;
        unsigned char *w = malloc(nb * f->block_bytes);
        float *x = malloc(m * k * sizeof(float));
        int32_t ids[15] = {0, 1, 2, 0, 3, 4, 0, 1, 3, 0, 2, 4, 0, 3, 1};
        double *y1 = malloc(pairs * n * 8), *a1 = malloc(pairs * n * 8), *y2 = malloc(pairs * n * 8),
               *a2 = malloc(pairs * n * 8);
        CHECK(gb_ref_random_blocks(f, nb, 11, w, &e) == 0, "%s", e.msg ? e.msg : "");
        for (uint64_t j = 0; j < m * k; j++) x[j] = (float)((j * 29 % 97) - 48) / 13.0f;
        CHECK(cpus() == 1 || gb_ref_threads(5 * n, 1 + (1u << 20) / (k * (pairs / 5 + 1))) > 1,
              "moe: the case (5 experts used) runs on several threads");
        gb_moe_shape s = {.experts = E, .n = n, .k = k, .pairs = pairs, .top_k = top, .outer = k, .inner = 0};
        int q1 = 0, q2 = 0;
        BOTH_WAYS(q1 = gb_ref_moe_gemv(f, w, nb * f->block_bytes, &s, ids, x, m * k, y1, a1, &e),
                  q2 = gb_ref_moe_gemv(f, w, nb * f->block_bytes, &s, ids, x, m * k, y2, a2, &e));
        CHECK(q1 == 0 && q2 == 0, "moe: %s", e.msg ? e.msg : "");
        CHECK(!memcmp(y1, y2, pairs * n * 8) && !memcmp(a1, a2, pairs * n * 8), "moe: one thread and many differ");
        /* and pair 4 (token 1, slot 1: expert 3) is row-by-row the GEMV of expert 3 on token 1 */
        double *g = malloc(n * 8), *ga = malloc(n * 8);
        const size_t nb02 = n * k / f->qk * f->block_bytes;
        CHECK(gb_ref_gemv(f, w + 3 * nb02, nb02, n, k, x + k, g, ga, &e) == 0, "%s", e.msg ? e.msg : "");
        int same = 1;
        for (uint64_t i = 0; i < n; i++) same &= g[i] == y2[4 * n + i] || (g[i] - y2[4 * n + i]) * (g[i] - y2[4 * n + i]) < 1e-20 * ga[i] * ga[i];
        CHECK(same, "moe pair 4 against the GEMV of its expert");
        free(g), free(ga);
        free(w), free(x), free(y1), free(a1), free(y2), free(a2);
    }
    gb_err_clear(&e);
}

int main(void) {
    test_thread_count();
    test_rows_once_and_errors();
    test_bit_identical();
    return check_finish("test_ref_parallel");
}
