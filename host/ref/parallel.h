/* The rows of an FP64 reference computed by several threads. Each output is
 * still computed by one thread with the sequential code, so the result is
 * bit-identical to a single-threaded run whatever the thread count: only the
 * wall time changes. The references are most of the experiments' host time
 * (linear_suite's checks, moe_scaling's expert stacks, swiglu_ab's shapes).
 *
 * Threads: the online CPUs, capped by $GPUBENCH_THREADS (1: none started),
 * and so that each takes at least min_rows rows. */
#ifndef GPUBENCH_REF_PARALLEL_H
#define GPUBENCH_REF_PARALLEL_H
#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* Computes rows [lo, hi) with row, a scratch buffer of row_floats floats of
 * its own; returns 0, or -1 with e set. */
typedef int (*gb_rows_fn)(void *ctx, uint64_t lo, uint64_t hi, float *row, gb_err *e);

/* Splits rows [0, n) into contiguous chunks, one per thread, and runs fn on
 * each. On failure returns -1 with the error of the lowest failing chunk
 * (the one a sequential run would have met first). what names the caller in
 * an out-of-memory or thread error ("linear", "gemv", ...). */
int gb_ref_parallel_rows(const char *what, uint64_t n, uint64_t min_rows, size_t row_floats, gb_rows_fn fn,
                         void *ctx, gb_err *e);

/* The thread count a call of n rows (at least min_rows each) would use. */
unsigned gb_ref_threads(uint64_t n, uint64_t min_rows);
#endif
