#include "formats.h"

#include <stdio.h>
#include <string.h>

/* Field lists and sizes transcribe docs/FORMATS.md; tests/c/test_formats.c
 * checks them against that document's table and that the fields tile each
 * block. */
/* clang-format off */
static const gb_format formats[GB_FMT_COUNT] = {
    [GB_FMT_F32] = {GB_FMT_F32, "f32", GB_LAYOUT_BLOCKS, .qk = 1, .block_bytes = 4, .nfields = 1,
        .fields = {{"value", 0, 4, GB_FIELD_F32}}},
    [GB_FMT_F16] = {GB_FMT_F16, "f16", GB_LAYOUT_BLOCKS, .qk = 1, .block_bytes = 2, .nfields = 1,
        .fields = {{"value", 0, 2, GB_FIELD_F16}}},
    [GB_FMT_BF16] = {GB_FMT_BF16, "bf16", GB_LAYOUT_BLOCKS, .qk = 1, .block_bytes = 2, .nfields = 1,
        .fields = {{"value", 0, 2, GB_FIELD_BF16}}},
    [GB_FMT_Q4_0] = {GB_FMT_Q4_0, "q4_0", GB_LAYOUT_BLOCKS, .qk = 32, .block_bytes = 18, .nfields = 2,
        .fields = {{"d", 0, 2, GB_FIELD_F16_SCALE},
                   {"qs", 2, 16, GB_FIELD_PAYLOAD}}},
    [GB_FMT_Q8_0] = {GB_FMT_Q8_0, "q8_0", GB_LAYOUT_BLOCKS, .qk = 32, .block_bytes = 34, .nfields = 2,
        .fields = {{"d", 0, 2, GB_FIELD_F16_SCALE},
                   {"qs", 2, 32, GB_FIELD_PAYLOAD}}},
    [GB_FMT_Q4_K] = {GB_FMT_Q4_K, "q4_k", GB_LAYOUT_BLOCKS, .qk = 256, .block_bytes = 144, .nfields = 4,
        .fields = {{"d", 0, 2, GB_FIELD_F16_SCALE},
                   {"dmin", 2, 2, GB_FIELD_F16_SCALE},
                   {"scales", 4, 12, GB_FIELD_PAYLOAD}, /* 6-bit scales and mins, packed */
                   {"qs", 16, 128, GB_FIELD_PAYLOAD}}},
    [GB_FMT_Q5_K] = {GB_FMT_Q5_K, "q5_k", GB_LAYOUT_BLOCKS, .qk = 256, .block_bytes = 176, .nfields = 5,
        .fields = {{"d", 0, 2, GB_FIELD_F16_SCALE},
                   {"dmin", 2, 2, GB_FIELD_F16_SCALE},
                   {"scales", 4, 12, GB_FIELD_PAYLOAD},
                   {"qh", 16, 32, GB_FIELD_PAYLOAD},
                   {"qs", 48, 128, GB_FIELD_PAYLOAD}}},
    [GB_FMT_Q6_K] = {GB_FMT_Q6_K, "q6_k", GB_LAYOUT_BLOCKS, .qk = 256, .block_bytes = 210, .nfields = 4,
        .fields = {{"ql", 0, 128, GB_FIELD_PAYLOAD},
                   {"qh", 128, 64, GB_FIELD_PAYLOAD},
                   {"scales", 192, 16, GB_FIELD_PAYLOAD}, /* signed 8-bit: every byte is valid */
                   {"d", 208, 2, GB_FIELD_F16_SCALE}}},  /* d comes last */
};
/* clang-format on */

int gb_format_count(void) { return GB_FMT_COUNT; }

const gb_format *gb_format_at(int i) { return (i >= 0 && i < GB_FMT_COUNT) ? &formats[i] : NULL; }

const gb_format *gb_format_get(gb_format_id id) {
    return ((unsigned)id < GB_FMT_COUNT) ? &formats[id] : NULL;
}

const gb_format *gb_format_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < GB_FMT_COUNT; i++)
        if (strcmp(formats[i].name, name) == 0) return &formats[i];
    return NULL;
}

int gb_format_lookup(const char *name, const gb_format **out, gb_err *e) {
    const gb_format *f = gb_format_find(name);
    if (f) {
        *out = f;
        return 0;
    }
    char known[256];
    size_t used = 0;
    known[0] = '\0';
    for (int i = 0; i < GB_FMT_COUNT && used < sizeof known; i++) {
        int n = snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", formats[i].name);
        if (n < 0) break;
        used += (size_t)n;
    }
    return GB_FAIL(e, "format lookup failed: UNKNOWN_FORMAT (no format named '%s'; known: %s)",
                   name ? name : "(null)", known);
}

double gb_format_bits(const gb_format *f) { return 8.0 * f->block_bytes / f->qk; }

int gb_format_row_bytes(const gb_format *f, uint64_t k, uint64_t *out, gb_err *e) {
    if (k == 0) return GB_FAIL(e, "row_bytes failed: BAD_K (%s: k must be positive)", f->name);
    uint64_t padded = k;
    if (f->layout == GB_LAYOUT_PLANAR) {
        /* Planar rows are padded, never rejected: docs/FORMATS.md's K_pad = align_up(K, k_pad). */
        if (k > UINT64_MAX - f->k_pad)
            return GB_FAIL(e, "row_bytes failed: OVERFLOW (%s: k=%llu is too large)", f->name,
                           (unsigned long long)k);
        padded = (k + f->k_pad - 1) / f->k_pad * f->k_pad;
    } else if (k % f->qk != 0) {
        return GB_FAIL(e,
                       "row_bytes failed: BAD_K (%s: k=%llu is not a multiple of qk=%u, the "
                       "elements per block)",
                       f->name, (unsigned long long)k, f->qk);
    }
    uint64_t groups = padded / f->qk;
    if (groups > UINT64_MAX / f->block_bytes)
        return GB_FAIL(e, "row_bytes failed: OVERFLOW (%s: k=%llu is too large)", f->name,
                       (unsigned long long)k);
    *out = groups * f->block_bytes;
    return 0;
}

int gb_format_matrix_bytes(const gb_format *f, uint64_t m, uint64_t k, uint64_t *out, gb_err *e) {
    uint64_t row;
    if (m == 0) return GB_FAIL(e, "matrix_bytes failed: BAD_M (%s: m must be positive)", f->name);
    if (gb_format_row_bytes(f, k, &row, e) != 0) return -1;
    if (m > UINT64_MAX / row)
        return GB_FAIL(e, "matrix_bytes failed: OVERFLOW (%s: %llu x %llu weights is too large)",
                       f->name, (unsigned long long)m, (unsigned long long)k);
    *out = m * row;
    return 0;
}
