#include "ref_dequant.h"

#include <string.h>

#include "random.h"

/* Each decoder turns one block into qk floats with the arithmetic docs/FORMATS.md
 * prescribes, in fp32: products of an fp16 scale and small integers are exact,
 * and q4_k/q5_k round once in (d*sc)*q - dmin*m, so the result is unique. */
typedef void (*block_decoder)(const uint8_t *b, float *y);

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static float rd_f16(const uint8_t *p) { return gb_f16_to_f32(rd16(p)); }

static void dq_f32(const uint8_t *b, float *y) { memcpy(y, b, 4); }
static void dq_f16(const uint8_t *b, float *y) { *y = rd_f16(b); }
static void dq_bf16(const uint8_t *b, float *y) { *y = gb_bf16_to_f32(rd16(b)); }

static void dq_q4_0(const uint8_t *b, float *y) {
    const float d = rd_f16(b);
    const uint8_t *qs = b + 2;
    for (int j = 0; j < 16; j++) {
        y[j] = (float)((qs[j] & 15) - 8) * d;      /* low nibbles: elements 0..15 */
        y[j + 16] = (float)((qs[j] >> 4) - 8) * d; /* high nibbles: elements 16..31 */
    }
}

static void dq_q8_0(const uint8_t *b, float *y) {
    const float d = rd_f16(b);
    for (int j = 0; j < 32; j++) y[j] = (float)(int8_t)b[2 + j] * d;
}

/* The 6-bit scale and min of sub-block s (0..7) from the 12 packed bytes S. */
static void k_scale_min(const uint8_t *S, int s, int *sc, int *m) {
    if (s < 4) {
        *sc = S[s] & 63;
        *m = S[s + 4] & 63;
    } else {
        *sc = (S[s + 4] & 15) | ((S[s - 4] >> 6) << 4);
        *m = (S[s + 4] >> 4) | ((S[s] >> 6) << 4);
    }
}

/* q4_k and q5_k share everything but the fifth bit; qh is NULL for q4_k. */
static void dq_k4or5(const uint8_t *b, const uint8_t *qh, const uint8_t *qs, float *y) {
    const float d = rd_f16(b), dmin = rd_f16(b + 2);
    const uint8_t *S = b + 4;
    for (int s = 0; s < 8; s++) {
        int sc, m;
        k_scale_min(S, s, &sc, &m);
        const float d1 = d * (float)sc, m1 = dmin * (float)m;
        /* Sub-blocks 2c and 2c+1 share the 32 bytes qs[32c ..]: low then high nibble. */
        const uint8_t *q = qs + 32 * (s / 2);
        const int shift = (s & 1) ? 4 : 0;
        for (int l = 0; l < 32; l++) {
            int v = (q[l] >> shift) & 15;
            if (qh) v |= ((qh[l] >> s) & 1) << 4;
            y[32 * s + l] = d1 * (float)v - m1;
        }
    }
}

static void dq_q4_k(const uint8_t *b, float *y) { dq_k4or5(b, NULL, b + 16, y); }
static void dq_q5_k(const uint8_t *b, float *y) { dq_k4or5(b, b + 16, b + 48, y); }

static void dq_q6_k(const uint8_t *b, float *y) {
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *scales = (const int8_t *)(b + 192);
    const float d = rd_f16(b + 208); /* d comes last in q6_k */
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < 4; k++) {
            const uint8_t *lo = ql + 64 * h + 32 * (k & 1);
            const int shift = k < 2 ? 0 : 4;
            for (int l = 0; l < 32; l++) {
                const int e = 128 * h + 32 * k + l;
                const int low = (lo[l] >> shift) & 15;
                const int high = (qh[32 * h + l] >> (2 * k)) & 3;
                const int q = (low | (high << 4)) - 32;
                y[e] = d * (float)scales[e / 16] * (float)q;
            }
        }
}

static const block_decoder decoders[GB_FMT_COUNT] = {
    [GB_FMT_F32] = dq_f32,   [GB_FMT_F16] = dq_f16,   [GB_FMT_BF16] = dq_bf16,
    [GB_FMT_Q4_0] = dq_q4_0, [GB_FMT_Q8_0] = dq_q8_0, [GB_FMT_Q4_K] = dq_q4_k,
    [GB_FMT_Q5_K] = dq_q5_k, [GB_FMT_Q6_K] = dq_q6_k,
};

static int decoder_for(const gb_format *f, block_decoder *out, gb_err *e) {
    if (!f || (unsigned)f->id >= GB_FMT_COUNT || !decoders[f->id])
        return GB_FAIL(e, "dequantize failed: UNSUPPORTED_FORMAT (%s has no reference decoder)",
                       f ? f->name : "(null)");
    if (f->layout != GB_LAYOUT_BLOCKS)
        return GB_FAIL(e,
                       "dequantize failed: UNSUPPORTED_FORMAT (%s is planar: dequantize it "
                       "by rows of a matrix)",
                       f->name);
    *out = decoders[f->id];
    return 0;
}

int gb_ref_dequantize(const gb_format *f, const void *src, size_t nbytes, float *out, gb_err *e) {
    block_decoder dq;
    if (decoder_for(f, &dq, e) != 0) return -1;
    if (nbytes % f->block_bytes != 0)
        return GB_FAIL(e,
                       "dequantize failed: BAD_SIZE (%s: %zu bytes is not a whole number of "
                       "%u-byte blocks)",
                       f->name, nbytes, f->block_bytes);
    const uint8_t *p = src;
    size_t nblocks = nbytes / f->block_bytes;
    for (size_t i = 0; i < nblocks; i++) dq(p + i * f->block_bytes, out + i * f->qk);
    return 0;
}

int gb_ref_dequant_row(const gb_format *f, const void *w, uint64_t m, uint64_t k, uint64_t row,
                       float *out, gb_err *e) {
    block_decoder dq;
    uint64_t row_bytes;
    if (decoder_for(f, &dq, e) != 0) return -1;
    if (gb_format_row_bytes(f, k, &row_bytes, e) != 0) return -1;
    if (row >= m)
        return GB_FAIL(e, "dequantize failed: BAD_ROW (%s: row %llu of a %llu-row matrix)", f->name,
                       (unsigned long long)row, (unsigned long long)m);
    const uint8_t *p = (const uint8_t *)w + row * row_bytes;
    for (uint64_t i = 0; i < k / f->qk; i++) dq(p + i * f->block_bytes, out + i * f->qk);
    return 0;
}
