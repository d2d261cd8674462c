/* gb_random_fill over several threads, the same bytes and the same final
 * generator state as one thread's fill: each thread advances a copy of the
 * generator to its first element (gb_rng_advance) and fills its chunk with
 * the sequential code. Large dense weights (f32, f16, bf16 at 131072x5120)
 * took most of a GEMV table's preparation on one thread. */
#ifndef GPUBENCH_REF_RANDOM_FILL_H
#define GPUBENCH_REF_RANDOM_FILL_H
#include <stddef.h>

#include "backend.h"
#include "random.h"

/* As gb_random_fill(out, n, dt, dist, a, b, r); returns 0, or -1 with e set
 * (out of memory or threads), in which case r is unchanged. */
int gb_ref_random_fill(void *out, size_t n, gb_dtype dt, gb_dist dist, double a, double b, gb_rng *r, gb_err *e);
#endif
