/* SPIR-V reflection for gpubench's Vulkan kernels (convention: spirv_reflect.h).
 *
 * Reads the module's global section once (capabilities, entry points,
 * execution modes, names, decorations, types, constants, global variables)
 * into per-id records, then derives the argument list and workgroup size.
 * The few SPIR-V enumerants needed are spelled out here so the build needs
 * no SPIR-V headers. */
#include "spirv_reflect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    SPV_MAGIC = 0x07230203u,
    /* opcodes */
    OP_NAME = 5, OP_MEMBER_NAME = 6, OP_ENTRY_POINT = 15, OP_EXECUTION_MODE = 16,
    OP_CAPABILITY = 17, OP_TYPE_BOOL = 20, OP_TYPE_INT = 21, OP_TYPE_FLOAT = 22,
    OP_TYPE_VECTOR = 23, OP_TYPE_MATRIX = 24, OP_TYPE_ARRAY = 28, OP_TYPE_RUNTIME_ARRAY = 29,
    OP_TYPE_STRUCT = 30, OP_TYPE_POINTER = 32, OP_CONSTANT = 43, OP_CONSTANT_COMPOSITE = 44,
    OP_SPEC_CONSTANT = 50, OP_SPEC_CONSTANT_COMPOSITE = 51, OP_FUNCTION = 54, OP_VARIABLE = 59,
    OP_DECORATE = 71, OP_MEMBER_DECORATE = 72, OP_EXECUTION_MODE_ID = 331,
    /* decorations */
    DEC_SPEC_ID = 1, DEC_BLOCK = 2, DEC_BUFFER_BLOCK = 3, DEC_BUILTIN = 11, DEC_BINDING = 33,
    DEC_DESCRIPTOR_SET = 34, DEC_OFFSET = 35,
    BUILTIN_WORKGROUP_SIZE = 25,
    /* storage classes */
    SC_UNIFORM_CONSTANT = 0, SC_UNIFORM = 2, SC_PUSH_CONSTANT = 9, SC_STORAGE_BUFFER = 12,
    /* execution model and modes */
    MODEL_GLCOMPUTE = 5, MODE_LOCAL_SIZE = 17, MODE_LOCAL_SIZE_ID = 38,
    /* SPIR-V's universal limit on ids; a larger bound is a corrupt module. */
    SPV_MAX_BOUND = 0x400000
};

typedef struct spv_id {
    uint32_t op;       /* defining opcode (types, constants, variables); 0 if none */
    uint32_t a, b;     /* first operands after the result id, meaning depends on op */
    uint32_t first;    /* word index of the defining instruction, for structs/composites */
    uint32_t nwords;   /* its word count */
    int32_t set, binding, spec_id;
    uint8_t block, buffer_block, workgroup_size;
    char name[GB_SPV_NAME_MAX];
} spv_id;

typedef struct member_info { /* OpMemberDecorate Offset / OpMemberName records */
    uint32_t type, member, offset;
    int has_offset;
    char name[GB_SPV_NAME_MAX];
} member_info;

typedef struct spv_module {
    const uint32_t *w;
    size_t n;
    uint32_t bound;
    spv_id *ids;
    member_info *members;
    size_t nmembers, cap_members;
    uint32_t entry_id;
    int have_local_size, have_local_size_id;
    uint32_t local_size[3];
} spv_module;

/* Copies a SPIR-V literal string (NUL-terminated, packed in words) that may
 * not run past word `end`. */
static void copy_string(const spv_module *m, size_t at, size_t end, char *dst, size_t cap)
{
    const char *s = (const char *)(m->w + at);
    size_t avail = at < end ? (end - at) * 4 : 0, i = 0;
    while (i < avail && s[i] && i + 1 < cap) {
        dst[i] = s[i];
        i++;
    }
    dst[i] = 0;
}

static member_info *member_slot(spv_module *m, uint32_t type, uint32_t member)
{
    for (size_t i = 0; i < m->nmembers; i++)
        if (m->members[i].type == type && m->members[i].member == member)
            return &m->members[i];
    if (m->nmembers == m->cap_members) {
        size_t cap = m->cap_members ? m->cap_members * 2 : 32;
        member_info *p = realloc(m->members, cap * sizeof *p);
        if (!p)
            return NULL;
        m->members = p;
        m->cap_members = cap;
    }
    member_info *r = &m->members[m->nmembers++];
    memset(r, 0, sizeof *r);
    r->type = type;
    r->member = member;
    return r;
}

static int bad_id(spv_module *m, uint32_t id, const char *label, gb_err *e)
{
    if (id == 0 || id >= m->bound)
        return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: id %u out of range, bound %u)",
                       label, id, m->bound);
    return 0;
}

/* One pass over the global section (everything before the first OpFunction). */
static int scan(spv_module *m, const char *entry, gb_spv_reflection *r, const char *label,
                gb_err *e)
{
    size_t i = 5;
    while (i < m->n) {
        uint32_t wc = m->w[i] >> 16, op = m->w[i] & 0xffff;
        if (wc == 0 || i + wc > m->n)
            return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: truncated instruction "
                              "at word %zu)", label, i);
        const uint32_t *o = m->w + i + 1; /* operands */
        size_t end = i + wc;
        if (op == OP_FUNCTION)
            break;
        switch (op) {
        case OP_CAPABILITY:
            if (wc >= 2 && r->ncaps < GB_SPV_MAX_CAPS)
                r->caps[r->ncaps++] = o[0];
            break;
        case OP_ENTRY_POINT:
            if (wc >= 4 && o[0] == MODEL_GLCOMPUTE) {
                char name[GB_SPV_NAME_MAX];
                copy_string(m, i + 3, end, name, sizeof name);
                if (strcmp(name, entry) == 0)
                    m->entry_id = o[1];
            }
            break;
        case OP_EXECUTION_MODE:
        case OP_EXECUTION_MODE_ID:
            /* The entry id is known: OpEntryPoint precedes all execution modes. */
            if (wc >= 6 && o[0] == m->entry_id &&
                (o[1] == MODE_LOCAL_SIZE || o[1] == MODE_LOCAL_SIZE_ID)) {
                m->local_size[0] = o[2];
                m->local_size[1] = o[3];
                m->local_size[2] = o[4];
                if (o[1] == MODE_LOCAL_SIZE)
                    m->have_local_size = 1;
                else
                    m->have_local_size_id = 1;
            }
            break;
        case OP_NAME:
            if (wc >= 3 && o[0] < m->bound)
                copy_string(m, i + 2, end, m->ids[o[0]].name, GB_SPV_NAME_MAX);
            break;
        case OP_MEMBER_NAME:
            if (wc >= 4) {
                member_info *mi = member_slot(m, o[0], o[1]);
                if (!mi)
                    return GB_FAIL(e, "spirv reflect failed: OUT_OF_MEMORY (%s)", label);
                copy_string(m, i + 3, end, mi->name, GB_SPV_NAME_MAX);
            }
            break;
        case OP_DECORATE:
            if (wc >= 3) {
                if (bad_id(m, o[0], label, e))
                    return -1;
                spv_id *d = &m->ids[o[0]];
                uint32_t lit = wc >= 4 ? o[2] : 0;
                switch (o[1]) {
                case DEC_SPEC_ID: d->spec_id = (int32_t)lit; break;
                case DEC_BLOCK: d->block = 1; break;
                case DEC_BUFFER_BLOCK: d->buffer_block = 1; break;
                case DEC_BINDING: d->binding = (int32_t)lit; break;
                case DEC_DESCRIPTOR_SET: d->set = (int32_t)lit; break;
                case DEC_BUILTIN: d->workgroup_size |= lit == BUILTIN_WORKGROUP_SIZE; break;
                default: break;
                }
            }
            break;
        case OP_MEMBER_DECORATE:
            if (wc >= 5 && o[2] == DEC_OFFSET) {
                member_info *mi = member_slot(m, o[0], o[1]);
                if (!mi)
                    return GB_FAIL(e, "spirv reflect failed: OUT_OF_MEMORY (%s)", label);
                mi->offset = o[3];
                mi->has_offset = 1;
            }
            break;
        case OP_TYPE_BOOL: case OP_TYPE_INT: case OP_TYPE_FLOAT: case OP_TYPE_VECTOR:
        case OP_TYPE_MATRIX: case OP_TYPE_ARRAY: case OP_TYPE_RUNTIME_ARRAY:
        case OP_TYPE_STRUCT: case OP_TYPE_POINTER:
            if (wc >= 2) { /* result id first */
                if (bad_id(m, o[0], label, e))
                    return -1;
                spv_id *d = &m->ids[o[0]];
                d->op = op;
                d->a = wc >= 3 ? o[1] : 0;
                d->b = wc >= 4 ? o[2] : 0;
                d->first = (uint32_t)i;
                d->nwords = wc;
            }
            break;
        case OP_CONSTANT: case OP_SPEC_CONSTANT: case OP_CONSTANT_COMPOSITE:
        case OP_SPEC_CONSTANT_COMPOSITE: case OP_VARIABLE:
            if (wc >= 3) { /* result type, then result id */
                if (bad_id(m, o[1], label, e))
                    return -1;
                spv_id *d = &m->ids[o[1]];
                d->op = op;
                d->a = o[0];
                d->b = wc >= 4 ? o[2] : 0; /* constant value (low word) / storage class */
                d->first = (uint32_t)i;
                d->nwords = wc;
            }
            break;
        default:
            break;
        }
        i += wc;
    }
    return 0;
}

/* A readable name for a type, for error messages. */
static void type_name(const spv_module *m, uint32_t t, char *buf, size_t cap)
{
    const spv_id *d = t < m->bound ? &m->ids[t] : NULL;
    switch (d ? d->op : 0) {
    case OP_TYPE_BOOL: snprintf(buf, cap, "bool"); break;
    case OP_TYPE_INT:
        snprintf(buf, cap, "%sint%u_t%s", d->b ? "" : "u", d->a,
                 d->a == 32 ? (d->b ? " (int)" : " (uint)") : "");
        break;
    case OP_TYPE_FLOAT:
        snprintf(buf, cap, "%s", d->a == 16 ? "float16_t" : d->a == 64 ? "double" : "float");
        break;
    case OP_TYPE_VECTOR: snprintf(buf, cap, "a %u-component vector", d->b); break;
    case OP_TYPE_MATRIX: snprintf(buf, cap, "a matrix"); break;
    case OP_TYPE_ARRAY: case OP_TYPE_RUNTIME_ARRAY: snprintf(buf, cap, "an array"); break;
    case OP_TYPE_STRUCT: snprintf(buf, cap, "a struct"); break;
    default: snprintf(buf, cap, "an unsupported type"); break;
    }
}

static const member_info *find_member(const spv_module *m, uint32_t type, uint32_t member)
{
    for (size_t i = 0; i < m->nmembers; i++)
        if (m->members[i].type == type && m->members[i].member == member)
            return &m->members[i];
    return NULL;
}

typedef struct buf_var { uint32_t id; int32_t binding; } buf_var;
typedef struct push_member {
    uint32_t offset;
    gb_kind kind;
    char name[GB_SPV_NAME_MAX];
} push_member;

static int cmp_push(const void *a, const void *b)
{
    const push_member *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static const char *var_name(const spv_module *m, uint32_t var, char *buf, size_t cap)
{
    const spv_id *v = &m->ids[var];
    const char *n = v->name;
    if (!n[0] && v->a < m->bound) { /* fall back to the block type's name */
        const spv_id *p = &m->ids[v->a];
        if (p->op == OP_TYPE_POINTER && p->b < m->bound)
            n = m->ids[p->b].name;
    }
    if (n[0])
        snprintf(buf, cap, "'%s'", n);
    else
        snprintf(buf, cap, "id %u", var);
    return buf;
}

/* The push block's members, sorted by offset, appended to r after the buffers. */
static int reflect_push(spv_module *m, uint32_t st, gb_spv_reflection *r, const char *label,
                        gb_err *e)
{
    const spv_id *s = &m->ids[st];
    uint32_t nmem = s->nwords - 2;
    push_member pm[GB_MAX_PARAMS];
    if (r->nbuffers + (int)nmem > GB_MAX_PARAMS)
        return GB_FAIL(e, "spirv reflect failed: TOO_MANY_PARAMS (%s: %d buffers + %u push "
                          "constants exceed %d parameters)", label, r->nbuffers, nmem,
                       GB_MAX_PARAMS);
    for (uint32_t k = 0; k < nmem; k++) {
        uint32_t t = m->w[s->first + 2 + k];
        const member_info *mi = find_member(m, st, k);
        char nm[GB_SPV_NAME_MAX + 16];
        if (mi && mi->name[0])
            snprintf(nm, sizeof nm, "'%s'", mi->name);
        else
            snprintf(nm, sizeof nm, "#%u", k);
        if (!mi || !mi->has_offset)
            return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: push-constant member %s "
                              "has no Offset)", label, nm);
        const spv_id *d = t < m->bound ? &m->ids[t] : NULL;
        gb_kind kind = GB_ARG_KIND_COUNT;
        if (d && d->op == OP_TYPE_INT && d->a == 32)
            kind = d->b ? GB_ARG_I32 : GB_ARG_U32;
        else if (d && d->op == OP_TYPE_INT && d->a == 64 && !d->b)
            kind = GB_ARG_U64;
        else if (d && d->op == OP_TYPE_FLOAT && d->a == 32)
            kind = GB_ARG_F32;
        if (kind == GB_ARG_KIND_COUNT) {
            char tn[64];
            type_name(m, t, tn, sizeof tn);
            return GB_FAIL(e, "spirv reflect failed: UNSUPPORTED_PARAM (%s: push-constant member "
                              "%s is %s; only uint, int, float and uint64_t are supported)",
                           label, nm, tn);
        }
        pm[k].offset = mi->offset;
        pm[k].kind = kind;
        snprintf(pm[k].name, sizeof pm[k].name, "%s", mi->name);
    }
    qsort(pm, nmem, sizeof pm[0], cmp_push);
    uint32_t size = 0;
    for (uint32_t k = 0; k < nmem; k++) {
        int p = r->nparams++;
        r->kinds[p] = pm[k].kind;
        r->push_offset[p] = pm[k].offset;
        memcpy(r->names[p], pm[k].name, GB_SPV_NAME_MAX);
        uint32_t endb = pm[k].offset + (uint32_t)gb_kind_size(pm[k].kind);
        if (endb > size)
            size = endb;
    }
    r->push_size = (size + 3u) & ~3u; /* vkCmdPushConstants wants a multiple of 4 */
    return 0;
}

static int cmp_buf(const void *a, const void *b)
{
    const buf_var *x = a, *y = b;
    return x->binding < y->binding ? -1 : x->binding > y->binding;
}

/* Storage buffers of set 0 (then the push block), rejecting what a launch cannot bind. */
static int reflect_params(spv_module *m, gb_spv_reflection *r, const char *label, gb_err *e)
{
    buf_var bufs[GB_MAX_PARAMS];
    int nb = 0;
    uint32_t push_struct = 0;
    char vn[GB_SPV_NAME_MAX + 16];
    for (uint32_t id = 1; id < m->bound; id++) {
        const spv_id *v = &m->ids[id];
        if (v->op != OP_VARIABLE)
            continue;
        uint32_t sc = v->b;
        if (sc != SC_STORAGE_BUFFER && sc != SC_UNIFORM && sc != SC_UNIFORM_CONSTANT &&
            sc != SC_PUSH_CONSTANT)
            continue;
        if (bad_id(m, v->a, label, e))
            return -1;
        const spv_id *ptr = &m->ids[v->a];
        uint32_t pointee = ptr->op == OP_TYPE_POINTER ? ptr->b : 0;
        if (bad_id(m, pointee, label, e))
            return -1;
        const spv_id *t = &m->ids[pointee];
        if (sc == SC_PUSH_CONSTANT) {
            if (push_struct)
                return GB_FAIL(e, "spirv reflect failed: UNSUPPORTED_PARAM (%s: more than one "
                                  "push-constant block)", label);
            if (t->op != OP_TYPE_STRUCT)
                return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: push constant %s is "
                                  "not a block)", label, var_name(m, id, vn, sizeof vn));
            push_struct = pointee;
            continue;
        }
        int is_storage = (sc == SC_STORAGE_BUFFER) || (sc == SC_UNIFORM && t->buffer_block);
        if (!is_storage) {
            /* Only complain about resources a launch would have to bind. */
            if (v->binding < 0 && v->set < 0)
                continue;
            return GB_FAIL(e, "spirv reflect failed: UNSUPPORTED_PARAM (%s: %s is a %s; kernels "
                              "take only storage buffers (set 0) and push constants)", label,
                           var_name(m, id, vn, sizeof vn),
                           sc == SC_UNIFORM ? "uniform buffer" : "image/sampler resource");
        }
        if (t->op == OP_TYPE_ARRAY || t->op == OP_TYPE_RUNTIME_ARRAY)
            return GB_FAIL(e, "spirv reflect failed: UNSUPPORTED_PARAM (%s: %s is an array of "
                              "buffers; declare one binding per buffer)", label,
                           var_name(m, id, vn, sizeof vn));
        int32_t set = v->set < 0 ? 0 : v->set;
        if (set != 0)
            return GB_FAIL(e, "spirv reflect failed: UNSUPPORTED_PARAM (%s: buffer %s is in "
                              "descriptor set %d; only set 0 is bound)", label,
                           var_name(m, id, vn, sizeof vn), set);
        if (v->binding < 0)
            return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: buffer %s has no "
                              "binding)", label, var_name(m, id, vn, sizeof vn));
        if (nb == GB_MAX_PARAMS)
            return GB_FAIL(e, "spirv reflect failed: TOO_MANY_PARAMS (%s: more than %d buffers)",
                           label, GB_MAX_PARAMS);
        bufs[nb].id = id;
        bufs[nb].binding = v->binding;
        nb++;
    }
    qsort(bufs, (size_t)nb, sizeof bufs[0], cmp_buf);
    for (int k = 0; k < nb; k++) {
        if (bufs[k].binding != k) {
            char vn2[GB_SPV_NAME_MAX + 16];
            if (bufs[k].binding < k)
                return GB_FAIL(e, "spirv reflect failed: UNSUPPORTED_PARAM (%s: buffers %s and %s "
                                  "share binding %d)", label,
                               var_name(m, bufs[k - 1].id, vn, sizeof vn),
                               var_name(m, bufs[k].id, vn2, sizeof vn2), bufs[k].binding);
            return GB_FAIL(e, "spirv reflect failed: UNSUPPORTED_PARAM (%s: storage buffer "
                              "bindings must be 0..%d without gaps, but binding %d is missing "
                              "(%s is at binding %d); note the optimizer removes buffers the "
                              "shader never uses)", label, nb - 1, k,
                           var_name(m, bufs[k].id, vn, sizeof vn), bufs[k].binding);
        }
        r->kinds[k] = GB_ARG_BUFFER;
        r->push_offset[k] = 0;
        /* An anonymous block's variable has no name: use its block's. */
        const spv_id *v = &m->ids[bufs[k].id];
        const char *nm = v->name;
        if (!nm[0] && m->ids[v->a].b < m->bound)
            nm = m->ids[m->ids[v->a].b].name;
        snprintf(r->names[k], GB_SPV_NAME_MAX, "%s", nm);
    }
    r->nbuffers = r->nparams = nb;
    return push_struct ? reflect_push(m, push_struct, r, label, e) : 0;
}

/* Resolves one workgroup-size component id: a constant or a specialization constant. */
static int local_dim(spv_module *m, uint32_t id, int d, gb_spv_reflection *r, const char *label,
                     gb_err *e)
{
    if (bad_id(m, id, label, e))
        return -1;
    const spv_id *c = &m->ids[id];
    if (c->op == OP_CONSTANT) {
        r->local_size[d] = c->b;
        r->local_size_spec_id[d] = -1;
    } else if (c->op == OP_SPEC_CONSTANT) {
        r->local_size[d] = c->b;
        r->local_size_spec_id[d] = c->spec_id;
        if (c->spec_id < 0)
            return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: workgroup size "
                              "component %d is a specialization constant without SpecId)",
                           label, d);
    } else {
        return GB_FAIL(e, "spirv reflect failed: UNSUPPORTED_PARAM (%s: workgroup size component "
                          "%d is not a constant or a plain specialization constant)", label, d);
    }
    return 0;
}

static int reflect_local_size(spv_module *m, gb_spv_reflection *r, const char *label, gb_err *e)
{
    for (int d = 0; d < 3; d++)
        r->local_size_spec_id[d] = -1;
    /* A WorkgroupSize built-in overrides the execution modes (SPIR-V 2.16). */
    for (uint32_t id = 1; id < m->bound; id++) {
        const spv_id *c = &m->ids[id];
        if (!c->workgroup_size)
            continue;
        if ((c->op != OP_CONSTANT_COMPOSITE && c->op != OP_SPEC_CONSTANT_COMPOSITE) ||
            c->nwords != 6)
            return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: WorkgroupSize is not a "
                              "3-component constant)", label);
        for (int d = 0; d < 3; d++)
            if (local_dim(m, m->w[c->first + 3 + d], d, r, label, e))
                return -1;
        return 0;
    }
    if (m->have_local_size_id) {
        for (int d = 0; d < 3; d++)
            if (local_dim(m, m->local_size[d], d, r, label, e))
                return -1;
        return 0;
    }
    if (m->have_local_size) {
        memcpy(r->local_size, m->local_size, sizeof r->local_size);
        return 0;
    }
    return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: the entry point declares no "
                      "workgroup size)", label);
}

int gb_spv_reflect(const uint32_t *words, size_t nwords, const char *entry, const char *label,
                   gb_spv_reflection *out, gb_err *e)
{
    if (!entry)
        entry = "main";
    if (!label)
        label = "<spirv>";
    memset(out, 0, sizeof *out);
    if (!words || nwords < 5)
        return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: %zu words is shorter than "
                          "a SPIR-V header)", label, nwords);
    if (words[0] != SPV_MAGIC)
        return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: magic 0x%08x is not "
                          "0x07230203 (or the module is big-endian))", label, words[0]);
    spv_module m = {.w = words, .n = nwords, .bound = words[3]};
    if (m.bound == 0 || m.bound > SPV_MAX_BOUND)
        return GB_FAIL(e, "spirv reflect failed: INVALID_SPIRV (%s: id bound %u)", label, m.bound);
    m.ids = calloc(m.bound, sizeof *m.ids);
    if (!m.ids)
        return GB_FAIL(e, "spirv reflect failed: OUT_OF_MEMORY (%s: %u ids)", label, m.bound);
    for (uint32_t id = 0; id < m.bound; id++) {
        m.ids[id].set = m.ids[id].binding = m.ids[id].spec_id = -1;
    }
    int rc = scan(&m, entry, out, label, e);
    if (rc == 0 && m.entry_id == 0)
        rc = GB_FAIL(e, "spirv reflect failed: ENTRY_NOT_FOUND (%s: no GLCompute entry point "
                        "named '%s')", label, entry);
    if (rc == 0)
        rc = reflect_params(&m, out, label, e);
    if (rc == 0)
        rc = reflect_local_size(&m, out, label, e);
    free(m.ids);
    free(m.members);
    return rc;
}

int gb_spv_has_cap(const gb_spv_reflection *r, uint32_t cap)
{
    for (int i = 0; i < r->ncaps; i++)
        if (r->caps[i] == cap)
            return 1;
    return 0;
}

int gb_spv_check_params(const gb_spv_reflection *r, const gb_kind *params, int nparams,
                        const char *label, gb_err *e)
{
    if (nparams != r->nparams)
        return GB_FAIL(e, "kernel params failed: PARAM_MISMATCH (%s: %d explicit parameters but "
                          "the shader has %d (%d buffers + %d push constants))", label, nparams,
                       r->nparams, r->nbuffers, r->nparams - r->nbuffers);
    for (int i = 0; i < nparams; i++) {
        if ((unsigned)params[i] >= GB_ARG_KIND_COUNT)
            return GB_FAIL(e, "kernel params failed: PARAM_MISMATCH (%s: parameter %d has an "
                              "invalid kind %d)", label, i + 1, (int)params[i]);
        int want_buf = r->kinds[i] == GB_ARG_BUFFER, is_buf = params[i] == GB_ARG_BUFFER;
        if (want_buf != is_buf || gb_kind_size(params[i]) != gb_kind_size(r->kinds[i]))
            return GB_FAIL(e, "kernel params failed: PARAM_MISMATCH (%s: parameter %d is %s in "
                              "the shader but was declared %s)", label, i + 1,
                           gb_kind_name(r->kinds[i]), gb_kind_name(params[i]));
    }
    return 0;
}
