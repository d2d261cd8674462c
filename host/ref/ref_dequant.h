/* Reference dequantization of every weight format to f32, bit exact per
 * docs/FORMATS.md: the values a GPU kernel's decode must reproduce. */
#ifndef GPUBENCH_REF_DEQUANT_H
#define GPUBENCH_REF_DEQUANT_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "formats.h"

/* Dequantizes nbytes of consecutive blocks into out (nbytes / block_bytes * qk
 * floats). Fails (BAD_SIZE) when nbytes is not a whole number of blocks. */
int gb_ref_dequantize(const gb_format *f, const void *src, size_t nbytes, float *out, gb_err *e);

/* Dequantizes row `row` (0-based) of an m x k matrix w into out (k floats).
 * The matrix is addressed as a whole so that formats stored as planes over
 * all rows can serve rows too. m, k must be valid (gb_format_matrix_bytes). */
int gb_ref_dequant_row(const gb_format *f, const void *w, uint64_t m, uint64_t k, uint64_t row,
                       float *out, gb_err *e);

#endif
