/* Random fills over several threads (host/ref/random_fill.c) and the jump
 * they rest on (gb_rng_advance, host/core/random.c): the same bytes and the
 * same generator state afterwards as one thread's gb_random_fill, for every
 * element type and distribution, from a fresh state and from one holding a
 * Box-Muller spare; dense random blocks as block-by-block draws. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "formats.h"
#include "random.h"
#include "random_fill.h"
#include "ref_blocks.h"

enum { CHUNK = 1 << 18 }; /* random_fill.c's chunk: sizes around its multiples */

static int same_state(const gb_rng *a, const gb_rng *b) {
    return memcmp(a->s, b->s, sizeof a->s) == 0 && a->have_spare == b->have_spare &&
           (!a->have_spare || a->spare == b->spare);
}

static void test_advance(void) {
    const uint64_t ks[] = {0, 1, 2, 511, 512, 513, 1000, 4097, 100003, 1u << 20};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        gb_rng a, b;
        gb_rng_seed(&a, 42 + i);
        gb_rng_next(&a); /* not the seeded state itself */
        b = a;
        for (uint64_t j = 0; j < ks[i]; j++) gb_rng_next(&a);
        gb_rng_advance(&b, ks[i]);
        CHECK(same_state(&a, &b), "advance(%llu) is %llu steps", (unsigned long long)ks[i], (unsigned long long)ks[i]);
        CHECK(gb_rng_next(&a) == gb_rng_next(&b), "the next draw after advance(%llu)", (unsigned long long)ks[i]);
    }
}

/* fill n elements both ways from state r0, then compare bytes, states and the next draws */
static void same_fill(const char *what, size_t n, gb_dtype dt, gb_dist dist, double a, double b, const gb_rng *r0) {
    const size_t bytes = n * gb_dtype_size(dt);
    unsigned char *x = malloc(bytes), *y = malloc(bytes);
    gb_rng rs = *r0, rp = *r0;
    gb_random_fill(x, n, dt, dist, a, b, &rs);
    gb_err e = {0};
    const int rc = gb_ref_random_fill(y, n, dt, dist, a, b, &rp, &e);
    CHECK(rc == 0, "%s: %s", what, e.msg ? e.msg : "");
    size_t first = bytes;
    for (size_t i = 0; i < bytes; i++)
        if (x[i] != y[i]) { first = i; break; }
    CHECK(first == bytes, "%s (n=%zu): bytes differ from byte %zu", what, n, first);
    CHECK(same_state(&rs, &rp), "%s (n=%zu): the generator after the fill", what, n);
    CHECK(gb_rng_normal(&rs) == gb_rng_normal(&rp) && gb_rng_normal(&rs) == gb_rng_normal(&rp),
          "%s (n=%zu): the draws after the fill", what, n);
    gb_err_clear(&e);
    free(x);
    free(y);
}

static void test_fills(void) {
    gb_rng fresh, spare;
    gb_rng_seed(&fresh, 7);
    gb_rng_seed(&spare, 8);
    float one;
    gb_random_fill(&one, 1, GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, &spare); /* leaves a spare */
    CHECK(spare.have_spare == 1, "a one-value normal fill keeps the pair's second value");
    const size_t ns[] = {3 * CHUNK + 5, 2 * CHUNK, 2 * CHUNK + 1, CHUNK + 1, 17};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (int s = 0; s < 2; s++) {
            const gb_rng *r0 = s ? &spare : &fresh;
            same_fill(s ? "f32 normal, spare" : "f32 normal", ns[i], GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, r0);
            same_fill(s ? "f16 normal, spare" : "f16 normal", ns[i], GB_DT_F16, GB_DIST_NORMAL, 0.5, 2.0, r0);
            same_fill(s ? "bf16 uniform, spare" : "bf16 uniform", ns[i], GB_DT_BF16, GB_DIST_UNIFORM, -1.0, 1.0, r0);
            same_fill(s ? "f32 uniform, spare" : "f32 uniform", ns[i], GB_DT_F32, GB_DIST_UNIFORM, -3.0, 5.0, r0);
            same_fill(s ? "u8, spare" : "u8", ns[i], GB_DT_U8, GB_DIST_UNIFORM, 0.0, 255.0, r0);
            same_fill(s ? "u8 3..9, spare" : "u8 3..9", ns[i], GB_DT_U8, GB_DIST_UNIFORM, 3.0, 9.0, r0);
        }
}

/* Dense random blocks: what block-by-block drawing (one gb_random_fill per
 * value, the format's field order) gives. */
static void test_dense_blocks(void) {
    const char *names[] = {"f32", "f16", "bf16"};
    const gb_dtype dts[] = {GB_DT_F32, GB_DT_F16, GB_DT_BF16};
    for (int i = 0; i < 3; i++) {
        const gb_format *f = gb_format_find(names[i]);
        const uint64_t nb = 2 * CHUNK + 3;
        const size_t bytes = (size_t)nb * f->block_bytes;
        unsigned char *x = malloc(bytes), *y = malloc(bytes);
        gb_rng r;
        gb_rng_seed(&r, 11);
        for (uint64_t b = 0; b < nb; b++) gb_random_fill(x + b * f->block_bytes, 1, dts[i], GB_DIST_NORMAL, 0.0, 1.0, &r);
        gb_err e = {0};
        CHECK(gb_ref_random_blocks(f, nb, 11, y, &e) == 0, "%s blocks: %s", names[i], e.msg ? e.msg : "");
        CHECK(memcmp(x, y, bytes) == 0, "%s: random_blocks is the block-by-block draws", names[i]);
        gb_err_clear(&e);
        free(x);
        free(y);
    }
}

int main(void) {
    test_advance();
    test_fills();
    setenv("GPUBENCH_THREADS", "1", 1); /* one thread: the plain fill */
    test_fills();
    unsetenv("GPUBENCH_THREADS");
    test_dense_blocks();
    return check_finish("test_random_fill");
}
