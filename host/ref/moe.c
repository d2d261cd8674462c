#include "ref_moe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "ref_dequant.h"

/* sum and sum of |.| of w[j] * x[j], j < k (see ref_moe.h for the method). */
static void dot_ref(const float *w, const float *x, uint64_t k, double *dot, double *absdot) {
    double sum = 0.0, comp = 0.0, abs_sum = 0.0;
    for (uint64_t j0 = 0; j0 < k; j0 += 256) {
        const uint64_t j1 = j0 + 256 < k ? j0 + 256 : k;
        double s[4] = {0.0, 0.0, 0.0, 0.0}, a[4] = {0.0, 0.0, 0.0, 0.0};
        uint64_t j = j0;
        for (; j + 4 <= j1; j += 4)
            for (int q = 0; q < 4; q++) {
                const double p = (double)w[j + q] * (double)x[j + q];
                s[q] += p;
                a[q] += fabs(p);
            }
        for (; j < j1; j++) {
            const double p = (double)w[j] * (double)x[j];
            s[0] += p;
            a[0] += fabs(p);
        }
        const double part = (s[0] + s[1]) + (s[2] + s[3]);
        const double t = sum + part;
        comp += fabs(sum) >= fabs(part) ? (sum - t) + part : (part - t) + sum;
        sum = t;
        abs_sum += (a[0] + a[1]) + (a[2] + a[3]);
    }
    *dot = sum + comp;
    *absdot = abs_sum;
}

typedef struct {
    const gb_format *f;
    const unsigned char *stack;
    uint64_t nb02;
    const gb_moe_shape *s;
    const float *x;
    double *y, *absdot;
    const uint64_t *list, *start, *active; /* pairs by expert; the experts with pairs */
} moe_ctx;

/* Rows [lo, hi) of the active experts' rows (expert active[r / n], row r % n)
 * for every pair of that expert (gb_ref_parallel_rows). */
static int moe_rows(void *ctx, uint64_t lo, uint64_t hi, float *row, gb_err *e) {
    const moe_ctx *c = ctx;
    const gb_moe_shape *s = c->s;
    for (uint64_t r = lo; r < hi; r++) {
        const uint64_t ex = c->active[r / s->n], i = r % s->n;
        if (gb_ref_dequant_row(c->f, c->stack + ex * c->nb02, s->n, s->k, i, row, e) != 0) return -1;
        for (uint64_t q = c->start[ex]; q < c->start[ex + 1]; q++) {
            const uint64_t p = c->list[q], t = p / s->top_k, sl = p % s->top_k;
            dot_ref(row, c->x + t * s->outer + sl * s->inner, s->k, &c->y[p * s->n + i], &c->absdot[p * s->n + i]);
        }
    }
    return 0;
}

int gb_ref_moe_gemv(const gb_format *f, const void *stack, size_t stack_bytes, const gb_moe_shape *s,
                    const int32_t *ids, const float *x, uint64_t x_len, double *y, double *absdot,
                    gb_err *e) {
    if (f->layout != GB_LAYOUT_BLOCKS)
        return GB_FAIL(e, "moe_gemv failed: BAD_FORMAT (%s is not a GGML block format)", f->name);
    if (s->experts < 1 || s->n < 1 || s->k < 1 || s->top_k < 1)
        return GB_FAIL(e, "moe_gemv failed: BAD_SHAPE (experts, n, k and top_k must be positive)");
    uint64_t nb02;
    if (gb_format_matrix_bytes(f, s->n, s->k, &nb02, e) != 0) return -1;
    if (nb02 > UINT64_MAX / s->experts || (uint64_t)stack_bytes != nb02 * s->experts)
        return GB_FAIL(e,
                       "moe_gemv failed: BAD_SIZE (a stack of %llu %s experts of %llu x %llu takes %llu "
                       "bytes, got %zu)",
                       (unsigned long long)s->experts, f->name, (unsigned long long)s->n,
                       (unsigned long long)s->k, (unsigned long long)(nb02 * s->experts), stack_bytes);
    for (uint64_t p = 0; p < s->pairs; p++) {
        if (ids[p] < 0 || (uint64_t)ids[p] >= s->experts)
            return GB_FAIL(e, "moe_gemv failed: BAD_ID (pair %llu has expert %d, the stack has 0..%llu)",
                           (unsigned long long)p, (int)ids[p], (unsigned long long)(s->experts - 1));
        const uint64_t t = p / s->top_k, sl = p % s->top_k;
        const uint64_t off = t * s->outer + sl * s->inner;
        if (off > x_len || x_len - off < s->k)
            return GB_FAIL(e,
                           "moe_gemv failed: BAD_SIZE (pair %llu reads x[%llu .. %llu], x has %llu floats)",
                           (unsigned long long)p, (unsigned long long)off,
                           (unsigned long long)(off + s->k - 1), (unsigned long long)x_len);
    }
    if (s->k > SIZE_MAX / sizeof(float))
        return GB_FAIL(e, "moe_gemv failed: OVERFLOW (k=%llu is too large)", (unsigned long long)s->k);
    /* the pairs grouped by expert (pair order kept within an expert) and
     * the experts that have pairs: rows of those experts are the work */
    uint64_t *list = malloc((size_t)(s->pairs ? s->pairs : 1) * sizeof(uint64_t));
    uint64_t *start = calloc((size_t)s->experts + 1, sizeof(uint64_t));
    uint64_t *active = malloc((size_t)s->experts * sizeof(uint64_t));
    if (!list || !start || !active) {
        free(list);
        free(start);
        free(active);
        return GB_FAIL(e, "moe_gemv failed: OUT_OF_MEMORY (%llu pairs, %llu experts)",
                       (unsigned long long)s->pairs, (unsigned long long)s->experts);
    }
    for (uint64_t p = 0; p < s->pairs; p++) start[ids[p] + 1]++;
    for (uint64_t ex = 0; ex < s->experts; ex++) start[ex + 1] += start[ex];
    uint64_t n_active = 0;
    for (uint64_t ex = 0; ex < s->experts; ex++)
        if (start[ex + 1] > start[ex]) active[n_active++] = ex;
    {
        uint64_t *fill = malloc((size_t)s->experts * sizeof(uint64_t));
        if (!fill) {
            free(list);
            free(start);
            free(active);
            return GB_FAIL(e, "moe_gemv failed: OUT_OF_MEMORY (%llu experts)", (unsigned long long)s->experts);
        }
        memcpy(fill, start, (size_t)s->experts * sizeof(uint64_t));
        for (uint64_t p = 0; p < s->pairs; p++) list[fill[ids[p]]++] = p;
        free(fill);
    }
    moe_ctx c = {f, stack, nb02, s, x, y, absdot, list, start, active};
    /* rows of active experts; at least ~1M multiply-adds per thread */
    const uint64_t per_row = s->k * (s->pairs / (n_active ? n_active : 1) + 1);
    const int rc = gb_ref_parallel_rows("moe_gemv", n_active * s->n, 1 + (1u << 20) / per_row, (size_t)s->k,
                                        moe_rows, &c, e);
    free(list);
    free(start);
    free(active);
    return rc;
}

void gb_ref_swiglu(const double *g, const double *ag, const double *u, const double *au, uint64_t count,
                   double *out, double *scale) {
    for (uint64_t i = 0; i < count; i++) {
        const double sig = 1.0 / (1.0 + exp(-g[i]));
        const double silu = g[i] * sig;
        const double dsilu = sig * (1.0 + g[i] * (1.0 - sig)); /* d silu / dg */
        out[i] = silu * u[i];
        /* f32 holds no silu(g) below g ~ -88 (e^-g overflows, the kernel gets
         * +-0): the last term admits that, under the first two elsewhere */
        scale[i] = fabs(dsilu * u[i]) * ag[i] + fabs(silu) * au[i] + fabs(g[i] * u[i]) * 0x1p-96;
    }
}
