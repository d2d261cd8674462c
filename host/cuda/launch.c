/* CUDA launches: single launches, batches replayed as a loop of
 * cuLaunchKernel calls, and batches captured once into CUDA graphs of at
 * most GB_BATCH_CHUNK launches, replayed back to back. A vendor GEMM
 * (k->vendor) is issued as its library call at the same points. A batch with
 * overlap issues its overlapping kernels, but the first of each submission,
 * with programmatic stream serialization (cuLaunchKernelEx): each may start
 * while the launch before it finishes, and waits for it in its own code
 * (kernels/cuda/launch_overlap.cuh); captured, that is a programmatic edge. */
#define _POSIX_C_SOURCE 200809L
#include "cuda_internal.h"
#include "cuda_blaslt.h"

#if GPUBENCH_HAVE_CUDA_HEADERS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One launch with its argument block built: everything cuLaunchKernel needs,
 * so a batch submit does no host work per launch beyond the call itself.
 * ptrs point into slots, so a call must not move once prepared. */
typedef struct cuda_call {
    CUfunction fn;
    const void *vendor; /* a vendor GEMM's plan (blaslt.c) instead of fn; slots hold W, x, y */
    const char *entry;
    unsigned grid[3], block[3];
    unsigned shared; /* dynamic shared memory bytes (gb_kernel.dynamic_shared) */
    int overlap;     /* may start while the launch before it finishes (gb_batch.overlap) */
    uint64_t slots[GB_MAX_PARAMS]; /* each value at the start of an 8-byte slot */
    void *ptrs[GB_MAX_PARAMS];
} cuda_call;

/* A graph batch holds a graph of `chunk` launches (gb_batch_chunk) replayed
 * `full` times, and one of the rest when count is not a multiple. */
typedef struct cuda_batch {
    cuda_call *calls;
    int ncalls;
    uint32_t chunk, full;
    CUgraph graph, rest_graph;
    CUgraphExec exec, rest_exec;
} cuda_batch;

static void prepare_call(const gb_launch *l, int overlap, cuda_call *c) {
    memset(c, 0, sizeof *c);
    if (l->kernel->vendor) c->vendor = l->kernel->impl;
    else c->fn = ((cuda_kernel *)l->kernel->impl)->fn;
    c->overlap = overlap && l->kernel->overlap && !l->kernel->vendor;
    c->entry = l->kernel->entry;
    c->shared = l->kernel->dynamic_shared;
    for (int i = 0; i < 3; i++) {
        c->grid[i] = l->grid[i];
        c->block[i] = l->block[i];
    }
    /* The kinds were checked against the kernel by gb_launch_check; the
     * kernel reads each parameter's size (4 or 8 bytes) from its pointer. */
    for (int i = 0; i < l->nargs && i < GB_MAX_PARAMS; i++) {
        const gb_arg *a = &l->args[i];
        switch (a->kind) {
        case GB_ARG_BUFFER: c->slots[i] = (uint64_t)cuda_ptr_of(a->v.buf); break;
        case GB_ARG_U32: memcpy(&c->slots[i], &a->v.u32, 4); break;
        case GB_ARG_I32: memcpy(&c->slots[i], &a->v.i32, 4); break;
        case GB_ARG_F32: memcpy(&c->slots[i], &a->v.f32, 4); break;
        case GB_ARG_U64: c->slots[i] = a->v.u64; break;
        default: break;
        }
        c->ptrs[i] = &c->slots[i];
    }
}

/* One launch with programmatic stream serialization: it may start while the launch before it finishes. */
static CUresult launch_ex(cuda_call *c, CUstream s) {
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = c->grid[0];
    cfg.gridDimY = c->grid[1];
    cfg.gridDimZ = c->grid[2];
    cfg.blockDimX = c->block[0];
    cfg.blockDimY = c->block[1];
    cfg.blockDimZ = c->block[2];
    cfg.sharedMemBytes = c->shared;
    cfg.hStream = s;
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    return gb_cu.LaunchKernelEx(&cfg, c->fn, c->ptrs, NULL);
}

/* `after`: a launch of the same submission came before this one. */
static int issue(gb_device *d, cuda_call *c, int after, CUstream s, gb_err *e) {
    if (c->vendor) return gb_cuda_vendor_gemm_issue(d, c->vendor, c->slots, s, e);
    int ex = after && c->overlap;
    CUresult r = ex ? launch_ex(c, s)
                    : gb_cu.LaunchKernel(c->fn, c->grid[0], c->grid[1], c->grid[2], c->block[0],
                                         c->block[1], c->block[2], c->shared, s, c->ptrs, NULL);
    if (r == CUDA_SUCCESS) return 0;
    gb_cu_fail_at(e, __FILE__, __LINE__, ex ? "cuLaunchKernelEx" : "cuLaunchKernel", r,
                  " launching %s (grid %ux%ux%u, block %ux%ux%u)", c->entry, c->grid[0],
                  c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2]);
    return gb_cuda_failed(d, r, e);
}

/* Remembers what ran last, for the message of a fault a later wait reports. */
static void note_last(gb_device *d, const char *entry, uint32_t count) {
    char *last = cuda_dev_of(d)->last_kernel;
    if (count > 1)
        snprintf(last, sizeof cuda_dev_of(d)->last_kernel, "%s (in a batch of %u launches)",
                 entry ? entry : "?", count);
    else
        snprintf(last, sizeof cuda_dev_of(d)->last_kernel, "%s", entry ? entry : "?");
}

int gb_cuda_launch(const gb_launch *l, gb_err *e) {
    gb_device *d = l->kernel->dev;
    cuda_call c;
    prepare_call(l, 0, &c);
    if (gb_cuda_current(d, e)) return -1;
    note_last(d, c.entry, 1);
    return issue(d, &c, 0, cuda_dev_of(d)->stream, e);
}

/* Issues `count` launches in order, cycling through the prepared calls from the first. */
static int issue_all(gb_device *d, uint32_t count, cuda_batch *cb, CUstream s, gb_err *e) {
    int j = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (issue(d, &cb->calls[j], i > 0, s, e)) return -1;
        if (++j == cb->ncalls) j = 0;
    }
    return 0;
}

static void destroy(gb_device *d, cuda_batch *cb) {
    if (!cb) return;
    gb_err e = {0};
    if (!d->broken && (cb->exec || cb->graph || cb->rest_exec || cb->rest_graph)) {
        if (gb_cuda_current(d, &e) == 0) {
            if (cb->exec) CU(&e, GraphExecDestroy, (cb->exec));
            if (cb->graph) CU(&e, GraphDestroy, (cb->graph));
            if (cb->rest_exec) CU(&e, GraphExecDestroy, (cb->rest_exec));
            if (cb->rest_graph) CU(&e, GraphDestroy, (cb->rest_graph));
        }
    }
    gb_err_clear(&e); /* nothing to report to: destruction cannot fail */
    free(cb->calls);
    free(cb);
}

/* Records `count` launches into a graph by stream capture: the graph then
 * replays them with one cuGraphLaunch and none of the per-launch CPU cost. */
static int capture(gb_device *d, uint32_t count, cuda_batch *cb, CUstream s, CUgraph *graph,
                   CUgraphExec *exec, gb_err *e) {
    /* Thread-local: other threads' CUDA calls are not affected by the capture. */
    if (CU(e, StreamBeginCapture, (s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL))) return -1;
    int rc = issue_all(d, count, cb, s, e);
    /* End the capture even after a failed launch, or the stream stays in
     * capture mode; the first error is the one reported. */
    gb_err later = {0};
    CUgraph g = NULL;
    if (CU(rc ? &later : e, StreamEndCapture, (s, &g))) rc = -1;
    gb_err_clear(&later);
    *graph = g;
    if (rc) return -1;
    if (CU(e, GraphInstantiateWithFlags, (exec, g, 0))) return -1;
    /* Uploading now keeps the one-time upload out of the first timed replay. */
    if (gb_cu.GraphUpload && CU(e, GraphUpload, (*exec, s))) return -1;
    return 0;
}

/* The chunk graph and, when count is not a multiple of the chunk, the rest's. */
static int capture_batch(gb_batch *b, cuda_batch *cb, CUstream s, gb_err *e) {
    gb_device *d = b->dev;
    cb->chunk = gb_batch_chunk(b->count, b->nlaunches);
    cb->full = b->count / cb->chunk;
    uint32_t rest = b->count % cb->chunk;
    if (capture(d, cb->chunk, cb, s, &cb->graph, &cb->exec, e)) return -1;
    if (rest && capture(d, rest, cb, s, &cb->rest_graph, &cb->rest_exec, e)) return -1;
    return 0;
}

int gb_cuda_batch_prepare(gb_batch *b, gb_err *e) {
    gb_device *d = b->dev;
    cuda_batch *cb = calloc(1, sizeof *cb);
    if (cb) cb->calls = calloc((size_t)b->nlaunches, sizeof *cb->calls);
    if (!cb || !cb->calls) {
        free(cb);
        return GB_FAIL(e, "out of host memory preparing a batch");
    }
    cb->ncalls = b->nlaunches;
    for (int i = 0; i < b->nlaunches; i++) prepare_call(&b->launches[i], b->overlap, &cb->calls[i]);
    if (b->graph && (gb_cuda_current(d, e) || capture_batch(b, cb, cuda_dev_of(d)->stream, e))) {
        destroy(d, cb);
        return -1;
    }
    b->impl = cb;
    return 0;
}

int gb_cuda_batch_submit(gb_batch *b, gb_err *e) {
    cuda_batch *cb = b->impl;
    CUstream s = cuda_dev_of(b->dev)->stream;
    if (gb_cuda_current(b->dev, e)) return -1;
    note_last(b->dev, cb->calls[cb->ncalls - 1].entry, b->count);
    if (!cb->exec) return issue_all(b->dev, b->count, cb, s, e);
    for (uint32_t i = 0; i < cb->full; i++) {
        CUresult r = gb_cu.GraphLaunch(cb->exec, s);
        if (r != CUDA_SUCCESS) {
            gb_cu_fail_at(e, __FILE__, __LINE__, "cuGraphLaunch", r, "%s", "");
            return gb_cuda_failed(b->dev, r, e);
        }
    }
    if (cb->rest_exec && CU(e, GraphLaunch, (cb->rest_exec, s))) return -1;
    return 0;
}

void gb_cuda_batch_free(gb_batch *b) {
    destroy(b->dev, b->impl);
    b->impl = NULL;
}

#endif
