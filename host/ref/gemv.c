#include "ref_gemv.h"

#include <math.h>
#include <stdlib.h>

#include "parallel.h"
#include "ref_dequant.h"

typedef struct {
    const gb_format *f;
    const void *w;
    uint64_t m, k, tokens;
    const float *x;
    double *y, *absdot;
} gemv_ctx;

/* Rows [lo, hi) of y and absdot for every token (gb_ref_parallel_rows). */
static int gemv_rows(void *ctx, uint64_t lo, uint64_t hi, float *row, gb_err *e) {
    const gemv_ctx *c = ctx;
    for (uint64_t i = lo; i < hi; i++) {
        if (gb_ref_dequant_row(c->f, c->w, c->m, c->k, i, row, e) != 0) return -1;
        for (uint64_t tk = 0; tk < c->tokens; tk++) {
            const float *x = c->x + tk * c->k;
            /* Each product of two floats is exact in double; Neumaier summation
             * keeps the sum's own rounding error out of the reference. */
            double sum = 0.0, comp = 0.0, abs_sum = 0.0;
            for (uint64_t j = 0; j < c->k; j++) {
                double p = (double)row[j] * (double)x[j];
                double t = sum + p;
                comp += fabs(sum) >= fabs(p) ? (sum - t) + p : (p - t) + sum;
                sum = t;
                abs_sum += fabs(p);
            }
            c->y[tk * c->m + i] = sum + comp;
            c->absdot[tk * c->m + i] = abs_sum;
        }
    }
    return 0;
}

int gb_ref_gemv(const gb_format *f, const void *w, size_t wbytes, uint64_t m, uint64_t k,
                const float *x, double *y, double *absdot, gb_err *e) {
    return gb_ref_gemv_tokens(f, w, wbytes, m, k, x, 1, y, absdot, e);
}

int gb_ref_gemv_tokens(const gb_format *f, const void *w, size_t wbytes, uint64_t m, uint64_t k,
                       const float *x, uint64_t tokens, double *y, double *absdot, gb_err *e) {
    uint64_t need;
    if (gb_format_matrix_bytes(f, m, k, &need, e) != 0) return -1;
    if ((uint64_t)wbytes != need)
        return GB_FAIL(e,
                       "gemv failed: BAD_SIZE (%s weights of %llu x %llu take %llu bytes, got "
                       "%zu)",
                       f->name, (unsigned long long)m, (unsigned long long)k,
                       (unsigned long long)need, wbytes);
    if (k > SIZE_MAX / sizeof(float))
        return GB_FAIL(e, "gemv failed: OVERFLOW (k=%llu is too large)", (unsigned long long)k);
    if (tokens < 1) return GB_FAIL(e, "gemv failed: BAD_SIZE (tokens must be at least 1)");
    gemv_ctx c = {f, w, m, k, tokens, x, y, absdot};
    /* at least ~1M multiply-adds per thread: smaller calls stay on one */
    return gb_ref_parallel_rows("gemv", m, 1 + (1u << 20) / k, (size_t)k, gemv_rows, &c, e);
}

void gb_ref_check_rows(const float *y, const double *ref, const double *absdot, uint64_t m,
                       double tol, gb_row_check *out) {
    out->failures = 0;
    out->worst_row = 0;
    out->worst_rel = 0.0;
    for (uint64_t i = 0; i < m; i++) {
        double err = fabs((double)y[i] - ref[i]);
        double rel = absdot[i] > 0.0 ? err / absdot[i] : err;
        /* NaN compares false with everything, so it is mapped to +Inf before
         * the comparisons instead of slipping through them. */
        if (!isfinite(y[i]) || isnan(rel)) rel = INFINITY;
        if (rel > tol) out->failures++;
        if (rel > out->worst_rel || (i == 0)) {
            out->worst_rel = rel;
            out->worst_row = i;
        }
    }
}
