#include "random_fill.h"

#include <string.h>

#include "parallel.h"

/* Elements per chunk: even, so that a normal fill's chunk starts on a
 * Box-Muller pair; every element of every fill then takes exactly one draw
 * (uniform, u8) or a pair takes two (normal), so element i starts at draw i. */
enum { CHUNK = 1 << 18 };

typedef struct {
    unsigned char *out;
    size_t n, elem;
    gb_dtype dt;
    gb_dist dist;
    double a, b;
    gb_rng start, end; /* end: the state after the last element (written by the last chunk's thread) */
    uint64_t chunks;
} fill_ctx;

static int fill_rows(void *vctx, uint64_t lo, uint64_t hi, float *row, gb_err *e) {
    (void)row, (void)e;
    fill_ctx *c = vctx;
    gb_rng r = c->start;
    gb_rng_advance(&r, lo * (uint64_t)CHUNK);
    const size_t first = (size_t)lo * CHUNK, last = hi == c->chunks ? c->n : (size_t)hi * CHUNK;
    gb_random_fill(c->out + first * c->elem, last - first, c->dt, c->dist, c->a, c->b, &r);
    if (hi == c->chunks) c->end = r;
    return 0;
}

int gb_ref_random_fill(void *out, size_t n, gb_dtype dt, gb_dist dist, double a, double b, gb_rng *r,
                       gb_err *e) {
    const uint64_t chunks = (n + CHUNK - 1) / CHUNK;
    if (chunks < 2 || gb_ref_threads(chunks, 1) < 2) {
        gb_random_fill(out, n, dt, dist, a, b, r);
        return 0;
    }
    const size_t elem = gb_dtype_size(dt);
    unsigned char *p = out;
    gb_rng start = *r;
    if (dist == GB_DIST_NORMAL && dt != GB_DT_U8 && start.have_spare) {
        /* the spare of an earlier fill is this one's first element */
        gb_random_fill(p, 1, dt, dist, a, b, &start);
        p += elem, n -= 1;
    }
    fill_ctx c = {.out = p, .n = n, .elem = elem, .dt = dt, .dist = dist, .a = a, .b = b, .start = start,
                  .chunks = (n + CHUNK - 1) / CHUNK};
    if (gb_ref_parallel_rows("random_fill", c.chunks, 1, 0, fill_rows, &c, e) != 0) return -1;
    *r = c.end;
    return 0;
}
