/* The on-disk kernel cache (see kernel_cache.h for what the key covers). */
#define _POSIX_C_SOURCE 200809L
#include "kernel_cache.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileutil.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

enum { MAX_INCLUDE_DEPTH = 16 };

static void hash_str(XXH3_state_t *st, const char *tag, const char *s) {
    /* Length-prefixed fields so that ("ab","c") and ("a","bc") differ. */
    uint64_t n = s ? strlen(s) : 0;
    XXH3_128bits_update(st, tag, strlen(tag));
    XXH3_128bits_update(st, &n, sizeof n);
    if (n) XXH3_128bits_update(st, s, n);
}

static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    return strndup(path, (size_t)(slash - path));
}

static char *join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void hash_includes(XXH3_state_t *st, const char *code, const char *dir,
                          const gb_kernel_source *src, int depth);

/* Hashes one included file found at `path`: its text and, recursively, its own
 * includes (relative ones next to it). Returns 1 if the file was read. */
static int hash_found(XXH3_state_t *st, const char *path, const gb_kernel_source *src, int depth) {
    gb_err ignore = {0};
    char *text = gb_read_file(path, NULL, &ignore);
    gb_err_clear(&ignore);
    if (!text) return 0;
    hash_str(st, "text", text);
    char *sub = dir_of(path);
    if (sub) hash_includes(st, text, sub, src, depth + 1);
    free(sub);
    free(text);
    return 1;
}

/* Hashes the text of every file named by #include "..." or #include <...> in
 * code, recursively. A "..." include is looked up as the compilers do: next to
 * the including file, then in the include directories, first match wins. A
 * <...> include is searched for by both compilers in the include directories
 * (NVRTC also in the top-level file's directory, which it gets as -I), so every
 * match there is hashed: hashing a file the compiler does not read costs
 * nothing, missing one it does read serves a stale binary. An include found in
 * none of them is hashed by name only: the compiler will report it, or find it
 * in a system location that does not change between runs. */
static void hash_includes(XXH3_state_t *st, const char *code, const char *dir,
                          const gb_kernel_source *src, int depth) {
    if (depth > MAX_INCLUDE_DEPTH) return;
    for (const char *line = code; line && *line;) {
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#') {
            p++;
            while (*p == ' ' || *p == '\t') p++;
            if (strncmp(p, "include", 7) == 0) {
                p += 7;
                while (*p == ' ' || *p == '\t') p++;
                if (*p == '"' || *p == '<') {
                    int quoted = *p == '"';
                    const char *end = strchr(p + 1, quoted ? '"' : '>');
                    const char *nl = strchr(p, '\n');
                    char *name = (end && (!nl || end < nl)) ? strndup(p + 1, (size_t)(end - p - 1))
                                                            : NULL;
                    if (name) {
                        hash_str(st, quoted ? "include" : "sysinclude", name);
                        int ndirs = src->ninclude_dirs + 1;
                        for (int i = 0; i < ndirs; i++) {
                            const char *d = i == 0 ? dir : src->include_dirs[i - 1];
                            if (!d) continue;
                            char *found = join(d, name);
                            int hit = found && hash_found(st, found, src, depth);
                            free(found);
                            if (hit && quoted) break;
                        }
                        free(name);
                    }
                }
            }
        }
        line = strchr(line, '\n');
        if (line) line++;
    }
}

int gb_cache_key(const gb_kernel_source *src, const char *compiler_id, const char *target,
                 char key[GB_CACHE_KEY_HEX], gb_err *e) {
    XXH3_state_t *st = XXH3_createState();
    if (!st) return GB_FAIL(e, "out of host memory hashing a kernel");
    XXH3_128bits_reset(st);
    hash_str(st, "gpubench-cache-v1", "");
    hash_str(st, "compiler", compiler_id);
    hash_str(st, "target", target);
    hash_str(st, "entry", src->entry);
    hash_str(st, "label", src->label);
    for (int i = 0; i < src->ndefines; i++) {
        hash_str(st, "define", src->defines[i].name);
        hash_str(st, "value", src->defines[i].value);
    }
    for (int i = 0; i < src->ninclude_dirs; i++) hash_str(st, "idir", src->include_dirs[i]);
    for (int i = 0; i < src->nparams; i++) hash_str(st, "param", gb_kind_name(src->params[i]));
    hash_str(st, "code", src->code);
    hash_includes(st, src->code, src->dir ? src->dir : ".", src, 0);
    XXH128_hash_t h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    snprintf(key, GB_CACHE_KEY_HEX, "%016llx%016llx", (unsigned long long)h.high64,
             (unsigned long long)h.low64);
    return 0;
}

static int cache_disabled(void) {
    const char *v = getenv("GPUBENCH_NO_CACHE");
    return v && *v && strcmp(v, "0") != 0;
}

const char *gb_cache_dir(void) {
    static char dir[4096];
    const char *v = getenv("GPUBENCH_CACHE_DIR");
    if (v && *v) {
        snprintf(dir, sizeof dir, "%s", v);
        return dir;
    }
    v = getenv("XDG_CACHE_HOME");
    if (v && *v) {
        snprintf(dir, sizeof dir, "%s/gpubench", v);
        return dir;
    }
    v = getenv("HOME");
    snprintf(dir, sizeof dir, "%s/.cache/gpubench", v && *v ? v : "/tmp");
    return dir;
}

static char *entry_path(const char *key, const char *ext) {
    const char *dir = gb_cache_dir();
    size_t n = strlen(dir) + strlen(key) + strlen(ext) + 16;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/kernels/%s.%s", dir, key, ext);
    return p;
}

int gb_cache_load(const char *key, const char *ext, void **data, size_t *len) {
    if (cache_disabled()) return 0;
    char *path = entry_path(key, ext);
    if (!path) return 0;
    gb_err ignore = {0};
    char *buf = gb_read_file(path, len, &ignore);
    gb_err_clear(&ignore);
    free(path);
    if (!buf) return 0;
    if (*len == 0) {
        free(buf);
        return 0;
    }
    *data = buf;
    return 1;
}

void gb_cache_store(const char *key, const char *ext, const void *data, size_t len) {
    if (cache_disabled() || len == 0) return;
    gb_err ignore = {0};
    const char *dir = gb_cache_dir();
    size_t n = strlen(dir) + 16;
    char *kdir = malloc(n);
    if (!kdir) return;
    snprintf(kdir, n, "%s/kernels", dir);
    char *path = entry_path(key, ext);
    if (path && gb_mkdirs(kdir, &ignore) == 0) gb_write_file_atomic(path, data, len, &ignore);
    gb_err_clear(&ignore);
    free(path);
    free(kdir);
}
