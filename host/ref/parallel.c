#include "parallel.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

enum { GB_REF_MAX_THREADS = 256 };

unsigned gb_ref_threads(uint64_t n, uint64_t min_rows) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t t = cpus > 0 ? (uint64_t)cpus : 1;
    const char *v = getenv("GPUBENCH_THREADS");
    if (v && *v) {
        char *end;
        unsigned long cap = strtoul(v, &end, 10);
        if (*end == '\0' && cap >= 1 && cap < t) t = cap; /* an unparsable value is ignored */
    }
    if (min_rows < 1) min_rows = 1;
    const uint64_t by_rows = n / min_rows;
    if (t > by_rows) t = by_rows;
    if (t > GB_REF_MAX_THREADS) t = GB_REF_MAX_THREADS;
    return t < 1 ? 1 : (unsigned)t;
}

typedef struct {
    gb_rows_fn fn;
    void *ctx;
    uint64_t lo, hi;
    size_t row_floats;
    int rc;
    gb_err err;
} chunk;

static void run_chunk(chunk *c) {
    float *row = malloc((c->row_floats ? c->row_floats : 1) * sizeof(float));
    if (!row) {
        c->rc = GB_FAIL(&c->err, "reference failed: OUT_OF_MEMORY (a row of %zu floats)", c->row_floats);
        return;
    }
    c->rc = c->fn(c->ctx, c->lo, c->hi, row, &c->err);
    free(row);
}

static void *thread_main(void *arg) {
    run_chunk(arg);
    return NULL;
}

int gb_ref_parallel_rows(const char *what, uint64_t n, uint64_t min_rows, size_t row_floats, gb_rows_fn fn,
                         void *ctx, gb_err *e) {
    if (n == 0) return 0;
    if (row_floats > SIZE_MAX / sizeof(float))
        return GB_FAIL(e, "%s failed: OVERFLOW (a row of %zu floats)", what, row_floats);
    const unsigned t = gb_ref_threads(n, min_rows);
    chunk *cs = calloc(t, sizeof(chunk));
    pthread_t *ids = calloc(t, sizeof(pthread_t));
    int *started = calloc(t, sizeof(int));
    if (!cs || !ids || !started) {
        free(cs);
        free(ids);
        free(started);
        return GB_FAIL(e, "%s failed: OUT_OF_MEMORY (the state of %u threads)", what, t);
    }
    for (unsigned i = 0; i < t; i++)
        cs[i] = (chunk){.fn = fn, .ctx = ctx, .lo = n * i / t, .hi = n * (i + 1) / t, .row_floats = row_floats};
    /* chunk 0 runs on the calling thread; a chunk whose thread cannot be
     * started runs here too, after the others have started */
    for (unsigned i = 1; i < t; i++) started[i] = pthread_create(&ids[i], NULL, thread_main, &cs[i]) == 0;
    run_chunk(&cs[0]);
    for (unsigned i = 1; i < t; i++) {
        if (started[i]) pthread_join(ids[i], NULL);
        else run_chunk(&cs[i]);
    }
    int rc = 0;
    for (unsigned i = 0; i < t; i++) {
        if (cs[i].rc != 0 && rc == 0) { /* the lowest failing chunk: what a sequential run reports */
            rc = -1;
            gb_err_clear(e);
            e->msg = cs[i].err.msg;
            cs[i].err.msg = NULL;
        }
        gb_err_clear(&cs[i].err);
    }
    free(cs);
    free(ids);
    free(started);
    return rc;
}
