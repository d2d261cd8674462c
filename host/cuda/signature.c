/* Reading a CUDA kernel's parameter kinds from its source (see cuda_signature.h).
 *
 * A small tokenizer (comments, strings and preprocessor lines removed; object-
 * like #defines collected) feeds a search for the entry's declaration; each
 * parameter is then reduced to its type words and mapped to a kind. It is not a
 * C++ parser: it needs only what an extern "C" kernel signature can contain. */
#define _POSIX_C_SOURCE 200809L
#include "cuda_signature.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- tokens */

typedef enum { T_IDENT, T_NUM, T_STR, T_PUNCT } tok_type;

typedef struct tok {
    tok_type type;
    const char *s;
    int len;
    int line;
} tok;

typedef struct toks {
    tok *v;
    int n, cap;
} toks;

typedef struct macro {
    const char *name;
    int nlen;
    const char *body; /* the replacement text, up to the end of the logical line */
    const char *body_end;
    int line;
} macro;

typedef struct macros {
    macro *v;
    int n, cap;
} macros;

static int push_tok(toks *t, tok_type type, const char *s, int len, int line) {
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 256;
        tok *v = realloc(t->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (tok){type, s, len, line};
    return 0;
}

static int is_ident_start(int c) { return isalpha(c) || c == '_'; }
static int is_ident_char(int c) { return isalnum(c) || c == '_'; }

static int tok_is(const tok *t, const char *s) {
    return (int)strlen(s) == t->len && memcmp(t->s, s, (size_t)t->len) == 0;
}

/* Skips a preprocessor line that starts after its '#', recording an
 * object-like #define; returns the position of the line's end. */
static const char *directive(const char *p, const char *end, int *line, macros *defs) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    const char *word = p;
    while (p < end && is_ident_char((unsigned char)*p)) p++;
    int is_define = p - word == 6 && memcmp(word, "define", 6) == 0;
    macro m = {0};
    if (is_define) {
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        m.name = p;
        while (p < end && is_ident_char((unsigned char)*p)) p++;
        m.nlen = (int)(p - m.name);
        m.line = *line;
        /* NAME( with no space is a function-like macro: not expanded here. */
        if (m.nlen == 0 || (p < end && *p == '(')) is_define = 0;
        m.body = p;
    }
    while (p < end && *p != '\n') {
        if (*p == '\\' && p + 1 < end && p[1] == '\n') {
            p += 2;
            (*line)++;
        } else if (*p == '/' && p + 1 < end && p[1] == '*') {
            for (p += 2; p < end && !(*p == '*' && p + 1 < end && p[1] == '/'); p++)
                if (*p == '\n') (*line)++;
            p = p + 2 < end ? p + 2 : end;
        } else if (*p == '/' && p + 1 < end && p[1] == '/') {
            while (p < end && *p != '\n') p++;
        } else {
            p++;
        }
    }
    if (is_define && defs) {
        m.body_end = p;
        if (defs->n == defs->cap) {
            int cap = defs->cap ? defs->cap * 2 : 32;
            macro *v = realloc(defs->v, (size_t)cap * sizeof *v);
            if (!v) return p; /* out of memory: the macro is simply not known */
            defs->v = v;
            defs->cap = cap;
        }
        defs->v[defs->n++] = m;
    }
    return p;
}

/* Tokenizes [p, end). With defs, lines starting with '#' are directives
 * (collected into defs and otherwise skipped); without, '#' is punctuation
 * (used for macro bodies). Returns -1 when out of memory. */
static int lex(const char *p, const char *end, int line, toks *out, macros *defs) {
    int bol = 1; /* only whitespace so far on this line */
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '\n') {
            line++;
            bol = 1;
            p++;
        } else if (c == '\\' && p + 1 < end && p[1] == '\n') {
            line++;
            p += 2;
        } else if (isspace(c)) {
            p++;
        } else if (c == '/' && p + 1 < end && p[1] == '/') {
            while (p < end && *p != '\n') p++;
        } else if (c == '/' && p + 1 < end && p[1] == '*') {
            for (p += 2; p < end && !(*p == '*' && p + 1 < end && p[1] == '/'); p++)
                if (*p == '\n') line++;
            p = p + 2 < end ? p + 2 : end;
        } else if (c == '#' && bol && defs) {
            p = directive(p + 1, end, &line, defs);
        } else {
            bol = 0;
            const char *s = p;
            tok_type type = T_PUNCT;
            if (c == '"' || c == '\'') {
                for (p++; p < end && *p != (char)c && *p != '\n'; p++)
                    if (*p == '\\' && p + 1 < end) p++;
                if (p < end && *p == (char)c) p++;
                type = T_STR;
            } else if (is_ident_start(c)) {
                while (p < end && is_ident_char((unsigned char)*p)) p++;
                type = T_IDENT;
            } else if (isdigit(c)) {
                while (p < end && (is_ident_char((unsigned char)*p) || *p == '.')) p++;
                type = T_NUM;
            } else if (c == ':' && p + 1 < end && p[1] == ':') {
                p += 2;
            } else {
                p++;
            }
            if (push_tok(out, type, s, (int)(p - s), line)) return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------- macro expansion */

typedef struct ctx {
    const char *label;
    const char *entry;
    const gb_define *defines;
    int ndefines;
    macros defs;
    gb_err *e;
} ctx;

enum { MAX_EXPANSION_DEPTH = 8 };

/* Appends t to out, replacing an identifier that names a macro by its
 * expansion. The caller's defines come first, as -D does; depth stops a macro
 * that mentions itself. */
static int expand_tok(const ctx *c, const tok *t, toks *out, int depth) {
    if (t->type != T_IDENT || depth >= MAX_EXPANSION_DEPTH)
        return push_tok(out, t->type, t->s, t->len, t->line);
    const char *body = NULL, *body_end = NULL;
    for (int i = 0; i < c->ndefines && !body; i++)
        if (c->defines[i].name && tok_is(t, c->defines[i].name)) {
            /* An empty value is passed as -DNAME, which defines NAME as 1. */
            body = c->defines[i].value && *c->defines[i].value ? c->defines[i].value : "1";
            body_end = body + strlen(body);
        }
    for (int i = 0; i < c->defs.n && !body; i++)
        if (c->defs.v[i].nlen == t->len && memcmp(c->defs.v[i].name, t->s, (size_t)t->len) == 0) {
            body = c->defs.v[i].body;
            body_end = c->defs.v[i].body_end;
        }
    if (!body) return push_tok(out, t->type, t->s, t->len, t->line);
    toks sub = {0};
    int rc = lex(body, body_end, t->line, &sub, NULL);
    for (int i = 0; i < sub.n && rc == 0; i++) {
        sub.v[i].line = t->line; /* report the use, not the definition */
        rc = expand_tok(c, &sub.v[i], out, depth + 1);
    }
    free(sub.v);
    return rc;
}

static int expand_range(const ctx *c, const tok *v, int n, toks *out) {
    for (int i = 0; i < n; i++)
        if (expand_tok(c, &v[i], out, 0)) return -1;
    return 0;
}

/* ------------------------------------------------------------ the search */

/* Angle brackets are not nesting here: an extern "C" signature has no
 * templates, and a default argument may hold a shift or a comparison. */
static int is_open(const tok *t) { return t->type == T_PUNCT && t->len == 1 && strchr("([{", t->s[0]); }
static int is_close(const tok *t) { return t->type == T_PUNCT && t->len == 1 && strchr(")]}", t->s[0]); }
static int is_punct(const tok *t, char ch) { return t->type == T_PUNCT && t->len == 1 && t->s[0] == ch; }

/* Whether the declaration ending just before token i (back to the previous
 * ';', '{' or '}') says __global__, directly or through a macro. */
static int declared_global(const ctx *c, const toks *t, int i) {
    toks spec = {0};
    int found = 0;
    for (int j = i - 1; j >= 0 && !found; j--) {
        const tok *k = &t->v[j];
        if (is_punct(k, ';') || is_punct(k, '{') || is_punct(k, '}')) break;
        if (is_punct(k, ')')) { /* skip __launch_bounds__(...) and the like */
            int depth = 0;
            for (; j >= 0; j--) {
                if (is_punct(&t->v[j], ')')) depth++;
                if (is_punct(&t->v[j], '(') && --depth == 0) break;
            }
            continue;
        }
        spec.n = 0;
        if (expand_tok(c, k, &spec, 0)) break;
        for (int s = 0; s < spec.n; s++)
            if (tok_is(&spec.v[s], "__global__")) found = 1;
    }
    free(spec.v);
    return found;
}

/* ------------------------------------------------------- one parameter */

static int is_builtin_type_word(const tok *t) {
    static const char *const words[] = {"unsigned", "signed", "int", "long", "short", "char",
                                        "float", "double", "bool", "void"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (tok_is(t, words[i])) return 1;
    return 0;
}

static int is_ignored_word(const tok *t) {
    static const char *const words[] = {"const", "volatile", "__restrict__", "__restrict",
                                        "restrict", "__grid_constant__", "register"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (tok_is(t, words[i])) return 1;
    return 0;
}

static int is_attribute_word(const tok *t) {
    return tok_is(t, "__align__") || tok_is(t, "alignas") || tok_is(t, "__attribute__");
}

/* Maps the type words left after qualifiers and the name are gone. */
static int scalar_kind(const tok *w, int n, gb_kind *out) {
    if (n == 1 && w[0].type == T_IDENT) {
        static const struct { const char *name; gb_kind kind; } named[] = {
            {"uint32_t", GB_ARG_U32}, {"int32_t", GB_ARG_I32},   {"uint64_t", GB_ARG_U64},
            {"size_t", GB_ARG_U64},   {"float", GB_ARG_F32},
        };
        for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
            if (tok_is(&w[0], named[i].name)) {
                *out = named[i].kind;
                return 0;
            }
    }
    int n_unsigned = 0, n_signed = 0, n_int = 0, n_long = 0, n_float = 0;
    for (int i = 0; i < n; i++) {
        if (tok_is(&w[i], "unsigned")) n_unsigned++;
        else if (tok_is(&w[i], "signed")) n_signed++;
        else if (tok_is(&w[i], "int")) n_int++;
        else if (tok_is(&w[i], "long")) n_long++;
        else if (tok_is(&w[i], "float")) n_float++;
        else return -1; /* short, char, double, bool, a typedef name, ... */
    }
    if (n == 0 || n_int > 1 || n_unsigned + n_signed > 1 || n_long > 2) return -1;
    if (n_float) {
        if (n != 1) return -1;
        *out = GB_ARG_F32;
    } else if (n_unsigned) {
        *out = n_long ? GB_ARG_U64 : GB_ARG_U32; /* unsigned long is 64-bit on LP64 Linux */
    } else if (n_long) {
        return -1; /* a signed 64-bit integer has no kind */
    } else {
        *out = GB_ARG_I32;
    }
    return 0;
}

/* Writes the declared type (the parameter's tokens without its name) as text. */
static void type_text(const tok *v, int n, int name_at, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = 0;
    int prev_word = 0;
    for (int i = 0; i < n && used + 1 < cap; i++) {
        if (i == name_at) continue;
        int word = v[i].type == T_IDENT || v[i].type == T_NUM;
        int len = v[i].len;
        if (word && prev_word && used + 2 < cap) buf[used++] = ' ';
        if ((size_t)len > cap - used - 1) len = (int)(cap - used - 1);
        memcpy(buf + used, v[i].s, (size_t)len);
        used += (size_t)len;
        buf[used] = 0;
        prev_word = word;
    }
}

/* One parameter: tokens [v, v+n) as written. */
static int param_kind(const ctx *c, const tok *v, int n, int index, gb_cuda_signature *sig) {
    /* A default argument is not part of the type. */
    for (int i = 0; i < n; i++)
        if (is_punct(&v[i], '=')) n = i;
    if (n == 0)
        return GB_FAIL(c->e, "%s:%d: parameter %d of %s is empty", c->label, v[0].line, index + 1,
                       c->entry);
    toks x = {0};
    if (expand_range(c, v, n, &x)) return GB_FAIL(c->e, "out of host memory reading a signature");

    /* Reduce to type words, noting pointers, references and the name. */
    tok *w = x.v;
    int nw = 0, pointer = 0, reference = 0;
    for (int i = 0; i < x.n; i++) {
        const tok *t = &x.v[i];
        if (is_attribute_word(t) && i + 1 < x.n && is_punct(&x.v[i + 1], '(')) {
            int depth = 0;
            for (i++; i < x.n; i++) {
                if (is_punct(&x.v[i], '(')) depth++;
                if (is_punct(&x.v[i], ')') && --depth == 0) break;
            }
            continue;
        }
        if (is_ignored_word(t)) continue;
        if (t->len == 2 && memcmp(t->s, "::", 2) == 0) { /* std::size_t -> size_t */
            if (nw > 0 && w[nw - 1].type == T_IDENT) nw--;
            continue;
        }
        if (is_punct(t, '*')) {
            pointer = 1;
            continue;
        }
        if (is_punct(t, '&')) {
            reference = 1;
            continue;
        }
        if (is_punct(t, '[')) { /* float x[] is a pointer */
            pointer = 1;
            break;
        }
        w[nw++] = *t; /* compacts in place: nw <= i */
    }
    /* The name is the last word, when there is a type before it and it is not
     * itself a type keyword ("unsigned int" has no name). */
    char *name = sig->names[index];
    name[0] = 0;
    if (nw >= 2 && w[nw - 1].type == T_IDENT && !is_builtin_type_word(&w[nw - 1])) {
        int len = w[nw - 1].len < GB_CUDA_PARAM_NAME - 1 ? w[nw - 1].len : GB_CUDA_PARAM_NAME - 1;
        memcpy(name, w[nw - 1].s, (size_t)len);
        name[len] = 0;
        nw--;
    }
    int rc = 0;
    if (pointer && !reference) {
        sig->kinds[index] = GB_ARG_BUFFER;
    } else if (reference || scalar_kind(w, nw, &sig->kinds[index]) != 0) {
        /* The message shows the type as written, before macro expansion. */
        int name_at = -1;
        if (name[0])
            for (int i = n - 1; i >= 0 && name_at < 0; i--)
                if (v[i].type == T_IDENT && tok_is(&v[i], name)) name_at = i;
        char type[256];
        type_text(v, n, name_at, type, sizeof type);
        char who[GB_CUDA_PARAM_NAME + 16];
        if (name[0])
            snprintf(who, sizeof who, " '%s'", name);
        else
            snprintf(who, sizeof who, " (unnamed)");
        rc = GB_FAIL(c->e,
                     "%s:%d: parameter %d%s of %s has type '%s', which has no gpubench argument "
                     "kind (buffer, u32, i32, f32, u64); pass params={...} explicitly",
                     c->label, v[0].line, index + 1, who, c->entry, type);
    }
    free(x.v);
    return rc;
}

/* The parameter list starts after the '(' at token `open`. */
static int parse_params(const ctx *c, const toks *t, int open, gb_cuda_signature *sig) {
    int i = open + 1, depth = 0, start = i;
    sig->nparams = 0;
    /* (void) and () declare no parameters. */
    if (i < t->n && is_punct(&t->v[i], ')')) return 0;
    if (i + 1 < t->n && tok_is(&t->v[i], "void") && is_punct(&t->v[i + 1], ')')) return 0;
    for (; i < t->n; i++) {
        const tok *k = &t->v[i];
        int end_list = depth == 0 && is_punct(k, ')');
        if (end_list || (depth == 0 && is_punct(k, ','))) {
            if (sig->nparams == GB_MAX_PARAMS)
                return GB_FAIL(c->e, "%s:%d: %s has more than %d parameters, the most gpubench "
                                     "supports", c->label, t->v[open].line, c->entry, GB_MAX_PARAMS);
            if (i == start)
                return GB_FAIL(c->e, "%s:%d: parameter %d of %s is empty", c->label, k->line,
                               sig->nparams + 1, c->entry);
            if (param_kind(c, &t->v[start], i - start, sig->nparams, sig)) return -1;
            sig->nparams++;
            start = i + 1;
            if (end_list) return 0;
        } else if (is_open(k)) {
            depth++;
        } else if (is_close(k) && depth > 0) {
            depth--;
        }
    }
    return GB_FAIL(c->e, "%s:%d: the parameter list of %s is not closed", c->label,
                   t->v[open].line, c->entry);
}

int gb_cuda_parse_signature(const char *label, const char *code, const char *entry,
                            const gb_define *defines, int ndefines, gb_cuda_signature *sig,
                            gb_err *e) {
    memset(sig, 0, sizeof *sig);
    ctx c = {label ? label : "<string>", entry, defines, defines ? ndefines : 0, {0}, e};
    if (!entry || !*entry) return GB_FAIL(e, "%s: no kernel entry point given", c.label);
    if (!code) return GB_FAIL(e, "%s: no source text", c.label);
    toks t = {0};
    int rc = -1;
    if (lex(code, code + strlen(code), 1, &t, &c.defs)) {
        GB_FAIL(e, "out of host memory reading the signature of %s", entry);
        goto done;
    }
    for (int i = 0; i + 1 < t.n; i++) {
        if (t.v[i].type != T_IDENT || !tok_is(&t.v[i], entry) || !is_punct(&t.v[i + 1], '('))
            continue;
        if (!declared_global(&c, &t, i)) continue; /* a call, or a __device__ namesake */
        sig->line = t.v[i].line;
        rc = parse_params(&c, &t, i + 1, sig);
        goto done;
    }
    GB_FAIL(e, "%s: no extern \"C\" __global__ function '%s' found in the source; pass params={...} "
               "explicitly", c.label, entry);
done:
    free(t.v);
    free(c.defs.v);
    return rc;
}
