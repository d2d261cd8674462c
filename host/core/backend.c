/* The backend wrappers: everything the bindings call, and everything that can
 * be checked or done without a GPU API (the backend registry, ranges,
 * argument kinds, object lifetimes, live-object counters, the L2 flush, the
 * host clock). */
#define _POSIX_C_SOURCE 200809L
#include "backend.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- errors */

int gb_fail_at(gb_err *e, const char *file, int line, const char *fmt, ...) {
    if (!e) return -1;
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    /* The path from the source tree's top (host/..., bindings/...), not the build machine's. */
    const char *base = strstr(file, "/host/");
    if (!base) base = strstr(file, "/bindings/");
    base = base ? base + 1 : file;
    size_t cap = (size_t)(n < 0 ? 0 : n) + strlen(base) + 32;
    char *msg = malloc(cap);
    if (!msg) {
        va_end(ap2);
        return -1;
    }
    int used = vsnprintf(msg, cap, fmt, ap2);
    va_end(ap2);
    if (used < 0) used = 0;
    snprintf(msg + used, cap - (size_t)used, " [%s:%d]", base, line);
    free(e->msg);
    e->msg = msg;
    return -1;
}

void gb_err_clear(gb_err *e) {
    if (!e) return;
    free(e->msg);
    e->msg = NULL;
}

/* ---------------------------------------------------------------- kinds */

static const char *const kind_names[GB_ARG_KIND_COUNT] = {"buffer", "u32", "i32", "f32", "u64"};

const char *gb_kind_name(gb_kind k) {
    return (unsigned)k < GB_ARG_KIND_COUNT ? kind_names[k] : "?";
}

int gb_kind_from_name(const char *name, gb_kind *out) {
    for (int i = 0; i < GB_ARG_KIND_COUNT; i++)
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (gb_kind)i;
            return 0;
        }
    return -1;
}

size_t gb_kind_size(gb_kind k) { return (k == GB_ARG_BUFFER || k == GB_ARG_U64) ? 8 : 4; }

/* --------------------------------------------------------------- backends */

/* The registry: the executable registers the backends it links (cli),
 * so this library depends on no GPU API and a test links only what it uses. */
enum { GB_MAX_BACKENDS = 8 };
static const gb_backend_ops *backends[GB_MAX_BACKENDS];
static int nbackends;

int gb_backend_register(const gb_backend_ops *ops) {
    if (!ops || !ops->name) return -1;
    for (int i = 0; i < nbackends; i++)
        if (backends[i] == ops || strcmp(backends[i]->name, ops->name) == 0) return 0;
    if (nbackends == GB_MAX_BACKENDS) return -1;
    backends[nbackends++] = ops;
    return 0;
}

int gb_backend_count(void) { return nbackends; }

const gb_backend_ops *gb_backend_at(int i) {
    return (i >= 0 && i < nbackends) ? backends[i] : NULL;
}

const gb_backend_ops *gb_backend_find(const char *name) {
    for (int i = 0; i < nbackends; i++)
        if (strcmp(backends[i]->name, name) == 0) return backends[i];
    return NULL;
}

/* ----------------------------------------------------------- live objects */

static long live[GB_LIVE_COUNT];

long gb_live(int which) { return (which >= 0 && which < GB_LIVE_COUNT) ? live[which] : -1; }

void gb_live_adjust(int which, long delta) {
    if (which >= 0 && which < GB_LIVE_COUNT) live[which] += delta;
}

static void device_ref(gb_device *d) { d->refs++; }

static void device_unref(gb_device *d) {
    if (--d->refs > 0) return;
    d->ops->close(d); /* a backend frees only host memory for a broken device */
    live[GB_LIVE_DEVICES]--;
    free(d);
}

/* A Vulkan view of an NVIDIA GPU does not report L2, SM count or memory
 * bandwidth; the CUDA view of the same GPU (same UUID) does. */
static void enrich_from_cuda(gb_device_info *info) {
    if (!info->has_uuid || strcmp(info->backend, "cuda") == 0) return;
    if (info->l2_bytes && info->sm_count && info->spec_gbs > 0) return;
    const gb_backend_ops *cuda = gb_backend_find("cuda");
    if (!cuda) return;
    gb_err e = {0};
    int count = 0;
    if (cuda->probe(&count, &e) != 0) {
        gb_err_clear(&e);
        return;
    }
    for (int i = 0; i < count; i++) {
        gb_device_info ci;
        memset(&ci, 0, sizeof ci);
        if (cuda->device_info(i, &ci, &e) != 0) {
            gb_err_clear(&e);
            continue;
        }
        if (!ci.has_uuid || memcmp(ci.uuid, info->uuid, 16) != 0) continue;
        if (!info->l2_bytes) info->l2_bytes = ci.l2_bytes;
        if (!info->sm_count) info->sm_count = ci.sm_count;
        if (!(info->spec_gbs > 0)) info->spec_gbs = ci.spec_gbs;
        if (!info->memory_clock_khz) info->memory_clock_khz = ci.memory_clock_khz;
        if (!info->memory_bus_bits) info->memory_bus_bits = ci.memory_bus_bits;
        return;
    }
}

int gb_device_info_of(const gb_backend_ops *ops, int index, gb_device_info *out, gb_err *e) {
    memset(out, 0, sizeof *out);
    if (ops->device_info(index, out, e) != 0) return -1;
    snprintf(out->backend, sizeof out->backend, "%s", ops->name);
    out->index = index;
    enrich_from_cuda(out);
    return 0;
}

int gb_device_open(const gb_backend_ops *ops, int index, gb_device **out, gb_err *e) {
    double limit;
    if (gb_wait_limit(&limit, e) != 0) return -1; /* a bad GPUBENCH_TIMEOUT is refused up front */
    int count = 0;
    if (ops->probe(&count, e) != 0) return -1;
    if (index < 0 || index >= count)
        return GB_FAIL(e, "%s device %d does not exist (%d device%s found)", ops->name, index,
                       count, count == 1 ? "" : "s");
    gb_device *d = calloc(1, sizeof *d);
    if (!d) return GB_FAIL(e, "out of host memory opening a %s device", ops->name);
    d->ops = ops;
    if (ops->open(d, index, e) != 0) {
        free(d);
        return -1;
    }
    snprintf(d->info.backend, sizeof d->info.backend, "%s", ops->name);
    d->info.index = index;
    enrich_from_cuda(&d->info);
    d->refs = 1;
    live[GB_LIVE_DEVICES]++;
    *out = d;
    return 0;
}

void gb_device_release(gb_device *d) {
    if (!d || d->closed) return;
    /* Ranges a script left open end with the device, innermost first. */
    while (!d->broken && d->profiler_depth > 0 && d->ops->profiler_range) {
        gb_err tmp = {0};
        d->ops->profiler_range(d, NULL, 0, &tmp);
        gb_err_clear(&tmp);
        d->profiler_depth--;
    }
    d->closed = 1;
    gb_flush_release(d); /* the flush's buffers and kernel (host/core/flush.c) */
    device_unref(d);
}

static int check_open(gb_device *d, gb_err *e) {
    if (d->closed) return GB_FAIL(e, "the %s device was released", d->ops->name);
    if (d->broken) return GB_FAIL(e, "the %s device can no longer be used: %s", d->ops->name, d->broken_why);
    return 0;
}

/* ---------------------------------------------------------- the watchdog */

static long nbroken;

void gb_device_break(gb_device *d, const char *why) {
    if (!d || d->broken) return;
    d->broken = 1;
    snprintf(d->broken_why, sizeof d->broken_why, "%s", why ? why : "an earlier failure");
    nbroken++;
}

long gb_broken_devices(void) { return nbroken; }

int gb_wait_limit(double *seconds, gb_err *e) {
    const char *v = getenv("GPUBENCH_TIMEOUT");
    *seconds = GB_DEFAULT_TIMEOUT_S;
    if (!v) return 0;
    char *end = NULL;
    double s = strtod(v, &end);
    while (end && *end == ' ') end++;
    if (!v[0] || !end || *end || !(s >= 0) || s > 1e9)
        return GB_FAIL(e, "GPUBENCH_TIMEOUT=%s is not a number of seconds >= 0 (0: no limit)", v);
    *seconds = s;
    return 0;
}

int gb_wait_timed_out(gb_device *d, const char *call, const char *what, double limit, gb_err *e) {
    char why[400];
    snprintf(why, sizeof why, "%s did not finish within %g s (GPUBENCH_TIMEOUT) waiting for %s; "
             "a kernel that never ends?", call, limit, what);
    gb_device_break(d, why);
    return GB_FAIL(e, "%s", why);
}

/* ---------------------------------------------------------------- buffers */

int gb_buffer_alloc(gb_device *d, uint64_t size, gb_buffer **out, gb_err *e) {
    if (check_open(d, e)) return -1;
    if (size == 0) return GB_FAIL(e, "buffer size must be at least 1 byte");
    if (d->info.max_buffer_bytes && size > d->info.max_buffer_bytes)
        return GB_FAIL(e, "buffer of %" PRIu64 " bytes exceeds the device's largest buffer (%" PRIu64
                          " bytes)", size, d->info.max_buffer_bytes);
    gb_buffer *b = calloc(1, sizeof *b);
    if (!b) return GB_FAIL(e, "out of host memory allocating a buffer");
    b->dev = d;
    b->size = size;
    if (d->ops->buffer_alloc(b, e) != 0) {
        free(b);
        return -1;
    }
    device_ref(d);
    live[GB_LIVE_BUFFERS]++;
    *out = b;
    return 0;
}

static void buffer_destroy(gb_buffer *b) {
    gb_device *d = b->dev;
    d->ops->buffer_free(b);
    live[GB_LIVE_BUFFERS]--;
    free(b);
    device_unref(d);
}

void gb_buffer_free(gb_buffer *b) {
    if (!b || b->released) return;
    b->released = 1;
    if (b->refs == 0) buffer_destroy(b);
}

static int check_range(const char *what, const gb_buffer *b, uint64_t off, uint64_t n, gb_err *e) {
    if (off > b->size || n > b->size - off)
        return GB_FAIL(e, "%s out of range: offset %" PRIu64 " + %" PRIu64 " bytes exceeds the "
                          "buffer's %" PRIu64 " bytes", what, off, n, b->size);
    return 0;
}

int gb_buffer_upload(gb_buffer *b, uint64_t off, const void *src, uint64_t n, gb_err *e) {
    if (check_open(b->dev, e) || check_range("upload", b, off, n, e)) return -1;
    if (n == 0) return 0;
    return b->dev->ops->upload(b, off, src, n, e);
}

int gb_buffer_download(gb_buffer *b, uint64_t off, void *dst, uint64_t n, gb_err *e) {
    if (check_open(b->dev, e) || check_range("download", b, off, n, e)) return -1;
    if (n == 0) return 0;
    return b->dev->ops->download(b, off, dst, n, e);
}

/* Fills through the backend's 32-bit fill where the pattern tiles a 4-byte
 * word over aligned ranges; otherwise builds the bytes on the host (chunked). */
int gb_buffer_fill(gb_buffer *b, uint64_t off, uint64_t n, const void *pattern, size_t plen,
                   gb_err *e) {
    if (check_open(b->dev, e) || check_range("fill", b, off, n, e)) return -1;
    if (plen < 1 || plen > 256) return GB_FAIL(e, "fill pattern must be 1 to 256 bytes, got %zu", plen);
    if (n == 0) return 0;
    const unsigned char *p = pattern;
    if ((plen == 1 || plen == 2 || plen == 4) && off % 4 == 0 && n % 4 == 0) {
        uint32_t word;
        unsigned char w[4];
        for (int i = 0; i < 4; i++) w[i] = p[i % plen];
        memcpy(&word, w, 4);
        return b->dev->ops->fill32(b, off, n, word, e);
    }
    const uint64_t chunk_max = 16u << 20;
    uint64_t chunk = n < chunk_max ? n : chunk_max;
    chunk = chunk - chunk % plen;
    if (chunk == 0) chunk = n; /* n < plen: a truncated single pattern */
    unsigned char *tmp = malloc(chunk);
    if (!tmp) return GB_FAIL(e, "out of host memory for a %" PRIu64 "-byte fill chunk", chunk);
    for (uint64_t i = 0; i < chunk; i++) tmp[i] = p[i % plen];
    int rc = 0;
    for (uint64_t done = 0; done < n && rc == 0; done += chunk) {
        uint64_t len = n - done < chunk ? n - done : chunk;
        rc = b->dev->ops->upload(b, off + done, tmp, len, e);
    }
    free(tmp);
    return rc;
}

int gb_buffer_copy(gb_buffer *dst, uint64_t doff, gb_buffer *src, uint64_t soff, uint64_t n,
                   gb_err *e) {
    if (check_open(dst->dev, e)) return -1;
    if (dst->dev != src->dev) return GB_FAIL(e, "copy between buffers of different devices");
    if (check_range("copy destination", dst, doff, n, e) || check_range("copy source", src, soff, n, e))
        return -1;
    if (dst == src && doff < soff + n && soff < doff + n)
        return GB_FAIL(e, "copy source and destination ranges overlap");
    if (n == 0) return 0;
    return dst->dev->ops->copy(dst, doff, src, soff, n, e);
}

/* ---------------------------------------------------------------- kernels */

int gb_kernel_load(gb_device *d, const gb_kernel_source *src, gb_kernel **out, gb_err *e) {
    if (check_open(d, e)) return -1;
    if (!src->code) return GB_FAIL(e, "kernel source is missing");
    if (src->nparams > GB_MAX_PARAMS)
        return GB_FAIL(e, "kernel declares %d parameters; at most %d are supported", src->nparams,
                       GB_MAX_PARAMS);
    gb_kernel *k = calloc(1, sizeof *k);
    if (!k) return GB_FAIL(e, "out of host memory loading a kernel");
    k->dev = d;
    if (d->ops->kernel_load(d, src, k, e) != 0) {
        free(k->entry);
        free(k->label);
        free(k);
        return -1;
    }
    device_ref(d);
    live[GB_LIVE_KERNELS]++;
    *out = k;
    return 0;
}

static void kernel_destroy(gb_kernel *k) {
    gb_device *d = k->dev;
    d->ops->kernel_free(k);
    free(k->entry);
    free(k->label);
    live[GB_LIVE_KERNELS]--;
    free(k);
    device_unref(d);
}

void gb_kernel_free(gb_kernel *k) {
    if (!k || k->released) return;
    k->released = 1;
    if (k->refs == 0) kernel_destroy(k);
}

void gb_kernel_stat_put(gb_kernel_stat *out, int max, int *n, const char *name, double value,
                        const char *description) {
    if (*n >= max) return;
    gb_kernel_stat *st = &out[(*n)++];
    snprintf(st->name, sizeof st->name, "%s", name);
    snprintf(st->description, sizeof st->description, "%s", description);
    st->value = value;
}

int gb_kernel_stats(gb_kernel *k, const uint32_t block[3], gb_kernel_stat *out, int max, int *n,
                    gb_err *e) {
    *n = 0;
    if (!k || k->released) return GB_FAIL(e, "kernel statistics: the kernel was released");
    if (check_open(k->dev, e)) return -1;
    if (k->vendor)
        return GB_FAIL(e, "kernel statistics: %s is a vendor library's GEMM, not code gpubench compiled",
                       k->label);
    if (!k->dev->ops->kernel_stats)
        return GB_FAIL(e, "kernel statistics: the %s backend reports none", k->dev->ops->name);
    const gb_device_info *info = &k->dev->info;
    uint64_t threads = 1;
    for (int i = 0; i < 3; i++) {
        if (block[i] < 1 || (info->max_group_size[i] && block[i] > info->max_group_size[i]))
            return GB_FAIL(e, "kernel statistics: block %ux%ux%u: dimension %c must be 1 to %u", block[0],
                           block[1], block[2], "xyz"[i], info->max_group_size[i]);
        threads *= block[i];
    }
    if (info->max_threads_per_group && threads > info->max_threads_per_group)
        return GB_FAIL(e, "kernel statistics: block %ux%ux%u is %llu threads; %s allows %u", block[0],
                       block[1], block[2], (unsigned long long)threads, info->name,
                       info->max_threads_per_group);
    return k->dev->ops->kernel_stats(k, block, out, max, n, e);
}

int gb_vendor_gemm_create(gb_device *d, uint32_t n, uint32_t kdim, uint32_t t, gb_kernel **out,
                          gb_err *e) {
    if (check_open(d, e)) return -1;
    if (!d->ops->vendor_gemm)
        return GB_FAIL(e, "vendor GEMM (cuBLASLt) needs the CUDA backend; this device is %s",
                       d->ops->name);
    const uint32_t max = 0x7fffffffu; /* the library's dimensions are signed 32-bit */
    if (n < 1 || n > max || kdim < 1 || kdim > max || t < 1 || t > max)
        return GB_FAIL(e, "vendor GEMM: n, k and t must be 1 to %u (got n = %u, k = %u, t = %u)",
                       max, n, kdim, t);
    gb_kernel *k = calloc(1, sizeof *k);
    if (!k) return GB_FAIL(e, "out of host memory creating a vendor GEMM");
    k->dev = d;
    if (d->ops->vendor_gemm(d, k, n, kdim, t, e) != 0) {
        free(k->entry);
        free(k->label);
        free(k);
        return -1;
    }
    device_ref(d);
    live[GB_LIVE_KERNELS]++;
    *out = k;
    return 0;
}

/* A batch's references on what its launches name (gb_batch_create/free):
 * the objects outlive their handles' release for as long as it needs them. */
static void launch_refs(const gb_launch *l, int delta) {
    l->kernel->refs += delta;
    for (int i = 0; i < l->nargs; i++) {
        if (l->args[i].kind != GB_ARG_BUFFER) continue;
        gb_buffer *b = l->args[i].v.buf;
        b->refs += delta;
        if (delta < 0 && b->released && b->refs == 0) buffer_destroy(b);
    }
    if (delta < 0 && l->kernel->released && l->kernel->refs == 0) kernel_destroy(l->kernel);
}

/* A vendor GEMM's launch: geometry 1 (the library chooses its own), W, x and
 * y large enough for the planned shape, and y written through no input. */
static int vendor_check(const gb_launch *l, gb_err *e) {
    const gb_vendor_gemm *g = l->kernel->vendor;
    const char *name = l->kernel->entry;
    for (int i = 0; i < 3; i++)
        if (l->grid[i] != 1 || l->block[i] != 1)
            return GB_FAIL(e, "%s: a vendor GEMM takes grid 1 and block 1 (the library picks its own "
                              "geometry), got grid %ux%ux%u, block %ux%ux%u", name, l->grid[0],
                           l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2]);
    static const char *const what[3] = {"W [N, K]", "x [T, K]", "y [T, N]"};
    static const char *const rule[3] = {"2*N*K", "2*T*K", "2*T*N"};
    const uint64_t need[3] = {2ull * g->n * g->k, 2ull * g->t * g->k, 2ull * g->t * g->n};
    for (int i = 0; i < 3; i++) {
        const gb_buffer *b = l->args[i].v.buf;
        if (b->size < need[i])
            return GB_FAIL(e, "%s argument %d (%s bf16): the buffer has %" PRIu64 " bytes, needs %s = %"
                              PRIu64 " (N = %u, K = %u, T = %u)", name, i + 1, what[i], b->size,
                           rule[i], need[i], g->n, g->k, g->t);
    }
    for (int i = 0; i < 2; i++)
        if (l->args[2].v.buf == l->args[i].v.buf)
            return GB_FAIL(e, "%s argument 3 (y) is the same buffer as argument %d (%s): the output "
                              "must not overwrite an input", name, i + 1, i == 0 ? "W" : "x");
    return 0;
}

int gb_launch_check(const gb_launch *l, gb_err *e) {
    const gb_kernel *k = l->kernel;
    if (!k) return GB_FAIL(e, "launch without a kernel");
    if (k->released) return GB_FAIL(e, "launch of a released kernel (%s)", k->entry ? k->entry : "?");
    if (check_open(k->dev, e)) return -1;
    const char *name = k->entry ? k->entry : "?";
    if (l->nargs != k->nparams)
        return GB_FAIL(e, "kernel %s takes %d argument%s, got %d", name, k->nparams,
                       k->nparams == 1 ? "" : "s", l->nargs);
    for (int i = 0; i < l->nargs; i++) {
        if (l->args[i].kind != k->params[i])
            return GB_FAIL(e, "kernel %s argument %d: expected %s, got %s", name, i + 1,
                           gb_kind_name(k->params[i]), gb_kind_name(l->args[i].kind));
        if (l->args[i].kind == GB_ARG_BUFFER) {
            if (!l->args[i].v.buf || l->args[i].v.buf->released)
                return GB_FAIL(e, "kernel %s argument %d: released buffer", name, i + 1);
            if (l->args[i].v.buf->dev != k->dev)
                return GB_FAIL(e, "kernel %s argument %d: buffer belongs to another device", name, i + 1);
        }
    }
    if (k->vendor) return vendor_check(l, e);
    const gb_device_info *in = &k->dev->info;
    uint64_t threads = 1;
    for (int i = 0; i < 3; i++) {
        if (l->grid[i] == 0 || l->block[i] == 0)
            return GB_FAIL(e, "kernel %s: grid and block sizes must be at least 1 in every dimension "
                              "(grid %ux%ux%u, block %ux%ux%u)", name, l->grid[0], l->grid[1],
                           l->grid[2], l->block[0], l->block[1], l->block[2]);
        if (in->max_groups[i] && l->grid[i] > in->max_groups[i])
            return GB_FAIL(e, "kernel %s: grid %c = %u exceeds the device limit %u", name, "xyz"[i],
                           l->grid[i], in->max_groups[i]);
        if (in->max_group_size[i] && l->block[i] > in->max_group_size[i])
            return GB_FAIL(e, "kernel %s: block %c = %u exceeds the device limit %u", name, "xyz"[i],
                           l->block[i], in->max_group_size[i]);
        threads *= l->block[i];
    }
    if (in->max_threads_per_group && threads > in->max_threads_per_group)
        return GB_FAIL(e, "kernel %s: %" PRIu64 " threads per workgroup exceed the device limit %u",
                       name, threads, in->max_threads_per_group);
    if (k->local_size[0] && (l->block[0] != k->local_size[0] || l->block[1] != k->local_size[1] ||
                             l->block[2] != k->local_size[2]))
        return GB_FAIL(e, "kernel %s: block %ux%ux%u differs from the shader's local size %ux%ux%u",
                       name, l->block[0], l->block[1], l->block[2], k->local_size[0],
                       k->local_size[1], k->local_size[2]);
    return 0;
}

int gb_launch_run(const gb_launch *l, gb_err *e) {
    if (gb_launch_check(l, e)) return -1;
    return l->kernel->dev->ops->launch(l, e);
}

/* ---------------------------------------------------------------- batches */

/* Why a batch cannot overlap its launches, or 0 when it can; *overlapped counts
 * the distinct launches that will. */
static int overlap_check(gb_device *d, const gb_launch *launches, int n, int *overlapped, gb_err *e) {
    if (!d->info.launch_overlap)
        return GB_FAIL(e, "launch overlap needs programmatic dependent launch (CUDA, sm_90 or later, a "
                          "driver with cuLaunchKernelEx); %s (%s%s%s) has none",
                       d->info.name, d->info.backend, d->info.arch[0] ? " " : "", d->info.arch);
    *overlapped = 0;
    for (int i = 0; i < n; i++) *overlapped += launches[i].kernel->overlap != 0;
    if (*overlapped == 0)
        return GB_FAIL(e, "launch overlap: none of the batch's kernels (%s%s) declares GB_LAUNCH_OVERLAP "
                          "(kernels/cuda/launch_overlap.cuh), so no launch could overlap",
                       launches[0].kernel->entry, n > 1 ? ", ..." : "");
    return 0;
}

int gb_batch_create(gb_device *d, const gb_launch *launches, int n, uint32_t count, int flags,
                    gb_batch **out, gb_err *e) {
    if (check_open(d, e)) return -1;
    if (n < 1 || n > GB_MAX_LAUNCHES)
        return GB_FAIL(e, "a batch takes 1 to %d distinct launches, got %d", GB_MAX_LAUNCHES, n);
    if (count < 1) return GB_FAIL(e, "a batch must perform at least 1 launch");
    if (flags & ~(GB_BATCH_GRAPH | GB_BATCH_OVERLAP)) return GB_FAIL(e, "unknown batch flags 0x%x", (unsigned)flags);
    for (int i = 0; i < n; i++) {
        if (launches[i].kernel && launches[i].kernel->dev != d)
            return GB_FAIL(e, "batch launch %d uses a kernel of another device", i + 1);
        if (gb_launch_check(&launches[i], e)) return -1;
    }
    int overlapped = 0;
    if ((flags & GB_BATCH_OVERLAP) && overlap_check(d, launches, n, &overlapped, e)) return -1;
    gb_batch *b = calloc(1, sizeof *b);
    gb_launch *copy = calloc((size_t)n, sizeof *copy);
    if (!b || !copy) {
        free(b);
        free(copy);
        return GB_FAIL(e, "out of host memory creating a batch");
    }
    memcpy(copy, launches, (size_t)n * sizeof *copy);
    for (int i = 0; i < n; i++) launch_refs(&copy[i], +1);
    b->dev = d;
    b->count = count;
    b->nlaunches = n;
    b->launches = copy;
    b->graph = (flags & GB_BATCH_GRAPH) != 0;
    b->overlap = (flags & GB_BATCH_OVERLAP) != 0;
    b->overlapped = overlapped;
    if (d->ops->batch_prepare(b, e) != 0) {
        for (int i = 0; i < n; i++) launch_refs(&copy[i], -1);
        free(copy);
        free(b);
        return -1;
    }
    device_ref(d);
    live[GB_LIVE_BATCHES]++;
    *out = b;
    return 0;
}

/* A batch whose kernels and buffers are all still alive. */
static int check_batch(gb_batch *b, gb_err *e) {
    if (check_open(b->dev, e)) return -1;
    for (int i = 0; i < b->nlaunches; i++) {
        const gb_launch *l = &b->launches[i];
        if (l->kernel->released)
            return GB_FAIL(e, "batch launch %d uses kernel %s, which was released", i + 1, l->kernel->entry);
        for (int j = 0; j < l->nargs; j++)
            if (l->args[j].kind == GB_ARG_BUFFER && l->args[j].v.buf->released)
                return GB_FAIL(e, "batch launch %d (kernel %s) argument %d is a buffer that was released",
                               i + 1, l->kernel->entry, j + 1);
    }
    return 0;
}

int gb_batch_submit(gb_batch *b, gb_err *e) {
    if (check_batch(b, e)) return -1;
    return b->dev->ops->batch_submit(b, e);
}

int gb_timed_batch_submit(gb_batch *b, gb_timer *t, gb_err *e) {
    if (t->dev != b->dev) return GB_FAIL(e, "timed submit: the timer belongs to another device");
    if (!b->dev->ops->timed_batch_submit) {
        if (gb_timer_start(t, e) != 0 || gb_batch_submit(b, e) != 0) return -1;
        return gb_timer_stop(t, e);
    }
    if (check_batch(b, e)) return -1;
    if (b->dev->ops->timed_batch_submit(b, t, e) != 0) return -1;
    t->state = 2;
    return 0;
}

void gb_batch_free(gb_batch *b) {
    if (!b) return;
    gb_device *d = b->dev;
    d->ops->batch_free(b);
    for (int i = 0; i < b->nlaunches; i++) launch_refs(&b->launches[i], -1);
    free(b->launches);
    live[GB_LIVE_BATCHES]--;
    free(b);
    device_unref(d);
}

/* ----------------------------------------------------------------- timers */

int gb_timer_create(gb_device *d, gb_timer **out, gb_err *e) {
    if (check_open(d, e)) return -1;
    gb_timer *t = calloc(1, sizeof *t);
    if (!t) return GB_FAIL(e, "out of host memory creating a timer");
    t->dev = d;
    if (d->ops->timer_create(t, e) != 0) {
        free(t);
        return -1;
    }
    device_ref(d);
    live[GB_LIVE_TIMERS]++;
    *out = t;
    return 0;
}

int gb_timer_start(gb_timer *t, gb_err *e) {
    if (check_open(t->dev, e)) return -1;
    if (t->dev->ops->timer_record(t, 0, e) != 0) return -1;
    t->state = 1;
    return 0;
}

int gb_timer_stop(gb_timer *t, gb_err *e) {
    if (check_open(t->dev, e)) return -1;
    if (t->state != 1) return GB_FAIL(e, "timer stopped without being started");
    if (t->dev->ops->timer_record(t, 1, e) != 0) return -1;
    t->state = 2;
    return 0;
}

int gb_timer_ms(gb_timer *t, double *ms, gb_err *e) {
    if (check_open(t->dev, e)) return -1;
    if (t->state != 2) return GB_FAIL(e, "timer read before start and stop were both recorded");
    return t->dev->ops->timer_elapsed_ms(t, ms, e);
}

void gb_timer_free(gb_timer *t) {
    if (!t) return;
    gb_device *d = t->dev;
    d->ops->timer_free(t);
    live[GB_LIVE_TIMERS]--;
    free(t);
    device_unref(d);
}

/* ------------------------------------------------------------------ misc */

int gb_device_clocks(gb_device *d, gb_clocks *out, gb_err *e) {
    if (check_open(d, e)) return -1;
    memset(out, 0, sizeof *out);
    if (d->ops->clocks) return d->ops->clocks(&d->info, out, e);
    const gb_backend_ops *cuda = gb_backend_find("cuda");
    if (d->info.vendor_id == 0x10de && cuda && cuda->clocks) return cuda->clocks(&d->info, out, e);
    return GB_FAIL(e, "clocks: %s is not an NVIDIA GPU (clocks are read through NVML)", d->info.name);
}

/* Ranges nest; an end without a begin is refused here, for every backend,
 * before it reaches a driver (unbalanced labels have crashed one). */
int gb_profiler_range(gb_device *d, const char *name, int begin, gb_err *e) {
    if (check_open(d, e)) return -1;
    if (!begin && d->profiler_depth == 0)
        return GB_FAIL(e, "profiler range failed: NO_OPEN_RANGE (end of range '%s' without a begin)",
                       name ? name : "");
    if (d->ops->profiler_range && d->ops->profiler_range(d, name, begin, e) != 0) return -1;
    d->profiler_depth += begin ? 1 : -1;
    return 0;
}

int gb_sync(gb_device *d, gb_err *e) {
    if (check_open(d, e)) return -1;
    return d->ops->sync(d, e);
}

double gb_clock_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
