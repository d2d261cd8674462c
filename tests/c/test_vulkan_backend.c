/* The Vulkan backend end to end through the gb_* wrappers: device info,
 * upload -> compile -> launch -> download with exact values, reflection on a
 * device, fill and copy on sub-ranges, chunked staging, block-size checks
 * (fixed and specialized), compile errors, the binding-range limit, freeing in
 * any order (device handle first, buffers still in use) and the live
 * counters. Batches and timers: test_vulkan_batch.c. */
#include "test_vulkan_common.h"

static void test_info(gb_device *d)
{
    int before = failures;
    gb_device_info info;
    gb_err e = {0};
    CHECK(gb_device_info_of(&gb_vulkan_backend, 0, &info, &e) == 0, "%s", e.msg ? e.msg : "");
    gb_err_clear(&e);
    const char *types[] = {"discrete", "integrated", "cpu", "virtual", "other"};
    int type_ok = 0;
    for (int i = 0; i < 5; i++)
        type_ok |= strcmp(info.device_type, types[i]) == 0;
    CHECK(strcmp(info.backend, "vulkan") == 0 && info.index == 0, "%s %d", info.backend,
          info.index);
    CHECK(info.name[0] && strcmp(info.name, d->info.name) == 0, "name '%s'", info.name);
    CHECK(type_ok, "device_type '%s'", info.device_type);
    CHECK(strncmp(info.api_version, "1.", 2) == 0, "api '%s'", info.api_version);
    CHECK(info.driver_version[0] != 0, "empty driver version");
    CHECK(info.has_uuid == 1, "no uuid");
    CHECK(info.memory_bytes > 0 && info.subgroup_size > 0, "memory %llu subgroup %u",
          (unsigned long long)info.memory_bytes, info.subgroup_size);
    CHECK(info.max_threads_per_group >= 128 && info.max_group_size[0] >= 128 &&
              info.max_groups[0] >= 65535,
          "limits %u %u %u", info.max_threads_per_group, info.max_group_size[0],
          info.max_groups[0]);
    CHECK(info.max_push_bytes >= 128 && info.max_shared_bytes >= 16384, "push %u shared %u",
          info.max_push_bytes, info.max_shared_bytes);
    CHECK(info.max_buffer_bytes >= (128u << 20) && info.timestamp_period_ns > 0,
          "max buffer %llu period %g", (unsigned long long)info.max_buffer_bytes,
          info.timestamp_period_ns);
    report("device info", before);
}

/* args.comp: out[i] = a[i] + uint(b[i] * k) + uint(f * i); with HAVE_U64 also w's halves. */
static void test_launch_exact(gb_device *d)
{
    int before = failures;
    gb_define u64def = {"HAVE_U64", ""};
    char *msg = NULL;
    gb_kernel *k = load_kernel(d, "args.comp", &u64def, 1, &msg);
    int have_u64 = k != NULL;
    if (!k) { /* only acceptable when the device lacks 64-bit integers */
        CHECK(msg && strstr(msg, "shaderInt64"), "args.comp with HAVE_U64: %s", msg ? msg : "");
        printf("# note: no shaderInt64 on this device; u64 push constant part skipped\n");
        k = need_kernel(d, "args.comp", NULL, 0);
    }
    free(msg);
    if (!k)
        return;
    const gb_kind want[] = {GB_ARG_BUFFER, GB_ARG_BUFFER, GB_ARG_BUFFER, GB_ARG_U32,
                            GB_ARG_I32,    GB_ARG_F32,    GB_ARG_U64};
    CHECK(k->nparams == (have_u64 ? 7 : 6), "nparams %d", k->nparams);
    for (int i = 0; i < k->nparams && i < 7; i++)
        CHECK(k->params[i] == want[i], "param %d is %s", i, gb_kind_name(k->params[i]));
    CHECK(k->local_size[0] == 64 && k->local_size[1] == 1 && k->local_size[2] == 1,
          "local size %ux%ux%u", k->local_size[0], k->local_size[1], k->local_size[2]);
    CHECK(strcmp(k->entry, "main") == 0 && strstr(k->label, "args.comp"), "entry %s label %s",
          k->entry, k->label);

    enum { N = 1000 }; /* not a multiple of 64: the last group is ragged */
    uint32_t a[N], out1[N + 2], out2[N + 2];
    int32_t b[N];
    for (int i = 0; i < N; i++) {
        a[i] = (uint32_t)i * 7u;
        b[i] = i - 500;
    }
    gb_buffer *ba = need_buffer(d, sizeof a), *bb = need_buffer(d, sizeof b);
    gb_buffer *bo1 = need_buffer(d, sizeof out1), *bo2 = need_buffer(d, sizeof out2);
    if (ba && bb && bo1 && bo2) {
        MUST(gb_buffer_upload(ba, 0, a, sizeof a, ERR));
        MUST(gb_buffer_upload(bb, 0, b, sizeof b, ERR));
        const uint64_t w = 0x0123456789abcdefull;
        gb_arg args1[] = {arg_buf(ba), arg_buf(bb), arg_buf(bo1), arg_u32(N), arg_i32(-3),
                          arg_f32(0.5f), arg_u64(w)};
        gb_arg args2[] = {arg_buf(ba), arg_buf(bb), arg_buf(bo2), arg_u32(N), arg_i32(5),
                          arg_f32(0.25f), arg_u64(~w)};
        /* Two launches in a row with different push constants, read back after both. */
        gb_launch l1 = launch_1d(k, (N + 63) / 64, 64, args1, k->nparams);
        gb_launch l2 = launch_1d(k, (N + 63) / 64, 64, args2, k->nparams);
        MUST(gb_launch_run(&l1, ERR));
        MUST(gb_launch_run(&l2, ERR));
        MUST(gb_buffer_download(bo1, 0, out1, sizeof out1, ERR));
        MUST(gb_buffer_download(bo2, 0, out2, sizeof out2, ERR));
        int bad1 = 0, bad2 = 0;
        for (int i = 0; i < N; i++) {
            uint32_t e1 = a[i] + (uint32_t)(b[i] * -3) + (uint32_t)(0.5f * (float)i);
            uint32_t e2 = a[i] + (uint32_t)(b[i] * 5) + (uint32_t)(0.25f * (float)i);
            if (out1[i] != e1 && bad1++ < 3)
                printf("# out1[%d] = %u, want %u\n", i, out1[i], e1);
            if (out2[i] != e2 && bad2++ < 3)
                printf("# out2[%d] = %u, want %u\n", i, out2[i], e2);
        }
        CHECK(bad1 == 0 && bad2 == 0, "%d and %d wrong elements", bad1, bad2);
        if (have_u64) {
            CHECK(out1[N] == 0x89abcdefu && out1[N + 1] == 0x01234567u, "u64 %08x %08x",
                  out1[N + 1], out1[N]);
            CHECK(out2[N] == ~0x89abcdefu && out2[N + 1] == ~0x01234567u, "u64 %08x %08x",
                  out2[N + 1], out2[N]);
        }
    }
    gb_buffer_free(ba);
    gb_buffer_free(bb);
    gb_buffer_free(bo1);
    gb_buffer_free(bo2);
    gb_kernel_free(k);
    report("upload, launch (all scalar kinds), download: exact values", before);
}

static void test_fill_copy(gb_device *d)
{
    int before = failures;
    enum { SZ = 1024 };
    unsigned char x[SZ], y[SZ], gx[SZ], gy[SZ];
    for (int i = 0; i < SZ; i++) {
        x[i] = (unsigned char)(i * 13 + 1);
        y[i] = 0;
    }
    gb_buffer *bx = need_buffer(d, SZ), *by = need_buffer(d, SZ);
    if (bx && by) {
        MUST(gb_buffer_upload(bx, 0, x, SZ, ERR));
        uint32_t word = 0xdeadbeefu;
        MUST(gb_buffer_fill(bx, 64, 128, &word, 4, ERR)); /* the backend's 32-bit fill */
        for (int i = 64; i < 192; i += 4)
            memcpy(x + i, &word, 4);
        MUST(gb_buffer_fill(by, 0, SZ, "\0", 1, ERR));
        MUST(gb_buffer_copy(by, 256, bx, 8, 100, ERR));   /* spans the filled range */
        memcpy(y + 256, x + 8, 100);
        MUST(gb_buffer_copy(by, 3, bx, 61, 70, ERR));     /* unaligned offsets and size */
        memcpy(y + 3, x + 61, 70);
        MUST(gb_buffer_copy(bx, 900, bx, 100, 50, ERR));  /* within one buffer */
        memcpy(x + 900, x + 100, 50);
        MUST(gb_buffer_download(bx, 0, gx, SZ, ERR));
        MUST(gb_buffer_download(by, 0, gy, SZ, ERR));
        CHECK(memcmp(gx, x, SZ) == 0, "buffer x differs from the host model");
        CHECK(memcmp(gy, y, SZ) == 0, "buffer y differs from the host model");
        unsigned char part[40];
        MUST(gb_buffer_download(bx, 70, part, sizeof part, ERR)); /* a sub-range */
        CHECK(memcmp(part, x + 70, sizeof part) == 0, "sub-range download differs");
    }
    gb_buffer_free(bx);
    gb_buffer_free(by);
    report("fill32 and copy on sub-ranges: exact bytes", before);
}

/* More than the 64 MiB staging buffer: uploads and downloads go in chunks. */
static void test_chunked(gb_device *d)
{
    int before = failures;
    uint64_t size = 72ull << 20;
    if (size > d->info.max_buffer_bytes)
        size = d->info.max_buffer_bytes & ~3ull;
    size_t words = (size_t)(size / 4);
    uint32_t *h = malloc(size), *g = malloc(size);
    gb_buffer *b = need_buffer(d, size);
    if (h && g && b) {
        for (size_t i = 0; i < words; i++)
            h[i] = (uint32_t)i * 2654435761u;
        MUST(gb_buffer_upload(b, 0, h, size, ERR));
        memset(g, 0, size);
        MUST(gb_buffer_download(b, 0, g, size, ERR));
        CHECK(memcmp(g, h, size) == 0, "round trip of %llu bytes differs",
              (unsigned long long)size);
        uint64_t off = (64ull << 20) - 12; /* across the first chunk boundary */
        uint32_t part[25];
        MUST(gb_buffer_download(b, off, part, sizeof part, ERR));
        CHECK(memcmp(part, (char *)h + off, sizeof part) == 0, "boundary sub-range differs");
    }
    gb_buffer_free(b);
    free(h);
    free(g);
    report("chunked staging (> 64 MiB)", before);
}

static void test_block_sizes(gb_device *d)
{
    int before = failures;
    gb_kernel *k = need_kernel(d, "inc.comp", NULL, 0);
    gb_kernel *s = need_kernel(d, "spec_size.comp", NULL, 0);
    gb_buffer *o1 = need_buffer(d, 64 * 4), *o2 = need_buffer(d, 64 * 4);
    if (k && s && o1 && o2) {
        gb_arg args[] = {arg_buf(o1), arg_u32(64)};
        gb_launch l = launch_1d(k, 2, 32, args, 2);
        gb_err e = {0};
        CHECK(gb_launch_run(&l, &e) != 0 && e.msg && strstr(e.msg, "32x1x1") &&
                  strstr(e.msg, "64x1x1"),
              "message: %s", e.msg ? e.msg : "(none)");
        gb_err_clear(&e);
        /* A specialization-constant width takes any block width, each its own pipeline. */
        CHECK(s->local_size[0] == 0 && s->local_size[1] == 0 && s->local_size[2] == 0,
              "spec kernel local size %ux%ux%u", s->local_size[0], s->local_size[1],
              s->local_size[2]);
        gb_arg a1[] = {arg_buf(o1), arg_u32(64)}, a2[] = {arg_buf(o2), arg_u32(64)};
        gb_launch l1 = launch_1d(s, 2, 32, a1, 2), l2 = launch_1d(s, 4, 16, a2, 2);
        MUST(gb_launch_run(&l1, ERR));
        MUST(gb_launch_run(&l2, ERR));
        MUST(gb_launch_run(&l1, ERR)); /* the 32-wide pipeline again, from its cache */
        uint32_t r1[64], r2[64];
        MUST(gb_buffer_download(o1, 0, r1, sizeof r1, ERR));
        MUST(gb_buffer_download(o2, 0, r2, sizeof r2, ERR));
        int bad = 0;
        for (int i = 0; i < 64; i++)
            bad += (r1[i] != 32) + (r2[i] != 16);
        CHECK(bad == 0, "%d elements show the wrong specialized width (r1[0]=%u r2[0]=%u)", bad,
              r1[0], r2[0]);
        /* Its y size is fixed at 1 by the shader: a taller block is refused by name. */
        gb_launch l3 = launch_1d(s, 1, 16, a1, 2);
        l3.block[1] = 2;
        CHECK(gb_launch_run(&l3, &e) != 0 && e.msg && strstr(e.msg, "workgroup size y to 1") &&
                  strstr(e.msg, "16x2x1"),
              "message: %s", e.msg ? e.msg : "(none)");
        gb_err_clear(&e);
    }
    gb_buffer_free(o1);
    gb_buffer_free(o2);
    gb_kernel_free(k);
    gb_kernel_free(s);
    report("block size: fixed mismatch named, specialized widths exact", before);
}

static void test_errors(gb_device *d)
{
    int before = failures;
    long kernels = gb_live(GB_LIVE_KERNELS);
    char *msg = NULL;
    gb_kernel *k = load_kernel(d, "bad_syntax.comp", NULL, 0, &msg);
    CHECK(!k && msg && strstr(msg, "tests/kernels/vulkan/bad_syntax.comp:7:") &&
              strstr(msg, "error"),
          "message: %s", msg ? msg : "(none)");
    free(msg);
    CHECK(gb_live(GB_LIVE_KERNELS) == kernels, "a failed load left a live kernel");
    /* A buffer larger than the binding range cannot be bound: the size is
     * faked here because allocation already caps buffers at the limit. */
    gb_kernel *inc = need_kernel(d, "inc.comp", NULL, 0);
    gb_buffer *b = need_buffer(d, 256);
    if (inc && b) {
        uint64_t real = b->size;
        b->size = 1ull << 40;
        gb_arg args[] = {arg_buf(b), arg_u32(1)};
        gb_launch l = launch_1d(inc, 1, 64, args, 2);
        gb_err e = {0};
        CHECK(gb_launch_run(&l, &e) != 0 && e.msg && strstr(e.msg, "BUFFER_TOO_LARGE") &&
                  strstr(e.msg, "maxStorageBufferRange of"),
              "message: %s", e.msg ? e.msg : "(none)");
        gb_err_clear(&e);
        b->size = real;
    }
    gb_buffer_free(b);
    gb_kernel_free(inc);
    gb_err e = {0};
    CHECK(gb_profiler_range(d, "x", 0, &e) != 0 && e.msg && strstr(e.msg, "without a begin"),
          "message: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    MUST(gb_profiler_range(d, "range", 1, ERR));
    MUST(gb_profiler_range(d, "range", 0, ERR));
    report("compile error file:line, binding-range limit, profiler range pairing", before);
}

/* The device handle goes first; a buffer is freed while a launch that writes
 * it may still run; everything else in an arbitrary order. */
static void test_free_order(void)
{
    int before = failures;
    gb_device *d = open_or_skip();
    gb_kernel *spin = need_kernel(d, "spin.comp", NULL, 0);
    gb_buffer *b1 = need_buffer(d, 64 * 64 * 4), *b2 = need_buffer(d, 4096);
    gb_timer *t = NULL;
    gb_err e = {0};
    CHECK(gb_timer_create(d, &t, &e) == 0, "%s", e.msg ? e.msg : "");
    gb_err_clear(&e);
    if (spin && b1) {
        gb_arg args[] = {arg_buf(b1), arg_u32(20000)};
        gb_launch l = launch_1d(spin, 64, 64, args, 2);
        MUST(gb_timer_start(t, ERR));
        MUST(gb_launch_run(&l, ERR));
        MUST(gb_timer_stop(t, ERR));
    }
    gb_device_release(d);
    CHECK(gb_live(GB_LIVE_DEVICES) == 1, "device destroyed while children live");
    gb_buffer_free(b1); /* still in use by the spin launch: destruction is deferred */
    gb_timer_free(t);
    gb_kernel_free(spin);
    gb_buffer_free(b2);
    for (int i = 0; i < GB_LIVE_COUNT; i++)
        CHECK(gb_live(i) == 0, "live counter %d is %ld", i, gb_live(i));
    report("free in any order, device handle first", before);
}

int main(void)
{
    gb_device *d = open_or_skip();
    test_info(d);
    test_launch_exact(d);
    test_fill_copy(d);
    test_chunked(d);
    test_block_sizes(d);
    test_errors(d);
    MUST(gb_sync(d, ERR));
    gb_device_release(d);
    test_free_order();
    return finish("test_vulkan_backend");
}
