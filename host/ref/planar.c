#include <math.h>
#include <stdio.h>
#include <string.h>

#include "random.h"
#include "ref_blocks.h"
#include "ref_planar.h"

/* The descriptors transcribe docs/FORMATS.md's "Plane layout" and "Weight and
 * model bytes" tables; tests/c/test_ref_planar.c checks them against it.
 * .geom.id is GB_FMT_COUNT (no block-table entry) so that gb_ref_dequantize
 * refuses a planar geometry passed to it by mistake. The E4M3 plane is marked
 * PAYLOAD: the field kinds have no E4M3 kind, and the generator below goes by
 * gb_planar_format.scale, not by field kind. */
/* clang-format off */
#define PLANAR_GEOM(nm, g, bytes, nf, ...) \
    {GB_FMT_COUNT, nm, GB_LAYOUT_PLANAR, .qk = g, .block_bytes = bytes, .k_pad = 128, \
     .nfields = nf, .fields = {__VA_ARGS__}}
static const gb_planar_format planar[GB_PLANAR_COUNT] = {
    [GB_PLANAR_Q4G64_F16S] = {GB_PLANAR_Q4G64_F16S, "Q4G64_F16S", "q4",
        PLANAR_GEOM("Q4G64_F16S", 64, 34, 2, {"codes", 0, 32, GB_FIELD_PAYLOAD},
                                             {"scales", 32, 2, GB_FIELD_F16_SCALE}),
        4, 8, 8, GB_PLANAR_SCALE_F16},
    [GB_PLANAR_Q5G64_F16S] = {GB_PLANAR_Q5G64_F16S, "Q5G64_F16S", "q5",
        PLANAR_GEOM("Q5G64_F16S", 64, 42, 3, {"codes", 0, 32, GB_FIELD_PAYLOAD},
                                             {"high", 32, 8, GB_FIELD_PAYLOAD},
                                             {"scales", 40, 2, GB_FIELD_F16_SCALE}),
        5, 16, 16, GB_PLANAR_SCALE_F16},
    [GB_PLANAR_Q6G64_F16S] = {GB_PLANAR_Q6G64_F16S, "Q6G64_F16S", "q6",
        PLANAR_GEOM("Q6G64_F16S", 64, 50, 3, {"codes", 0, 32, GB_FIELD_PAYLOAD},
                                             {"high", 32, 16, GB_FIELD_PAYLOAD},
                                             {"scales", 48, 2, GB_FIELD_F16_SCALE}),
        6, 32, 32, GB_PLANAR_SCALE_F16},
    [GB_PLANAR_W8G32_F16S] = {GB_PLANAR_W8G32_F16S, "W8G32_F16S", "w8",
        PLANAR_GEOM("W8G32_F16S", 32, 34, 2, {"codes", 0, 32, GB_FIELD_PAYLOAD},
                                             {"scales", 32, 2, GB_FIELD_F16_SCALE}),
        8, 0, 0, GB_PLANAR_SCALE_F16},
    [GB_PLANAR_NVFP4] = {GB_PLANAR_NVFP4, "NVFP4", "nvfp4",
        PLANAR_GEOM("NVFP4", 16, 9, 2, {"codes", 0, 8, GB_FIELD_PAYLOAD},
                                       {"scales", 8, 1, GB_FIELD_PAYLOAD}), /* E4M3 */
        4, 0, 0, GB_PLANAR_SCALE_E4M3},
    [GB_PLANAR_BF16] = {GB_PLANAR_BF16, "BF16", "bf16",
        {GB_FMT_BF16, "BF16", GB_LAYOUT_BLOCKS, .qk = 1, .block_bytes = 2, .nfields = 1,
         .fields = {{"values", 0, 2, GB_FIELD_BF16}}},
        16, 0, 0, GB_PLANAR_SCALE_NONE},
};
#undef PLANAR_GEOM
/* clang-format on */

int gb_planar_count(void) { return GB_PLANAR_COUNT; }

const gb_planar_format *gb_planar_at(int i) {
    return (i >= 0 && i < GB_PLANAR_COUNT) ? &planar[i] : NULL;
}

const gb_planar_format *gb_planar_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < GB_PLANAR_COUNT; i++)
        if (strcmp(planar[i].name, name) == 0 || strcmp(planar[i].qtype, name) == 0)
            return &planar[i];
    return NULL;
}

int gb_planar_lookup(const char *name, const gb_planar_format **out, gb_err *e) {
    const gb_planar_format *f = gb_planar_find(name);
    if (f) {
        *out = f;
        return 0;
    }
    char known[256];
    size_t used = 0;
    known[0] = '\0';
    for (int i = 0; i < GB_PLANAR_COUNT && used < sizeof known; i++) {
        int w = snprintf(known + used, sizeof known - used, "%s%s (%s)", i ? ", " : "",
                         planar[i].name, planar[i].qtype);
        if (w < 0) break;
        used += (size_t)w;
    }
    return GB_FAIL(e,
                   "planar format lookup failed: UNKNOWN_FORMAT (no planar format named '%s'; "
                   "known: %s)",
                   name ? name : "(null)", known);
}

int gb_planar_layout_of(const gb_planar_format *f, uint64_t n, uint64_t k, gb_planar_layout *out,
                        const char *call, gb_err *e) {
    if (!f) return GB_FAIL(e, "%s failed: BAD_FORMAT (no format given)", call);
    if (n == 0) return GB_FAIL(e, "%s failed: BAD_N (%s: n must be positive)", call, f->name);
    if (k == 0) return GB_FAIL(e, "%s failed: BAD_K (%s: k must be positive)", call, f->name);
    const gb_format *g = &f->geom;
    uint64_t bytes;
    if (gb_format_matrix_bytes(g, n, k, &bytes, e) != 0) return -1;
    if (bytes > SIZE_MAX)
        return GB_FAIL(e, "%s failed: OVERFLOW (%s: %llu x %llu weights do not fit in memory)",
                       call, f->name, (unsigned long long)n, (unsigned long long)k);
    memset(out, 0, sizeof *out);
    out->n = n;
    out->k = k;
    out->bytes = bytes;
    out->k_pad = g->layout == GB_LAYOUT_PLANAR ? (k + g->k_pad - 1) / g->k_pad * g->k_pad : k;
    out->groups = g->layout == GB_LAYOUT_PLANAR ? out->k_pad / g->qk : 0;
    out->nplanes = g->nfields;
    uint64_t at = 0;
    for (int p = 0; p < g->nfields; p++) {
        /* A plane row holds one field per group (per element for BF16). */
        uint64_t per_row = (g->layout == GB_LAYOUT_PLANAR ? out->groups : k) * g->fields[p].size;
        out->planes[p] = (gb_planar_plane){g->fields[p].name, at, per_row};
        at += per_row * n;
    }
    return 0;
}

/* ------------------------------------------------------------------ decoding */

static const float e2m1_mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

float gb_ref_e2m1(unsigned code) {
    float m = e2m1_mag[code & 7];
    return (code & 8) ? -m : m; /* code 8 is -0 */
}

float gb_ref_e4m3(uint8_t bits) {
    unsigned ex = (bits >> 3) & 15, m = bits & 7;
    if ((bits & 0x7F) == 0x7F) return NAN;
    /* E = 0: M/8 * 2^-6 = M * 2^-9; else (8 + M) * 2^(E-10). Both exact in fp32. */
    float v = ex == 0 ? ldexpf((float)m, -9) : ldexpf((float)(8 + m), (int)ex - 10);
    return (bits & 0x80) ? -v : v;
}

/* The planes of one matrix, resolved once. */
typedef struct view {
    const gb_planar_format *f;
    const gb_planar_layout *l;
    const uint8_t *codes, *high, *scales;
    float gscale;
} view;

static view make_view(const gb_planar_format *f, const gb_planar_layout *l, const void *w,
                      float gscale) {
    const uint8_t *p = w;
    view v = {f, l, p + l->planes[0].offset, NULL, NULL, gscale};
    if (l->nplanes == 3) v.high = p + l->planes[1].offset;
    if (l->nplanes >= 2) v.scales = p + l->planes[l->nplanes - 1].offset;
    return v;
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

/* docs/FORMATS.md's per-element rules; i < K_pad (BF16: i < K). */
static float decode(const view *v, uint64_t row, uint64_t i) {
    const gb_planar_layout *l = v->l;
    if (v->f->id == GB_PLANAR_BF16) return gb_bf16_to_f32(rd16(v->codes + 2 * (row * l->k + i)));
    const uint8_t *codes = v->codes + row * l->planes[0].row_bytes;
    const uint64_t grp = i / v->f->geom.qk;
    int c;
    if (v->f->id == GB_PLANAR_W8G32_F16S) {
        c = (int8_t)codes[i];
    } else {
        c = (codes[i / 2] >> (4 * (i & 1))) & 15; /* even element: low nibble */
        const uint8_t *high = v->high ? v->high + row * l->planes[1].row_bytes : NULL;
        if (v->f->id == GB_PLANAR_Q5G64_F16S) c |= ((high[i / 8] >> (i % 8)) & 1) << 4;
        if (v->f->id == GB_PLANAR_Q6G64_F16S) c |= ((high[i / 4] >> (2 * (i % 4))) & 3) << 4;
    }
    const uint8_t *sc = v->scales + row * l->planes[l->nplanes - 1].row_bytes;
    if (v->f->scale == GB_PLANAR_SCALE_E4M3) {
        float gs = gb_ref_e2m1((unsigned)c) * gb_ref_e4m3(sc[grp]); /* exact */
        return gs * v->gscale;                                      /* the one rounding */
    }
    return (float)(c - v->f->code_offset) * gb_f16_to_f32(rd16(sc + 2 * grp));
}

int gb_planar_check_weights(const char *call, const gb_planar_format *f, const void *w,
                            size_t wbytes, uint64_t n, uint64_t k, float gscale,
                            gb_planar_layout *l, gb_err *e) {
    if (gb_planar_layout_of(f, n, k, l, call, e) != 0) return -1;
    if (!w) return GB_FAIL(e, "%s failed: BAD_ARGUMENT (no weights given)", call);
    if ((uint64_t)wbytes < l->bytes)
        return GB_FAIL(e,
                       "%s failed: BAD_SIZE (%s weights of n=%llu k=%llu take %llu bytes, the "
                       "buffer holds %zu)",
                       call, f->name, (unsigned long long)n, (unsigned long long)k,
                       (unsigned long long)l->bytes, wbytes);
    if (!isfinite(gscale))
        return GB_FAIL(e, "%s failed: BAD_GSCALE (the tensor scale must be finite, got %g)", call,
                       (double)gscale);
    return 0;
}

int gb_ref_planar_element(const gb_planar_format *f, const void *w, size_t wbytes, uint64_t n,
                          uint64_t k, float gscale, uint64_t row, uint64_t i, float *out,
                          gb_err *e) {
    gb_planar_layout l;
    if (gb_planar_check_weights("planar_element", f, w, wbytes, n, k, gscale, &l, e) != 0)
        return -1;
    if (row >= n || i >= l.k_pad)
        return GB_FAIL(e,
                       "planar_element failed: BAD_INDEX (%s: element (%llu, %llu) of a matrix "
                       "of %llu rows of %llu elements)",
                       f->name, (unsigned long long)row, (unsigned long long)i,
                       (unsigned long long)n, (unsigned long long)l.k_pad);
    view v = make_view(f, &l, w, gscale);
    *out = decode(&v, row, i);
    return 0;
}

static void decode_row(const view *v, uint64_t row, float *out) {
    for (uint64_t i = 0; i < v->l->k; i++) out[i] = decode(v, row, i);
}

int gb_ref_planar_dequant_row(const gb_planar_format *f, const void *w, size_t wbytes, uint64_t n,
                              uint64_t k, float gscale, uint64_t row, float *out, gb_err *e) {
    gb_planar_layout l;
    if (gb_planar_check_weights("planar_dequant_row", f, w, wbytes, n, k, gscale, &l, e) != 0)
        return -1;
    if (row >= n)
        return GB_FAIL(e, "planar_dequant_row failed: BAD_ROW (%s: row %llu of a %llu-row matrix)",
                       f->name, (unsigned long long)row, (unsigned long long)n);
    view v = make_view(f, &l, w, gscale);
    decode_row(&v, row, out);
    return 0;
}

int gb_ref_planar_dequantize(const gb_planar_format *f, const void *w, size_t wbytes, uint64_t n,
                             uint64_t k, float gscale, float *out, gb_err *e) {
    gb_planar_layout l;
    if (gb_planar_check_weights("planar_dequantize", f, w, wbytes, n, k, gscale, &l, e) != 0)
        return -1;
    if (n > SIZE_MAX / sizeof(float) / k)
        return GB_FAIL(e, "planar_dequantize failed: OVERFLOW (%llu x %llu floats)",
                       (unsigned long long)n, (unsigned long long)k);
    view v = make_view(f, &l, w, gscale);
    for (uint64_t row = 0; row < n; row++) decode_row(&v, row, out + row * k);
    return 0;
}

/* ------------------------------------------------------------------ random weights */

/* Random bytes, 8 from each 64-bit draw, low byte first (as blocks.c). */
typedef struct byte_stream {
    gb_rng *r;
    uint64_t word;
    int left;
} byte_stream;

static uint8_t next_byte(byte_stream *b) {
    if (b->left == 0) {
        b->word = gb_rng_next(b->r);
        b->left = 8;
    }
    uint8_t v = (uint8_t)b->word;
    b->word >>= 8;
    b->left--;
    return v;
}

/* Writes the zero code into element i of a row's code (and high-bit) plane rows. */
static void put_zero_code(const gb_planar_format *f, uint8_t *codes, uint8_t *high, uint64_t i) {
    const unsigned z = f->zero_code;
    if (f->id == GB_PLANAR_W8G32_F16S) {
        codes[i] = (uint8_t)z;
        return;
    }
    const unsigned sh = 4 * (unsigned)(i & 1);
    codes[i / 2] = (uint8_t)((codes[i / 2] & ~(15u << sh)) | ((z & 15u) << sh));
    if (f->id == GB_PLANAR_Q5G64_F16S) {
        const unsigned b = (unsigned)(i % 8);
        high[i / 8] = (uint8_t)((high[i / 8] & ~(1u << b)) | (((z >> 4) & 1u) << b));
    } else if (f->id == GB_PLANAR_Q6G64_F16S) {
        const unsigned b = 2 * (unsigned)(i % 4);
        high[i / 4] = (uint8_t)((high[i / 4] & ~(3u << b)) | (((z >> 4) & 3u) << b));
    }
}

int gb_ref_planar_random(const gb_planar_format *f, uint64_t n, uint64_t k, uint64_t seed,
                         void *out, size_t out_bytes, gb_err *e) {
    gb_planar_layout l;
    if (gb_planar_layout_of(f, n, k, &l, "planar_random", e) != 0) return -1;
    if (!out) return GB_FAIL(e, "planar_random failed: BAD_ARGUMENT (no output buffer given)");
    if ((uint64_t)out_bytes < l.bytes)
        return GB_FAIL(e,
                       "planar_random failed: BAD_SIZE (%s weights of n=%llu k=%llu take %llu "
                       "bytes, the buffer holds %zu)",
                       f->name, (unsigned long long)n, (unsigned long long)k,
                       (unsigned long long)l.bytes, out_bytes);
    gb_rng r;
    gb_rng_seed(&r, seed);
    uint8_t *p = out;
    if (f->id == GB_PLANAR_BF16) {
        gb_random_fill(p, (size_t)(n * k), GB_DT_BF16, GB_DIST_NORMAL, 0.0, 1.0, &r);
        return 0;
    }
    /* Planes in order from one stream, each plane row-major; every position is
     * drawn, padding included, and the padding is then overwritten, so the
     * bytes depend on the seed, N and K_pad alone apart from the padding. */
    const int last = l.nplanes - 1;
    for (int pl = 0; pl < l.nplanes; pl++) {
        uint8_t *plane = p + l.planes[pl].offset;
        const uint64_t bytes = l.planes[pl].row_bytes * n;
        if (pl < last) { /* codes and high bits: any byte is valid */
            byte_stream b = {&r, 0, 0};
            for (uint64_t j = 0; j < bytes; j++) plane[j] = next_byte(&b);
        } else if (f->scale == GB_PLANAR_SCALE_F16) {
            for (uint64_t j = 0; j < bytes; j += 2) {
                uint16_t s = gb_ref_random_scale_f16(&r);
                plane[j] = (uint8_t)s;
                plane[j + 1] = (uint8_t)(s >> 8);
            }
        } else { /* E4M3: non-negative, never the NaN 0x7F */
            byte_stream b = {&r, 0, 0};
            for (uint64_t j = 0; j < bytes; j++) {
                uint8_t s;
                do s = next_byte(&b) & 0x7F;
                while (s == 0x7F);
                plane[j] = s;
            }
        }
    }
    const unsigned G = f->geom.qk;
    const size_t scale_size = f->geom.fields[last].size;
    for (uint64_t row = 0; row < n; row++) {
        uint8_t *codes = p + l.planes[0].offset + row * l.planes[0].row_bytes;
        uint8_t *high =
            l.nplanes == 3 ? p + l.planes[1].offset + row * l.planes[1].row_bytes : NULL;
        uint8_t *scales = p + l.planes[last].offset + row * l.planes[last].row_bytes;
        for (uint64_t i = k; i < l.k_pad; i++) put_zero_code(f, codes, high, i);
        /* A group entirely in the padding gets the scale +0. */
        for (uint64_t g = (k + G - 1) / G; g < l.groups; g++)
            memset(scales + g * scale_size, 0, scale_size);
    }
    return 0;
}
