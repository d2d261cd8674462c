#include "ref_blocks.h"

#include <string.h>

#include "random_fill.h"

uint16_t gb_ref_random_scale_f16(gb_rng *r) {
    uint64_t v = gb_rng_next(r);
    /* fp16 exponent fields 3..11 are the binades 2^-12 .. 2^-4 (bias 15). */
    const unsigned nbinades = (GB_REF_SCALE_END_BITS - GB_REF_SCALE_MIN_BITS) >> 10;
    unsigned exp_field = (GB_REF_SCALE_MIN_BITS >> 10) + (unsigned)((v >> 32) % nbinades);
    unsigned mant = (unsigned)(v >> 16) & 0x3ffu;
    unsigned sign = (unsigned)(v >> 63) << 15;
    return (uint16_t)(sign | (exp_field << 10) | mant);
}

static void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* Fills one field; payload bytes come 8 at a time from one draw. */
static void fill_field(const gb_field *fd, uint8_t *p, gb_rng *r) {
    switch (fd->kind) {
    case GB_FIELD_PAYLOAD:
        for (unsigned i = 0; i < fd->size; i += 8) {
            uint64_t v = gb_rng_next(r);
            for (unsigned j = 0; j < 8 && i + j < fd->size; j++) p[i + j] = (uint8_t)(v >> (8 * j));
        }
        break;
    case GB_FIELD_F16_SCALE: put16(p, gb_ref_random_scale_f16(r)); break;
    case GB_FIELD_F32: gb_random_fill(p, 1, GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, r); break;
    case GB_FIELD_F16: gb_random_fill(p, 1, GB_DT_F16, GB_DIST_NORMAL, 0.0, 1.0, r); break;
    case GB_FIELD_BF16: gb_random_fill(p, 1, GB_DT_BF16, GB_DIST_NORMAL, 0.0, 1.0, r); break;
    }
}

int gb_ref_random_blocks(const gb_format *f, uint64_t nblocks, uint64_t seed, void *out,
                         gb_err *e) {
    if (!f) return GB_FAIL(e, "random_blocks failed: BAD_FORMAT (no format given)");
    if (f->block_bytes && nblocks > UINT64_MAX / f->block_bytes)
        return GB_FAIL(e, "random_blocks failed: OVERFLOW (%llu %s blocks is too many)",
                       (unsigned long long)nblocks, f->name);
    gb_rng r;
    gb_rng_seed(&r, seed);
    uint8_t *p = out;
    /* A dense format (one value field per block) is one fill of nblocks
     * values: the same draws in the same order as block by block, over the
     * cores (gb_ref_random_fill). */
    if (f->nfields == 1 && f->fields[0].offset == 0 && f->fields[0].size == f->block_bytes) {
        const gb_field_kind k = f->fields[0].kind;
        const int dense = k == GB_FIELD_F32 || k == GB_FIELD_F16 || k == GB_FIELD_BF16;
        const gb_dtype dt = k == GB_FIELD_F32 ? GB_DT_F32 : k == GB_FIELD_F16 ? GB_DT_F16 : GB_DT_BF16;
        if (dense) return gb_ref_random_fill(out, (size_t)nblocks, dt, GB_DIST_NORMAL, 0.0, 1.0, &r, e);
    }
    /* Blocks are filled in order, fields in table order: the bytes depend on
     * the seed alone. */
    for (uint64_t b = 0; b < nblocks; b++, p += f->block_bytes)
        for (int i = 0; i < f->nfields; i++) fill_field(&f->fields[i], p + f->fields[i].offset, &r);
    return 0;
}
