/* Random valid blocks of any weight format, for correctness tests and
 * benchmarks (docs/FORMATS.md, "Random test blocks": never test or benchmark on
 * zeros or on one repeated byte, which hide a kernel that skips work).
 *
 * Payload bytes are random; every fp16 scale field is replaced by a random-sign
 * fp16 normal number of magnitude in [2^-12, 2^-3), so no block decodes to
 * NaN/Inf or to values that overflow a GEMV; plain-element formats (f32, f16,
 * bf16) draw normal values of standard deviation 1. Driven by the field list of
 * formats.c, so a new format needs no code here. The same seed gives the same
 * bytes on every machine. */
#ifndef GPUBENCH_REF_BLOCKS_H
#define GPUBENCH_REF_BLOCKS_H

#include <stdint.h>

#include "backend.h"
#include "formats.h"
#include "random.h"

/* The scale range, as fp16 bit patterns of the magnitude: [2^-12, 2^-3). */
enum { GB_REF_SCALE_MIN_BITS = 0x0C00, GB_REF_SCALE_END_BITS = 0x3000 };

/* Fills out with nblocks * f->block_bytes bytes. */
int gb_ref_random_blocks(const gb_format *f, uint64_t nblocks, uint64_t seed, void *out, gb_err *e);

/* One random scale: sign, exponent and mantissa uniform, so magnitudes spread
 * evenly over the nine binades of [2^-12, 2^-3). */
uint16_t gb_ref_random_scale_f16(gb_rng *r);

#endif
