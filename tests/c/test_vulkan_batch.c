/* Vulkan batches and timers through the gb_* wrappers: a batch of N
 * increments gives exactly N (and resubmits without waiting add up), rotating
 * argument sets, stream order across batch submissions, timestamp timers
 * (positive, nested timers ordered, reusable), includes and defines taking
 * effect on the device, and the live counters. */
#include "test_vulkan_common.h"

enum { N = 1000 }; /* elements per buffer: not a multiple of the 64-wide groups */

static int all_equal(gb_buffer *b, uint32_t n, uint32_t want, const char *what)
{
    uint32_t *h = malloc(n * sizeof *h);
    if (!h)
        return 0;
    gb_err e = {0};
    int rc = gb_buffer_download(b, 0, h, n * sizeof *h, &e);
    CHECK(rc == 0, "download %s: %s", what, e.msg ? e.msg : "");
    gb_err_clear(&e);
    int bad = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        if (h[i] != want && bad++ < 3)
            printf("# %s[%u] = %u, want %u\n", what, i, h[i], want);
    free(h);
    return rc == 0 && bad == 0;
}

static void test_batch_counts(gb_device *d, gb_kernel *inc)
{
    int before = failures;
    gb_buffer *b = need_buffer(d, N * 4);
    if (!b)
        return;
    MUST(gb_buffer_fill(b, 0, N * 4, "\0", 1, ERR));
    gb_arg args[] = {arg_buf(b), arg_u32(N)};
    gb_launch l = launch_1d(inc, (N + 63) / 64, 64, args, 2);
    for (int graph = 0; graph <= 1; graph++) {
        gb_batch *bt = NULL;
        gb_err e = {0};
        CHECK(gb_batch_create(d, &l, 1, 100, graph, &bt, &e) == 0, "%s", e.msg ? e.msg : "");
        gb_err_clear(&e);
        if (!bt)
            continue;
        MUST(gb_batch_submit(bt, ERR));
        MUST(gb_sync(d, ERR));
        uint32_t want = graph ? 400 : 100;
        CHECK(all_equal(b, N, want, "one submit"), "graph=%d after one submit", graph);
        /* Resubmitted before the previous submission is known to be done. */
        MUST(gb_batch_submit(bt, ERR));
        MUST(gb_batch_submit(bt, ERR));
        MUST(gb_sync(d, ERR));
        CHECK(all_equal(b, N, want + 200, "three submits"), "graph=%d after three submits",
              graph);
        gb_batch_free(bt);
    }
    gb_buffer_free(b);
    report("batch of 100 increments gives exactly 100 (graph 0 and 1, resubmits add up)",
           before);
}

static void test_rotating_args(gb_device *d, gb_kernel *inc)
{
    int before = failures;
    gb_buffer *a = need_buffer(d, N * 4), *b = need_buffer(d, N * 4);
    if (a && b) {
        MUST(gb_buffer_fill(a, 0, N * 4, "\0", 1, ERR));
        MUST(gb_buffer_fill(b, 0, N * 4, "\0", 1, ERR));
        gb_arg aa[] = {arg_buf(a), arg_u32(N)}, ab[] = {arg_buf(b), arg_u32(N / 2)};
        gb_launch ls[2] = {launch_1d(inc, (N + 63) / 64, 64, aa, 2),
                           launch_1d(inc, (N + 63) / 64, 64, ab, 2)};
        gb_batch *bt = NULL;
        gb_err e = {0};
        CHECK(gb_batch_create(d, ls, 2, 7, 0, &bt, &e) == 0, "%s", e.msg ? e.msg : "");
        gb_err_clear(&e);
        if (bt) {
            MUST(gb_batch_submit(bt, ERR));
            MUST(gb_sync(d, ERR));
            /* launches 0,2,4,6 hit a; 1,3,5 hit the first half of b */
            CHECK(all_equal(a, N, 4, "a"), "a after 7 rotating launches");
            CHECK(all_equal(b, N / 2, 3, "b"), "b's first half after 7 rotating launches");
            uint32_t tail[N / 2];
            MUST(gb_buffer_download(b, N / 2 * 4, tail, sizeof tail, ERR));
            int untouched = 1;
            for (int i = 0; i < N / 2; i++)
                untouched &= tail[i] == 0;
            CHECK(untouched, "b's second half was written (push constant n ignored?)");
            gb_batch_free(bt);
        }
    }
    gb_buffer_free(a);
    gb_buffer_free(b);
    report("batch with 2 rotating argument sets", before);
}

/* fill -> batch -> launch -> batch: each step must see the previous one's writes. */
static void test_stream_order(gb_device *d, gb_kernel *inc)
{
    int before = failures;
    gb_buffer *b = need_buffer(d, N * 4);
    if (!b)
        return;
    gb_arg args[] = {arg_buf(b), arg_u32(N)};
    gb_launch l = launch_1d(inc, (N + 63) / 64, 64, args, 2);
    gb_batch *bt = NULL;
    gb_err e = {0};
    CHECK(gb_batch_create(d, &l, 1, 10, 1, &bt, &e) == 0, "%s", e.msg ? e.msg : "");
    gb_err_clear(&e);
    if (bt) {
        uint32_t five = 5;
        MUST(gb_buffer_fill(b, 0, N * 4, &five, 4, ERR));
        MUST(gb_batch_submit(bt, ERR));
        MUST(gb_launch_run(&l, ERR));
        MUST(gb_batch_submit(bt, ERR));
        MUST(gb_launch_run(&l, ERR));
        /* download waits by itself: no sync */
        CHECK(all_equal(b, N, 5 + 10 + 1 + 10 + 1, "ordered"), "stream order across batches");
        gb_batch_free(bt);
    }
    gb_buffer_free(b);
    report("stream order: fill, batch, launch, batch, launch", before);
}

static void test_timers(gb_device *d)
{
    int before = failures;
    gb_kernel *spin = need_kernel(d, "spin.comp", NULL, 0);
    gb_buffer *b = need_buffer(d, 64 * 64 * 4);
    gb_timer *outer = NULL, *inner = NULL;
    gb_err e = {0};
    CHECK(gb_timer_create(d, &outer, &e) == 0 && gb_timer_create(d, &inner, &e) == 0, "%s",
          e.msg ? e.msg : "");
    gb_err_clear(&e);
    if (spin && b && outer && inner) {
        gb_arg args[] = {arg_buf(b), arg_u32(20000)};
        gb_launch l = launch_1d(spin, 64, 64, args, 2);
        MUST(gb_timer_start(outer, ERR));
        MUST(gb_launch_run(&l, ERR));
        MUST(gb_timer_start(inner, ERR));
        MUST(gb_launch_run(&l, ERR));
        MUST(gb_timer_stop(inner, ERR));
        MUST(gb_launch_run(&l, ERR));
        MUST(gb_timer_stop(outer, ERR));
        double mi = -1, mo = -1;
        MUST(gb_timer_ms(inner, &mi, ERR));
        MUST(gb_timer_ms(outer, &mo, ERR));
        printf("# inner %.3f ms, outer %.3f ms\n", mi, mo);
        CHECK(mi > 0, "inner %g ms", mi);
        CHECK(mo > mi, "outer %g ms should exceed inner %g ms (three launches vs one)", mo, mi);
        /* Reuse: the second measurement replaces the first. */
        MUST(gb_timer_start(inner, ERR));
        MUST(gb_timer_stop(inner, ERR));
        double empty = -1;
        MUST(gb_timer_ms(inner, &empty, ERR));
        CHECK(empty >= 0 && empty < mi, "empty interval %g ms vs one launch %g ms", empty, mi);
    }
    gb_timer_free(outer);
    gb_timer_free(inner);
    gb_buffer_free(b);
    gb_kernel_free(spin);
    report("timers: positive, nested intervals ordered, reusable", before);
}

/* gb_timed_batch_submit: a batch of one command buffer records the timer's
 * start and stop with its launches (host/vulkan/launch.c, timed_one_cb), once
 * per timer; a longer batch keeps them in command buffers of their own. Every
 * launch runs exactly once per submit, with either timer, alternating, and
 * every interval is positive. */
static void test_timed_batches(gb_device *d, gb_kernel *inc)
{
    int before = failures;
    gb_buffer *b = need_buffer(d, N * 4);
    gb_timer *t1 = NULL, *t2 = NULL;
    gb_err e = {0};
    CHECK(gb_timer_create(d, &t1, &e) == 0 && gb_timer_create(d, &t2, &e) == 0, "%s", e.msg ? e.msg : "");
    gb_err_clear(&e);
    if (b && t1 && t2) {
        gb_arg args[] = {arg_buf(b), arg_u32(N)};
        gb_launch l = launch_1d(inc, (N + 63) / 64, 64, args, 2);
        const uint32_t counts[] = {1, 3, GB_BATCH_CHUNK + 5};
        for (int c = 0; c < 3; c++) {
            MUST(gb_buffer_fill(b, 0, N * 4, "\0", 1, ERR));
            gb_batch *bt = NULL;
            CHECK(gb_batch_create(d, &l, 1, counts[c], 0, &bt, &e) == 0, "%s", e.msg ? e.msg : "");
            gb_err_clear(&e);
            if (!bt)
                continue;
            gb_timer *order[] = {t1, t1, t2, t1, t2};
            for (int i = 0; i < 5; i++) {
                double ms = -1;
                MUST(gb_timed_batch_submit(bt, order[i], ERR));
                MUST(gb_timer_ms(order[i], &ms, ERR));
                CHECK(ms > 0, "count %u, submit %d: %g ms", counts[c], i, ms);
            }
            MUST(gb_sync(d, ERR));
            CHECK(all_equal(b, N, 5 * counts[c], "timed submits"), "count %u after 5 timed submits", counts[c]);
            gb_batch_free(bt);
        }
    }
    gb_timer_free(t1);
    gb_timer_free(t2);
    gb_buffer_free(b);
    report("timed batches of 1, 3 and a chunk + 5 launches: each launch once per submit, two timers alternating, "
           "every interval positive", before);
}

/* uses_include.comp: out[i] = (i + 1000) * SCALE + 7 + OFFSET (includes and defines). */
static void test_includes_on_device(gb_device *d)
{
    int before = failures;
    char *code = NULL;
    gb_err e = {0};
    size_t len;
    code = gb_read_file("tests/kernels/vulkan/uses_include.comp", &len, &e);
    CHECK(code != NULL, "%s", e.msg ? e.msg : "");
    gb_err_clear(&e);
    const char *idirs[] = {"tests/kernels/vulkan/idir"};
    gb_define defs[] = {{"SCALE", "3u"}, {"OFFSET", "5u"}};
    gb_kernel_source src = {.label = "tests/kernels/vulkan/uses_include.comp",
                            .dir = "tests/kernels/vulkan", .code = code, .defines = defs,
                            .ndefines = 2, .include_dirs = idirs, .ninclude_dirs = 1};
    gb_kernel *k = NULL;
    gb_buffer *b = need_buffer(d, N * 4);
    if (code && gb_kernel_load(d, &src, &k, &e) != 0)
        k = NULL;
    CHECK(k != NULL, "%s", e.msg ? e.msg : "");
    gb_err_clear(&e);
    if (k && b) {
        gb_arg args[] = {arg_buf(b), arg_u32(N)};
        gb_launch l = launch_1d(k, (N + 63) / 64, 64, args, 2);
        MUST(gb_launch_run(&l, ERR));
        uint32_t h[N];
        MUST(gb_buffer_download(b, 0, h, sizeof h, ERR));
        int bad = 0;
        for (uint32_t i = 0; i < N; i++)
            bad += h[i] != (i + 1000u) * 3u + 7u + 5u;
        CHECK(bad == 0, "%d wrong elements (h[1] = %u)", bad, h[1]);
    }
    free(code);
    gb_kernel_free(k);
    gb_buffer_free(b);
    report("includes and defines take effect on the device", before);
}

int main(void)
{
    gb_device *d = open_or_skip();
    gb_kernel *inc = need_kernel(d, "inc.comp", NULL, 0);
    if (inc) {
        test_batch_counts(d, inc);
        test_rotating_args(d, inc);
        test_stream_order(d, inc);
        test_timed_batches(d, inc);
    }
    test_timers(d);
    test_includes_on_device(d);
    gb_kernel_free(inc);
    gb_device_release(d);
    return finish("test_vulkan_batch");
}
