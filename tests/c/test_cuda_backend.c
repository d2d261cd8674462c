/* The CUDA backend end to end on a real GPU, through the same wrappers the Lua
 * bindings use (host/core/backend.c): device info, transfers, fills, copies,
 * kernels compiled at run time (and their disk cache), every argument kind,
 * launches in 1-D and 3-D geometry, batches and CUDA graphs, timers, the
 * profiler range, the L2 flush, error messages, release order and the
 * live-object counters.
 *
 * Without a CUDA device it prints "skipped: no CUDA device" and exits 77. */
#define _GNU_SOURCE
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "check.h"
#include "fileutil.h"
#include "test_util.h"

/* Runs a call that must succeed; on failure records the message and yields 0. */
#define OK(call)                                                                                  \
    ok_at((call), &e, #call, __LINE__)

static int ok_at(int rc, gb_err *e, const char *what, int line) {
    checks++;
    if (rc == 0) return 1;
    failures++;
    printf("FAIL %s:%d: %s: %s\n", __FILE__, line, what, e->msg ? e->msg : "(no message)");
    gb_err_clear(e);
    return 0;
}

/* A call that must fail with a message containing needle. */
#define FAILS(call, needle) fails_at((call), &e, #call, needle, __LINE__)

static void fails_at(int rc, gb_err *e, const char *what, const char *needle, int line) {
    checks++;
    if (rc != 0 && e->msg && strstr(e->msg, needle)) {
        gb_err_clear(e);
        return;
    }
    failures++;
    printf("FAIL %s:%d: %s: expected an error containing '%s', got %s\n", __FILE__, line, what,
           needle, rc == 0 ? "success" : (e->msg ? e->msg : "(no message)"));
    gb_err_clear(e);
}

static gb_err e;

/* ------------------------------------------------------------- helpers */

static gb_launch launch_of(gb_kernel *k, uint32_t gx, uint32_t bx) {
    gb_launch l;
    memset(&l, 0, sizeof l);
    l.kernel = k;
    l.grid[0] = gx;
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = bx;
    l.block[1] = l.block[2] = 1;
    return l;
}

static void arg_buf(gb_launch *l, gb_buffer *b) {
    l->args[l->nargs].kind = GB_ARG_BUFFER;
    l->args[l->nargs++].v.buf = b;
}
static void arg_u32(gb_launch *l, uint32_t v) {
    l->args[l->nargs].kind = GB_ARG_U32;
    l->args[l->nargs++].v.u32 = v;
}
static void arg_i32(gb_launch *l, int32_t v) {
    l->args[l->nargs].kind = GB_ARG_I32;
    l->args[l->nargs++].v.i32 = v;
}
static void arg_f32(gb_launch *l, float v) {
    l->args[l->nargs].kind = GB_ARG_F32;
    l->args[l->nargs++].v.f32 = v;
}
static void arg_u64(gb_launch *l, uint64_t v) {
    l->args[l->nargs].kind = GB_ARG_U64;
    l->args[l->nargs++].v.u64 = v;
}

/* Loads a kernel file of the repository, as the bindings would. */
static int load(gb_device *d, const char *rel, const char *entry, const gb_define *defs, int ndefs,
                const gb_kind *params, int nparams, gb_kernel **k) {
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "%s/%s", GPUBENCH_SOURCE_DIR, rel);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    char *code = gb_read_file(path, NULL, &e);
    if (!code) return -1;
    gb_kernel_source s;
    memset(&s, 0, sizeof s);
    s.label = rel;
    s.dir = dir;
    s.code = code;
    s.entry = entry;
    s.defines = defs;
    s.ndefines = ndefs;
    s.params = params;
    s.nparams = nparams;
    int rc = gb_kernel_load(d, &s, k, &e);
    free(code);
    return rc;
}

static int load_string(gb_device *d, const char *code, const char *entry, gb_kernel **k) {
    gb_kernel_source s;
    memset(&s, 0, sizeof s);
    s.label = "<string>";
    s.code = code;
    s.entry = entry;
    return gb_kernel_load(d, &s, k, &e);
}

/* ------------------------------------------------------------ sections */

static void test_info(int count) {
    gb_device_info in;
    if (!OK(gb_device_info_of(&gb_cuda_backend, 0, &in, &e))) return;
    printf("device 0: %s, %s, driver %s, %u SMs, L2 %llu bytes, %.1f GiB, spec %.0f GB/s "
           "(memory clock %u kHz, bus %u bits)\n",
           in.name, in.arch, in.driver_version, in.sm_count, (unsigned long long)in.l2_bytes,
           in.memory_bytes / 1073741824.0, in.spec_gbs, in.memory_clock_khz, in.memory_bus_bits);
    CHECK(strcmp(in.backend, "cuda") == 0, "backend '%s'", in.backend);
    CHECK(in.name[0], "empty device name");
    CHECK(strncmp(in.arch, "sm_", 3) == 0 && strlen(in.arch) >= 5, "arch '%s'", in.arch);
    CHECK(strchr(in.driver_version, '.') && atoi(in.driver_version) >= 12, "driver version '%s'",
          in.driver_version);
    CHECK(in.memory_bytes >= (1ull << 30), "memory %llu bytes", (unsigned long long)in.memory_bytes);
    CHECK(in.max_buffer_bytes == in.memory_bytes, "max_buffer_bytes %llu",
          (unsigned long long)in.max_buffer_bytes);
    CHECK(in.sm_count > 0 && in.l2_bytes > 0, "SMs %u, L2 %llu", in.sm_count,
          (unsigned long long)in.l2_bytes);
    CHECK(in.subgroup_size == 32, "warp size %u", in.subgroup_size);
    CHECK(in.max_threads_per_group >= 1024 && in.max_group_size[0] >= 1024 &&
              in.max_groups[0] >= 65535 && in.max_groups[1] >= 65535,
          "limits: %u threads, block x %u, grid %u x %u", in.max_threads_per_group,
          in.max_group_size[0], in.max_groups[0], in.max_groups[1]);
    CHECK(in.max_shared_bytes >= 48 * 1024, "opt-in shared memory %u", in.max_shared_bytes);
    CHECK(in.max_push_bytes == 4096, "max_push_bytes %u", in.max_push_bytes);
    CHECK(in.timestamp_period_ns == 500.0, "timestamp period %g", in.timestamp_period_ns);
    CHECK(in.has_uuid, "no UUID");
    int nonzero = 0;
    for (int i = 0; i < 16; i++) nonzero |= in.uuid[i];
    CHECK(nonzero, "UUID is all zero");
    if (in.memory_clock_khz && in.memory_bus_bits) {
        double want = 2.0 * in.memory_clock_khz * 1e3 * in.memory_bus_bits / 8 / 1e9;
        CHECK(fabs(in.spec_gbs - want) < 1e-6 * want, "spec %g GB/s, formula gives %g", in.spec_gbs,
              want);
    } else {
        printf("note: the driver reports no memory clock or bus width; spec bandwidth unknown\n");
        CHECK(in.spec_gbs == 0, "spec_gbs %g without clock and bus width", in.spec_gbs);
    }
    CHECK(strcmp(in.device_type, "discrete") == 0 || strcmp(in.device_type, "integrated") == 0,
          "device type '%s'", in.device_type);
    FAILS(gb_device_info_of(&gb_cuda_backend, count, &in, &e), "does not exist");
}

static void test_memory(gb_device *d) {
    const size_t n = 1 << 20;
    gb_buffer *a = NULL, *b = NULL;
    if (!OK(gb_buffer_alloc(d, n, &a, &e)) || !OK(gb_buffer_alloc(d, n, &b, &e))) goto done;
    unsigned char *host = malloc(n), *back = malloc(n), *zero = calloc(1, n);
    uint32_t *w = (uint32_t *)host;
    for (size_t i = 0; i < n / 4; i++) w[i] = (uint32_t)(i * 2654435761u);

    if (OK(gb_buffer_upload(a, 0, host, n, &e)) && OK(gb_buffer_download(a, 0, back, n, &e)))
        CHECK(memcmp(host, back, n) == 0, "upload/download round trip differs");
    if (OK(gb_buffer_download(a, 4096, back, 1000, &e)))
        CHECK(memcmp(host + 4096, back, 1000) == 0, "partial download differs");
    const char odd[] = "seventeen bytes!!";
    if (OK(gb_buffer_upload(a, 3, odd, 17, &e)) && OK(gb_buffer_download(a, 0, back, 64, &e)))
        CHECK(memcmp(back + 3, odd, 17) == 0 && memcmp(back, host, 3) == 0 &&
                  memcmp(back + 20, host + 20, 44) == 0,
              "unaligned upload wrote the wrong bytes");
    OK(gb_buffer_upload(a, 0, host, n, &e));

    /* fill32 through gb_buffer_fill's 4-byte path, on a sub-range. */
    const uint32_t pat = 0xA5C3E10Fu;
    if (OK(gb_buffer_fill(a, 64, 4096, &pat, 4, &e)) && OK(gb_buffer_download(a, 0, back, n, &e))) {
        int good = memcmp(back, host, 64) == 0 && memcmp(back + 64 + 4096, host + 64 + 4096, n - 4160) == 0;
        for (size_t i = 64; i < 64 + 4096; i += 4) good &= memcmp(back + i, &pat, 4) == 0;
        CHECK(good, "fill32 of [64, 4160) wrong or spilled outside the range");
    }
    OK(gb_buffer_upload(a, 0, host, n, &e));

    /* Sub-range copies: between buffers and within one buffer. */
    if (OK(gb_buffer_upload(b, 0, zero, n, &e)) && OK(gb_buffer_copy(b, 100, a, 16, 1000, &e)) &&
        OK(gb_buffer_download(b, 0, back, n, &e)))
        CHECK(memcmp(back + 100, host + 16, 1000) == 0 && memcmp(back, zero, 100) == 0 &&
                  memcmp(back + 1100, zero, n - 1100) == 0,
              "copy of a[16, 1016) to b[100, 1100) wrong or spilled");
    if (OK(gb_buffer_copy(a, n / 2, a, 0, 4096, &e)) && OK(gb_buffer_download(a, n / 2, back, 4096, &e)))
        CHECK(memcmp(back, host, 4096) == 0, "copy within one buffer differs");
    FAILS(gb_buffer_copy(a, 0, a, 100, 200, &e), "overlap");

    /* The whole device memory cannot be allocated: the context holds some. */
    gb_buffer *huge = NULL;
    int rc = gb_buffer_alloc(d, d->info.memory_bytes, &huge, &e);
    if (rc == 0) gb_buffer_free(huge);
    FAILS(rc, "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory) allocating");
    free(host);
    free(back);
    free(zero);
done:
    gb_buffer_free(a);
    gb_buffer_free(b);
}

static void test_copy_read(gb_device *d) {
    gb_kernel *copy = NULL, *copy2 = NULL, *read = NULL;
    if (!OK(load(d, "kernels/cuda/copy.cu", "copy", NULL, 0, NULL, 0, &copy))) return;
    CHECK(strcmp(kinds_text(copy->params, copy->nparams), "buffer,buffer,u32") == 0,
          "copy kinds %s", kinds_text(copy->params, copy->nparams));
    CHECK(copy->cache_hit == 0, "first load of copy.cu in a fresh cache was a cache hit");
    if (OK(load(d, "kernels/cuda/copy.cu", "copy", NULL, 0, NULL, 0, &copy2))) {
        CHECK(copy2->cache_hit == 1, "second load of copy.cu missed the cache");
        gb_kernel_free(copy2);
    }
    if (!OK(load(d, "kernels/cuda/read.cu", "read", NULL, 0, NULL, 0, &read))) goto done;
    CHECK(strcmp(kinds_text(read->params, read->nparams), "buffer,buffer,u32,u32") == 0,
          "read kinds %s", kinds_text(read->params, read->nparams));

    const uint32_t n16 = 65536 + 7; /* a ragged tail for the grid-stride loop */
    const size_t bytes = (size_t)n16 * 16 + 64;
    gb_buffer *src = NULL, *dst = NULL, *out = NULL;
    uint32_t *host = malloc(bytes), *back = malloc(bytes);
    for (size_t i = 0; i < bytes / 4; i++) host[i] = (uint32_t)(i * 0x9E3779B1u + 12345);
    if (!OK(gb_buffer_alloc(d, bytes, &src, &e)) || !OK(gb_buffer_alloc(d, bytes, &dst, &e)) ||
        !OK(gb_buffer_alloc(d, 1 << 20, &out, &e)) || !OK(gb_buffer_upload(src, 0, host, bytes, &e)))
        goto free_buffers;

    /* 1-D and 3-D geometries must both cover exactly n16 elements. */
    const uint32_t geoms[2][6] = {{120, 1, 1, 256, 1, 1}, {3, 2, 2, 8, 4, 2}};
    for (int g = 0; g < 2; g++) {
        const uint32_t fill = 0xEEEEEEEEu;
        gb_launch l = launch_of(copy, 1, 1);
        memcpy(l.grid, geoms[g], sizeof l.grid);
        memcpy(l.block, geoms[g] + 3, sizeof l.block);
        arg_buf(&l, src);
        arg_buf(&l, dst);
        arg_u32(&l, n16);
        if (OK(gb_buffer_fill(dst, 0, bytes, &fill, 4, &e)) && OK(gb_launch_run(&l, &e)) &&
            OK(gb_buffer_download(dst, 0, back, bytes, &e))) {
            CHECK(memcmp(back, host, (size_t)n16 * 16) == 0, "copy kernel (geometry %d) differs", g);
            int tail = 1;
            for (size_t i = (size_t)n16 * 4; i < bytes / 4; i++) tail &= back[i] == fill;
            CHECK(tail, "copy kernel (geometry %d) wrote past n16", g);
        }
    }

    /* read: thread t folds src elements t, t+T, t+2T, ... (T threads) into
     * acc = XOR of x^y^z^w, and stores acc to out[t] only when it equals the
     * sentinel. With the sentinel set to thread 0's accumulator, exactly the
     * threads whose accumulators equal it must have written. */
    const uint32_t grid = 7, block = 64, threads = grid * block;
    uint32_t *acc = calloc(threads, sizeof *acc);
    for (uint32_t i = 0; i < n16; i++)
        acc[i % threads] ^= host[4 * i] ^ host[4 * i + 1] ^ host[4 * i + 2] ^ host[4 * i + 3];
    const uint32_t sentinel = acc[0], untouched = 0xDEADBEEFu;
    int matches = 0;
    for (uint32_t t = 0; t < threads; t++) matches += acc[t] == sentinel;
    gb_launch l = launch_of(read, grid, block);
    arg_buf(&l, src);
    arg_buf(&l, out);
    arg_u32(&l, n16);
    arg_u32(&l, sentinel);
    if (sentinel != untouched && OK(gb_buffer_fill(out, 0, 1 << 20, &untouched, 4, &e)) &&
        OK(gb_launch_run(&l, &e)) && OK(gb_buffer_download(out, 0, back, threads * 4, &e))) {
        int good = 1;
        for (uint32_t t = 0; t < threads; t++)
            good &= back[t] == (acc[t] == sentinel ? sentinel : untouched);
        CHECK(good, "read kernel: stores do not match the host's accumulators (%d threads match)",
              matches);
    }
    /* A sentinel no accumulator equals: nothing is written. */
    uint32_t never = 1;
    for (int again = 1; again;) {
        again = 0;
        for (uint32_t t = 0; t < threads; t++)
            if (acc[t] == never) again = 1;
        if (again) never++;
    }
    l.args[3].v.u32 = never;
    if (OK(gb_buffer_fill(out, 0, 1 << 20, &untouched, 4, &e)) && OK(gb_launch_run(&l, &e)) &&
        OK(gb_buffer_download(out, 0, back, threads * 4, &e))) {
        int good = 1;
        for (uint32_t t = 0; t < threads; t++) good &= back[t] == untouched;
        CHECK(good, "read kernel wrote with a sentinel that matches nothing");
    }
    free(acc);
free_buffers:
    free(host);
    free(back);
    gb_buffer_free(src);
    gb_buffer_free(dst);
    gb_buffer_free(out);
done:
    gb_kernel_free(copy);
    gb_kernel_free(read);
}

static void test_kinds(gb_device *d) {
    gb_kernel *k = NULL;
    gb_buffer *out = NULL, *p = NULL;
    if (!OK(load(d, "tests/kernels/cuda/kinds.cu", "kinds", NULL, 0, NULL, 0, &k))) return;
    CHECK(strcmp(kinds_text(k->params, k->nparams), "buffer,u32,i32,f32,u64,buffer") == 0,
          "kinds %s", kinds_text(k->params, k->nparams));
    const uint32_t cafe = 0xCAFEBABEu;
    if (OK(gb_buffer_alloc(d, 5 * 8, &out, &e)) && OK(gb_buffer_alloc(d, 4, &p, &e)) &&
        OK(gb_buffer_upload(p, 0, &cafe, 4, &e))) {
        gb_launch l = launch_of(k, 1, 32);
        arg_buf(&l, out);
        arg_u32(&l, 0xFFFFFFFEu);
        arg_i32(&l, -5);
        arg_f32(&l, 1.5f);
        arg_u64(&l, 0x123456789ABCDEF0ull);
        arg_buf(&l, p);
        uint64_t got[5] = {0};
        uint32_t fbits;
        float f = 1.5f;
        memcpy(&fbits, &f, 4);
        if (OK(gb_launch_run(&l, &e)) && OK(gb_buffer_download(out, 0, got, sizeof got, &e))) {
            CHECK(got[0] == 0xFFFFFFFEu, "u32 arrived as %llx", (unsigned long long)got[0]);
            CHECK(got[1] == (uint64_t)(int64_t)-5, "i32 arrived as %llx", (unsigned long long)got[1]);
            CHECK(got[2] == fbits, "f32 arrived as %llx", (unsigned long long)got[2]);
            CHECK(got[3] == 0x123456789ABCDEF0ull, "u64 arrived as %llx", (unsigned long long)got[3]);
            CHECK(got[4] == cafe, "buffer arrived pointing at %llx", (unsigned long long)got[4]);
        }
        /* Checked before anything reaches the driver. */
        l.args[3].kind = GB_ARG_U32;
        FAILS(gb_launch_run(&l, &e), "kernel kinds argument 4: expected f32, got u32");
        l.args[3].kind = GB_ARG_F32;
        l.nargs = 5;
        FAILS(gb_launch_run(&l, &e), "kernel kinds takes 6 arguments, got 5");
        l.nargs = 6;
        l.block[0] = 4096;
        FAILS(gb_launch_run(&l, &e), "exceeds the device limit");
        l.block[0] = 32;
        l.grid[1] = 0;
        FAILS(gb_launch_run(&l, &e), "at least 1");
    }
    gb_buffer_free(out);
    gb_buffer_free(p);
    gb_kernel_free(k);
}

/* fp16 -> bits for values that are exact in fp16 (normal numbers and 0). */
static uint16_t half_bits(float f) {
    if (f == 0) return 0;
    uint32_t b;
    memcpy(&b, &f, 4);
    uint32_t sign = (b >> 16) & 0x8000, exp = (b >> 23) & 0xFF, man = b & 0x7FFFFF;
    return (uint16_t)(sign | ((exp - 127 + 15) << 10) | (man >> 13));
}

static float bf16_value(uint16_t h) {
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static void test_toolkit_headers(gb_device *d) {
    gb_define scale[] = {{"SCALE", "2"}};
    gb_kernel *k = NULL;
    gb_buffer *x = NULL, *y = NULL;
    if (!OK(load(d, "tests/kernels/cuda/half_scale.cu", "half_scale", scale, 1, NULL, 0, &k))) return;
    enum { N = 101 };
    uint16_t hx[N], hy[N];
    for (int i = 0; i < N; i++) hx[i] = half_bits(0.25f * (float)(i - 50));
    if (OK(gb_buffer_alloc(d, sizeof hx, &x, &e)) && OK(gb_buffer_alloc(d, sizeof hy, &y, &e)) &&
        OK(gb_buffer_upload(x, 0, hx, sizeof hx, &e))) {
        gb_launch l = launch_of(k, 1, 64);
        arg_buf(&l, x);
        arg_buf(&l, y);
        arg_u32(&l, N);
        if (OK(gb_launch_run(&l, &e)) && OK(gb_buffer_download(y, 0, hy, sizeof hy, &e))) {
            int good = 1;
            for (int i = 0; i < N; i++) good &= bf16_value(hy[i]) == 0.5f * (float)(i - 50);
            CHECK(good, "half_scale: fp16 * 2 -> bf16 results wrong");
        }
    }
    gb_buffer_free(x);
    gb_buffer_free(y);
    gb_kernel_free(k);
}

static void test_load_errors(gb_device *d) {
    gb_kernel *k = NULL;
    FAILS(load_string(d, "extern \"C\" __global__ void bad(float *p)\n{\n  p[0] = nope;\n}\n", "bad", &k),
          "<string>(3): error");
    FAILS(load(d, "kernels/cuda/copy.cu", "copy_typo", NULL, 0, NULL, 0, &k),
          "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND");
    FAILS(load_string(d, "extern \"C\" __global__ void h(float *p, double s) { p[0] = s; }\n", "h", &k),
          "parameter 2 's' of h has type 'double'");

    /* Explicit params that disagree with the compiled kernel: caught where the
     * driver reports parameter sizes (cuFuncGetParamInfo, CUDA 12.4+). */
    gb_kind wide[] = {GB_ARG_BUFFER, GB_ARG_U64}, few[] = {GB_ARG_BUFFER};
    int rc = load(d, "tests/kernels/cuda/inc.cu", "inc", NULL, 0, wide, 2, &k);
    if (rc == 0) {
        printf("note: this driver cannot report kernel parameter sizes; cross-check not exercised\n");
        gb_kernel_free(k);
    } else {
        FAILS(rc, "parameter 2 of inc is u64 (8 bytes) as given in params=, but the compiled "
                  "kernel's parameter is 4 bytes");
        FAILS(load(d, "tests/kernels/cuda/inc.cu", "inc", NULL, 0, few, 1, &k),
              "the compiled kernel inc takes more than the 1 parameter given in params=");
    }
}

static uint32_t *counters_of(gb_buffer *b, uint32_t n) {
    uint32_t *v = malloc(n * sizeof *v);
    if (v && gb_buffer_download(b, 0, v, n * sizeof *v, &e) != 0) {
        ok_at(-1, &e, "download counters", __LINE__);
        free(v);
        return NULL;
    }
    return v;
}

/* Dynamic shared memory past the static 48 KiB: a kernel declaring 100 KiB
 * (GB_DYNAMIC_SHARED) gets them at every launch, alone and in a graph batch,
 * and every word comes back; one declaring more than the device's per-block
 * limit fails to load with a message naming it. */
static void test_dynamic_shared(gb_device *d) {
    gb_define bytes100k[] = {{"BYTES", "102400"}}, bytes300k[] = {{"BYTES", "300000"}};
    gb_kernel *k = NULL;
    if (!OK(load(d, "tests/kernels/cuda/dyn_shared.cu", "dyn_shared", bytes100k, 1, NULL, 0, &k))) return;
    CHECK(k->dynamic_shared == 102400, "dyn_shared asks for %u bytes, want 102400", k->dynamic_shared);
    enum { WORDS = 102400 / 4, BLOCKS = 3 };
    gb_buffer *out = NULL;
    if (OK(gb_buffer_alloc(d, (size_t)BLOCKS * WORDS * 4, &out, &e))) {
        for (int pass = 0; pass < 2; pass++) {
            const uint32_t salt = 17u + (uint32_t)pass;
            gb_launch l = launch_of(k, BLOCKS, 256);
            arg_buf(&l, out);
            arg_u32(&l, salt);
            int rc;
            if (pass == 0) rc = gb_launch_run(&l, &e);
            else {
                gb_batch *b = NULL;
                rc = gb_batch_create(d, &l, 1, 2, 1, &b, &e);
                if (rc == 0) rc = gb_batch_submit(b, &e);
                if (b) gb_batch_free(b);
            }
            if (!OK(rc) || !OK(gb_sync(d, &e))) break;
            uint32_t *v = counters_of(out, BLOCKS * WORDS);
            int bad = v == NULL;
            for (uint32_t blk = 0; v && blk < BLOCKS && !bad; blk++)
                for (uint32_t i = 0; i < WORDS; i++) {
                    uint32_t j = WORDS - 1 - i, want = (j * 2654435761u) ^ (blk + salt);
                    if (v[blk * WORDS + i] != want) {
                        printf("  pass %d block %u word %u: %u, want %u\n", pass, blk, i, v[blk * WORDS + i], want);
                        bad = 1;
                        break;
                    }
                }
            CHECK(!bad, "%s launch with 100 KiB of dynamic shared memory returned wrong words",
                  pass == 0 ? "a single" : "a graph batch's");
            free(v);
        }
        gb_buffer_free(out);
    }
    gb_kernel_free(k);
    FAILS(load(d, "tests/kernels/cuda/dyn_shared.cu", "dyn_shared", bytes300k, 1, NULL, 0, &k),
          "dyn_shared needs 300000 bytes of dynamic shared memory and 0 static, more than the");
}

static int all_equal(gb_buffer *b, uint32_t n, uint32_t want) {
    uint32_t *v = counters_of(b, n);
    int good = v != NULL;
    for (uint32_t i = 0; v && i < n; i++) good &= v[i] == want;
    if (v && !good) printf("  counters[0] = %u, expected %u\n", v[0], want);
    free(v);
    return good;
}

static void test_batches(gb_device *d) {
    enum { N = 4096, COUNT = 100 };
    gb_kernel *inc = NULL;
    gb_buffer *a = NULL, *b = NULL;
    const uint32_t zero = 0;
    if (!OK(load(d, "tests/kernels/cuda/inc.cu", "inc", NULL, 0, NULL, 0, &inc))) return;
    if (!OK(gb_buffer_alloc(d, N * 4, &a, &e)) || !OK(gb_buffer_alloc(d, N * 4, &b, &e))) goto done;

    gb_launch la = launch_of(inc, 8, 128), lb = launch_of(inc, 8, 128);
    arg_buf(&la, a);
    arg_u32(&la, N);
    arg_buf(&lb, b);
    arg_u32(&lb, N);
    for (int graph = 0; graph < 2; graph++) {
        gb_batch *batch = NULL;
        OK(gb_buffer_fill(a, 0, N * 4, &zero, 4, &e));
        if (OK(gb_batch_create(d, &la, 1, COUNT, graph, &batch, &e))) {
            if (OK(gb_batch_submit(batch, &e)))
                CHECK(all_equal(a, N, COUNT), "%s batch of %d increments", graph ? "graph" : "loop", COUNT);
            if (OK(gb_batch_submit(batch, &e)) && OK(gb_batch_submit(batch, &e)))
                CHECK(all_equal(a, N, 3 * COUNT), "%s batch submitted 3 times", graph ? "graph" : "loop");
            gb_batch_free(batch);
        }
        /* Two launches cycled over 5: a gets launches 1, 3, 5 and b gets 2, 4. */
        gb_launch two[2] = {la, lb};
        OK(gb_buffer_fill(a, 0, N * 4, &zero, 4, &e));
        OK(gb_buffer_fill(b, 0, N * 4, &zero, 4, &e));
        if (OK(gb_batch_create(d, two, 2, 5, graph, &batch, &e))) {
            if (OK(gb_batch_submit(batch, &e)))
                CHECK(all_equal(a, N, 3) && all_equal(b, N, 2), "%s batch cycling two launches",
                      graph ? "graph" : "loop");
            gb_batch_free(batch);
        }
    }
    /* A long graph: 2000 dependent launches in one cuGraphLaunch. */
    gb_batch *big = NULL;
    OK(gb_buffer_fill(a, 0, N * 4, &zero, 4, &e));
    if (OK(gb_batch_create(d, &la, 1, 2000, 1, &big, &e))) {
        if (OK(gb_batch_submit(big, &e))) CHECK(all_equal(a, N, 2000), "graph of 2000 launches");
        gb_batch_free(big);
    }

    /* Timers around a batch: positive and plausible. */
    gb_timer *t = NULL;
    gb_batch *timed = NULL;
    if (OK(gb_timer_create(d, &t, &e)) && OK(gb_batch_create(d, &la, 1, 1000, 0, &timed, &e))) {
        double ms = -1;
        FAILS(gb_timer_ms(t, &ms, &e), "timer read before start and stop");
        if (OK(gb_timer_start(t, &e)) && OK(gb_batch_submit(timed, &e)) && OK(gb_timer_stop(t, &e)) &&
            OK(gb_timer_ms(t, &ms, &e))) {
            printf("1000 launches of inc: %.3f ms (%.2f us each)\n", ms, ms);
            CHECK(ms > 0 && ms < 10000, "timer read %g ms for 1000 small launches", ms);
        }
        /* The timer is reusable. */
        double empty = -1;
        if (OK(gb_timer_start(t, &e)) && OK(gb_timer_stop(t, &e)) && OK(gb_timer_ms(t, &empty, &e)))
            CHECK(empty >= 0 && empty < ms, "empty interval %g ms, batch %g ms", empty, ms);
    }
    gb_batch_free(timed);
    gb_timer_free(t);
done:
    gb_buffer_free(a);
    gb_buffer_free(b);
    gb_kernel_free(inc);
}

/* Launch overlap (GB_BATCH_OVERLAP): a kernel that waits before it reads keeps
 * every increment of a chain of overlapped launches, stream and graph; one that
 * reads before its wait loses some, which shows the launches did overlap; a
 * batch of kernels that do not declare it, and a device without it, fail. */
static void test_overlap(gb_device *d) {
    enum { N = 1024, COUNT = 200 };
    const uint32_t zero = 0;
    gb_kernel *ok_k = NULL, *early = NULL, *inc = NULL;
    gb_buffer *a = NULL;
    if (!OK(load(d, "tests/kernels/cuda/overlap_inc.cu", "overlap_inc", NULL, 0, NULL, 0, &ok_k)) ||
        !OK(load(d, "tests/kernels/cuda/overlap_inc.cu", "overlap_inc_early", NULL, 0, NULL, 0, &early)) ||
        !OK(load(d, "tests/kernels/cuda/inc.cu", "inc", NULL, 0, NULL, 0, &inc)) ||
        !OK(gb_buffer_alloc(d, N * 4, &a, &e)))
        goto done;
    CHECK(ok_k->overlap == 1 && early->overlap == 1 && inc->overlap == 0, "declared overlap %d %d, inc %d",
          ok_k->overlap, early->overlap, inc->overlap);
    gb_launch plain = launch_of(inc, 8, 128);
    arg_buf(&plain, a);
    arg_u32(&plain, N);
    gb_batch *b = NULL;
    if (!d->info.launch_overlap) {
        FAILS(gb_batch_create(d, &plain, 1, 4, GB_BATCH_OVERLAP, &b, &e), "has none");
        printf("launch overlap: %s has none (%s)\n", d->info.name, d->info.arch);
        goto done;
    }
    FAILS(gb_batch_create(d, &plain, 1, 4, GB_BATCH_OVERLAP, &b, &e),
          "launch overlap: none of the batch's kernels (inc) declares GB_LAUNCH_OVERLAP");
    FAILS(gb_batch_create(d, &plain, 1, 4, 4, &b, &e), "unknown batch flags 0x4");
    for (int graph = 0; graph < 2; graph++) {
        gb_launch l = launch_of(ok_k, 4, 256);
        arg_buf(&l, a);
        arg_u32(&l, N);
        arg_u32(&l, 2000);
        OK(gb_buffer_fill(a, 0, N * 4, &zero, 4, &e));
        gb_launch mixed[2] = {l, plain};
        if (OK(gb_batch_create(d, mixed, 2, COUNT, GB_BATCH_OVERLAP | (graph ? GB_BATCH_GRAPH : 0), &b, &e))) {
            CHECK(b->overlap == 1 && b->overlapped == 1, "overlap %d, overlapped %d of 2", b->overlap, b->overlapped);
            if (OK(gb_batch_submit(b, &e)) && OK(gb_batch_submit(b, &e)))
                CHECK(all_equal(a, N, 2 * COUNT), "%s: overlapped launches that wait keep every increment",
                      graph ? "graph" : "stream");
            gb_batch_free(b);
        }
        gb_launch bad = launch_of(early, 4, 256);
        arg_buf(&bad, a);
        arg_u32(&bad, N);
        arg_u32(&bad, 20000);
        OK(gb_buffer_fill(a, 0, N * 4, &zero, 4, &e));
        if (OK(gb_batch_create(d, &bad, 1, COUNT, GB_BATCH_OVERLAP | (graph ? GB_BATCH_GRAPH : 0), &b, &e))) {
            uint32_t *v = NULL;
            if (OK(gb_batch_submit(b, &e)) && (v = counters_of(a, N)) != NULL) {
                printf("launch overlap, %s: a kernel reading before its wait kept %u of %d increments\n",
                       graph ? "graph" : "stream", v[0], COUNT);
                CHECK(v[0] < COUNT, "%s: the launches did not overlap (every increment kept)", graph ? "graph" : "stream");
            }
            free(v);
            gb_batch_free(b);
        }
    }
done:
    if (a) gb_buffer_free(a);
    if (ok_k) gb_kernel_free(ok_k);
    if (early) gb_kernel_free(early);
    if (inc) gb_kernel_free(inc);
}

static void test_misc(gb_device *d) {
    OK(gb_profiler_range(d, "gpubench test range", 1, &e));
    OK(gb_profiler_range(d, "gpubench test range", 0, &e));
    OK(gb_sync(d, &e));
    FAILS(gb_profiler_range(d, "x", 0, &e), "without a begin");
    if (OK(gb_flush_l2(d, GB_FLUSH_CLEAN, &e)))
        CHECK(gb_flush_bytes(d) >= 2 * d->info.l2_bytes, "flush buffer %llu bytes for L2 %llu",
              (unsigned long long)gb_flush_bytes(d), (unsigned long long)d->info.l2_bytes);
    OK(gb_flush_l2(d, GB_FLUSH_WRITE, &e)); /* reuses the buffer */
    OK(gb_flush_l2(d, GB_FLUSH_CLEAN, &e)); /* zeros restored, then read */
}

/* Children outlive their device handle: releasing the handle first is safe,
 * later use of a child is an error, and the device goes with its last child. */
static void test_free_order(void) {
    gb_device *d = NULL;
    gb_buffer *buf = NULL;
    gb_kernel *k = NULL;
    gb_timer *t = NULL;
    gb_batch *batch = NULL;
    if (!OK(gb_device_open(&gb_cuda_backend, 0, &d, &e))) return;
    if (OK(gb_buffer_alloc(d, 4096, &buf, &e)) &&
        OK(load(d, "tests/kernels/cuda/inc.cu", "inc", NULL, 0, NULL, 0, &k)) &&
        OK(gb_timer_create(d, &t, &e))) {
        gb_launch l = launch_of(k, 1, 64);
        arg_buf(&l, buf);
        arg_u32(&l, 1024);
        OK(gb_batch_create(d, &l, 1, 10, 1, &batch, &e));
        OK(gb_batch_submit(batch, &e)); /* still queued when the handle goes */
    }
    gb_device_release(d);
    CHECK(gb_live(GB_LIVE_DEVICES) >= 1, "device destroyed while children are alive");
    uint32_t word;
    FAILS(gb_buffer_download(buf, 0, &word, 4, &e), "the cuda device was released");
    /* A batch must go before the kernel and buffers it names (backend.h);
     * otherwise any order, with the device handle already gone. */
    gb_batch_free(batch);
    gb_buffer_free(buf);
    gb_kernel_free(k);
    CHECK(gb_live(GB_LIVE_DEVICES) >= 1, "device destroyed while a timer is alive");
    gb_timer_free(t);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    return remove(path);
}

int main(void) {
    int count = 0;
    if (gb_cuda_backend.probe(&count, &e) != 0 || count == 0) {
        int rc =
            check_skip(0, "no CUDA device (%s)", e.msg ? e.msg : "the driver reports 0 devices");
        gb_err_clear(&e);
        return rc;
    }
    /* A fresh kernel cache, so the first load is a miss and the second a hit. */
    char tmp[] = "/tmp/gpubench-cuda-test-XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("GPUBENCH_CACHE_DIR", tmp, 1);
    unsetenv("GPUBENCH_NO_CACHE");

    test_info(count);
    gb_device *d = NULL;
    if (OK(gb_device_open(&gb_cuda_backend, 0, &d, &e))) {
        FAILS(gb_device_open(&gb_cuda_backend, count, &d, &e), "does not exist");
        test_memory(d);
        test_copy_read(d);
        test_kinds(d);
        test_toolkit_headers(d);
        test_load_errors(d);
        test_dynamic_shared(d);
        test_batches(d);
        test_overlap(d);
        test_misc(d);
        OK(gb_sync(d, &e));
        gb_device_release(d);
    }
    test_free_order();
    static const char *const what[GB_LIVE_COUNT] = {"devices", "buffers", "kernels", "timers", "batches"};
    for (int i = 0; i < GB_LIVE_COUNT; i++)
        CHECK(gb_live(i) == 0, "%ld %s still alive at the end", gb_live(i), what[i]);

    nftw(tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return check_finish("test_cuda_backend");
}
