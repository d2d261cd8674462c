/* The vendor GEMM without a GPU: the checks host/core/backend.c makes before
 * a vendor launch reaches a backend (geometry, buffer sizes, aliasing, the
 * refusal on a backend without one), its object lifetime and live count,
 * through a fake backend; and the cuBLASLt loader, which needs no driver.
 * The GPU results are tests/lua/test_vendor_gemm.lua's. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "check.h"
#include "cuda_backend.h"

static gb_err e;

/* A call that must fail with a message containing needle. */
#define FAILS(call, needle)                                                                       \
    do {                                                                                          \
        int rc_ = (call);                                                                         \
        CHECK(rc_ != 0 && e.msg && strstr(e.msg, needle), "%s: expected '%s', got %s", #call,    \
              needle, rc_ == 0 ? "success" : (e.msg ? e.msg : "(no message)"));                   \
        gb_err_clear(&e);                                                                         \
    } while (0)

#define OK(call)                                                                                  \
    do {                                                                                          \
        int rc_ = (call);                                                                         \
        CHECK(rc_ == 0, "%s: %s", #call, e.msg ? e.msg : "(no message)");                        \
        gb_err_clear(&e);                                                                         \
    } while (0)

/* ------------------------------------------------------ the fake backend */

static int launches, plans_freed;

static int fake_probe(int *count, gb_err *err) {
    *count = 1;
    return 0;
}
static int fake_open(gb_device *d, int index, gb_err *err) {
    snprintf(d->info.name, sizeof d->info.name, "fake");
    return 0;
}
static void fake_close(gb_device *d) {}
static int fake_alloc(gb_buffer *b, gb_err *err) { return 0; }
static void fake_buffer_free(gb_buffer *b) {}
static void fake_kernel_free(gb_kernel *k) {
    if (k->vendor) plans_freed++;
    free(k->impl);
}
static int fake_launch(const gb_launch *l, gb_err *err) {
    launches++;
    return 0;
}
static int fake_prepare(gb_batch *b, gb_err *err) { return 0; }
static int fake_submit(gb_batch *b, gb_err *err) {
    launches += (int)b->count;
    return 0;
}
static void fake_batch_free(gb_batch *b) {}

static int fake_vendor(gb_device *d, gb_kernel *k, uint32_t n, uint32_t kdim, uint32_t t, gb_err *err) {
    gb_vendor_gemm *g = calloc(1, sizeof *g);
    k->entry = strdup("fake_gemm");
    k->label = strdup("fake");
    if (!g || !k->entry || !k->label) {
        free(g);
        return GB_FAIL(err, "out of memory");
    }
    g->n = n, g->k = kdim, g->t = t;
    k->nparams = 3;
    for (int i = 0; i < 3; i++) k->params[i] = GB_ARG_BUFFER;
    k->impl = g;
    k->vendor = g;
    return 0;
}

static const gb_backend_ops with_vendor = {
    .name = "fake",
    .probe = fake_probe,
    .open = fake_open,
    .close = fake_close,
    .buffer_alloc = fake_alloc,
    .buffer_free = fake_buffer_free,
    .kernel_free = fake_kernel_free,
    .launch = fake_launch,
    .batch_prepare = fake_prepare,
    .batch_submit = fake_submit,
    .batch_free = fake_batch_free,
    .vendor_gemm = fake_vendor,
};

static const gb_backend_ops without_vendor = {
    .name = "vulkan", /* the name is what the refusal must carry */
    .probe = fake_probe,
    .open = fake_open,
    .close = fake_close,
};

static gb_launch gemm_launch(gb_kernel *k, gb_buffer *w, gb_buffer *x, gb_buffer *y) {
    gb_launch l;
    memset(&l, 0, sizeof l);
    l.kernel = k;
    for (int i = 0; i < 3; i++) l.grid[i] = l.block[i] = 1;
    gb_buffer *bufs[3] = {w, x, y};
    l.nargs = 3;
    for (int i = 0; i < 3; i++) {
        l.args[i].kind = GB_ARG_BUFFER;
        l.args[i].v.buf = bufs[i];
    }
    return l;
}

static void test_refusal(void) {
    int before = failures;
    gb_device *d = NULL;
    gb_kernel *k = NULL;
    OK(gb_device_open(&without_vendor, 0, &d, &e));
    if (!d) return;
    FAILS(gb_vendor_gemm_create(d, 4, 8, 1, &k, &e),
          "vendor GEMM (cuBLASLt) needs the CUDA backend; this device is vulkan");
    CHECK(k == NULL, "no kernel made");
    CHECK(gb_live(GB_LIVE_KERNELS) == 0, "no kernel counted, %ld", gb_live(GB_LIVE_KERNELS));
    gb_device_release(d);
    report("a backend without a vendor GEMM refuses it, naming the backend", before);
}

static void test_checks(void) {
    int before = failures;
    gb_device *d = NULL;
    OK(gb_device_open(&with_vendor, 0, &d, &e));
    if (!d) return;
    gb_kernel *k = NULL;
    FAILS(gb_vendor_gemm_create(d, 0, 8, 1, &k, &e), "n, k and t must be 1 to 2147483647 (got n = 0, k = 8, t = 1)");
    FAILS(gb_vendor_gemm_create(d, 4, 8, 0x80000000u, &k, &e), "t = 2147483648");
    /* N = 5 (ragged), K = 8, T = 3: W 80 bytes, x 48, y 30. */
    OK(gb_vendor_gemm_create(d, 5, 8, 3, &k, &e));
    if (!k) return;
    CHECK(gb_live(GB_LIVE_KERNELS) == 1, "one kernel live, %ld", gb_live(GB_LIVE_KERNELS));
    CHECK(d->refs == 2, "the GEMM holds the device, refs %d", d->refs);
    gb_buffer *w = NULL, *x = NULL, *y = NULL, *small = NULL, *big = NULL;
    OK(gb_buffer_alloc(d, 80, &w, &e));
    OK(gb_buffer_alloc(d, 48, &x, &e));
    OK(gb_buffer_alloc(d, 30, &y, &e));
    OK(gb_buffer_alloc(d, 29, &small, &e));
    OK(gb_buffer_alloc(d, 4096, &big, &e));
    if (!w || !x || !y || !small || !big) return;

    gb_launch l = gemm_launch(k, w, x, y);
    launches = 0;
    OK(gb_launch_run(&l, &e));
    CHECK(launches == 1, "the launch reached the backend, %d", launches);
    gb_launch larger = gemm_launch(k, big, x, y); /* a buffer may be larger than the shape */
    OK(gb_launch_check(&larger, &e));

    launches = 0;
    l = gemm_launch(k, small, x, y);
    FAILS(gb_launch_run(&l, &e), "fake_gemm argument 1 (W [N, K] bf16): the buffer has 29 bytes, "
                                 "needs 2*N*K = 80 (N = 5, K = 8, T = 3)");
    l = gemm_launch(k, w, small, y);
    FAILS(gb_launch_run(&l, &e), "fake_gemm argument 2 (x [T, K] bf16): the buffer has 29 bytes, "
                                 "needs 2*T*K = 48 (N = 5, K = 8, T = 3)");
    l = gemm_launch(k, w, x, small);
    FAILS(gb_launch_run(&l, &e), "fake_gemm argument 3 (y [T, N] bf16): the buffer has 29 bytes, "
                                 "needs 2*T*N = 30 (N = 5, K = 8, T = 3)");
    l = gemm_launch(k, big, x, big);
    FAILS(gb_launch_run(&l, &e), "fake_gemm argument 3 (y) is the same buffer as argument 1 (W)");
    l = gemm_launch(k, w, big, big);
    FAILS(gb_launch_run(&l, &e), "fake_gemm argument 3 (y) is the same buffer as argument 2 (x)");
    l = gemm_launch(k, w, x, y);
    l.grid[0] = 4;
    FAILS(gb_launch_run(&l, &e), "fake_gemm: a vendor GEMM takes grid 1 and block 1 (the library picks "
                                 "its own geometry), got grid 4x1x1, block 1x1x1");
    l = gemm_launch(k, w, x, y);
    l.block[2] = 2;
    FAILS(gb_launch_run(&l, &e), "got grid 1x1x1, block 1x1x2");
    l = gemm_launch(k, w, x, y);
    l.nargs = 2;
    FAILS(gb_launch_run(&l, &e), "kernel fake_gemm takes 3 arguments, got 2");
    l = gemm_launch(k, w, x, y);
    l.args[1].kind = GB_ARG_U32;
    FAILS(gb_launch_run(&l, &e), "kernel fake_gemm argument 2: expected buffer, got u32");
    CHECK(launches == 0, "no refused launch reached the backend, %d", launches);

    /* A batch checks each launch the same way, and keeps the GEMM alive. */
    gb_batch *b = NULL;
    gb_launch two[2] = {gemm_launch(k, w, x, y), gemm_launch(k, w, x, small)};
    FAILS(gb_batch_create(d, two, 2, 4, 1, &b, &e), "argument 3 (y [T, N] bf16): the buffer has 29 bytes");
    OK(gb_batch_create(d, two, 1, 7, 1, &b, &e));
    gb_kernel_free(k);
    CHECK(plans_freed == 0 && gb_live(GB_LIVE_KERNELS) == 1, "the batch keeps the plan (freed %d)", plans_freed);
    FAILS(gb_batch_submit(b, &e), "batch launch 1 uses kernel fake_gemm, which was released");
    gb_batch_free(b);
    CHECK(plans_freed == 1 && gb_live(GB_LIVE_KERNELS) == 0, "freed with the batch (freed %d, live %ld)",
          plans_freed, gb_live(GB_LIVE_KERNELS));
    gb_buffer_free(w), gb_buffer_free(x), gb_buffer_free(y), gb_buffer_free(small), gb_buffer_free(big);
    gb_device_release(d);
    CHECK(gb_live(GB_LIVE_DEVICES) == 0 && gb_live(GB_LIVE_BUFFERS) == 0, "nothing left live");
    report("vendor launches are checked before the backend: geometry, sizes, aliasing; lifetime", before);
}

/* The loader needs no driver: the toolkit's libcublasLt and its symbols. */
static void test_loader(void) {
    int before = failures;
    const char *path = NULL;
    uint64_t version = 0;
    if (gb_cuda_load_blaslt(&path, &version, &e) != 0) {
        printf("note: cuBLASLt not loaded here, loader checks skipped: %s\n", e.msg);
        gb_err_clear(&e);
        return;
    }
    CHECK(strstr(path, "libcublasLt.so") != NULL, "loaded from %s", path);
    CHECK(version / 10000 >= 12, "cuBLASLt %llu is 12 or newer", (unsigned long long)version);
    const char *again = NULL;
    uint64_t v2 = 0;
    OK(gb_cuda_load_blaslt(&again, &v2, &e));
    CHECK(again == path && v2 == version, "a second load reports the first");
    printf("cuBLASLt %llu.%llu.%llu from %s\n", (unsigned long long)(version / 10000),
           (unsigned long long)(version / 100 % 100), (unsigned long long)(version % 100), path);
    report("the cuBLASLt loader finds the library and every symbol", before);
}

int main(void) {
    test_refusal();
    test_checks();
    test_loader();
    return check_finish("test_vendor_gemm");
}
