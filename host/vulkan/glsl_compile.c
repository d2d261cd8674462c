#define _POSIX_C_SOURCE 200809L /* strdup */
/* GLSL -> SPIR-V with shaderc, through the disk cache (see glsl_compile.h). */
#include "glsl_compile.h"

#include <glslang/build_info.h>
#include <shaderc/shaderc.h>
#include <spirv-tools/libspirv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileutil.h"
#include "kernel_cache.h"
#include "output.h"

#define GB_VK_API(minor) ((1u << 22) | ((uint32_t)(minor) << 12))

static const struct {
    const char *name;
    unsigned minor;
    uint32_t spirv;
} targets[] = {
    {"vulkan1.0", 0, 0x010000u},
    {"vulkan1.1", 1, 0x010300u},
    {"vulkan1.2", 2, 0x010500u},
    {"vulkan1.3", 3, 0x010600u},
};

static void set_target(unsigned i, gb_glsl_target *t)
{
    snprintf(t->name, sizeof t->name, "%s", targets[i].name);
    t->api_version = GB_VK_API(targets[i].minor);
    t->spirv_version = targets[i].spirv;
}

int gb_glsl_target_parse(const char *target, gb_glsl_target *t, gb_err *e)
{
    if (target && strcmp(target, "vulkan") == 0)
        target = "vulkan1.2";
    for (unsigned i = 0; target && i < sizeof targets / sizeof targets[0]; i++) {
        if (strcmp(target, targets[i].name) == 0) {
            set_target(i, t);
            return 0;
        }
    }
    return GB_FAIL(e, "glsl compile failed: BAD_TARGET ('%s' is not a Vulkan target; use "
                      "vulkan1.0, vulkan1.1, vulkan1.2 or vulkan1.3)", target ? target : "(null)");
}

void gb_glsl_target_for_api(uint32_t api, gb_glsl_target *t)
{
    unsigned minor = (api >> 22) > 1 ? 2 : ((api >> 12) & 0x3ffu);
    set_target(minor > 2 ? 2 : minor, t);
}

const char *gb_glsl_compiler_id(void)
{
    static char id[128];
    if (!id[0])
        /* "-O -g": the options run_shaderc uses; changing them must change keys. */
        snprintf(id, sizeof id, "shaderc/glslang-%d.%d.%d%s/%s/-O -g", GLSLANG_VERSION_MAJOR,
                 GLSLANG_VERSION_MINOR, GLSLANG_VERSION_PATCH, GLSLANG_VERSION_FLAVOR,
                 spvSoftwareVersionString());
    return id;
}

/* ------------------------------------------------------------ includes */

/* Includes nest at most this deep: a file that includes itself (directly or
 * through others) is reported with its chain instead of recursing until
 * memory runs out. */
enum { GLSL_MAX_INCLUDE_DEPTH = 32 };
/* Lines of the compiler's log an error message keeps (runs of one line count once). */
enum { GLSL_LOG_LINES = 40 };

typedef struct include_ctx {
    const gb_kernel_source *src;
    const char *label;
    char *chain[GLSL_MAX_INCLUDE_DEPTH + 1]; /* chain[d]: the file being read at depth d */
    char *too_deep;                           /* the depth limit's message, once reached */
} include_ctx;

typedef struct include_box { /* a result and the strings it points to, freed together */
    shaderc_include_result r;
    char *name;
    char *text;
} include_box;

static char *join_path(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = 0;
    }
    return d;
}

/* Tries to read `path`; on success moves it into box and returns 1. */
static int try_read(include_box *box, char *path)
{
    gb_err tmp = {0};
    size_t len = 0;
    char *text = gb_read_file(path, &len, &tmp);
    gb_err_clear(&tmp);
    if (!text) {
        free(path);
        return 0;
    }
    box->name = path;
    box->text = text;
    box->r.source_name = path;
    box->r.source_name_length = strlen(path);
    box->r.content = text;
    box->r.content_length = len;
    return 1;
}

/* Makes box the failed include whose message (shaderc's convention: an empty
 * name, the message as content) is `msg`; takes ownership of msg. */
static shaderc_include_result *include_error(include_box *box, char *msg, const char *fallback)
{
    box->text = msg;
    box->r.source_name = "";
    box->r.source_name_length = 0;
    box->r.content = box->text ? box->text : fallback;
    box->r.content_length = strlen(box->r.content);
    return &box->r;
}

/* "a.comp -> b.glsl -> c.glsl -> b.glsl -> ...": the files from the
 * top-level source down, as far as the first one that comes again (the
 * cycle), else down to depth and then `last`. */
static char *chain_text(const include_ctx *ctx, size_t depth, const char *last)
{
    size_t n = strlen(last) + 16;
    for (size_t d = 0; d < depth; d++)
        n += strlen(ctx->chain[d] ? ctx->chain[d] : "?") + 4;
    char *t = malloc(n);
    if (!t)
        return NULL;
    t[0] = 0;
    for (size_t d = 0; d < depth; d++) {
        const char *name = ctx->chain[d] ? ctx->chain[d] : "?";
        if (d)
            strcat(t, " -> ");
        strcat(t, name);
        for (size_t p = 0; p < d; p++)
            if (ctx->chain[p] && strcmp(ctx->chain[p], name) == 0) {
                strcat(t, " -> ...");
                return t;
            }
    }
    strcat(t, " -> ");
    strcat(t, last);
    return t;
}

/* Records `requesting` as the file at depth - 1, so the chain is known when
 * a deeper include fails; returns 0, or -1 without memory. */
static int note_chain(include_ctx *ctx, size_t depth, const char *requesting)
{
    if (depth < 1 || depth > GLSL_MAX_INCLUDE_DEPTH)
        return 0;
    char *copy = strdup(requesting);
    if (!copy)
        return -1;
    free(ctx->chain[depth - 1]);
    ctx->chain[depth - 1] = copy;
    return 0;
}

static shaderc_include_result *resolve_include(void *ud, const char *req, int type,
                                               const char *requesting, size_t depth)
{
    include_ctx *ctx = ud;
    const gb_kernel_source *src = ctx->src;
    include_box *box = calloc(1, sizeof *box);
    if (!box)
        return NULL;
    box->r.user_data = box;
    if (note_chain(ctx, depth, requesting) != 0)
        return include_error(box, NULL, "out of host memory resolving an include");
    if (depth > GLSL_MAX_INCLUDE_DEPTH) {
        char *chain = chain_text(ctx, GLSL_MAX_INCLUDE_DEPTH, req);
        size_t cap = (chain ? strlen(chain) : 0) + 128;
        char *msg = malloc(cap);
        if (msg)
            snprintf(msg, cap, "includes nest deeper than %d (does a file include itself?): %s",
                     GLSL_MAX_INCLUDE_DEPTH, chain ? chain : req);
        free(chain);
        if (msg && !ctx->too_deep) ctx->too_deep = strdup(msg);
        return include_error(box, msg, "includes nest too deep");
    }
    if (req[0] == '/') {
        if (try_read(box, strdup(req)))
            return &box->r;
    } else {
        if (type == shaderc_include_type_relative) {
            /* The top-level source's directory is src->dir (the working
             * directory for a string, as the cache key assumes); an included
             * file's is the directory of the path returned for it below. */
            char *dir = strcmp(requesting, ctx->label) == 0 ? strdup(src->dir ? src->dir : ".")
                                                             : dir_of(requesting);
            if (dir) {
                char *p = join_path(dir, req);
                free(dir);
                if (p && try_read(box, p))
                    return &box->r;
            }
        }
        for (int i = 0; i < src->ninclude_dirs; i++) {
            char *p = join_path(src->include_dirs[i], req);
            if (p && try_read(box, p))
                return &box->r;
        }
    }
    size_t cap = strlen(req) + 160;
    char *msg = malloc(cap);
    if (msg)
        snprintf(msg, cap, "cannot find include file \"%s\" (searched %s and %d include "
                 "director%s)", req,
                 type == shaderc_include_type_relative ? "the including file's directory"
                                                       : "no relative directory",
                 src->ninclude_dirs, src->ninclude_dirs == 1 ? "y" : "ies");
    return include_error(box, msg, "cannot find include file");
}

static void release_include(void *ud, shaderc_include_result *r)
{
    include_box *box = r->user_data;
    free(box->name);
    free(box->text);
    free(box);
}

/* ------------------------------------------------------------ compile */

static const char *status_name(shaderc_compilation_status s)
{
    switch (s) {
    case shaderc_compilation_status_success: return "SHADERC_SUCCESS";
    case shaderc_compilation_status_invalid_stage: return "SHADERC_INVALID_STAGE";
    case shaderc_compilation_status_compilation_error: return "SHADERC_COMPILATION_ERROR";
    case shaderc_compilation_status_internal_error: return "SHADERC_INTERNAL_ERROR";
    case shaderc_compilation_status_null_result_object: return "SHADERC_NULL_RESULT_OBJECT";
    case shaderc_compilation_status_invalid_assembly: return "SHADERC_INVALID_ASSEMBLY";
    case shaderc_compilation_status_validation_error: return "SHADERC_VALIDATION_ERROR";
    case shaderc_compilation_status_transformation_error: return "SHADERC_TRANSFORMATION_ERROR";
    case shaderc_compilation_status_configuration_error: return "SHADERC_CONFIGURATION_ERROR";
    default: return "SHADERC_UNKNOWN_STATUS";
    }
}

/* The compiler log without its trailing newlines. */
static char *trimmed_copy(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s ? s : "", n);
        c[n] = 0;
    }
    return c;
}

static int words_from_bytes(const void *bytes, size_t len, uint32_t **words, size_t *nwords)
{
    if (len < 20 || len % 4 != 0 || *(const uint32_t *)bytes != 0x07230203u)
        return -1;
    *words = malloc(len);
    if (!*words)
        return -1;
    memcpy(*words, bytes, len);
    *nwords = len / 4;
    return 0;
}

static int run_shaderc(const gb_kernel_source *src, const gb_glsl_target *t, const char *label,
                       uint32_t **words, size_t *nwords, char **log, gb_err *e)
{
    shaderc_compiler_t compiler = shaderc_compiler_initialize();
    shaderc_compile_options_t opts = shaderc_compile_options_initialize();
    if (!compiler || !opts) {
        if (opts)
            shaderc_compile_options_release(opts);
        if (compiler)
            shaderc_compiler_release(compiler);
        return GB_FAIL(e, "shaderc_compiler_initialize failed: SHADERC_INTERNAL_ERROR (could "
                          "not create the GLSL compiler)");
    }
    include_ctx ctx = {.src = src, .label = label};
    shaderc_compile_options_set_source_language(opts, shaderc_source_language_glsl);
    shaderc_compile_options_set_target_env(opts, shaderc_target_env_vulkan, t->api_version);
    shaderc_compile_options_set_target_spirv(opts, (shaderc_spirv_version)t->spirv_version);
    shaderc_compile_options_set_optimization_level(opts, shaderc_optimization_level_performance);
    /* Keeps OpName/OpMemberName through the optimizer, so reflection errors
     * name the offending member and profilers show source lines; drivers
     * ignore debug instructions, so the machine code is the same. */
    shaderc_compile_options_set_generate_debug_info(opts);
    shaderc_compile_options_set_include_callbacks(opts, resolve_include, release_include, &ctx);
    for (int i = 0; i < src->ndefines; i++) {
        const char *v = src->defines[i].value ? src->defines[i].value : "";
        shaderc_compile_options_add_macro_definition(opts, src->defines[i].name,
                                                     strlen(src->defines[i].name), v, strlen(v));
    }
    /* glslang prints to stdout when it cannot parse its built-ins (a shader
     * without #version): that text belongs in the error, not in the results. */
    gb_capture cap;
    gb_capture_begin(&cap);
    shaderc_compilation_result_t res =
        shaderc_compile_into_spv(compiler, src->code, strlen(src->code), shaderc_compute_shader,
                                 label, "main", opts);
    char *printed = gb_capture_end(&cap);
    int rc = 0;
    shaderc_compilation_status st = res ? shaderc_result_get_compilation_status(res)
                                        : shaderc_compilation_status_null_result_object;
    if (st != shaderc_compilation_status_success) {
        char *raw = trimmed_copy(res ? shaderc_result_get_error_message(res) : "");
        char *msg = gb_text_excerpt(raw, GLSL_LOG_LINES);
        char *out = printed ? gb_text_excerpt(printed, 8) : NULL;
        const char *log = msg && msg[0] ? msg : "no compiler log";
        const char *also = out ? "; the compiler also printed:\n" : "";
        if (ctx.too_deep) /* first: the errors it causes (one file parsed 32 times) come before it in the log */
            rc = GB_FAIL(e, "glsl compile of %s failed: %s (the compiler's log: %s)%s%s", label, ctx.too_deep,
                         log, also, out ? out : "");
        else
            rc = GB_FAIL(e, "glsl compile of %s failed: %s (%s)%s%s", label, status_name(st), log, also,
                         out ? out : "");
        free(raw);
        free(msg);
        free(out);
    } else if (words_from_bytes(shaderc_result_get_bytes(res), shaderc_result_get_length(res),
                                words, nwords) != 0) {
        rc = GB_FAIL(e, "glsl compile of %s failed: SHADERC_INTERNAL_ERROR (the compiler "
                        "returned %zu bytes that are not a SPIR-V module)", label,
                     shaderc_result_get_length(res));
    } else if (shaderc_result_get_num_warnings(res) > 0) {
        *log = trimmed_copy(shaderc_result_get_error_message(res));
    }
    free(printed);
    if (res)
        shaderc_result_release(res);
    for (int d = 0; d <= GLSL_MAX_INCLUDE_DEPTH; d++)
        free(ctx.chain[d]);
    free(ctx.too_deep);
    shaderc_compile_options_release(opts);
    shaderc_compiler_release(compiler);
    return rc;
}

int gb_glsl_compile(const gb_kernel_source *src, const gb_glsl_target *target, uint32_t **words,
                    size_t *nwords, char **log, int *cache_hit, gb_err *e)
{
    const char *label = src->label ? src->label : "<string>";
    *words = NULL;
    *nwords = 0;
    *log = NULL;
    *cache_hit = 0;
    if (!src->code)
        return GB_FAIL(e, "glsl compile of %s failed: NO_SOURCE (no source text)", label);
    /* GLSL has one entry point, main; a different name would be ignored, and
     * the script would run main thinking it chose another function. */
    if (src->entry && strcmp(src->entry, "main") != 0)
        return GB_FAIL(e, "glsl compile of %s failed: UNSUPPORTED_ENTRY (a GLSL compute shader "
                          "enters at main; entry '%s' was given)", label, src->entry);
    char key[GB_CACHE_KEY_HEX];
    /* The key hashes every include; when it cannot be made (say, an include
     * is missing) compile uncached so the compiler reports the problem with
     * its file:line. */
    int have_key = gb_cache_key(src, gb_glsl_compiler_id(), target->name, key, e) == 0;
    if (!have_key)
        gb_err_clear(e);
    void *data = NULL;
    size_t len = 0;
    if (have_key && gb_cache_load(key, "spv", &data, &len) == 1) {
        /* A damaged cache entry is recompiled, not reported. */
        int ok = words_from_bytes(data, len, words, nwords) == 0;
        free(data);
        if (ok) {
            *cache_hit = 1;
            return 0;
        }
    }
    if (run_shaderc(src, target, label, words, nwords, log, e) != 0)
        return -1;
    if (have_key)
        gb_cache_store(key, "spv", *words, *nwords * 4);
    return 0;
}
