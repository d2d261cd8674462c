/* The FP64 reference of the Linear call and its accuracy check (docs/LINEAR.md). */
#include <math.h>
#include <stdlib.h>

#include "random.h"
#include "parallel.h"
#include "ref_planar.h"

typedef struct {
    const gb_planar_format *f;
    const void *w;
    size_t wbytes;
    uint64_t n, k;
    float gscale;
    const uint16_t *x;
    uint64_t t;
    double *r, *s;
} linear_ctx;

/* Rows [lo, hi) of r and s (gb_ref_parallel_rows). */
static int linear_rows(void *ctx, uint64_t lo, uint64_t hi, float *row, gb_err *e) {
    const linear_ctx *c = ctx;
    const uint64_t n = c->n, k = c->k;
    for (uint64_t i = lo; i < hi; i++) {
        if (gb_ref_planar_dequant_row(c->f, c->w, c->wbytes, n, k, c->gscale, i, row, e) != 0) return -1;
        for (uint64_t tt = 0; tt < c->t; tt++) {
            const uint16_t *xr = c->x + tt * k;
            /* An fp32 weight times a bf16 x has at most 24 + 8 significant
             * bits: exact in double. Neumaier summation keeps the sum's own
             * rounding out of the reference, as gemv.c does. */
            double sum = 0.0, comp = 0.0, sq = 0.0;
            for (uint64_t j = 0; j < k; j++) {
                double p = (double)row[j] * (double)gb_bf16_to_f32(xr[j]);
                double u = sum + p;
                comp += fabs(sum) >= fabs(p) ? (sum - u) + p : (p - u) + sum;
                sum = u;
                sq += p * p;
            }
            c->r[tt * n + i] = sum + comp;
            c->s[tt * n + i] = sqrt(sq);
        }
    }
    return 0;
}

int gb_ref_linear(const gb_planar_format *f, const void *w, size_t wbytes, uint64_t n, uint64_t k,
                  float gscale, const uint16_t *x, size_t x_elems, uint64_t t, double *r, double *s,
                  gb_err *e) {
    gb_planar_layout l;
    if (gb_planar_check_weights("linear", f, w, wbytes, n, k, gscale, &l, e) != 0) return -1;
    if (t == 0) return GB_FAIL(e, "linear failed: BAD_T (%s: t must be positive)", f->name);
    if (!x || !r || !s) return GB_FAIL(e, "linear failed: BAD_ARGUMENT (x, r and s are required)");
    if (t > SIZE_MAX / k || (uint64_t)x_elems < t * k)
        return GB_FAIL(e,
                       "linear failed: BAD_SIZE (x of t=%llu rows of k=%llu takes %llu bf16 "
                       "values, the buffer holds %zu)",
                       (unsigned long long)t, (unsigned long long)k,
                       (unsigned long long)(t > SIZE_MAX / k ? 0 : t * k), x_elems);
    if (t > SIZE_MAX / sizeof(double) / n)
        return GB_FAIL(e, "linear failed: OVERFLOW (%llu x %llu outputs)", (unsigned long long)t,
                       (unsigned long long)n);
    if (k > SIZE_MAX / sizeof(float))
        return GB_FAIL(e, "linear failed: OVERFLOW (k=%llu is too large)", (unsigned long long)k);
    linear_ctx c = {f, w, wbytes, n, k, gscale, x, t, r, s};
    /* at least ~1M multiply-adds per thread: smaller calls stay on one */
    const uint64_t min_rows = 1 + (1u << 20) / (k * t);
    return gb_ref_parallel_rows("linear", n, min_rows, (size_t)k, linear_rows, &c, e);
}

double gb_ref_linear_bound(double r, double s, gb_weight_rounding w) {
    return 0x1p-8 * fabs(r) + (w == GB_WEIGHTS_BF16 ? 0x1p-6 : 0x1p-7) * s;
}

void gb_ref_check_linear(const uint16_t *y, const double *r, const double *s, uint64_t t,
                         uint64_t n, gb_weight_rounding w, gb_linear_check *out) {
    *out = (gb_linear_check){0};
    for (uint64_t tt = 0; tt < t; tt++)
        for (uint64_t i = 0; i < n; i++) {
            const uint64_t at = tt * n + i;
            const double yv = (double)gb_bf16_to_f32(y[at]);
            const double err = fabs(yv - r[at]), bound = gb_ref_linear_bound(r[at], s[at], w);
            /* Written so that a NaN anywhere fails: NaN compares false. */
            const int ok = isfinite(yv) && err <= bound;
            double ratio = bound > 0.0 ? err / bound : (err > 0.0 ? INFINITY : 0.0);
            if (!ok && !(ratio > 1.0)) ratio = INFINITY; /* a NaN y or r */
            if (!ok) {
                if (!out->has_first) {
                    out->has_first = 1;
                    out->first_t = tt;
                    out->first_n = i;
                    out->first_y = yv;
                    out->first_r = r[at];
                    out->first_bound = bound;
                }
                out->failures++;
            }
            if (ratio > out->worst) {
                out->worst = ratio;
                out->worst_t = tt;
                out->worst_n = i;
            }
        }
}
