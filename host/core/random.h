/* Deterministic random data for buffers and test inputs, generated in C.
 *
 * xoshiro256** seeded through splitmix64: the same seed gives the same bytes on
 * every machine, whatever the chunking of a fill, because a fill draws from one
 * generator state in element order. */
#ifndef GPUBENCH_RANDOM_H
#define GPUBENCH_RANDOM_H
#include <stddef.h>
#include <stdint.h>

typedef struct gb_rng {
    uint64_t s[4];
    int have_spare; /* Box-Muller yields pairs */
    double spare;
} gb_rng;

void gb_rng_seed(gb_rng *r, uint64_t seed);
uint64_t gb_rng_next(gb_rng *r);
/* The state after k more gb_rng_next calls, in O(log k) (the Box-Muller
 * spare is left as it is): how a fill is split over threads with the same
 * bytes as one thread's (gb_ref_random_fill). */
void gb_rng_advance(gb_rng *r, uint64_t k);
double gb_rng_uniform(gb_rng *r); /* [0, 1) with 53 random bits */
double gb_rng_normal(gb_rng *r);  /* mean 0, standard deviation 1 */

typedef enum gb_dtype { GB_DT_F32, GB_DT_F16, GB_DT_BF16, GB_DT_U8 } gb_dtype;
typedef enum gb_dist { GB_DIST_UNIFORM, GB_DIST_NORMAL } gb_dist;

int gb_dtype_from_name(const char *name, gb_dtype *out); /* "f32","f16","bf16","u8"/"bytes" */
size_t gb_dtype_size(gb_dtype dt);

/* Writes n elements of dt. Uniform draws from [a, b); normal from mean a,
 * standard deviation b. u8 is uniform only, over the integers a..b (both
 * inclusive, within 0..255; 0..255 gives the raw top byte of each draw). */
void gb_random_fill(void *out, size_t n, gb_dtype dt, gb_dist dist, double a, double b,
                    gb_rng *r);

/* IEEE binary16 and bfloat16 conversions, round to nearest even; the widening
 * ones are exact (fp16 subnormals kept). */
uint16_t gb_f32_to_f16(float f);
float gb_f16_to_f32(uint16_t h);
uint16_t gb_f32_to_bf16(float f);
float gb_bf16_to_f32(uint16_t h);
#endif
