/* NVRTC compilation to CUBIN through the disk cache (see cuda_compile.h). */
#define _GNU_SOURCE
#include "cuda_compile.h"

#include "cuda_api.h"

#if GPUBENCH_HAVE_CUDA_HEADERS
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel_cache.h"

/* Options that change the binary; they are part of the cache key. */
#define FIXED_OPTIONS "-std=c++17", "-lineinfo"
#define FIXED_OPTIONS_TEXT "-std=c++17 -lineinfo"

enum { PATH_CAP = 4096 };

static int is_file(const char *dir, const char *name) {
    char path[2 * PATH_CAP];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return 0;
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *dir, const char *name) {
    char path[2 * PATH_CAP];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return 0;
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The CUDA toolkit's include directory, "" when none is found (kernels that
 * include no toolkit header still compile). Looked up once. */
static int toolkit_include(const char **out, gb_err *e) {
    static int done;
    static char dir[PATH_CAP];
    if (done) {
        *out = dir;
        return 0;
    }
    const char *env = getenv("GPUBENCH_CUDA_INCLUDE");
    if (env && *env) {
        /* An explicit setting that is wrong is an error, not a silent fallback. */
        if (!is_file(env, "cuda_fp16.h"))
            return GB_FAIL(e, "GPUBENCH_CUDA_INCLUDE=%s has no cuda_fp16.h", env);
        snprintf(dir, sizeof dir, "%s", env);
    } else {
        char candidates[3][PATH_CAP] = {"", "", "/usr/local/cuda/include"};
        const char *home = getenv("CUDA_HOME");
        if (home && *home) snprintf(candidates[0], sizeof candidates[0], "%s/include", home);
        const char *slash = strrchr(gb_nvrtc_path, '/');
        if (slash)
            snprintf(candidates[1], sizeof candidates[1], "%.*s/../include",
                     (int)(slash - gb_nvrtc_path), gb_nvrtc_path);
        for (int i = 0; i < 3 && !dir[0]; i++)
            if (candidates[i][0] && is_file(candidates[i], "cuda_fp16.h")) {
                char *real = realpath(candidates[i], NULL);
                snprintf(dir, sizeof dir, "%.*s", PATH_CAP - 1, real ? real : candidates[i]);
                free(real);
            }
    }
    done = 1;
    *out = dir;
    return 0;
}

/* "sm_90", "sm_90a", "sm_100f": what --gpu-architecture takes for a CUBIN. */
static int check_target(const char *target, gb_err *e) {
    const char *p = target ? target : "";
    int ok = strncmp(p, "sm_", 3) == 0;
    if (ok) {
        p += 3;
        int digits = 0;
        while (isdigit((unsigned char)*p)) p++, digits++;
        if (*p == 'a' || *p == 'f') p++;
        ok = digits >= 2 && *p == 0;
    }
    if (!ok)
        return GB_FAIL(e, "CUDA compile target '%s' is not an architecture like sm_90", target ? target : "");
    if (!gb_nvrtc.GetNumSupportedArchs || !gb_nvrtc.GetSupportedArchs) return 0;
    int n = 0;
    if (gb_nvrtc.GetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 256) return 0;
    int archs[256];
    if (gb_nvrtc.GetSupportedArchs(archs) != NVRTC_SUCCESS) return 0;
    int want = atoi(target + 3);
    char list[1024] = "";
    for (int i = 0; i < n; i++) {
        if (archs[i] == want) return 0;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%ssm_%d", i ? ", " : "", archs[i]);
    }
    return GB_FAIL(e, "NVRTC %d.%d cannot compile for %s (it supports %s)", gb_nvrtc_major,
                   gb_nvrtc_minor, target, list);
}

static int check_defines(const gb_kernel_source *src, gb_err *e) {
    for (int i = 0; i < src->ndefines; i++) {
        const char *n = src->defines[i].name;
        int ok = n && (isalpha((unsigned char)n[0]) || n[0] == '_');
        for (const char *p = n; ok && *p; p++) ok = isalnum((unsigned char)*p) || *p == '_';
        if (!ok) return GB_FAIL(e, "kernel define name '%s' is not an identifier", n ? n : "(null)");
        const char *v = src->defines[i].value;
        if (v && strchr(v, '\n'))
            return GB_FAIL(e, "kernel define %s has a line break in its value", n);
    }
    return 0;
}

/* The argv NVRTC gets; strings it owns are freed by free_options. */
typedef struct options {
    const char **argv;
    char **owned;
    int argc, nowned;
} options;

static int add_owned(options *o, char *s) {
    if (!s) return -1;
    o->owned[o->nowned++] = s;
    o->argv[o->argc++] = s;
    return 0;
}

static char *concat(const char *a, const char *b, const char *c) {
    char *s = NULL;
    return asprintf(&s, "%s%s%s", a, b, c) < 0 ? NULL : s;
}

/* An empty value is -DNAME (NAME is 1), as on a compiler command line. */
static char *define_option(const gb_define *d) {
    char *s = NULL;
    int n = d->value && *d->value ? asprintf(&s, "-D%s=%s", d->name, d->value)
                                  : asprintf(&s, "-D%s", d->name);
    return n < 0 ? NULL : s;
}

static void free_options(options *o) {
    for (int i = 0; i < o->nowned; i++) free(o->owned[i]);
    free(o->owned);
    free(o->argv);
}

static int build_options(const gb_kernel_source *src, const char *target, const char *toolkit,
                         options *o, gb_err *e) {
    int max = 4 + src->ndefines + 1 + src->ninclude_dirs + 2;
    o->argv = calloc((size_t)max, sizeof *o->argv);
    o->owned = calloc((size_t)max, sizeof *o->owned);
    o->argc = o->nowned = 0;
    int rc = (o->argv && o->owned) ? 0 : -1;
    if (rc == 0) rc = add_owned(o, concat("--gpu-architecture=", target, ""));
    const char *fixed[] = {FIXED_OPTIONS};
    for (size_t i = 0; rc == 0 && i < sizeof fixed / sizeof fixed[0]; i++) o->argv[o->argc++] = fixed[i];
    for (int i = 0; rc == 0 && i < src->ndefines; i++) rc = add_owned(o, define_option(&src->defines[i]));
    if (rc == 0 && src->dir) rc = add_owned(o, concat("-I", src->dir, ""));
    for (int i = 0; rc == 0 && i < src->ninclude_dirs; i++)
        rc = add_owned(o, concat("-I", src->include_dirs[i], ""));
    if (rc == 0 && toolkit[0]) {
        rc = add_owned(o, concat("-I", toolkit, ""));
        /* CUDA 13 moved libcu++ (<cuda/std/...>) under include/cccl. */
        if (rc == 0 && is_dir(toolkit, "cccl")) rc = add_owned(o, concat("-I", toolkit, "/cccl"));
    }
    if (rc != 0) {
        free_options(o);
        return GB_FAIL(e, "out of host memory building NVRTC options");
    }
    return 0;
}

static char *program_log(nvrtcProgram prog) {
    size_t n = 0;
    if (gb_nvrtc.GetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0) return NULL;
    char *log = malloc(n + 1);
    if (!log) return NULL;
    if (gb_nvrtc.GetProgramLog(prog, log) != NVRTC_SUCCESS) {
        free(log);
        return NULL;
    }
    log[n] = 0;
    size_t len = strlen(log);
    while (len && isspace((unsigned char)log[len - 1])) log[--len] = 0;
    if (len == 0) {
        free(log);
        return NULL;
    }
    return log;
}

/* One NVRTC compilation; on success the CUBIN, its length and (maybe) the log are set. */
static int nvrtc_compile(const gb_kernel_source *src, const char *label, const options *o,
                         const char *target, void **cubin, size_t *len, char **log, gb_err *e) {
    nvrtcProgram prog = NULL;
    if (NVRTC(e, CreateProgram, (&prog, src->code, label, 0, NULL, NULL))) return -1;
    nvrtcResult r = gb_nvrtc.CompileProgram(prog, o->argc, o->argv);
    char *text = program_log(prog);
    int rc = 0;
    if (r != NVRTC_SUCCESS) {
        rc = gb_nvrtc_fail_at(e, __FILE__, __LINE__, "nvrtcCompileProgram", r,
                              " compiling %s for %s:\n%s", label, target,
                              text ? text : "(NVRTC wrote no log)");
    } else {
        size_t n = 0;
        rc = NVRTC(e, GetCUBINSize, (prog, &n));
        if (rc == 0 && n == 0) rc = GB_FAIL(e, "NVRTC produced no CUBIN for %s (%s)", label, target);
        char *bin = rc == 0 ? malloc(n) : NULL;
        if (rc == 0 && !bin) rc = GB_FAIL(e, "out of host memory for a %zu-byte CUBIN", n);
        if (rc == 0 && NVRTC(e, GetCUBIN, (prog, bin))) rc = -1;
        if (rc == 0) {
            *cubin = bin;
            *len = n;
            if (log) {
                *log = text;
                text = NULL;
            }
        } else {
            free(bin);
        }
    }
    free(text);
    gb_nvrtc.DestroyProgram(&prog);
    return rc;
}

/* A kernel defining GB_ARCH_SPECIFIC (= 1 or true) uses instructions of one architecture
 * only (wgmma on 9.0): it is compiled for the arch-specific target, sm_90 ->
 * sm_90a (docs/LUA_API.md, "Kernels"); a target that names a suffix stays. */
static const char *arch_specific_target(const gb_kernel_source *src, const char *target, char *buf,
                                        size_t cap) {
    int want = 0;
    for (int i = 0; i < src->ndefines; i++)
        if (src->defines[i].name && strcmp(src->defines[i].name, "GB_ARCH_SPECIFIC") == 0)
            want = !src->defines[i].value || !src->defines[i].value[0] || strcmp(src->defines[i].value, "1") == 0;
    size_t n = target ? strlen(target) : 0;
    if (!want || n == 0 || !isdigit((unsigned char)target[n - 1]) || n + 2 > cap) return target;
    snprintf(buf, cap, "%sa", target);
    return buf;
}

int gb_cuda_compile(const gb_kernel_source *src, const char *target, int read_cache, void **cubin,
                    size_t *len, char **log, int *cache_hit, gb_err *e) {
    const char *label = src->label ? src->label : "<string>";
    char specific[32];
    target = arch_specific_target(src, target, specific, sizeof specific);
    const char *toolkit = "";
    *cubin = NULL;
    *len = 0;
    *cache_hit = 0;
    if (log) *log = NULL;
    if (!src->code) return GB_FAIL(e, "%s: no source text", label);
    if (gb_cuda_load_nvrtc(e) || check_target(target, e) || check_defines(src, e) ||
        toolkit_include(&toolkit, e))
        return -1;

    char compiler_id[PATH_CAP + 128];
    snprintf(compiler_id, sizeof compiler_id, "nvrtc-%d.%d " FIXED_OPTIONS_TEXT " toolkit=%s",
             gb_nvrtc_major, gb_nvrtc_minor, toolkit);
    char key[GB_CACHE_KEY_HEX];
    if (gb_cache_key(src, compiler_id, target, key, e)) return -1;
    if (read_cache && gb_cache_load(key, "cubin", cubin, len) == 1) {
        *cache_hit = 1;
        return 0;
    }
    options o;
    if (build_options(src, target, toolkit, &o, e)) return -1;
    int rc = nvrtc_compile(src, label, &o, target, cubin, len, log, e);
    free_options(&o);
    if (rc == 0) gb_cache_store(key, "cubin", *cubin, *len);
    return rc;
}

#else /* built without cuda.h / nvrtc.h */

#include "cuda_backend.h"

int gb_cuda_compile(const gb_kernel_source *src, const char *target, int read_cache, void **cubin,
                    size_t *len, char **log, int *cache_hit, gb_err *e) {
    return GB_FAIL(e, GB_CUDA_NOT_BUILT);
}

#endif
