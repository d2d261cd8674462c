/* The FP64 GEMV oracle and the per-row check a GPU result is judged by.
 *
 * y[i] = sum_j w_ij * x_j is accumulated in double from the reference f32
 * weights (dequant.c), so it is exact to double rounding and independent
 * of any kernel's summation order. absdot[i] = sum_j |w_ij * x_j| is the scale
 * a row's error is measured against: a GPU's fp32 accumulation error grows with
 * it, not with |y|, which cancellation can make arbitrarily small. */
#ifndef GPUBENCH_REF_GEMV_H
#define GPUBENCH_REF_GEMV_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "formats.h"

/* w is an m x k matrix of format f taking exactly wbytes bytes; x holds k
 * floats; y and absdot receive m doubles. Fails on sizes that do not match. */
int gb_ref_gemv(const gb_format *f, const void *w, size_t wbytes, uint64_t m, uint64_t k,
                const float *x, double *y, double *absdot, gb_err *e);

/* The same for tokens rows of x (x: tokens x k floats, y and absdot: tokens x
 * m doubles, token-major): each weight row is decoded once for all of them,
 * and every output is the bits gb_ref_gemv gives for its row of x. */
int gb_ref_gemv_tokens(const gb_format *f, const void *w, size_t wbytes, uint64_t m, uint64_t k,
                       const float *x, uint64_t tokens, double *y, double *absdot, gb_err *e);

typedef struct gb_row_check {
    uint64_t failures;  /* rows whose error is above tol, NaN/Inf rows included */
    uint64_t worst_row; /* 0-based row with the largest error */
    double worst_rel;   /* its error: |y - ref| / absdot, or |y - ref| where absdot is 0;
                           +Inf for a non-finite y */
} gb_row_check;

/* Judges m computed rows y against the oracle: row i fails when
 * |y[i] - ref[i]| / absdot[i] > tol (absolute error when absdot[i] is 0), or
 * when y[i] is NaN or infinite. m may be 0 (nothing fails, worst_rel 0). */
void gb_ref_check_rows(const float *y, const double *ref, const double *absdot, uint64_t m,
                       double tol, gb_row_check *out);

#endif
