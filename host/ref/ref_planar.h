/* The planar group formats (docs/FORMATS.md, "Planar group formats") and the
 * FP64 reference of the Linear call y[T, N] = x[T, K] · W[N, K]ᵀ
 * (docs/LINEAR.md): the formats' descriptors and plane layout, random valid
 * weights, the exact decoder, the FP64 reference and its accuracy check.
 *
 * formats.c's table holds the GGML block formats only, so the planar formats
 * are described here, each with a gb_format (layout PLANAR, qk = G, k_pad =
 * 128, one field per plane with its bytes per group) that gb_format_row_bytes
 * and gb_format_matrix_bytes size; BF16 is the plain bf16 layout (not padded).
 *
 * A weights buffer `w` of `wbytes` bytes holds the planes back to back from
 * offset 0; it may be larger than the weight bytes (a buffer rounded up for
 * whole-word copies), never smaller. */
#ifndef GPUBENCH_REF_PLANAR_H
#define GPUBENCH_REF_PLANAR_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "formats.h"

typedef enum gb_planar_id {
    GB_PLANAR_Q4G64_F16S,
    GB_PLANAR_Q5G64_F16S,
    GB_PLANAR_Q6G64_F16S,
    GB_PLANAR_W8G32_F16S,
    GB_PLANAR_NVFP4,
    GB_PLANAR_BF16,
    GB_PLANAR_COUNT
} gb_planar_id;

typedef enum gb_planar_scale {
    GB_PLANAR_SCALE_NONE, /* BF16 */
    GB_PLANAR_SCALE_F16,  /* the _F16S formats: one fp16 per group */
    GB_PLANAR_SCALE_E4M3  /* NVFP4: one E4M3 byte per group, times the tensor scale */
} gb_planar_scale;

typedef struct gb_planar_format {
    gb_planar_id id;
    const char *name;   /* the format's name in docs/FORMATS.md: "Q4G64_F16S" */
    const char *qtype;  /* the Linear route tables' name: "q4", "q5", "q6", "w8", "nvfp4", "bf16" */
    gb_format geom;     /* sizes (gb_format_row_bytes/matrix_bytes) and the planes, as fields */
    unsigned code_bits; /* 4, 5, 6, 8 (W8: signed), 4 (NVFP4: E2M1); 16 for BF16 */
    int code_offset;    /* value = (c - code_offset) * s for Q4/Q5/Q6/W8 */
    uint8_t zero_code;  /* the code written in the padding: its value is 0 */
    gb_planar_scale scale; /* the kind of the last plane */
} gb_planar_format;

int gb_planar_count(void);
const gb_planar_format *gb_planar_at(int i); /* NULL when out of range */
/* By table name ("Q4G64_F16S") or qtype ("q4"), exact case; NULL when unknown. */
const gb_planar_format *gb_planar_find(const char *name);
/* As gb_planar_find, with an error listing the known names. */
int gb_planar_lookup(const char *name, const gb_planar_format **out, gb_err *e);

enum { GB_PLANAR_MAX_PLANES = 3 };

typedef struct gb_planar_plane {
    const char *name;   /* "codes", "high", "scales"; "values" for BF16 */
    uint64_t offset;    /* bytes from the start of the weights */
    uint64_t row_bytes; /* bytes of one row of this plane */
} gb_planar_plane;

/* Where everything of an N x K matrix lies. */
typedef struct gb_planar_layout {
    uint64_t n, k;
    uint64_t k_pad;  /* align_up(k, 128); k for BF16 */
    uint64_t groups; /* groups per row (K_pad / G); 0 for BF16 */
    uint64_t bytes;  /* the weight bytes: every plane */
    int nplanes;
    gb_planar_plane planes[GB_PLANAR_MAX_PLANES];
} gb_planar_layout;

/* Fails (BAD_N, BAD_K, OVERFLOW) unless n, k >= 1 and the sizes fit in 64 bits
 * and in size_t. `call` names the caller in the message. */
int gb_planar_layout_of(const gb_planar_format *f, uint64_t n, uint64_t k, gb_planar_layout *out,
                        const char *call, gb_err *e);

/* The checks every reader starts with (the layout's, weights of at least the
 * weight bytes, a finite gscale); fills the layout. */
int gb_planar_check_weights(const char *call, const gb_planar_format *f, const void *w,
                            size_t wbytes, uint64_t n, uint64_t k, float gscale,
                            gb_planar_layout *l, gb_err *e);

/* Fills out (at least the weight bytes; exactly those are written) with random
 * valid weights, deterministic from the seed (docs/FORMATS.md, "In the format
 * table"): payload planes random bytes, fp16 scales gb_ref_random_scale_f16,
 * E4M3 scales random bytes with the sign cleared and 0x7F re-drawn, BF16
 * normal(0, 1); the padding then overwritten with the zero code and +0 scales. */
int gb_ref_planar_random(const gb_planar_format *f, uint64_t n, uint64_t k, uint64_t seed,
                         void *out, size_t out_bytes, gb_err *e);

/* E2M1 (a 4-bit code; bits above 3 ignored) and E4M3 decoders, exact. */
float gb_ref_e2m1(unsigned code);
float gb_ref_e4m3(uint8_t bits); /* 0x7F and 0xFF are NaN */

/* Element i (0 <= i < K_pad: the padding is readable; BF16: i < K) of row
 * `row`, decoded exactly in fp32. gscale is NVFP4's tensor scale; the other
 * formats ignore it, but it must be finite for all. */
int gb_ref_planar_element(const gb_planar_format *f, const void *w, size_t wbytes, uint64_t n,
                          uint64_t k, float gscale, uint64_t row, uint64_t i, float *out,
                          gb_err *e);
/* Row `row` (k floats, the padding left out). */
int gb_ref_planar_dequant_row(const gb_planar_format *f, const void *w, size_t wbytes, uint64_t n,
                              uint64_t k, float gscale, uint64_t row, float *out, gb_err *e);
/* The whole matrix, [N, K] floats row-major. */
int gb_ref_planar_dequantize(const gb_planar_format *f, const void *w, size_t wbytes, uint64_t n,
                             uint64_t k, float gscale, float *out, gb_err *e);

/* The FP64 Linear reference. x: bf16 bits, [T, K] row-major (row stride K),
 * at least T*K elements (x_elems). For every t < T, row < N:
 *   r[t*N + row] = sum_{j<K} double(w[row][j]) * double(x[t][j])   (Neumaier-summed)
 *   s[t*N + row] = sqrt(sum_{j<K} (w[row][j] * x[t][j])^2)
 * Each product of an fp32 weight and a bf16 x is exact in double. */
int gb_ref_linear(const gb_planar_format *f, const void *w, size_t wbytes, uint64_t n, uint64_t k,
                  float gscale, const uint16_t *x, size_t x_elems, uint64_t t, double *r, double *s,
                  gb_err *e);

/* How the computation under test rounded its weights before the products. */
typedef enum gb_weight_rounding {
    GB_WEIGHTS_EXACT = 0, /* exact, or rounded to fp16 */
    GB_WEIGHTS_BF16 = 1,  /* rounded to bf16 (the vendor GEMM over dequantized weights) */
} gb_weight_rounding;

/* The accuracy rule of docs/LINEAR.md: y passes when |y - r| <= 2^-8 |r| + 2^-7 s, and
 * 2^-8 |r| + 2^-6 s for weights rounded to bf16 (docs/LINEAR.md, "Accuracy"). */
double gb_ref_linear_bound(double r, double s, gb_weight_rounding w);

typedef struct gb_linear_check {
    uint64_t failures; /* outputs outside the bound; NaN and infinite y included */
    double worst;      /* max |y - r| / bound (0 where both are 0, +Inf for a bound of 0
                          with an error, or a non-finite y) */
    uint64_t worst_t, worst_n;
    int has_first; /* whether anything failed; then the first failure (row-major): */
    uint64_t first_t, first_n;
    double first_y, first_r, first_bound;
} gb_linear_check;

/* Judges y (bf16 bits, [T, N]) against r and s (T*N doubles each, from
 * gb_ref_linear). */
void gb_ref_check_linear(const uint16_t *y, const double *r, const double *s, uint64_t t,
                         uint64_t n, gb_weight_rounding w, gb_linear_check *out);

#endif
