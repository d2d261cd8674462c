/* Random valid blocks: deterministic per seed, every fp16 scale in
 * [2^-12, 2^-3) with both signs, payload bytes that vary, plain elements
 * normal with standard deviation 1 and never NaN/Inf. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "formats.h"
#include "ref_blocks.h"
#include "ref_dequant.h"

enum { NBLOCKS = 4096 };

static uint8_t *blocks(const gb_format *f, uint64_t n, uint64_t seed) {
    uint8_t *p = malloc(n * f->block_bytes);
    gb_err e = {0};
    if (!p) return NULL;
    int rc = gb_ref_random_blocks(f, n, seed, p, &e);
    CHECK(rc == 0, "random_blocks %s: %s", f->name, e.msg ? e.msg : "?");
    gb_err_clear(&e);
    return p;
}

static void test_determinism(const gb_format *f) {
    size_t bytes = (size_t)64 * f->block_bytes;
    uint8_t *a = blocks(f, 64, 42), *b = blocks(f, 64, 42), *c = blocks(f, 64, 43);
    uint8_t *prefix = blocks(f, 7, 42);
    if (!a || !b || !c || !prefix) {
        CHECK(0, "out of memory");
    } else {
        CHECK(memcmp(a, b, bytes) == 0, "%s: seed 42 twice gave different bytes", f->name);
        CHECK(memcmp(a, c, bytes) != 0, "%s: seeds 42 and 43 gave the same bytes", f->name);
        /* Fewer blocks from the same seed are a prefix of more. */
        CHECK(memcmp(a, prefix, (size_t)7 * f->block_bytes) == 0,
              "%s: 7 blocks are not a prefix "
              "of 64 from the same seed",
              f->name);
    }
    free(a);
    free(b);
    free(c);
    free(prefix);
}

/* fp16 scale fields: magnitude bits in [0x0C00, 0x3000), i.e. exponent field 3..11 (normal
 * numbers 2^-12 .. 2^-3 exclusive), and both signs over many blocks. Payload fields vary. */
static void test_fields(const gb_format *f) {
    uint8_t *p = blocks(f, NBLOCKS, 7);
    if (!p) {
        CHECK(0, "out of memory");
        return;
    }
    for (int i = 0; i < f->nfields; i++) {
        const gb_field *fd = &f->fields[i];
        if (fd->kind == GB_FIELD_F16_SCALE) {
            int bad = 0, neg = 0, low = 0, high = 0;
            for (int b = 0; b < NBLOCKS; b++) {
                const uint8_t *s = p + (size_t)b * f->block_bytes + fd->offset;
                unsigned h = s[0] | (s[1] << 8), mag = h & 0x7fff;
                bad += mag < 0x0C00 || mag >= 0x3000;
                neg += h >> 15;
                low += mag < 0x1000;   /* below 2^-11: the bottom binade is reached */
                high += mag >= 0x2C00; /* at least 2^-4: the top binade is reached */
            }
            CHECK(bad == 0, "%s.%s: %d scales outside [2^-12, 2^-3)", f->name, fd->name, bad);
            CHECK(neg > NBLOCKS / 4 && neg < 3 * NBLOCKS / 4, "%s.%s: %d of %d scales negative",
                  f->name, fd->name, neg, NBLOCKS);
            CHECK(low > 0 && high > 0, "%s.%s: range not covered (%d low, %d high)", f->name,
                  fd->name, low, high);
        } else if (fd->kind == GB_FIELD_PAYLOAD) {
            int seen[256] = {0}, distinct = 0, constant_blocks = 0;
            for (int b = 0; b < NBLOCKS; b++) {
                const uint8_t *s = p + (size_t)b * f->block_bytes + fd->offset;
                int same = 1;
                for (unsigned j = 0; j < fd->size; j++) {
                    distinct += !seen[s[j]]++;
                    same &= s[j] == s[0];
                }
                constant_blocks += same;
            }
            CHECK(distinct == 256, "%s.%s: only %d distinct byte values", f->name, fd->name,
                  distinct);
            CHECK(constant_blocks == 0, "%s.%s: %d blocks with constant payload", f->name, fd->name,
                  constant_blocks);
        }
    }
    /* Decoded, no block holds NaN or Inf. */
    float *v = malloc((size_t)NBLOCKS * f->qk * sizeof(float));
    gb_err e = {0};
    if (v && gb_ref_dequantize(f, p, (size_t)NBLOCKS * f->block_bytes, v, &e) == 0) {
        int nonfinite = 0;
        double sum = 0, sum2 = 0;
        size_t n = (size_t)NBLOCKS * f->qk;
        for (size_t i = 0; i < n; i++) {
            nonfinite += !isfinite(v[i]);
            sum += v[i];
            sum2 += (double)v[i] * v[i];
        }
        CHECK(nonfinite == 0, "%s: %d non-finite values", f->name, nonfinite);
        if (f->qk == 1) {
            /* Plain elements: normal, mean 0, standard deviation 1 (4096 samples:
             * standard error of the mean 0.016, of the std about 0.011). */
            double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
            CHECK(fabs(mean) < 0.08 && fabs(sd - 1.0) < 0.06, "%s: mean %g sd %g", f->name, mean,
                  sd);
        }
    } else {
        CHECK(0, "%s: dequantize failed: %s", f->name, e.msg ? e.msg : "out of memory");
    }
    gb_err_clear(&e);
    free(v);
    free(p);
}

static void test_scale_draw(void) {
    /* The scale draw alone, over many draws: all nine binades and both signs appear. */
    gb_rng r;
    gb_rng_seed(&r, 1);
    int binade[32] = {0}, sign[2] = {0};
    for (int i = 0; i < 9000; i++) {
        uint16_t h = gb_ref_random_scale_f16(&r);
        binade[(h >> 10) & 31]++;
        sign[h >> 15]++;
    }
    for (int ex = 0; ex < 32; ex++) {
        int want = ex >= 3 && ex <= 11;
        CHECK(want ? binade[ex] > 500 : binade[ex] == 0, "exponent field %d drawn %d times", ex,
              binade[ex]);
    }
    CHECK(sign[0] > 4000 && sign[1] > 4000, "signs %d / %d", sign[0], sign[1]);
}

int main(void) {
    for (int i = 0; i < gb_format_count(); i++) {
        test_determinism(gb_format_at(i));
        test_fields(gb_format_at(i));
    }
    test_scale_draw();
    return check_finish("test_ref_blocks");
}
