/* The L2 flush and the cold sample (backend.h, "the L2 flush").
 *
 * Why a read flush: a flush that writes its buffer (a memset) leaves L2 full
 * of dirty lines, and the next call pays to write them back inside its timed
 * region, which made a cold GEMV read far slower than the profiler measures
 * it (the figures: docs/results/h200-flush.md). Reading a
 * buffer twice the size of L2 evicts whatever was there (its write-backs
 * happen during the flush) and leaves clean lines only. */
#include <string.h>

#include "backend.h"

/* The read kernel's sentinel: the flush buffer is zero-filled, so every
 * thread's XOR fold is 0 and the kernel never writes. */
#define FLUSH_SENTINEL 0xA5A5A5A5u
enum { FLUSH_BLOCK = 256, FLUSH_PRIME_PASSES = 3 };

static int read_pass(gb_device *d, gb_err *e);

int gb_flush_kind_from_name(const char *name, gb_flush_kind *out) {
    static const char *const names[] = {"none", "clean", "write"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (gb_flush_kind)i;
            return 0;
        }
    return -1;
}

const char *gb_flush_kind_name(gb_flush_kind k) {
    return k == GB_FLUSH_CLEAN ? "clean" : k == GB_FLUSH_WRITE ? "write" : "none";
}

uint64_t gb_flush_bytes(const gb_device *d) {
    /* Twice the L2 evicts it whatever the replacement policy keeps; 256 MiB
     * covers every current GPU's L2 when the API does not report one. A device
     * whose largest buffer is smaller (lavapipe: 128 MiB) gets its largest. */
    uint64_t want = d->info.l2_bytes ? 2 * d->info.l2_bytes : 256ull << 20;
    if (d->info.max_buffer_bytes && want > d->info.max_buffer_bytes)
        want = d->info.max_buffer_bytes;
    want &= ~(uint64_t)255;
    return want ? want : 256; /* a device whose largest buffer is tiny still gets one */
}

static uint32_t flush_grid(const gb_device *d) {
    return d->info.sm_count ? d->info.sm_count * 4 : 1024;
}

/* A buffer the device owns (not counted among the caller's live objects). */
static int own_buffer(gb_device *d, uint64_t bytes, gb_buffer **out, gb_err *e) {
    if (gb_buffer_alloc(d, bytes, out, e) != 0) return -1;
    gb_live_adjust(GB_LIVE_BUFFERS, -1);
    return 0;
}

static int make_buffer(gb_device *d, gb_err *e) {
    if (d->flush_buf) return 0;
    if (own_buffer(d, gb_flush_bytes(d), &d->flush_buf, e) != 0) return -1;
    /* Zeros: the read kernel's fold is then 0, never the sentinel. Marked as
     * written, so the first clean flush fills and primes it once more: a fresh
     * buffer's first clean flush leaves dirty lines, a refilled one's does not
     * (docs/results/h200-flush.md, "The first flush of a fresh buffer"). */
    d->flush_dirty = 1;
    return d->ops->fill32(d->flush_buf, 0, d->flush_buf->size, 0, e);
}

static int make_kernel(gb_device *d, gb_err *e) {
    if (d->flush_kernel) return 0;
    if (!d->ops->flush_source)
        return GB_FAIL(e, "the %s backend has no read kernel for a clean L2 flush (use the write flush)",
                       d->ops->name);
    if (!d->flush_out &&
        own_buffer(d, (uint64_t)flush_grid(d) * FLUSH_BLOCK * 4, &d->flush_out, e) != 0)
        return -1;
    gb_kernel_source src;
    memset(&src, 0, sizeof src);
    src.label = "<gpubench L2 flush>";
    src.code = d->ops->flush_source;
    src.entry = d->ops->flush_entry;
    if (gb_kernel_load(d, &src, &d->flush_kernel, e) != 0) return -1;
    gb_live_adjust(GB_LIVE_KERNELS, -1);
    return 0;
}

int gb_flush_queue(gb_device *d, gb_flush_kind kind, gb_err *e) {
    if (kind == GB_FLUSH_NONE) return 0;
    if (make_buffer(d, e) != 0) return -1;
    if (kind == GB_FLUSH_WRITE) {
        /* Alternate the pattern so no driver can skip a fill that changes
         * nothing; the read flush's zeros are restored by the next clean one. */
        static uint32_t salt;
        salt++;
        d->flush_dirty = 1;
        return d->ops->fill32(d->flush_buf, 0, d->flush_buf->size, 0x9e3779b9u * salt, e);
    }
    if (make_kernel(d, e) != 0) return -1;
    if (d->flush_dirty) { /* a write flush left its pattern: zeros again, then read */
        if (d->ops->fill32(d->flush_buf, 0, d->flush_buf->size, 0, e) != 0) return -1;
        d->flush_dirty = 0;
        d->flush_primed = 0;
    }
    /* Right after the fill, L2 holds the fill's dirty lines, and a read pass
     * keeps dirty those of them it hits; a few passes evict them (their
     * write-back happens here, not in the timed call that follows). */
    int passes = d->flush_primed ? 1 : 1 + FLUSH_PRIME_PASSES;
    d->flush_primed = 1;
    for (int p = 0; p < passes - 1; p++)
        if (read_pass(d, e) != 0) return -1;
    return read_pass(d, e);
}

static int read_pass(gb_device *d, gb_err *e) {
    gb_launch l;
    memset(&l, 0, sizeof l);
    l.kernel = d->flush_kernel;
    l.grid[0] = flush_grid(d);
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = FLUSH_BLOCK;
    l.block[1] = l.block[2] = 1;
    l.nargs = 4;
    l.args[0].kind = GB_ARG_BUFFER;
    l.args[0].v.buf = d->flush_buf;
    l.args[1].kind = GB_ARG_BUFFER;
    l.args[1].v.buf = d->flush_out;
    l.args[2].kind = GB_ARG_U32;
    l.args[2].v.u32 = (uint32_t)(d->flush_buf->size / 16);
    l.args[3].kind = GB_ARG_U32;
    l.args[3].v.u32 = FLUSH_SENTINEL;
    return gb_launch_run(&l, e);
}

int gb_flush_l2(gb_device *d, gb_flush_kind kind, gb_err *e) {
    if (gb_flush_queue(d, kind, e) != 0) return -1;
    return gb_sync(d, e);
}

void gb_flush_release(gb_device *d) {
    if (d->flush_kernel) {
        gb_live_adjust(GB_LIVE_KERNELS, +1); /* balances make_kernel */
        gb_kernel_free(d->flush_kernel);
        d->flush_kernel = NULL;
    }
    gb_buffer **bufs[] = {&d->flush_buf, &d->flush_out};
    for (int i = 0; i < 2; i++) {
        if (!*bufs[i]) continue;
        gb_live_adjust(GB_LIVE_BUFFERS, +1); /* balances own_buffer */
        gb_buffer_free(*bufs[i]);
        *bufs[i] = NULL;
    }
}

int gb_cold_sample(gb_batch *b, gb_timer *t, gb_flush_kind flush, int hold, double *ms, int *held,
                   gb_err *e) {
    gb_device *d = b->dev;
    *held = 0;
    if (t->dev != d) return GB_FAIL(e, "cold sample: the timer belongs to another device");
    /* What the flush needs is made now: compiling or allocating inside the
     * held sequence would put host work between its parts. */
    if (flush != GB_FLUSH_NONE && make_buffer(d, e) != 0) return -1;
    if (flush == GB_FLUSH_CLEAN && make_kernel(d, e) != 0) return -1;
    int holding = hold && d->ops->hold && d->ops->release;
    if (holding && d->ops->hold(d, e) != 0) return -1;
    int rc = gb_flush_queue(d, flush, e);
    if (rc == 0) rc = gb_timed_batch_submit(b, t, e);
    /* Released whatever happened, or the stream would wait forever. */
    if (holding) {
        gb_err later = {0};
        if (d->ops->release(d, rc == 0 ? e : &later) != 0) rc = -1;
        gb_err_clear(&later);
    }
    if (rc != 0) return -1;
    *held = holding;
    return gb_timer_ms(t, ms, e);
}
