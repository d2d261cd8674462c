/* Compiles every CUDA kernel of the repository with NVRTC for sm_90, without a
 * GPU or driver (the CUDA backend's compile_only), and checks compile errors,
 * defines, include directories, the disk cache and parameter reflection.
 *
 * Every .cu file in kernels/cuda/ and tests/kernels/cuda/ is found at run time,
 * so a new kernel is covered without editing this file. By default a file is
 * compiled once, for the entry named like the file (copy.cu -> copy), with no
 * defines. A file that needs more declares it in its leading // comment lines,
 * one compile configuration per line:
 *
 *   // gpubench-compile: entry=gemv_q4_0,gemv_q8_0 defines=ROWS=4,WARPS=2
 *   // gpubench-compile: entry=gemv_q4_0 defines=ROWS=1
 *   // gpubench-compile: entry=odd params=buffer,u32
 *
 * entry=   comma-separated entries, each compiled with this line's defines
 * defines= comma-separated NAME=VALUE (or NAME alone, which defines it as 1)
 * params=  explicit parameter kinds, for a kernel whose signature cannot be
 *          read from its source (see host/cuda/cuda_signature.h)
 * Only the leading comment block is read (it ends at the first line that does
 * not start with //); an unknown key fails the test.
 *
 * Without NVRTC the test is skipped (exit 77), except when CI=true: then a
 * missing NVRTC is a failure, so CI cannot pass by compiling nothing.
 *
 * `test_nvrtc_compile K/N` compiles only every N-th (entry, defines) unit,
 * starting at the K-th, and runs the other checks when K is 0: ctest runs
 * the N shards side by side (tests/CMakeLists.txt), each well inside the
 * sanitizer build's time limit. */
#define _GNU_SOURCE
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "check.h"
#include "cuda_backend.h"
#include "cuda_compile.h"
#include "cuda_cubin.h"
#include "fileutil.h"
#include "test_util.h"

static gb_kernel_source source(const char *label, const char *code, const char *entry) {
    gb_kernel_source s;
    memset(&s, 0, sizeof s);
    s.label = label;
    s.code = code;
    s.entry = entry;
    return s;
}

/* compile_only; returns 0/-1 and leaves the error (or the kinds) to the caller. */
static int compile(const gb_kernel_source *src, const char *target, gb_kind *kinds, int *n,
                   char **log, gb_err *e) {
    return gb_cuda_backend.compile_only(src, target, kinds, n, NULL, log, e);
}

static void expect_fail(const char *what, const gb_kernel_source *src, const char *target,
                        const char *needle) {
    gb_kind kinds[GB_MAX_PARAMS];
    int n = 0;
    char *log = NULL;
    gb_err e = {0};
    int rc = compile(src, target, kinds, &n, &log, &e);
    CHECK(rc == -1, "%s: compiled, expected an error containing '%s'", what, needle);
    if (rc == -1)
        CHECK(e.msg && strstr(e.msg, needle), "%s: error\n%s\ndoes not contain '%s'", what,
              e.msg ? e.msg : "(none)", needle);
    free(log);
    gb_err_clear(&e);
}

static void expect_ok(const char *what, const gb_kernel_source *src, const char *target,
                      const char *kinds_want) {
    gb_kind kinds[GB_MAX_PARAMS];
    int n = 0;
    char *log = NULL;
    gb_err e = {0};
    int rc = compile(src, target, kinds, &n, &log, &e);
    CHECK(rc == 0, "%s: %s", what, e.msg ? e.msg : "failed");
    if (rc == 0 && kinds_want)
        CHECK(strcmp(kinds_text(kinds, n), kinds_want) == 0, "%s: kinds %s, expected %s", what,
              kinds_text(kinds, n), kinds_want);
    free(log);
    gb_err_clear(&e);
}

/* ------------------------------------------------ every kernel in the tree */

enum { MAX_CONFIGS = 32, MAX_ENTRIES = 16, MAX_DEFINES = 24 };

typedef struct config {
    char entries[MAX_ENTRIES][128];
    int nentries;
    char names[MAX_DEFINES][128], values[MAX_DEFINES][128];
    gb_define defines[MAX_DEFINES];
    int ndefines;
    gb_kind params[GB_MAX_PARAMS];
    int nparams; /* -1: reflect */
} config;

/* Bounded copy (names longer than the fields are cut, never overflowed). */
static void copy_str(char *dst, size_t cap, const char *src) {
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* Splits s at commas into out[][cap]; returns the count or -1. */
static int split(const char *s, char out[][128], int max) {
    int n = 0;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (n == max || len == 0 || len >= 128) return -1;
        memcpy(out[n], s, len);
        out[n++][len] = 0;
        s += len + (comma ? 1 : 0);
    }
    return n;
}

/* Parses the text after "gpubench-compile:"; returns 0 or -1 with why. */
static int parse_config(const char *text, config *c, char *why, size_t cap) {
    memset(c, 0, sizeof *c);
    c->nparams = -1;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *field = strtok_r(buf, " \t\r", &save); field;
         field = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(field, '=');
        if (!eq) {
            snprintf(why, cap, "'%s' is not key=value", field);
            return -1;
        }
        *eq = 0;
        const char *key = field, *value = eq + 1;
        if (strcmp(key, "entry") == 0) {
            c->nentries = split(value, c->entries, MAX_ENTRIES);
            if (c->nentries <= 0) {
                snprintf(why, cap, "bad entry list '%s'", value);
                return -1;
            }
        } else if (strcmp(key, "defines") == 0) {
            char items[MAX_DEFINES][128];
            c->ndefines = split(value, items, MAX_DEFINES);
            if (c->ndefines < 0) {
                snprintf(why, cap, "bad define list '%s'", value);
                return -1;
            }
            for (int i = 0; i < c->ndefines; i++) {
                char *deq = strchr(items[i], '=');
                if (deq) *deq = 0;
                copy_str(c->names[i], sizeof c->names[i], items[i]);
                copy_str(c->values[i], sizeof c->values[i], deq ? deq + 1 : "");
                c->defines[i].name = c->names[i];
                c->defines[i].value = c->values[i];
            }
        } else if (strcmp(key, "params") == 0) {
            char items[GB_MAX_PARAMS][128];
            int n = split(value, items, GB_MAX_PARAMS);
            if (n < 0) {
                snprintf(why, cap, "bad params list '%s'", value);
                return -1;
            }
            for (int i = 0; i < n; i++)
                if (gb_kind_from_name(items[i], &c->params[i]) != 0) {
                    snprintf(why, cap, "'%.64s' is not a parameter kind", items[i]);
                    return -1;
                }
            c->nparams = n;
        } else {
            snprintf(why, cap, "unknown key '%s' (known: entry, defines, params)", key);
            return -1;
        }
    }
    return 0;
}

/* Reads the configurations of a file's leading comment block; 0 found means
 * "the default". Returns the count, or -1 (reported) on a malformed line. */
static int read_configs(const char *label, const char *code, config *out, const char *base) {
    int n = 0;
    const char *tag = "gpubench-compile:";
    for (const char *line = code; line && strncmp(line, "//", 2) == 0;) {
        const char *p = line + 2;
        while (*p == ' ' || *p == '\t') p++;
        if (strncmp(p, tag, strlen(tag)) == 0) {
            const char *end = strchr(p, '\n');
            char text[1024];
            size_t len = end ? (size_t)(end - p) : strlen(p);
            len -= strlen(tag);
            if (len >= sizeof text) len = sizeof text - 1;
            memcpy(text, p + strlen(tag), len);
            text[len] = 0;
            char why[256];
            CHECK(n < MAX_CONFIGS, "%s: more than %d gpubench-compile lines", label, MAX_CONFIGS);
            if (n == MAX_CONFIGS) return -1;
            if (parse_config(text, &out[n], why, sizeof why) != 0) {
                CHECK(0, "%s: bad gpubench-compile line: %s", label, why);
                return -1;
            }
            if (out[n].nentries == 0) { /* defines only: the default entry */
                copy_str(out[n].entries[0], sizeof out[n].entries[0], base);
                out[n].nentries = 1;
            }
            n++;
        }
        line = strchr(line, '\n');
        if (line) line++;
    }
    if (n == 0) {
        memset(&out[0], 0, sizeof out[0]);
        out[0].nparams = -1;
        copy_str(out[0].entries[0], sizeof out[0].entries[0], base);
        out[0].nentries = 1;
        n = 1;
    }
    return n;
}

/* Reflected kinds that must come out for the kernels whose callers depend on them. */
static const struct {
    const char *label, *entry, *kinds;
} expected[] = {
    {"kernels/cuda/copy.cu", "copy", "buffer,buffer,u32"},
    {"kernels/cuda/read.cu", "read", "buffer,buffer,u32,u32"},
    {"tests/kernels/cuda/inc.cu", "inc", "buffer,u32"},
    {"tests/kernels/cuda/kinds.cu", "kinds", "buffer,u32,i32,f32,u64,buffer"},
    {"tests/kernels/cuda/half_scale.cu", "half_scale", "buffer,buffer,u32"},
};
enum { NEXPECTED = sizeof expected / sizeof expected[0] };

/* This run's shard: units numbered over both trees in file order, this run
 * compiling those with number % nshards == shard. */
static int shard, nshards = 1, unit;

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Compiles every *.cu in root/rel (this shard's units); marks which
 * expected[] rows were seen, 1 compiled here, -1 left to another shard. */
static void compile_tree(const char *root, const char *rel, int seen[NEXPECTED]) {
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s/%s", root, rel);
    DIR *dir = opendir(dirpath);
    CHECK(dir != NULL, "cannot open %s", dirpath);
    if (!dir) return;
    char *names[1024];
    int nnames = 0;
    for (struct dirent *de; (de = readdir(dir)) && nnames < 1024;) {
        size_t len = strlen(de->d_name);
        if (len > 3 && strcmp(de->d_name + len - 3, ".cu") == 0) names[nnames++] = strdup(de->d_name);
    }
    closedir(dir);
    qsort(names, (size_t)nnames, sizeof names[0], cmp_names);
    for (int f = 0; f < nnames; f++) {
        char label[4200], path[8400];
        snprintf(label, sizeof label, "%s/%s", rel, names[f]);
        snprintf(path, sizeof path, "%s/%s", root, label);
        gb_err e = {0};
        char *code = gb_read_file(path, NULL, &e);
        CHECK(code != NULL, "%s", e.msg ? e.msg : path);
        gb_err_clear(&e);
        if (!code) continue;
        char base[256];
        snprintf(base, sizeof base, "%.*s", (int)(strlen(names[f]) - 3), names[f]);
        static config configs[MAX_CONFIGS];
        int nconfigs = read_configs(label, code, configs, base);
        for (int c = 0; c < nconfigs; c++) {
            for (int k = 0; k < configs[c].nentries; k++) {
                gb_kernel_source src = source(label, code, configs[c].entries[k]);
                if (unit++ % nshards != shard) {
                    for (int x = 0; x < NEXPECTED; x++)
                        if (strcmp(expected[x].label, label) == 0 && strcmp(expected[x].entry, src.entry) == 0 &&
                            !seen[x])
                            seen[x] = -1;
                    continue;
                }
                src.dir = dirpath;
                src.defines = configs[c].defines;
                src.ndefines = configs[c].ndefines;
                if (configs[c].nparams >= 0) {
                    src.params = configs[c].params;
                    src.nparams = configs[c].nparams;
                }
                gb_kind kinds[GB_MAX_PARAMS];
                int n = 0;
                char *log = NULL;
                int rc = compile(&src, "sm_90", kinds, &n, &log, &e);
                CHECK(rc == 0, "%s entry %s: %s", label, src.entry, e.msg ? e.msg : "failed");
                if (rc == 0) {
                    printf("ok %s entry=%s", label, src.entry);
                    for (int d = 0; d < src.ndefines; d++)
                        printf("%s%s%s%s", d ? "," : " defines=", src.defines[d].name,
                               src.defines[d].value[0] ? "=" : "", src.defines[d].value);
                    printf(" params=%s\n", kinds_text(kinds, n));
                    if (log) printf("   NVRTC log:\n%s\n", log);
                    for (int x = 0; x < NEXPECTED; x++)
                        if (strcmp(expected[x].label, label) == 0 &&
                            strcmp(expected[x].entry, src.entry) == 0) {
                            seen[x] = 1;
                            CHECK(strcmp(kinds_text(kinds, n), expected[x].kinds) == 0,
                                  "%s entry %s: kinds %s, expected %s", label, src.entry,
                                  kinds_text(kinds, n), expected[x].kinds);
                        }
                }
                free(log);
                gb_err_clear(&e);
            }
        }
        free(code);
    }
    for (int f = 0; f < nnames; f++) free(names[f]);
}

/* ------------------------------------------------------- focused checks */

static void test_errors(void) {
    gb_kernel_source broken = source("broken.cu",
                                     "extern \"C\" __global__ void broken(float *p)\n"
                                     "{\n"
                                     "    p[0] = undefined_name;\n"
                                     "}\n",
                                     "broken");
    expect_fail("compile error names file and line", &broken, "sm_90", "broken.cu(3): error");
    expect_fail("compile error carries the log", &broken, "sm_90", "identifier \"undefined_name\" is undefined");
    expect_fail("compile error names the call", &broken, "sm_90",
                "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION (compilation failed) compiling "
                "broken.cu for sm_90:");

    const char *copy_like = "extern \"C\" __global__ void copy(const uint4 *s, uint4 *d, unsigned n)\n"
                            "{ if (threadIdx.x < n) d[threadIdx.x] = s[threadIdx.x]; }\n";
    gb_kernel_source typo = source("copy.cu", copy_like, "cpy");
    expect_fail("wrong entry", &typo, "sm_90",
                "copy.cu: no kernel 'cpy' in the compiled CUBIN (is it declared extern \"C\" __global__?)");
    gb_kernel_source ok = source("copy.cu", copy_like, "copy");
    expect_fail("malformed target", &ok, "sm90", "CUDA compile target 'sm90' is not an architecture like sm_90");
    expect_fail("unsupported target", &ok, "sm_20", "cannot compile for sm_20 (it supports ");
    expect_ok("sm_90a target", &ok, "sm_90a", "buffer,buffer,u32");

    gb_kernel_source half = source("h.cu",
                                   "#include <cuda_fp16.h>\n"
                                   "extern \"C\" __global__ void h(__half *y, __half s) { y[0] = s; }\n",
                                   "h");
    expect_fail("compiles but cannot be reflected", &half, "sm_90",
                "h.cu:2: parameter 2 's' of h has type '__half'");

    /* A signature generated by a function-like macro cannot be read; explicit
     * params are the way out, and they win over reflection. */
    gb_kernel_source hidden = source("hidden.cu",
                                     "#define KERNEL(name) extern \"C\" __global__ void name(float *p, unsigned n)\n"
                                     "KERNEL(scale) { if (threadIdx.x < n) p[threadIdx.x] *= 2.0f; }\n",
                                     "scale");
    expect_fail("macro-generated signature", &hidden, "sm_90",
                "hidden.cu: no extern \"C\" __global__ function 'scale' found in the source; pass "
                "params={...} explicitly");
    gb_kind explicit_kinds[] = {GB_ARG_BUFFER, GB_ARG_U32};
    hidden.params = explicit_kinds;
    hidden.nparams = 2;
    expect_ok("explicit params", &hidden, "sm_90", "buffer,u32");
}

static void test_defines_and_includes(const char *tmp) {
    const char *needs_rows = "#if ROWS != 4\n#error ROWS must be 4\n#endif\n"
                             "#if FLAG != 1\n#error FLAG must be 1\n#endif\n"
                             "extern \"C\" __global__ void k(float *p) { p[0] = ROWS * FLAG; }\n";
    gb_define good[] = {{"FLAG", ""}, {"ROWS", "4"}};
    gb_define bad[] = {{"FLAG", ""}, {"ROWS", "3"}};
    gb_kernel_source s = source("rows.cu", needs_rows, "k");
    s.defines = good;
    s.ndefines = 2;
    expect_ok("defines reach the compiler (NAME=VALUE and bare NAME)", &s, "sm_90", "buffer");
    s.defines = bad;
    expect_fail("a define's value is used", &s, "sm_90", "ROWS must be 4");
    gb_define ugly[] = {{"2BAD", "1"}};
    s.defines = ugly;
    s.ndefines = 1;
    expect_fail("define names are checked", &s, "sm_90", "kernel define name '2BAD' is not an identifier");

    char inc[4200], header[4300];
    snprintf(inc, sizeof inc, "%s/include", tmp);
    snprintf(header, sizeof header, "%s/helper.cuh", inc);
    gb_err e = {0};
    CHECK(gb_mkdirs(inc, &e) == 0 && gb_write_file_atomic(header, "#define HELPER 7\n", 17, &e) == 0,
          "writing %s: %s", header, e.msg ? e.msg : "");
    gb_err_clear(&e);
    const char *with_include = "#include \"helper.cuh\"\n#if HELPER != 7\n#error wrong helper\n#endif\n"
                               "extern \"C\" __global__ void k(int *p) { p[0] = HELPER; }\n";
    gb_kernel_source si = source("inc.cu", with_include, "k");
    expect_fail("include not found without its directory", &si, "sm_90", "helper.cuh");
    const char *dirs[] = {inc};
    si.include_dirs = dirs;
    si.ninclude_dirs = 1;
    expect_ok("include_dirs reach the compiler", &si, "sm_90", "buffer");
    si.include_dirs = NULL;
    si.ninclude_dirs = 0;
    si.dir = inc; /* the source's own directory is searched too */
    expect_ok("the source's directory is an include directory", &si, "sm_90", "buffer");

    /* Warnings come back in the log. */
    gb_kernel_source w = source("warn.cu",
                                "extern \"C\" __global__ void k(int *p) { int unused_variable; p[0] = 1; }\n",
                                "k");
    gb_kind kinds[GB_MAX_PARAMS];
    int n = 0;
    char *log = NULL;
    CHECK(compile(&w, "sm_90", kinds, &n, &log, &e) == 0, "warn.cu: %s", e.msg ? e.msg : "");
    CHECK(log && strstr(log, "warn.cu(1): warning") && strstr(log, "unused_variable"),
          "warnings missing from the log: %s", log ? log : "(no log)");
    free(log);
    gb_err_clear(&e);
}

static void test_cache(const char *tmp) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/cache", tmp);
    setenv("GPUBENCH_CACHE_DIR", dir, 1);
    unsetenv("GPUBENCH_NO_CACHE");
    const char *code = "extern \"C\" __global__ void k(unsigned *p, unsigned n) { p[0] = n * SCALE; }\n";
    gb_define d2[] = {{"SCALE", "2"}}, d3[] = {{"SCALE", "3"}};
    gb_kernel_source s = source("cache.cu", code, "k");
    s.defines = d2;
    s.ndefines = 1;
    void *bin[4] = {0};
    size_t len[4] = {0};
    int hit[4] = {0};
    gb_err e = {0};
    int rc = gb_cuda_compile(&s, "sm_90", 1, &bin[0], &len[0], NULL, &hit[0], &e);
    rc |= gb_cuda_compile(&s, "sm_90", 1, &bin[1], &len[1], NULL, &hit[1], &e);
    s.defines = d3;
    rc |= gb_cuda_compile(&s, "sm_90", 1, &bin[2], &len[2], NULL, &hit[2], &e);
    rc |= gb_cuda_compile(&s, "sm_90", 0, &bin[3], &len[3], NULL, &hit[3], &e);
    CHECK(rc == 0, "cache compiles: %s", e.msg ? e.msg : "");
    gb_err_clear(&e);
    if (rc == 0) {
        CHECK(!hit[0] && hit[1], "first compile hit=%d (want 0), second hit=%d (want 1)", hit[0], hit[1]);
        CHECK(len[0] == len[1] && memcmp(bin[0], bin[1], len[0]) == 0, "cached CUBIN differs from the compiled one");
        CHECK(!hit[2], "a different define must miss the cache");
        CHECK(!hit[3], "read_cache=0 must compile");
        CHECK(gb_cubin_has_function(bin[0], len[0], "k") == 1, "CUBIN lacks its kernel k");
        CHECK(gb_cubin_has_function(bin[0], len[0], "kk") == 0, "CUBIN reports a kernel kk it lacks");
        CHECK(gb_cubin_has_function("not an ELF image", 16, "k") == -1, "garbage read as a CUBIN");
        CHECK(gb_cubin_has_function(bin[0], 100, "k") == -1, "a truncated CUBIN must be rejected");
    }
    for (int i = 0; i < 4; i++) free(bin[i]);
}

/* The dynamic shared memory a CUBIN declares (GB_DYNAMIC_SHARED), read by
 * compile_only without a driver: the exact bytes of a stated value and of the
 * kernels' own stage formulas, 0 without the symbol, and errors for a symbol
 * the host cannot trust. */
static uint32_t dynamic_of(const gb_kernel_source *src, int *rc, gb_err *e) {
    gb_kind kinds[GB_MAX_PARAMS];
    int n = 0;
    gb_kernel_traits traits = {12345, 7};
    *rc = gb_cuda_backend.compile_only(src, "sm_90", kinds, &n, &traits, NULL, e);
    return traits.dynamic_shared;
}

static void test_dynamic_shared(void) {
    gb_err e = {0};
    int rc;
    const char *plain = "extern \"C\" __global__ void k(unsigned *p) { p[0] = 1; }\n";
    gb_kernel_source s = source("plain.cu", plain, "k");
    CHECK(dynamic_of(&s, &rc, &e) == 0 && rc == 0, "a kernel without the symbol asks for no dynamic shared memory");
    gb_err_clear(&e);

    s = source("stated.cu",
               "extern \"C\" __device__ const unsigned gpubench_dynamic_shared_bytes = 100000;\n"
               "extern \"C\" __global__ void k(unsigned *p) { p[0] = 1; }\n",
               "k");
    uint32_t dyn = dynamic_of(&s, &rc, &e);
    CHECK(rc == 0 && dyn == 100000, "stated 100000 bytes, read %u (rc %d: %s)", dyn, rc, e.msg ? e.msg : "");
    gb_err_clear(&e);

    s = source("wide.cu",
               "extern \"C\" __device__ const unsigned long long gpubench_dynamic_shared_bytes = 100000;\n"
               "extern \"C\" __global__ void k(unsigned *p) { p[0] = 1; }\n",
               "k");
    dynamic_of(&s, &rc, &e);
    CHECK(rc != 0 && e.msg && strstr(e.msg, "wide.cu: the CUBIN's gpubench_dynamic_shared_bytes is not 4 bytes of data"),
          "an 8-byte symbol must fail: %s", e.msg ? e.msg : "(no error)");
    gb_err_clear(&e);

    /* The kernels' formulas through the header: q8_0 W1 KS4 TL2 U4 S2 has
     * 4 warps x 2 stages x 16 x 2 rows x (68 x 4 + 16) bytes = 73728 dynamic;
     * the kept geometry (KS2) is 36864 + 1024 static, so 0. */
    char path[4200];
    snprintf(path, sizeof path, "%s/kernels/cuda/gemv_q8_0_tc.cu", GPUBENCH_SOURCE_DIR);
    size_t code_len = 0;
    char *code = gb_read_file(path, &code_len, &e);
    CHECK(code != NULL, "reading %s: %s", path, e.msg ? e.msg : "");
    gb_err_clear(&e);
    if (code) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/kernels/cuda", GPUBENCH_SOURCE_DIR);
        gb_define ks4[] = {{"TC", "1"}, {"WARPS", "1"}, {"KSPLIT", "4"}, {"TILES", "2"}, {"UNROLL", "4"},
                           {"STAGES", "2"}, {"INTERLEAVE", "2"}, {"GEMV_TOKENS", "8"}};
        s = source("gemv_q8_0_tc.cu", code, "gemv_q8_0_tc");
        s.dir = dir;
        s.defines = ks4;
        s.ndefines = 8;
        dyn = dynamic_of(&s, &rc, &e);
        CHECK(rc == 0 && dyn == 73728, "q8_0 TC KSPLIT=4: %u dynamic bytes, want 73728 (%s)", dyn, e.msg ? e.msg : "");
        gb_err_clear(&e);
        ks4[2].value = "2";
        dyn = dynamic_of(&s, &rc, &e);
        CHECK(rc == 0 && dyn == 0, "q8_0 TC KSPLIT=2 fits static shared memory: %u dynamic bytes, want 0 (%s)", dyn,
              e.msg ? e.msg : "");
        gb_err_clear(&e);
        free(code);
    }
    uint32_t v = 7;
    CHECK(gb_cubin_u32_object("not an ELF image", 16, "x", &v) == -1 && v == 7, "garbage read as a CUBIN symbol");
}

/* Launch overlap as compile_only reads it (GB_LAUNCH_OVERLAP): 1 for the header's
 * declaration, 0 without it, and an error for a value the host cannot trust. */
static int overlap_of(const char *label, const char *code, int *rc, gb_err *e) {
    gb_kind kinds[GB_MAX_PARAMS];
    int n = 0;
    gb_kernel_traits traits = {7, 7};
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/kernels/cuda", GPUBENCH_SOURCE_DIR);
    gb_kernel_source s = source(label, code, "k");
    s.dir = dir;
    *rc = gb_cuda_backend.compile_only(&s, "sm_90", kinds, &n, &traits, NULL, e);
    return traits.overlap;
}

static void test_launch_overlap(void) {
    gb_err e = {0};
    int rc;
    const char *body = "extern \"C\" __global__ void k(unsigned *p) { gb_overlap_start(); p[0] = 1; }\n";
    char code[1024];
    snprintf(code, sizeof code, "#include \"launch_overlap.cuh\"\nGB_LAUNCH_OVERLAP\n%s", body);
    int v = overlap_of("declared.cu", code, &rc, &e);
    CHECK(rc == 0 && v == 1, "GB_LAUNCH_OVERLAP read as %d (rc %d: %s)", v, rc, e.msg ? e.msg : "");
    gb_err_clear(&e);
    snprintf(code, sizeof code, "#include \"launch_overlap.cuh\"\n%s", body);
    v = overlap_of("undeclared.cu", code, &rc, &e);
    CHECK(rc == 0 && v == 0, "a kernel using the calls without declaring it: overlap %d (rc %d: %s)", v, rc,
          e.msg ? e.msg : "");
    gb_err_clear(&e);
    snprintf(code, sizeof code, "extern \"C\" __device__ const unsigned gpubench_launch_overlap = 2;\n"
                                "extern \"C\" __global__ void k(unsigned *p) { p[0] = 1; }\n");
    overlap_of("two.cu", code, &rc, &e);
    CHECK(rc != 0 && e.msg && strstr(e.msg, "two.cu: the CUBIN's gpubench_launch_overlap is not 4 bytes of data "
                                            "holding 0 or 1"),
          "a value of 2 must fail: %s", e.msg ? e.msg : "(no error)");
    gb_err_clear(&e);
    snprintf(code, sizeof code, "extern \"C\" __device__ const unsigned short gpubench_launch_overlap = 1;\n"
                                "extern \"C\" __global__ void k(unsigned *p) { p[0] = 1; }\n");
    overlap_of("short.cu", code, &rc, &e);
    CHECK(rc != 0 && e.msg && strstr(e.msg, "short.cu: the CUBIN's gpubench_launch_overlap is not 4 bytes"),
          "a 2-byte symbol must fail: %s", e.msg ? e.msg : "(no error)");
    gb_err_clear(&e);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    return remove(path);
}

int main(int argc, char **argv) {
    gb_err e = {0};
    char end;
    if (argc > 2 || (argc == 2 && (sscanf(argv[1], "%d/%d%c", &shard, &nshards, &end) != 2 || nshards < 1 ||
                                   shard < 0 || shard >= nshards))) {
        fprintf(stderr, "usage: test_nvrtc_compile [K/N] (the K-th of N shards, 0 <= K < N)\n");
        return 2;
    }
    if (gb_cuda_load_nvrtc(&e) != 0) {
        int rc = check_skip(check_in_ci(), "NVRTC not available: %s", e.msg);
        gb_err_clear(&e);
        return rc;
    }
    /* A private cache directory: every kernel is really compiled on every run,
     * and the cache test starts empty. */
    char tmp[] = "/tmp/gpubench-nvrtc-test-XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    char cache[4200];
    snprintf(cache, sizeof cache, "%s/tree-cache", tmp);
    setenv("GPUBENCH_CACHE_DIR", cache, 1);

    int seen[NEXPECTED] = {0};
    compile_tree(GPUBENCH_SOURCE_DIR, "kernels/cuda", seen);
    compile_tree(GPUBENCH_SOURCE_DIR, "tests/kernels/cuda", seen);
    for (int x = 0; x < NEXPECTED; x++)
        CHECK(seen[x], "%s entry %s was not compiled", expected[x].label, expected[x].entry);
    if (shard == 0) {
        test_errors();
        test_defines_and_includes(tmp);
        test_cache(tmp);
        test_dynamic_shared();
        test_launch_overlap();
    }
    printf("shard %d/%d: %d of %d units compiled here\n", shard, nshards,
           unit / nshards + (shard < unit % nshards), unit);

    nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    CHECK(unit >= nshards, "%d units for %d shards: a shard compiled nothing", unit, nshards);
    return check_finish("test_nvrtc_compile");
}
