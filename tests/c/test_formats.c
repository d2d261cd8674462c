/* The format table against docs/FORMATS.md: block geometry, field layout, row and
 * matrix sizes and their errors. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "formats.h"

/* docs/FORMATS.md, "GGML block formats", transcribed, in the table's order. */
static const struct {
    const char *name;
    unsigned qk, bytes;
    double bits;
    int nscales;
    unsigned scale_at[2]; /* byte offsets of the fp16 scale fields */
} doc[] = {
    {"f32", 1, 4, 32, 0, {0}},          {"f16", 1, 2, 16, 0, {0}},
    {"bf16", 1, 2, 16, 0, {0}},         {"q4_0", 32, 18, 4.5, 1, {0}},
    {"q8_0", 32, 34, 8.5, 1, {0}},      {"q4_k", 256, 144, 4.5, 2, {0, 2}},
    {"q5_k", 256, 176, 5.5, 2, {0, 2}}, {"q6_k", 256, 210, 6.5625, 1, {208}},
};
enum { NDOC = sizeof doc / sizeof doc[0] };

static void test_table(void) {
    CHECK(gb_format_count() == NDOC, "%d formats, expected %d", gb_format_count(), NDOC);
    for (int i = 0; i < NDOC; i++) {
        const gb_format *f = gb_format_find(doc[i].name);
        CHECK(f != NULL, "format %s missing", doc[i].name);
        if (!f) continue;
        CHECK(gb_format_at(i) == f, "%s is not entry %d", doc[i].name, i);
        CHECK(gb_format_get(f->id) == f, "%s: gb_format_get(id) mismatch", doc[i].name);
        CHECK(f->layout == GB_LAYOUT_BLOCKS, "%s must be a block layout", doc[i].name);
        CHECK(f->qk == doc[i].qk, "%s qk %u, expected %u", f->name, f->qk, doc[i].qk);
        CHECK(f->block_bytes == doc[i].bytes, "%s block_bytes %u, expected %u", f->name,
              f->block_bytes, doc[i].bytes);
        CHECK(gb_format_bits(f) == doc[i].bits, "%s bits %g, expected %g", f->name,
              gb_format_bits(f), doc[i].bits);

        /* The fields tile [0, block_bytes) in order, with no gap or overlap. */
        unsigned at = 0;
        int nscales = 0;
        for (int j = 0; j < f->nfields; j++) {
            const gb_field *fd = &f->fields[j];
            CHECK(fd->offset == at, "%s field %s at %u, expected %u", f->name, fd->name, fd->offset,
                  at);
            at = fd->offset + fd->size;
            if (fd->kind == GB_FIELD_F16_SCALE) {
                CHECK(fd->size == 2, "%s scale %s is %u bytes", f->name, fd->name, fd->size);
                CHECK(nscales < doc[i].nscales && fd->offset == doc[i].scale_at[nscales],
                      "%s scale %s at byte %u is not where docs/FORMATS.md puts it", f->name, fd->name,
                      fd->offset);
                nscales++;
            }
        }
        CHECK(at == f->block_bytes, "%s fields cover %u of %u bytes", f->name, at, f->block_bytes);
        CHECK(nscales == doc[i].nscales, "%s has %d fp16 scales, expected %d", f->name, nscales,
              doc[i].nscales);
    }
    CHECK(gb_format_at(-1) == NULL && gb_format_at(NDOC) == NULL, "out-of-range index");
    CHECK(gb_format_find("Q4_0") == NULL && gb_format_find("q3_k") == NULL &&
              gb_format_find(NULL) == NULL,
          "names are exact and lower-case");
}

static void expect_error(int rc, gb_err *e, const char *const *parts, const char *what) {
    CHECK(rc == -1, "%s: expected failure", what);
    for (int i = 0; parts[i]; i++)
        CHECK(e->msg && strstr(e->msg, parts[i]), "%s: message %s lacks '%s'", what,
              e->msg ? e->msg : "(none)", parts[i]);
    gb_err_clear(e);
}

static void test_sizes(void) {
    gb_err e = {0};
    uint64_t n = 0;
    const gb_format *q4k = gb_format_find("q4_k"), *q6k = gb_format_find("q6_k"),
                    *q80 = gb_format_find("q8_0"), *f32 = gb_format_find("f32");
    /* By hand: 1024/256*144, 2816/256*210, 3*4, 1024/32*34. */
    CHECK(gb_format_row_bytes(q4k, 1024, &n, &e) == 0 && n == 576, "q4_k k=1024: %llu",
          (unsigned long long)n);
    CHECK(gb_format_row_bytes(q6k, 2816, &n, &e) == 0 && n == 2310, "q6_k k=2816: %llu",
          (unsigned long long)n);
    CHECK(gb_format_row_bytes(f32, 3, &n, &e) == 0 && n == 12, "f32 k=3: %llu",
          (unsigned long long)n);
    CHECK(gb_format_row_bytes(q80, 1024, &n, &e) == 0 && n == 1088, "q8_0 k=1024: %llu",
          (unsigned long long)n);
    /* 2816 rows of 1024 q8_0 weights: 2816 * 1088 bytes. */
    CHECK(gb_format_matrix_bytes(q80, 2816, 1024, &n, &e) == 0 && n == 3063808,
          "q8_0 2816x1024: %llu", (unsigned long long)n);

    const char *bad_k[] = {"row_bytes failed: BAD_K", "q4_k", "k=100", "qk=256", NULL};
    expect_error(gb_format_row_bytes(q4k, 100, &n, &e), &e, bad_k, "q4_k k=100");
    const char *zero_k[] = {"BAD_K", "q6_k", "positive", NULL};
    expect_error(gb_format_row_bytes(q6k, 0, &n, &e), &e, zero_k, "q6_k k=0");
    const char *big_k[] = {"OVERFLOW", "f32", NULL};
    expect_error(gb_format_row_bytes(f32, (uint64_t)1 << 63, &n, &e), &e, big_k, "f32 k=2^63");
    const char *big_m[] = {"matrix_bytes failed: OVERFLOW", NULL};
    expect_error(gb_format_matrix_bytes(q80, (uint64_t)1 << 60, 1024, &n, &e), &e, big_m,
                 "q8_0 m=2^60");
    const char *zero_m[] = {"BAD_M", NULL};
    expect_error(gb_format_matrix_bytes(q80, 0, 1024, &n, &e), &e, zero_m, "q8_0 m=0");

    const gb_format *f = NULL;
    const char *unknown[] = {"UNKNOWN_FORMAT", "'q3_k'",
                             "f32, f16, bf16, q4_0, q8_0, q4_k, q5_k, q6_k", NULL};
    expect_error(gb_format_lookup("q3_k", &f, &e), &e, unknown, "lookup q3_k");
    CHECK(gb_format_lookup("q5_k", &f, &e) == 0 && f == gb_format_find("q5_k"), "lookup q5_k");
}

/* A planar group format described by the same structure (docs/FORMATS.md's
 * Q4G64_F16S) gets its sizes from the same functions: K is padded to 128. */
static void test_planar_geometry(void) {
    const gb_format q4g64 = {.id = GB_FMT_COUNT,
                             .name = "Q4G64_F16S",
                             .layout = GB_LAYOUT_PLANAR,
                             .qk = 64,
                             .block_bytes = 34,
                             .k_pad = 128,
                             .nfields = 2,
                             .fields = {{"codes", 0, 32, GB_FIELD_PAYLOAD},
                                        {"s", 32, 2, GB_FIELD_F16_SCALE}}};
    gb_err e = {0};
    uint64_t n = 0;
    /* docs/FORMATS.md: N=4096, K=5120 is 11 141 120 bytes. */
    CHECK(gb_format_matrix_bytes(&q4g64, 4096, 5120, &n, &e) == 0 && n == 11141120,
          "Q4G64_F16S 4096x5120: %llu", (unsigned long long)n);
    /* K=100 pads to 128: two groups of 34 bytes. */
    CHECK(gb_format_row_bytes(&q4g64, 100, &n, &e) == 0 && n == 68, "Q4G64_F16S k=100: %llu",
          (unsigned long long)n);
    CHECK(gb_format_bits(&q4g64) == 4.25, "Q4G64_F16S bits %g", gb_format_bits(&q4g64));
    gb_err_clear(&e);
}

int main(void) {
    test_table();
    test_sizes();
    test_planar_geometry();
    return check_finish("test_formats");
}
