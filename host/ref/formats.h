/* The weight formats' geometry: one table, one entry per format (docs/FORMATS.md).
 *
 * Each entry says how many elements a block holds (QK), how many bytes it
 * takes, how a row of K weights is laid out, and which byte fields the block
 * is made of. The field list is what makes the table self-describing: the
 * random block generator (blocks.c) fills fields by kind, so a new format
 * needs only a new entry here and a dequantizer in dequant.c.
 *
 * docs/FORMATS.md defines two layouts. The GGML block formats store a row as K/QK
 * consecutive self-contained blocks. The planar group formats (Q4G64_F16S and
 * friends) pad K to a multiple of `k_pad` and store each field as its own
 * plane over the whole matrix; for them "block" means one group of QK = G
 * elements and `block_bytes` the bytes one group takes over all planes, so
 * row and matrix sizes come out of the same functions. */
#ifndef GPUBENCH_FORMATS_H
#define GPUBENCH_FORMATS_H

#include <stdint.h>

#include "backend.h"

typedef enum gb_format_id {
    GB_FMT_F32,
    GB_FMT_F16,
    GB_FMT_BF16,
    GB_FMT_Q4_0,
    GB_FMT_Q8_0,
    GB_FMT_Q4_K,
    GB_FMT_Q5_K,
    GB_FMT_Q6_K,
    GB_FMT_COUNT
} gb_format_id;

typedef enum gb_layout {
    GB_LAYOUT_BLOCKS, /* GGML: a row is K/QK consecutive blocks; K must be a multiple of QK */
    GB_LAYOUT_PLANAR  /* gpubench groups: K padded to k_pad, one plane per field */
} gb_layout;

/* What a byte field of a block holds; decides how random blocks fill it. */
typedef enum gb_field_kind {
    GB_FIELD_PAYLOAD,   /* codes, packed sub-scales: any byte is valid */
    GB_FIELD_F16_SCALE, /* an fp16 scale (d, dmin): random blocks keep it finite and sane */
    GB_FIELD_F32,       /* plain elements: random blocks draw normal values */
    GB_FIELD_F16,
    GB_FIELD_BF16
} gb_field_kind;

typedef struct gb_field {
    const char *name;
    uint16_t offset; /* bytes from the start of the block */
    uint16_t size;   /* bytes; scale and element fields are one value */
    gb_field_kind kind;
} gb_field;

enum { GB_FORMAT_MAX_FIELDS = 6 };

typedef struct gb_format {
    gb_format_id id;
    const char *name;
    gb_layout layout;
    uint32_t qk;          /* elements per block (group size G for planar formats) */
    uint32_t block_bytes; /* bytes per block (per group, all planes, for planar formats) */
    uint32_t k_pad;       /* planar: K is padded to a multiple of this; 0 for blocks */
    int nfields;          /* the fields tile [0, block_bytes) exactly */
    gb_field fields[GB_FORMAT_MAX_FIELDS];
} gb_format;

int gb_format_count(void);
const gb_format *gb_format_at(int i); /* NULL when out of range */
const gb_format *gb_format_get(gb_format_id id);
const gb_format *gb_format_find(const char *name); /* NULL when unknown */
/* As gb_format_find, with an error listing the known names. */
int gb_format_lookup(const char *name, const gb_format **out, gb_err *e);

/* Bits per weight: 8 * block_bytes / qk (4.5 for q4_0). */
double gb_format_bits(const gb_format *f);

/* Bytes of one row of k weights. Fails (BAD_K) when k is 0, or, for block
 * layouts, not a multiple of qk. */
int gb_format_row_bytes(const gb_format *f, uint64_t k, uint64_t *out, gb_err *e);
/* Bytes of an m x k matrix (m rows of k weights), with overflow checked. */
int gb_format_matrix_bytes(const gb_format *f, uint64_t m, uint64_t k, uint64_t *out, gb_err *e);

#endif
