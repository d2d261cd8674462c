/* Helpers shared by the Vulkan device tests (tests/c/test_vulkan_*.c): the
 * live-counter check at exit, opening device 0 or skipping (exit 77) when no
 * Vulkan device exists — failing instead in CI, since CI has lavapipe — and loading
 * the test kernels in tests/kernels/vulkan. Tests run from the repository root. */
#ifndef GPUBENCH_TEST_VULKAN_COMMON_H
#define GPUBENCH_TEST_VULKAN_COMMON_H
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "check.h"
#include "fileutil.h"

/* The live-object counters must all be back to 0; then the summary line. */
static inline int finish(const char *test)
{
    for (int i = 0; i < GB_LIVE_COUNT; i++)
        CHECK(gb_live(i) == 0, "live counter %d is %ld at exit", i, gb_live(i));
    return check_finish(test);
}

/* Device 0 of the Vulkan backend, or exit 77 (skip) when there is none. */
static inline gb_device *open_or_skip(void)
{
    gb_err e = {0};
    int count = 0;
    if (gb_vulkan_backend.probe(&count, &e) != 0 || count == 0) {
        int rc = check_skip(check_in_ci(), "no Vulkan device (%s)", e.msg ? e.msg : "0 devices");
        gb_err_clear(&e);
        exit(rc);
    }
    gb_device *d = NULL;
    if (gb_device_open(&gb_vulkan_backend, 0, &d, &e) != 0) {
        printf("FAIL: opening Vulkan device 0: %s\n", e.msg ? e.msg : "");
        gb_err_clear(&e);
        exit(1);
    }
    printf("# device: %s (%s, Vulkan %s, %s)\n", d->info.name, d->info.device_type,
           d->info.api_version, d->info.driver_version);
    return d;
}

/* Loads tests/kernels/vulkan/<name>; on failure returns NULL and *msg the error. */
static inline gb_kernel *load_kernel(gb_device *d, const char *name, const gb_define *defs,
                                     int ndefs, char **msg)
{
    char path[256];
    snprintf(path, sizeof path, "tests/kernels/vulkan/%s", name);
    gb_err e = {0};
    size_t len;
    char *code = gb_read_file(path, &len, &e);
    gb_kernel *k = NULL;
    if (code) {
        gb_kernel_source src = {.label = path, .dir = "tests/kernels/vulkan", .code = code,
                                .entry = "main", .defines = defs, .ndefines = ndefs};
        if (gb_kernel_load(d, &src, &k, &e) != 0)
            k = NULL;
        free(code);
    }
    if (msg)
        *msg = e.msg;
    else
        gb_err_clear(&e);
    return k;
}

/* Loads a kernel that the test cannot do without; counts a failure otherwise. */
static inline gb_kernel *need_kernel(gb_device *d, const char *name, const gb_define *defs,
                                     int ndefs)
{
    char *msg = NULL;
    gb_kernel *k = load_kernel(d, name, defs, ndefs, &msg);
    CHECK(k != NULL, "loading %s: %s", name, msg ? msg : "");
    free(msg);
    return k;
}

static inline gb_buffer *need_buffer(gb_device *d, uint64_t size)
{
    gb_err e = {0};
    gb_buffer *b = NULL;
    if (gb_buffer_alloc(d, size, &b, &e) != 0)
        b = NULL;
    CHECK(b != NULL, "allocating %llu bytes: %s", (unsigned long long)size, e.msg ? e.msg : "");
    gb_err_clear(&e);
    return b;
}

/* A 1-D launch: grid x block threads, arguments given as a gb_arg array. */
static inline gb_launch launch_1d(gb_kernel *k, uint32_t grid, uint32_t block, const gb_arg *args,
                                  int nargs)
{
    gb_launch l;
    memset(&l, 0, sizeof l);
    l.kernel = k;
    l.grid[0] = grid;
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = block;
    l.block[1] = l.block[2] = 1;
    l.nargs = nargs;
    memcpy(l.args, args, (size_t)nargs * sizeof *args);
    return l;
}

#define ARG_CTOR(fn, type, kind_, field)                                  \
    static inline gb_arg fn(type x)                                       \
    {                                                                     \
        gb_arg a = {.kind = kind_};                                       \
        a.v.field = x;                                                    \
        return a;                                                         \
    }
ARG_CTOR(arg_buf, gb_buffer *, GB_ARG_BUFFER, buf)
ARG_CTOR(arg_u32, uint32_t, GB_ARG_U32, u32)
ARG_CTOR(arg_i32, int32_t, GB_ARG_I32, i32)
ARG_CTOR(arg_f32, float, GB_ARG_F32, f32)
ARG_CTOR(arg_u64, uint64_t, GB_ARG_U64, u64)
#undef ARG_CTOR

/* Runs a call that must succeed, counting a failure with its message otherwise. */
#define MUST(call)                                                                   \
    do {                                                                             \
        gb_err must_e = {0};                                                         \
        int must_rc = (call);                                                        \
        CHECK(must_rc == 0, "%s: %s", #call, must_e.msg ? must_e.msg : "");          \
        gb_err_clear(&must_e);                                                       \
    } while (0)
#define ERR (&must_e) /* the error slot inside MUST(...) */
#endif
