/* The Vulkan backend's compiler path without a device: compile_only with
 * defines, includes (relative, nested, include directories), compile errors
 * with file:line (also inside an include), warnings, targets, the explicit
 * parameter check and the disk cache. Run from the repository root. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "check.h"
#include "fileutil.h"
#include "glsl_compile.h"

static char *slurp(const char *path)
{
    gb_err e = {0};
    size_t len;
    char *text = gb_read_file(path, &len, &e);
    if (!text) {
        printf("FAIL cannot read %s: %s\n", path, e.msg ? e.msg : "");
        failures++;
    }
    gb_err_clear(&e);
    return text;
}

/* compile_only on a file under tests/kernels/vulkan; returns rc, *msg the error. */
static int compile_file(const char *path, const gb_define *defs, int ndefs,
                        const char *const *idirs, int nidirs, gb_kind *params, int *nparams,
                        char **log, char **msg)
{
    char *code = slurp(path);
    if (!code)
        return -1;
    gb_kernel_source src = {.label = path, .dir = "tests/kernels/vulkan", .code = code,
                            .defines = defs, .ndefines = ndefs, .include_dirs = idirs,
                            .ninclude_dirs = nidirs};
    gb_err e = {0};
    int rc = gb_vulkan_backend.compile_only(&src, "vulkan1.2", params, nparams, NULL, log, &e);
    free(code);
    *msg = e.msg;
    return rc;
}

static void test_errors_have_file_line(void)
{
    int before = failures;
    gb_kind params[GB_MAX_PARAMS];
    int n = 0;
    char *log = NULL, *msg = NULL;
    int rc = compile_file("tests/kernels/vulkan/bad_syntax.comp", NULL, 0, NULL, 0, params, &n,
                          &log, &msg);
    CHECK(rc != 0 && msg && strstr(msg, "tests/kernels/vulkan/bad_syntax.comp:7: error"),
          "message: %s", msg ? msg : "(none)");
    CHECK(msg && strstr(msg, "undeclared_value") && strstr(msg, "SHADERC_COMPILATION_ERROR"),
          "message: %s", msg ? msg : "(none)");
    CHECK(log == NULL, "log on failure: %s", log);
    free(msg);
    msg = NULL;
    rc = compile_file("tests/kernels/vulkan/include_error.comp", NULL, 0, NULL, 0, params, &n,
                      &log, &msg);
    CHECK(rc != 0 && msg && strstr(msg, "tests/kernels/vulkan/inc/broken.glsl:3: error"),
          "message: %s", msg ? msg : "(none)");
    free(msg);
    report("compile errors carry file:line (also inside an include)", before);
}

static void test_includes_and_defines(void)
{
    int before = failures;
    gb_kind params[GB_MAX_PARAMS];
    int n = 0;
    char *log = NULL, *msg = NULL;
    const char *idirs[] = {"tests/kernels/vulkan/idir"};
    gb_define defs[] = {{"SCALE", "3u"}, {"OFFSET", "5u"}};
    int rc = compile_file("tests/kernels/vulkan/uses_include.comp", defs, 2, idirs, 1, params,
                          &n, &log, &msg);
    CHECK(rc == 0, "message: %s", msg ? msg : "");
    CHECK(n == 2 && params[0] == GB_ARG_BUFFER && params[1] == GB_ARG_U32, "params: %d", n);
    CHECK(log == NULL, "unexpected warnings: %s", log);
    free(msg);
    free(log);
    log = msg = NULL;
    /* Without the define the shader's own #error fires. */
    rc = compile_file("tests/kernels/vulkan/uses_include.comp", &defs[1], 1, idirs, 1, params, &n,
                      &log, &msg);
    CHECK(rc != 0 && msg && strstr(msg, "SCALE must be defined"), "message: %s",
          msg ? msg : "(none)");
    free(msg);
    msg = NULL;
    /* Without the include directory, from_idir.glsl cannot be found. */
    rc = compile_file("tests/kernels/vulkan/uses_include.comp", defs, 2, NULL, 0, params, &n,
                      &log, &msg);
    CHECK(rc != 0 && msg && strstr(msg, "from_idir.glsl"), "message: %s", msg ? msg : "(none)");
    free(msg);
    report("defines, relative/nested includes, include directories", before);
}

static void test_warnings_targets_params(void)
{
    int before = failures;
    const char *code = "#version 450\n"
                       "#extension GL_GOOGLE_nonexistent_ext : warn\n"
                       "layout(local_size_x = 1) in;\n"
                       "layout(binding = 0) buffer O { uint o[]; };\n"
                       "layout(push_constant) uniform P { float x; };\n"
                       "void main() { o[0] = uint(x); }\n";
    gb_kernel_source src = {.label = "warn.comp", .code = code};
    gb_kind params[GB_MAX_PARAMS];
    int n = 0;
    char *log = NULL;
    gb_err e = {0};
    int rc = gb_vulkan_backend.compile_only(&src, "vulkan1.1", params, &n, NULL, &log, &e);
    CHECK(rc == 0, "%s", e.msg ? e.msg : "");
    CHECK(log && strstr(log, "warn.comp:2: warning"), "log: %s", log ? log : "(none)");
    CHECK(n == 2 && params[1] == GB_ARG_F32, "n %d", n);
    free(log);
    log = NULL;
    gb_err_clear(&e);

    rc = gb_vulkan_backend.compile_only(&src, "vulkan9", params, &n, NULL, &log, &e);
    CHECK(rc != 0 && e.msg && strstr(e.msg, "'vulkan9' is not a Vulkan target"), "msg: %s",
          e.msg ? e.msg : "(none)");
    gb_err_clear(&e);

    gb_kind wrong[] = {GB_ARG_U32, GB_ARG_F32};
    src.params = wrong;
    src.nparams = 2;
    rc = gb_vulkan_backend.compile_only(&src, "vulkan1.2", params, &n, NULL, &log, &e);
    CHECK(rc != 0 && e.msg && strstr(e.msg, "parameter 1 is buffer in the shader but was declared "
                                            "u32"),
          "msg: %s", e.msg ? e.msg : "(none)");
    CHECK(log == NULL, "log kept after a failure");
    gb_err_clear(&e);
    gb_kind as_int[] = {GB_ARG_BUFFER, GB_ARG_I32}; /* same size: accepted, and reported back */
    src.params = as_int;
    rc = gb_vulkan_backend.compile_only(&src, "vulkan1.2", params, &n, NULL, &log, &e);
    CHECK(rc == 0 && n == 2 && params[1] == GB_ARG_I32, "rc %d: %s", rc, e.msg ? e.msg : "");
    free(log);
    gb_err_clear(&e);
    report("warnings log, targets, explicit parameters", before);
}

static void test_cache(void)
{
    int before = failures;
    char dir[] = "/tmp/gpubench-vk-cache-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    setenv("GPUBENCH_CACHE_DIR", dir, 1);
    unsetenv("GPUBENCH_NO_CACHE");
    const char *code = "#version 450\nlayout(local_size_x = 8) in;\n"
                       "layout(binding = 0) buffer O { uint o[]; };\n"
                       "void main() { o[gl_GlobalInvocationID.x] = VALUE; }\n";
    gb_define d1 = {"VALUE", "1u"}, d2 = {"VALUE", "2u"};
    gb_kernel_source src = {.label = "<cache-test>", .code = code, .defines = &d1, .ndefines = 1};
    gb_glsl_target t;
    gb_err e = {0};
    gb_glsl_target_parse("vulkan1.2", &t, &e);
    uint32_t *w1 = NULL, *w2 = NULL, *w3 = NULL;
    size_t n1 = 0, n2 = 0, n3 = 0;
    char *log = NULL;
    int hit1 = -1, hit2 = -1, hit3 = -1;
    int rc1 = gb_glsl_compile(&src, &t, &w1, &n1, &log, &hit1, &e);
    free(log);
    int rc2 = gb_glsl_compile(&src, &t, &w2, &n2, &log, &hit2, &e);
    free(log);
    src.defines = &d2;
    int rc3 = gb_glsl_compile(&src, &t, &w3, &n3, &log, &hit3, &e);
    free(log);
    CHECK(rc1 == 0 && rc2 == 0 && rc3 == 0, "%s", e.msg ? e.msg : "");
    CHECK(hit1 == 0 && hit2 == 1 && hit3 == 0, "hits %d %d %d", hit1, hit2, hit3);
    CHECK(n1 == n2 && w1 && w2 && memcmp(w1, w2, n1 * 4) == 0, "cached SPIR-V differs");
    CHECK(w3 && (n3 != n1 || memcmp(w1, w3, n1 * 4) != 0), "a different define gave the same "
                                                            "SPIR-V");
    free(w1);
    free(w2);
    free(w3);
    gb_err_clear(&e);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "could not remove %s", dir);
    report("disk cache: hit on the second compile, miss on a new define", before);
}

int main(void)
{
    /* Compile errors must come from the compiler, not from a cached binary. */
    setenv("GPUBENCH_NO_CACHE", "1", 1);
    test_errors_have_file_line();
    test_includes_and_defines();
    test_warnings_targets_params();
    test_cache();
    return check_finish("test_vulkan_compile");
}
