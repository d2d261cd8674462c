/* The FP64 reference of the mixture-of-experts GEMV (experiments/moe_scaling.lua,
 * docs/kernels/moe.md).
 *
 * A stack holds `experts` matrices of n x k weights of a GGML block format
 * (docs/FORMATS.md), expert e at byte e * n * row_bytes (ferrum's nb02; rows
 * row_bytes = k / QK * block_bytes apart, its nb01). Pair p = t * top_k + s
 * (token t, slot s) of `pairs` uses expert ids[p] and the activation row of k
 * floats at x + t * outer + s * inner (ferrum's two-stride walk), and its n
 * outputs are y[p * n .. p * n + n - 1]. */
#ifndef GPUBENCH_REF_MOE_H
#define GPUBENCH_REF_MOE_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "formats.h"

typedef struct gb_moe_shape {
    uint64_t experts, n, k; /* the stack: experts matrices of n x k */
    uint64_t pairs, top_k;  /* pairs = m * top_k (any count; the last token may be partial) */
    uint64_t outer, inner;  /* floats between tokens' and slots' activation rows */
} gb_moe_shape;

/* y[p * n + i] = sum_j w_e[i][j] x_p[j] and absdot = sum_j |w_e[i][j] x_p[j]|
 * (the scale a row's error is judged against, gb_ref_check_rows), for every
 * pair: the weights decoded exactly (gb_ref_dequant_row), each product exact
 * in double, summed in double (four running sums per 256 products, the
 * partial sums added with Neumaier compensation: the sum's own error stays
 * below 1e-14 of absdot). Each expert's row is decoded once for all the
 * pairs that use it. Fails on a stack of the wrong size, an id outside
 * 0 .. experts-1 (naming the pair), or an activation row past x_len floats. */
int gb_ref_moe_gemv(const gb_format *f, const void *stack, size_t stack_bytes, const gb_moe_shape *s,
                    const int32_t *ids, const float *x, uint64_t x_len, double *y, double *absdot,
                    gb_err *e);

/* SwiGLU of two references: out = silu(g) * u with silu(g) = g / (1 + e^-g),
 * and scale = |silu'(g) u| ag + |silu(g)| au + |g u| 2^-96: the first-order
 * bound of out's error for errors of g and u bounded by tol * ag and tol * au
 * (ag, au: their absdot), so a fused kernel is judged by
 * |out - ref| <= tol * scale; the last term covers silu(g) below f32's range
 * (g below about -88, where an f32 e^-g overflows and the result is +-0:
 * with tol = 1e-4 it admits errors below e^-75 |g u|). */
void gb_ref_swiglu(const double *g, const double *ag, const double *u, const double *au, uint64_t count,
                   double *out, double *scale);

#endif
