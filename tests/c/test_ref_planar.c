/* The planar group formats (docs/FORMATS.md, "Planar group formats") and the
 * Linear reference (docs/LINEAR.md) on hand-built planes that pin every field:
 * the descriptors and sizes against the document's tables, E2M1 and E4M3 code
 * by code, nibble order, the Q5/Q6 high-bit planes, signed W8 codes, fp16
 * scales, the NVFP4 tensor scale, the padding, the generator, the FP64
 * reference on sums worked out by hand and the accuracy check's counts.
 * Planes are built by packing chosen codes with the layout's inverse, never by
 * calling the decoder under test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "random.h"
#include "ref_planar.h"
#include "test_util.h"

static const gb_planar_format *fmt(const char *name) {
    const gb_planar_format *f = gb_planar_find(name);
    CHECK(f != NULL, "planar format %s missing", name);
    if (!f) exit(check_finish("test_ref_planar"));
    return f;
}

static void expect_error(int rc, gb_err *e, const char *const *parts, const char *what) {
    CHECK(rc == -1, "%s: expected failure", what);
    for (int i = 0; parts[i]; i++)
        CHECK(e->msg && strstr(e->msg, parts[i]), "%s: message '%s' lacks '%s'", what,
              e->msg ? e->msg : "(none)", parts[i]);
    gb_err_clear(e);
}

/* Bit-exact, +0 and -0 equal (as test_ref_dequant.c). */
static int same(float a, float b) { return a == b || (isnan(a) && isnan(b)); }

static float element(const gb_planar_format *f, const uint8_t *w, size_t wbytes, uint64_t n,
                     uint64_t k, float g, uint64_t row, uint64_t i) {
    gb_err e = {0};
    float v = NAN;
    int rc = gb_ref_planar_element(f, w, wbytes, n, k, g, row, i, &v, &e);
    CHECK(rc == 0, "%s element (%llu, %llu): %s", f->name, (unsigned long long)row,
          (unsigned long long)i, e.msg ? e.msg : "?");
    gb_err_clear(&e);
    return v;
}

/* Inverse of the 4-bit code rule: element i of a code-plane row, low nibble when even. */
static void set_nibble(uint8_t *row, uint64_t i, unsigned c) {
    unsigned sh = 4 * (unsigned)(i & 1);
    row[i / 2] = (uint8_t)((row[i / 2] & ~(15u << sh)) | ((c & 15u) << sh));
}

static void put64(uint8_t *p, uint64_t v) {
    for (int j = 0; j < 8; j++) p[j] = (uint8_t)(v >> (8 * j));
}

/* ------------------------------------------------------------------ the table */

/* docs/FORMATS.md, "Plane layout" and "Weight and model bytes", transcribed. */
static const struct {
    const char *name, *qtype;
    unsigned g, group_bytes;
    double bits;
    unsigned zero;
    int nplanes;
    const char *planes[3];
    unsigned plane_bytes[3]; /* per group */
    unsigned long long bytes_4096x5120;
} doc[] = {
    {"Q4G64_F16S", "q4", 64, 34, 4.25, 8, 2, {"codes", "scales"}, {32, 2}, 11141120ull},
    {"Q5G64_F16S", "q5", 64, 42, 5.25, 16, 3, {"codes", "high", "scales"}, {32, 8, 2}, 13762560ull},
    {"Q6G64_F16S",
     "q6",
     64,
     50,
     6.25,
     32,
     3,
     {"codes", "high", "scales"},
     {32, 16, 2},
     16384000ull},
    {"W8G32_F16S", "w8", 32, 34, 8.5, 0, 2, {"codes", "scales"}, {32, 2}, 22282240ull},
    {"NVFP4", "nvfp4", 16, 9, 4.5, 0, 2, {"codes", "scales"}, {8, 1}, 11796480ull},
    {"BF16", "bf16", 1, 2, 16, 0, 1, {"values"}, {2}, 41943040ull},
};
enum { NDOC = sizeof doc / sizeof doc[0] };

static void test_table(void) {
    int before = failures;
    CHECK(gb_planar_count() == NDOC, "%d planar formats, expected %d", gb_planar_count(), NDOC);
    gb_err e = {0};
    for (int i = 0; i < NDOC; i++) {
        const gb_planar_format *f = fmt(doc[i].name);
        CHECK(gb_planar_at(i) == f, "%s is not entry %d", f->name, i);
        CHECK(gb_planar_find(doc[i].qtype) == f, "qtype %s does not name %s", doc[i].qtype,
              f->name);
        CHECK(strcmp(f->qtype, doc[i].qtype) == 0, "%s qtype %s", f->name, f->qtype);
        CHECK(f->geom.qk == doc[i].g && f->geom.block_bytes == doc[i].group_bytes,
              "%s: G=%u, %u bytes per group", f->name, f->geom.qk, f->geom.block_bytes);
        CHECK(gb_format_bits(&f->geom) == doc[i].bits, "%s bits %g", f->name,
              gb_format_bits(&f->geom));
        CHECK(f->zero_code == doc[i].zero, "%s zero code %u", f->name, f->zero_code);
        CHECK(f->geom.nfields == doc[i].nplanes, "%s has %d planes", f->name, f->geom.nfields);
        unsigned at = 0;
        for (int p = 0; p < f->geom.nfields && p < 3; p++) {
            CHECK(strcmp(f->geom.fields[p].name, doc[i].planes[p]) == 0 &&
                      f->geom.fields[p].size == doc[i].plane_bytes[p] &&
                      f->geom.fields[p].offset == at,
                  "%s plane %d: %s, %u bytes per group at %u", f->name, p, f->geom.fields[p].name,
                  f->geom.fields[p].size, f->geom.fields[p].offset);
            at += f->geom.fields[p].size;
        }
        CHECK(at == f->geom.block_bytes, "%s planes cover %u of %u bytes", f->name, at,
              f->geom.block_bytes);
        gb_planar_layout l;
        CHECK(gb_planar_layout_of(f, 4096, 5120, &l, "test", &e) == 0 &&
                  l.bytes == doc[i].bytes_4096x5120,
              "%s 4096x5120: %llu bytes, expected %llu", f->name, (unsigned long long)l.bytes,
              doc[i].bytes_4096x5120);
        gb_err_clear(&e);
    }
    CHECK(gb_planar_at(-1) == NULL && gb_planar_at(NDOC) == NULL, "out-of-range index");
    CHECK(gb_planar_find("q4_0") == NULL && gb_planar_find("Q4") == NULL &&
              gb_planar_find("q4g64_f16s") == NULL && gb_planar_find(NULL) == NULL,
          "names are exact: table name or qtype");
    const gb_planar_format *f = NULL;
    const char *unknown[] = {"planar format lookup failed: UNKNOWN_FORMAT",
                             "no planar format named 'q3'",
                             "Q4G64_F16S (q4), Q5G64_F16S (q5), Q6G64_F16S (q6), W8G32_F16S (w8), "
                             "NVFP4 (nvfp4), BF16 (bf16)",
                             NULL};
    expect_error(gb_planar_lookup("q3", &f, &e), &e, unknown, "lookup q3");
    CHECK(gb_planar_lookup("nvfp4", &f, &e) == 0 && f == gb_planar_find("NVFP4"), "lookup nvfp4");
    report("planar table against docs/FORMATS.md", before);
}

static void test_layout(void) {
    int before = failures;
    gb_err e = {0};
    gb_planar_layout l;
    /* Q5, N=3, K=200: K_pad 256, 4 groups; planes 3*128, 3*32, 3*8 bytes back to back. */
    CHECK(gb_planar_layout_of(fmt("q5"), 3, 200, &l, "test", &e) == 0, "q5 3x200");
    CHECK(l.k_pad == 256 && l.groups == 4 && l.bytes == 3 * 4 * 42 && l.nplanes == 3,
          "q5 3x200: k_pad %llu groups %llu bytes %llu", (unsigned long long)l.k_pad,
          (unsigned long long)l.groups, (unsigned long long)l.bytes);
    CHECK(l.planes[0].offset == 0 && l.planes[0].row_bytes == 128 && l.planes[1].offset == 384 &&
              l.planes[1].row_bytes == 32 && l.planes[2].offset == 480 &&
              l.planes[2].row_bytes == 8,
          "q5 plane offsets");
    /* Every plane starts 16-byte aligned, whatever N (docs/FORMATS.md). */
    for (int i = 0; i < NDOC; i++)
        for (uint64_t n = 1; n <= 37; n += 9) {
            CHECK(gb_planar_layout_of(gb_planar_at(i), n, 200, &l, "test", &e) == 0, "layout");
            for (int p = 0; p < l.nplanes && gb_planar_at(i)->id != GB_PLANAR_BF16; p++)
                CHECK(l.planes[p].offset % 16 == 0, "%s n=%llu plane %d at %llu",
                      gb_planar_at(i)->name, (unsigned long long)n, p,
                      (unsigned long long)l.planes[p].offset);
        }
    /* K=1 and K=128 pad to 128, K=129 to 256; BF16 is not padded. */
    CHECK(gb_planar_layout_of(fmt("q4"), 1, 1, &l, "test", &e) == 0 && l.k_pad == 128 &&
              l.bytes == 68,
          "q4 k=1");
    CHECK(gb_planar_layout_of(fmt("q4"), 1, 128, &l, "test", &e) == 0 && l.k_pad == 128,
          "q4 k=128");
    CHECK(gb_planar_layout_of(fmt("nvfp4"), 2, 129, &l, "test", &e) == 0 && l.k_pad == 256 &&
              l.bytes == 2 * 16 * 9,
          "nvfp4 k=129");
    CHECK(gb_planar_layout_of(fmt("bf16"), 3, 7, &l, "test", &e) == 0 && l.k_pad == 7 &&
              l.bytes == 42 && l.planes[0].row_bytes == 14,
          "bf16 3x7");
    const char *zero_n[] = {"planar_random failed: BAD_N", "Q4G64_F16S", "n must be positive",
                            NULL};
    uint8_t buf[1024];
    expect_error(gb_ref_planar_random(fmt("q4"), 0, 128, 1, buf, sizeof buf, &e), &e, zero_n,
                 "n=0");
    const char *zero_k[] = {"linear failed: BAD_K", "W8G32_F16S", "k must be positive", NULL};
    double r[4], s[4];
    uint16_t x[4] = {0};
    expect_error(gb_ref_linear(fmt("w8"), buf, sizeof buf, 1, 0, 1.0f, x, 4, 1, r, s, &e), &e,
                 zero_k, "k=0");
    const char *big[] = {"OVERFLOW", NULL};
    expect_error(gb_planar_layout_of(fmt("q6"), (uint64_t)1 << 62, 1024, &l, "test", &e), &e, big,
                 "2^62 rows");
    gb_err_clear(&e);
    report("layout, padding of K, errors", before);
}

/* ------------------------------------------------------------------ E2M1, E4M3 */

static void test_minifloats(void) {
    int before = failures;
    const float mag[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (unsigned c = 0; c < 16; c++) {
        float v = gb_ref_e2m1(c), want = (c & 8) ? -mag[c & 7] : mag[c & 7];
        CHECK(v == want && !!signbit(v) == !!(c & 8), "e2m1(%u) = %g, expected %g", c, v, want);
    }
    CHECK(signbit(gb_ref_e2m1(8)) && gb_ref_e2m1(8) == 0.0f, "code 8 is -0");
    const struct {
        uint8_t b;
        float v;
    } e4[] = {
        {0x00, 0.0f},        {0x01, 0x1p-9f}, {0x02, 0x1p-8f},
        {0x07, 7 * 0x1p-9f}, {0x08, 0x1p-6f}, {0x0F, 1.875f * 0x1p-6f},
        {0x38, 1.0f},        {0x3C, 1.5f},    {0x3F, 1.875f},
        {0x40, 2.0f},        {0x77, 240.0f},  {0x78, 256.0f},
        {0x7E, 448.0f},      {0x80, -0.0f},   {0x81, -0x1p-9f},
        {0xB8, -1.0f},       {0xFE, -448.0f}, {0x30, 0.5f},
    };
    for (size_t i = 0; i < sizeof e4 / sizeof e4[0]; i++) {
        float v = gb_ref_e4m3(e4[i].b);
        CHECK(v == e4[i].v && !!signbit(v) == !!(e4[i].b & 0x80), "e4m3(0x%02x) = %a, expected %a",
              e4[i].b, v, e4[i].v);
    }
    CHECK(isnan(gb_ref_e4m3(0x7F)) && isnan(gb_ref_e4m3(0xFF)), "0x7F and 0xFF are NaN");
    int nans = 0;
    for (unsigned b = 0; b < 256; b++) nans += isnan(gb_ref_e4m3((uint8_t)b)) ? 1 : 0;
    CHECK(nans == 2, "%d NaN encodings, expected 2 (no infinities)", nans);
    report("E2M1 codes and E4M3 scales", before);
}

/* ------------------------------------------------------------------ hand-built planes */

/* Q4, N=2, K=128 (two groups per row). Codes c(row, i) = (5i + 3row + 1) mod 16;
 * scales 0.5, -2 (row 0), the fp16 subnormal 2^-24 and 0x1.ffcp-1 (row 1). */
static void test_q4(void) {
    int before = failures;
    const gb_planar_format *f = fmt("q4");
    uint8_t w[2 * 68];
    memset(w, 0, sizeof w);
    for (int row = 0; row < 2; row++)
        for (int i = 0; i < 128; i++)
            set_nibble(w + 64 * row, (uint64_t)i, (5u * i + 3u * row + 1) % 16);
    const uint16_t sc[4] = {0x3800, 0xC000, 0x0001, 0x3BFF};
    const float scv[4] = {0.5f, -2.0f, 0x1p-24f, 0x1.ffcp-1f};
    for (int j = 0; j < 4; j++) put16(w + 128 + 2 * j, sc[j]);
    int bad = 0;
    for (int row = 0; row < 2; row++)
        for (int i = 0; i < 128; i++) {
            float want = (float)((int)((5u * i + 3u * row + 1) % 16) - 8) * scv[2 * row + i / 64];
            if (!same(element(f, w, sizeof w, 2, 128, 1.0f, row, i), want)) bad++;
        }
    CHECK(bad == 0, "q4: %d elements differ", bad);
    /* Nibble order by literal bytes: byte 0 of row 0 is 0x61: element 0 = 1-8, element 1 = 6-8. */
    CHECK(w[0] == 0x61, "test packing: byte 0 is 0x%02x", w[0]);
    CHECK(element(f, w, sizeof w, 2, 128, 1.0f, 0, 0) == -3.5f &&
              element(f, w, sizeof w, 2, 128, 1.0f, 0, 1) == -1.0f,
          "q4: low nibble is the even element");
    /* Row 1 group 0 uses the fp16 subnormal: element 0 has code 4, (4-8) * 2^-24. */
    CHECK(element(f, w, sizeof w, 2, 128, 1.0f, 1, 0) == -4 * 0x1p-24f, "q4: subnormal scale");
    /* The tensor scale is NVFP4's alone. */
    CHECK(element(f, w, sizeof w, 2, 128, 7.0f, 0, 0) == -3.5f, "q4 ignores gscale");
    report("Q4G64_F16S: nibble order, fp16 scales", before);
}

/* Q5, N=1, K=128: low nibbles all 3, the group words of the high-bit plane
 * 2^63 | 2^8 | 1 (group 0) and 0x8000000000000000 (group 1); scale 1 and 0.25. */
static void test_q5(void) {
    int before = failures;
    const gb_planar_format *f = fmt("q5");
    uint8_t w[84];
    memset(w, 0x33, 64);
    put64(w + 64, (1ull << 63) | (1ull << 8) | 1ull);
    put64(w + 72, 1ull << 63);
    put16(w + 80, 0x3C00);
    put16(w + 82, 0x3400);
    int bad = 0;
    for (int i = 0; i < 128; i++) {
        int j = i % 64, hi = (i < 64) ? (j == 0 || j == 8 || j == 63) : (j == 63);
        float want = (float)(3 + 16 * hi - 16) * (i < 64 ? 1.0f : 0.25f);
        if (!same(element(f, w, sizeof w, 1, 128, 1.0f, 0, i), want)) bad++;
    }
    CHECK(bad == 0, "q5: %d elements differ", bad);
    /* Bit 63 of group 0's word is bit 7 of high byte 7: element 63 = (3+16-16) * 1. */
    CHECK(w[64 + 7] == 0x80 && w[64 + 1] == 0x01, "test packing: little-endian word");
    CHECK(element(f, w, sizeof w, 1, 128, 1.0f, 0, 63) == 3.0f &&
              element(f, w, sizeof w, 1, 128, 1.0f, 0, 62) == -13.0f &&
              element(f, w, sizeof w, 1, 128, 1.0f, 0, 8) == 3.0f &&
              element(f, w, sizeof w, 1, 128, 1.0f, 0, 127) == 0.75f,
          "q5: bit i of the group's 64-bit word");
    report("Q5G64_F16S: the high-bit plane", before);
}

/* Q6, N=1, K=128: low nibbles all 0 but element 5 (low 9); high-bit byte 0 is
 * 0xE4 (pairs 0, 1, 2, 3 for elements 0..3), byte 1 is 0x03 (element 4: 3);
 * scale 2 (group 0), -1 (group 1). */
static void test_q6(void) {
    int before = failures;
    const gb_planar_format *f = fmt("q6");
    uint8_t w[100];
    memset(w, 0, sizeof w);
    set_nibble(w, 5, 9);
    w[64] = 0xE4;
    w[65] = 0x03;
    w[64 + 31] = 0xC0; /* element 127 (byte 31, bits 6-7): high 3 */
    put16(w + 96, 0x4000);
    put16(w + 98, 0xBC00);
    const float want[6] = {-64, -32, 0, 32, 32, (9 - 32) * 2};
    for (int i = 0; i < 6; i++)
        CHECK(element(f, w, sizeof w, 1, 128, 1.0f, 0, i) == want[i], "q6 element %d: %g", i,
              element(f, w, sizeof w, 1, 128, 1.0f, 0, i));
    CHECK(element(f, w, sizeof w, 1, 128, 1.0f, 0, 126) == 32.0f &&
              element(f, w, sizeof w, 1, 128, 1.0f, 0, 127) == -16.0f,
          "q6: the last pair of a row, group 1's scale");
    report("Q6G64_F16S: 2-bit pairs", before);
}

/* W8, N=2, K=128 (4 groups of 32 per row): signed bytes. */
static void test_w8(void) {
    int before = failures;
    const gb_planar_format *f = fmt("w8");
    uint8_t w[2 * 136];
    for (int i = 0; i < 256; i++) w[i] = (uint8_t)(i * 37 + 11);
    const uint16_t sc[8] = {0x3C00, 0xBC00, 0x3800, 0x0400, 0x0200, 0x4400, 0x3555, 0x8001};
    for (int j = 0; j < 8; j++) put16(w + 256 + 2 * j, sc[j]);
    int bad = 0;
    for (int row = 0; row < 2; row++)
        for (int i = 0; i < 128; i++) {
            float want = (float)(int8_t)(uint8_t)((128 * row + i) * 37 + 11) *
                         gb_f16_to_f32(sc[4 * row + i / 32]);
            if (!same(element(f, w, sizeof w, 2, 128, 1.0f, row, i), want)) bad++;
        }
    CHECK(bad == 0, "w8: %d elements differ", bad);
    w[0] = 0x80, w[1] = 0x7F, w[2] = 0xFF, w[3] = 0x01;
    CHECK(element(f, w, sizeof w, 2, 128, 1.0f, 0, 0) == -128.0f &&
              element(f, w, sizeof w, 2, 128, 1.0f, 0, 1) == 127.0f &&
              element(f, w, sizeof w, 2, 128, 1.0f, 0, 2) == -1.0f &&
              element(f, w, sizeof w, 2, 128, 1.0f, 0, 3) == 1.0f,
          "w8: two's complement codes");
    /* Row 1, group 3: the negative fp16 subnormal -2^-24. */
    w[128 + 96] = 0x05;
    CHECK(element(f, w, sizeof w, 2, 128, 1.0f, 1, 96) == -5 * 0x1p-24f, "w8: subnormal scale");
    report("W8G32_F16S: signed codes", before);
}

/* NVFP4, N=1, K=128 (8 groups of 16): every code 0..15 in group 0, scales
 * chosen per group, and the tensor scale. */
static void test_nvfp4(void) {
    int before = failures;
    const gb_planar_format *f = fmt("nvfp4");
    uint8_t w[72];
    memset(w, 0, sizeof w);
    for (int i = 0; i < 128; i++) set_nibble(w, (uint64_t)i, (unsigned)(i * 3) % 16);
    const uint8_t sc[8] = {0x38, 0x7E, 0x01, 0x07, 0x00, 0x3C, 0x78, 0x08};
    memcpy(w + 64, sc, 8);
    const float mag[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    const float scv[8] = {1.0f, 448.0f, 0x1p-9f, 7 * 0x1p-9f, 0.0f, 1.5f, 256.0f, 0x1p-6f};
    const float gs[3] = {1.0f, 0.25f, 1.0f / 3.0f};
    for (int gi = 0; gi < 3; gi++) {
        int bad = 0;
        for (int i = 0; i < 128; i++) {
            unsigned c = (unsigned)(i * 3) % 16;
            float ev = (c & 8) ? -mag[c & 7] : mag[c & 7];
            /* e2m1 * e4m3 is exact; times gscale is one rounding of the exact
             * product, which double holds exactly (6 + 24 bits). */
            float want = (float)((double)(ev * scv[i / 16]) * (double)gs[gi]);
            if (!same(element(f, w, sizeof w, 1, 128, gs[gi], 0, i), want)) bad++;
        }
        CHECK(bad == 0, "nvfp4 gscale %g: %d elements differ", gs[gi], bad);
    }
    /* By literal: element 2 has code 6 (4), group 0 scale 1: 4 * 0.25; element
     * 18 (group 1, code 54 % 16 = 6) 4 * 448 * 0.25 = 448; element 17 code 3 (1.5). */
    CHECK(element(f, w, sizeof w, 1, 128, 0.25f, 0, 2) == 1.0f &&
              element(f, w, sizeof w, 1, 128, 0.25f, 0, 18) == 448.0f &&
              element(f, w, sizeof w, 1, 128, 0.25f, 0, 17) == 168.0f,
          "nvfp4 literals");
    /* Element 3: code 9 = -0.5; times a subnormal E4M3 scale (group 2: 2^-9) at element 35
     * (code 105 % 16 = 9): -2^-10 * g. */
    CHECK(element(f, w, sizeof w, 1, 128, 3.0f, 0, 35) == -3 * 0x1p-10f, "nvfp4 subnormal scale");
    w[64] = 0x7F;
    CHECK(isnan(element(f, w, sizeof w, 1, 128, 1.0f, 0, 1)), "nvfp4: a NaN scale decodes to NaN");
    report("NVFP4: E2M1 codes, E4M3 scales, tensor scale", before);
}

static void test_bf16(void) {
    int before = failures;
    const gb_planar_format *f = fmt("BF16");
    /* [2, 3] bf16, K not padded: row 1 starts at byte 6. */
    const uint16_t v[6] = {0x3F80, 0xC000, 0x4049, 0x0001, 0x8000, 0x7F80};
    const float want[6] = {1.0f, -2.0f, 3.140625f, 0x1p-133f, -0.0f, INFINITY};
    uint8_t w[12];
    for (int i = 0; i < 6; i++) put16(w + 2 * i, v[i]);
    float out[6];
    gb_err e = {0};
    CHECK(gb_ref_planar_dequantize(f, w, sizeof w, 2, 3, 1.0f, out, &e) == 0, "bf16 dequantize");
    for (int i = 0; i < 6; i++) CHECK(same(out[i], want[i]), "bf16 %d: %a", i, out[i]);
    const char *idx[] = {"BAD_INDEX", "element (0, 3)", NULL};
    float one;
    expect_error(gb_ref_planar_element(f, w, sizeof w, 2, 3, 1.0f, 0, 3, &one, &e), &e, idx,
                 "bf16 i=K");
    report("BF16: plain [N, K]", before);
}

/* ------------------------------------------------------------------ padding, rows, generator */

/* The bytes a generator wrote in the padding, read straight from the planes. */
static void check_padding(const gb_planar_format *f, const uint8_t *w, uint64_t n, uint64_t k) {
    gb_planar_layout l;
    gb_err e = {0};
    CHECK(gb_planar_layout_of(f, n, k, &l, "test", &e) == 0, "layout");
    const int last = l.nplanes - 1;
    const unsigned G = f->geom.qk, ss = f->geom.fields[last].size;
    int bad_code = 0, bad_scale = 0, zero_scale_inside = 0, bad_value = 0;
    for (uint64_t row = 0; row < n; row++) {
        const uint8_t *codes = w + l.planes[0].offset + row * l.planes[0].row_bytes;
        const uint8_t *high = w + l.planes[1].offset + row * l.planes[1].row_bytes;
        const uint8_t *sc = w + l.planes[last].offset + row * l.planes[last].row_bytes;
        for (uint64_t i = k; i < l.k_pad; i++) {
            unsigned c;
            if (f->id == GB_PLANAR_W8G32_F16S)
                c = codes[i];
            else
                c = (codes[i / 2] >> (4 * (i & 1))) & 15;
            if (f->id == GB_PLANAR_Q5G64_F16S) c |= ((high[i / 8] >> (i % 8)) & 1) << 4;
            if (f->id == GB_PLANAR_Q6G64_F16S) c |= ((high[i / 4] >> (2 * (i % 4))) & 3) << 4;
            if (c != f->zero_code) bad_code++;
            if (element(f, w, l.bytes, n, k, 1.0f, row, i) != 0.0f) bad_value++;
        }
        for (uint64_t g = 0; g < l.groups; g++) {
            int zero = sc[g * ss] == 0 && (ss == 1 || sc[g * ss + 1] == 0);
            if (g * G >= k && !zero) bad_scale++;
            if (g * G < k && zero) zero_scale_inside++;
        }
    }
    CHECK(bad_code == 0, "%s k=%llu: %d padding codes are not the zero code %u", f->name,
          (unsigned long long)k, bad_code, f->zero_code);
    CHECK(bad_value == 0, "%s k=%llu: %d padding elements decode to nonzero", f->name,
          (unsigned long long)k, bad_value);
    CHECK(bad_scale == 0, "%s k=%llu: %d groups entirely in the padding have a scale other than +0",
          f->name, (unsigned long long)k, bad_scale);
    /* fp16 scales are never 0; an E4M3 byte is 0 with probability 1/127. */
    if (f->scale == GB_PLANAR_SCALE_F16)
        CHECK(zero_scale_inside == 0, "%s: %d groups with data got scale 0", f->name,
              zero_scale_inside);
}

static void test_random(void) {
    int before = failures;
    gb_err e = {0};
    for (int fi = 0; fi < NDOC; fi++) {
        const gb_planar_format *f = gb_planar_at(fi);
        const uint64_t n = 5, k = 200;
        gb_planar_layout l;
        CHECK(gb_planar_layout_of(f, n, k, &l, "test", &e) == 0, "layout");
        /* One spare byte after the weights shows the generator writes exactly the weight bytes. */
        uint8_t *a = malloc(l.bytes + 1), *b = malloc(l.bytes + 1);
        a[l.bytes] = b[l.bytes] = 0xA5;
        CHECK(gb_ref_planar_random(f, n, k, 42, a, l.bytes + 1, &e) == 0, "%s random", f->name);
        CHECK(gb_ref_planar_random(f, n, k, 42, b, l.bytes + 1, &e) == 0, "%s random", f->name);
        CHECK(memcmp(a, b, l.bytes) == 0 && a[l.bytes] == 0xA5, "%s: same seed, same bytes",
              f->name);
        CHECK(gb_ref_planar_random(f, n, k, 43, b, l.bytes, &e) == 0 && memcmp(a, b, l.bytes) != 0,
              "%s: another seed, other bytes", f->name);
        if (f->id != GB_PLANAR_BF16) check_padding(f, a, n, k);
        /* Scales: fp16 magnitudes in [2^-12, 2^-3) (as blocks.c), E4M3 never negative or NaN. */
        const int last = l.nplanes - 1;
        const uint8_t *sc = a + l.planes[last].offset;
        int bad = 0, distinct = 0, seen[256] = {0};
        for (uint64_t j = 0; j < l.bytes; j++)
            if (!seen[a[j]]++) distinct++;
        for (uint64_t j = 0; f->scale == GB_PLANAR_SCALE_E4M3 && j < l.planes[last].row_bytes * n;
             j++)
            if (sc[j] & 0x80 || sc[j] == 0x7F) bad++;
        if (f->scale == GB_PLANAR_SCALE_F16)
            for (uint64_t g = 0; g < l.groups * n; g++) {
                uint16_t m = (uint16_t)((sc[2 * g] | sc[2 * g + 1] << 8) & 0x7FFF);
                if (m != 0 && (m < 0x0C00 || m >= 0x3000)) bad++; /* [2^-12, 2^-3) */
            }
        CHECK(bad == 0, "%s: %d scales out of range", f->name, bad);
        CHECK(distinct > 8, "%s: only %d distinct bytes", f->name, distinct);
        /* Every decoded value is finite (no NaN scale), and rows decode as elements do. */
        float *out = malloc(n * k * sizeof(float));
        CHECK(gb_ref_planar_dequantize(f, a, l.bytes, n, k, 0.5f, out, &e) == 0, "dequantize");
        int nonfinite = 0, mismatch = 0;
        float row[200];
        for (uint64_t r = 0; r < n; r++) {
            CHECK(gb_ref_planar_dequant_row(f, a, l.bytes, n, k, 0.5f, r, row, &e) == 0, "row");
            for (uint64_t i = 0; i < k; i++) {
                if (!isfinite(out[r * k + i])) nonfinite++;
                if (!same(row[i], out[r * k + i]) ||
                    !same(row[i], element(f, a, l.bytes, n, k, 0.5f, r, i)))
                    mismatch++;
            }
        }
        CHECK(nonfinite == 0 && mismatch == 0, "%s: %d non-finite, %d row/element mismatches",
              f->name, nonfinite, mismatch);
        free(out);
        free(a);
        free(b);
    }
    /* NVFP4 over many groups: 0x7F is re-drawn, so no scale byte is NaN. */
    const gb_planar_format *nv = fmt("nvfp4");
    size_t bytes = 64 * 9 * 64; /* 64 rows of K = 1024 */
    uint8_t *big = malloc(bytes);
    CHECK(gb_ref_planar_random(nv, 64, 1024, 7, big, bytes, &e) == 0, "nvfp4 random");
    int nan_scales = 0, hist_top = 0;
    for (size_t j = 64 * 512; j < bytes; j++) {
        if (big[j] == 0x7F || big[j] == 0xFF) nan_scales++;
        if (big[j] == 0x7E) hist_top++;
    }
    CHECK(nan_scales == 0 && hist_top > 0, "nvfp4: %d NaN scales, %d scales of 448", nan_scales,
          hist_top);
    free(big);
    /* The padding of a row whose K is a multiple of 128 is empty; K = 1 leaves 127 padding codes.
     */
    uint8_t small[4 * 50];
    CHECK(gb_ref_planar_random(fmt("q6"), 2, 1, 3, small, sizeof small, &e) == 0, "q6 k=1");
    check_padding(fmt("q6"), small, 2, 1);
    const char *too_small[] = {"planar_random failed: BAD_SIZE",
                               "Q6G64_F16S",
                               "n=2 k=1",
                               "take 200 bytes",
                               "holds 99",
                               NULL};
    expect_error(gb_ref_planar_random(fmt("q6"), 2, 1, 3, small, 99, &e), &e, too_small,
                 "q6 99 bytes");
    report("random weights: determinism, scales, padding", before);
}

/* K = 200 by hand: the padding codes and +0 scales of a hand-built row decode to 0. */
static void test_padding_hand(void) {
    int before = failures;
    const gb_planar_format *f = fmt("nvfp4");
    uint8_t w[128 + 16];  /* N=1, K=200: K_pad 256, 16 groups of 16 */
    memset(w, 0x77, 128); /* every code 7: 6.0 */
    for (int i = 200; i < 256; i++) set_nibble(w, (uint64_t)i, 0);
    for (int g = 0; g < 16; g++) w[128 + g] = g < 13 ? 0x38 : 0x00; /* groups 13..15 padding */
    float out[200];
    gb_err e = {0};
    CHECK(gb_ref_planar_dequant_row(f, w, sizeof w, 1, 200, 1.0f, 0, out, &e) == 0, "row");
    int bad = 0;
    for (int i = 0; i < 200; i++) bad += out[i] != 6.0f;
    CHECK(bad == 0, "nvfp4 k=200: %d data elements differ", bad);
    for (int i = 200; i < 256; i++) bad += element(f, w, sizeof w, 1, 200, 1.0f, 0, i) != 0.0f;
    CHECK(bad == 0, "nvfp4 k=200: %d padding elements nonzero", bad);
    float v;
    const char *idx[] = {"planar_element failed: BAD_INDEX", "(0, 256)", "256 elements", NULL};
    expect_error(gb_ref_planar_element(f, w, sizeof w, 1, 200, 1.0f, 0, 256, &v, &e), &e, idx,
                 "i=K_pad");
    report("padding by hand (K=200)", before);
}

/* ------------------------------------------------------------------ the FP64 reference */

static uint16_t bf(float v) { return gb_f32_to_bf16(v); }

static void test_linear(void) {
    int before = failures;
    gb_err e = {0};
    /* BF16 W = [[1, 2, 3], [-4, 5, -6]], x = [[0.5, -1, 2], [1, 1, 1]]:
     * r = [[4.5, -19], [6, -5]], s = sqrt of [[40.25, 173], [14, 77]]. */
    uint8_t w[12];
    const float wv[6] = {1, 2, 3, -4, 5, -6};
    for (int i = 0; i < 6; i++) put16(w + 2 * i, bf(wv[i]));
    const uint16_t x[6] = {bf(0.5f), bf(-1), bf(2), bf(1), bf(1), bf(1)};
    double r[4], s[4];
    CHECK(gb_ref_linear(fmt("bf16"), w, sizeof w, 2, 3, 1.0f, x, 6, 2, r, s, &e) == 0,
          "bf16 linear");
    CHECK(r[0] == 4.5 && r[1] == -19 && r[2] == 6 && r[3] == -5, "r = %g %g %g %g", r[0], r[1],
          r[2], r[3]);
    CHECK(s[0] == sqrt(40.25) && s[1] == sqrt(173.0) && s[2] == sqrt(14.0) && s[3] == sqrt(77.0),
          "s = %g %g %g %g", s[0], s[1], s[2], s[3]);

    /* Q4, N=1, K=3: codes 9, 6, 15 (values 0.5, -1, 3.5 at s = 0.5), the padding holding
     * code 15 on purpose: only k < K counts. x = [2, 1, -1]: r = 1 - 1 - 3.5. */
    uint8_t q[68];
    memset(q, 0xFF, 64);
    set_nibble(q, 0, 9);
    set_nibble(q, 1, 6);
    put16(q + 64, 0x3800);
    put16(q + 66, 0x3800);
    const uint16_t xq[3] = {bf(2), bf(1), bf(-1)};
    CHECK(gb_ref_linear(fmt("q4"), q, sizeof q, 1, 3, 1.0f, xq, 3, 1, r, s, &e) == 0, "q4 linear");
    CHECK(r[0] == -3.5 && s[0] == sqrt(14.25), "q4: r %g s %g", r[0], s[0]);

    /* NVFP4, N=2, K=2: codes 7 (6) and 10 (-1) in row 0, 1 (0.5) and 0 in row 1, scales
     * 0x40 (2) and 0x01 (2^-9), gscale 0.5: w = [[6, -1], [2^-11, 0]]; x = [1, 3]:
     * r = [6 - 3, 2^-11], s = [sqrt(36 + 9), 2^-11]. */
    uint8_t nv[2 * 72];
    memset(nv, 0, sizeof nv);
    set_nibble(nv, 0, 7);
    set_nibble(nv, 1, 10);
    set_nibble(nv + 64, 0, 1);
    nv[128] = 0x40;
    nv[136] = 0x01;
    const uint16_t xn[2] = {bf(1), bf(3)};
    CHECK(gb_ref_linear(fmt("nvfp4"), nv, sizeof nv, 2, 2, 0.5f, xn, 2, 1, r, s, &e) == 0,
          "nvfp4 linear");
    CHECK(r[0] == 3.0 && s[0] == sqrt(45.0) && r[1] == 0x1p-11 && s[1] == 0x1p-11,
          "nvfp4: r %a %a s %a %a", r[0], r[1], s[0], s[1]);

    /* Compensated summation: 2^60 + 1 - 2^60 is 1, which a plain double sum loses. */
    uint8_t c3[6];
    put16(c3, bf(0x1p60f));
    put16(c3 + 2, bf(1));
    put16(c3 + 4, bf(-0x1p60f));
    const uint16_t ones[3] = {bf(1), bf(1), bf(1)};
    CHECK(gb_ref_linear(fmt("bf16"), c3, sizeof c3, 1, 3, 1.0f, ones, 3, 1, r, s, &e) == 0 &&
              r[0] == 1.0,
          "compensated sum: %g", r[0]);

    const char *small_w[] = {"linear failed: BAD_SIZE", "Q4G64_F16S", "n=1 k=3",
                             "take 68 bytes",           "holds 67",   NULL};
    expect_error(gb_ref_linear(fmt("q4"), q, 67, 1, 3, 1.0f, xq, 3, 1, r, s, &e), &e, small_w,
                 "weights short");
    const char *small_x[] = {"linear failed: BAD_SIZE", "t=2 rows of k=3", "6 bf16 values",
                             "holds 5", NULL};
    expect_error(gb_ref_linear(fmt("q4"), q, sizeof q, 1, 3, 1.0f, x, 5, 2, r, s, &e), &e, small_x,
                 "x short");
    const char *zero_t[] = {"linear failed: BAD_T", "t must be positive", NULL};
    expect_error(gb_ref_linear(fmt("q4"), q, sizeof q, 1, 3, 1.0f, xq, 3, 0, r, s, &e), &e, zero_t,
                 "t=0");
    const char *gs[] = {"BAD_GSCALE", "finite", NULL};
    expect_error(gb_ref_linear(fmt("nvfp4"), nv, sizeof nv, 2, 2, NAN, xn, 2, 1, r, s, &e), &e, gs,
                 "gscale NaN");
    report("FP64 Linear reference by hand", before);
}

static void test_check(void) {
    int before = failures;
    /* 2 x 3 outputs: r exact in bf16, s chosen so every bound is 2^-8|r| + 2^-7 s. */
    const double r[6] = {1.0, -2.0, 0.0, 0.0, 0.0, 3.0};
    const double s[6] = {1.0, 1.0, 128.0, 128.0, 0.0, 2.0};
    uint16_t y[6];
    for (int i = 0; i < 6; i++) y[i] = bf((float)r[i]);
    gb_linear_check c;
    gb_ref_check_linear(y, r, s, 2, 3, GB_WEIGHTS_EXACT, &c);
    CHECK(c.failures == 0 && !c.has_first && c.worst == 0.0, "exact y: %llu failures, worst %g",
          (unsigned long long)c.failures, c.worst);
    /* On the bound passes: r = 0, s = 128 gives a bound of exactly 1. */
    y[2] = bf(1.0f);
    y[3] = bf(-1.0f);
    gb_ref_check_linear(y, r, s, 2, 3, GB_WEIGHTS_EXACT, &c);
    CHECK(c.failures == 0 && c.worst == 1.0, "on the bound: %llu failures, worst %g",
          (unsigned long long)c.failures, c.worst);
    /* Injected errors: (t=1, n=0) off by 1.0078125 - 0 (ratio 1.0078125), (t=1, n=2) by 0.5
     * against 2^-8*3 + 2^-7*2: two failures, the first the earlier one in row-major order. */
    y[3] = bf(1.0078125f);
    y[5] = bf(3.5f);
    gb_ref_check_linear(y, r, s, 2, 3, GB_WEIGHTS_EXACT, &c);
    const double b5 = 3 * 0x1p-8 + 2 * 0x1p-7;
    CHECK(c.failures == 2 && c.has_first && c.first_t == 1 && c.first_n == 0 &&
              c.first_y == 1.0078125 && c.first_r == 0.0 && c.first_bound == 1.0,
          "injected: %llu failures, first (%llu, %llu) y %g r %g bound %g",
          (unsigned long long)c.failures, (unsigned long long)c.first_t,
          (unsigned long long)c.first_n, c.first_y, c.first_r, c.first_bound);
    CHECK(c.worst == 0.5 / b5 && c.worst_t == 1 && c.worst_n == 2, "worst %g at (%llu, %llu)",
          c.worst, (unsigned long long)c.worst_t, (unsigned long long)c.worst_n);
    /* Weights rounded to bf16 widen the s term to 2^-6 s: (t=1, n=0) is then inside its bound
     * of 2 (ratio 1.0078125 / 2), (t=1, n=2) still outside 3 * 2^-8 + 2 * 2^-6. */
    gb_ref_check_linear(y, r, s, 2, 3, GB_WEIGHTS_BF16, &c);
    const double b5w = 3 * 0x1p-8 + 2 * 0x1p-6;
    CHECK(c.failures == 1 && c.first_t == 1 && c.first_n == 2 && c.first_bound == b5w &&
              c.worst == 0.5 / b5w,
          "bf16 weights: %llu failures, first (%llu, %llu) bound %g, worst %g",
          (unsigned long long)c.failures, (unsigned long long)c.first_t,
          (unsigned long long)c.first_n, c.first_bound, c.worst);
    CHECK(gb_ref_linear_bound(-2.0, 1.0, GB_WEIGHTS_BF16) == 2 * 0x1p-8 + 0x1p-6 &&
              gb_ref_linear_bound(-2.0, 1.0, GB_WEIGHTS_EXACT) == 2 * 0x1p-8 + 0x1p-7,
          "the two bounds");
    /* A bound of 0 (r = s = 0) admits only y = 0; NaN fails with an infinite ratio. */
    y[3] = bf(0.0f);
    y[5] = bf(3.0f);
    y[4] = 0x0001; /* the smallest bf16 subnormal */
    gb_ref_check_linear(y, r, s, 2, 3, GB_WEIGHTS_EXACT, &c);
    CHECK(c.failures == 1 && c.first_t == 1 && c.first_n == 1 && isinf(c.worst),
          "zero bound: %llu failures, worst %g", (unsigned long long)c.failures, c.worst);
    y[4] = bf(0.0f);
    y[0] = 0x7FC0; /* NaN */
    gb_ref_check_linear(y, r, s, 2, 3, GB_WEIGHTS_EXACT, &c);
    CHECK(c.failures == 1 && c.first_t == 0 && c.first_n == 0 && isinf(c.worst) && isnan(c.first_y),
          "NaN y: %llu failures, worst %g", (unsigned long long)c.failures, c.worst);
    y[0] = 0x7F80; /* +Inf */
    gb_ref_check_linear(y, r, s, 2, 3, GB_WEIGHTS_EXACT, &c);
    CHECK(c.failures == 1 && isinf(c.worst), "Inf y: %llu failures",
          (unsigned long long)c.failures);

    /* A random Q5 case: y = bf16(r) passes; r plus 3 bounds at one output fails exactly there. */
    gb_err e = {0};
    const gb_planar_format *f = fmt("q5");
    const uint64_t n = 37, k = 200, t = 3;
    gb_planar_layout l;
    CHECK(gb_planar_layout_of(f, n, k, &l, "test", &e) == 0, "layout");
    uint8_t *w = malloc(l.bytes);
    uint16_t x[3 * 200], yy[3 * 37];
    double rr[3 * 37], ss[3 * 37];
    CHECK(gb_ref_planar_random(f, n, k, 5, w, l.bytes, &e) == 0, "random");
    gb_rng rng;
    gb_rng_seed(&rng, 6);
    gb_random_fill(x, t * k, GB_DT_BF16, GB_DIST_NORMAL, 0.0, 1.0, &rng);
    CHECK(gb_ref_linear(f, w, l.bytes, n, k, 1.0f, x, t * k, t, rr, ss, &e) == 0, "linear");
    for (uint64_t i = 0; i < t * n; i++) yy[i] = bf((float)rr[i]);
    gb_ref_check_linear(yy, rr, ss, t, n, GB_WEIGHTS_EXACT, &c);
    CHECK(c.failures == 0 && c.worst <= 0.5, "bf16(r): %llu failures, worst %g",
          (unsigned long long)c.failures, c.worst);
    const uint64_t at = 2 * n + 30;
    yy[at] = bf((float)(rr[at] + 3 * gb_ref_linear_bound(rr[at], ss[at], GB_WEIGHTS_EXACT)));
    gb_ref_check_linear(yy, rr, ss, t, n, GB_WEIGHTS_EXACT, &c);
    CHECK(c.failures == 1 && c.first_t == 2 && c.first_n == 30 && c.worst > 2.5 && c.worst < 3.5,
          "injected: %llu failures at (%llu, %llu), worst %g", (unsigned long long)c.failures,
          (unsigned long long)c.first_t, (unsigned long long)c.first_n, c.worst);
    free(w);
    gb_err_clear(&e);
    report("the accuracy check of docs/LINEAR.md", before);
}

int main(void) {
    test_table();
    test_layout();
    test_minifloats();
    test_q4();
    test_q5();
    test_q6();
    test_w8();
    test_nvfp4();
    test_bf16();
    test_padding_hand();
    test_random();
    test_linear();
    test_check();
    return check_finish("test_ref_planar");
}
