/* CUDA device memory: allocation, transfers, fills and copies, all on the
 * device's one stream so they are ordered with launches and timers. */
#define _POSIX_C_SOURCE 200809L
#include "cuda_internal.h"

#if GPUBENCH_HAVE_CUDA_HEADERS
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int gb_cuda_buffer_alloc(gb_buffer *b, gb_err *e) {
    cuda_buf *cb = calloc(1, sizeof *cb);
    if (!cb) return GB_FAIL(e, "out of host memory allocating a buffer");
    if (gb_cuda_current(b->dev, e)) {
        free(cb);
        return -1;
    }
    CUresult r = gb_cu.MemAlloc(&cb->ptr, (size_t)b->size);
    if (r != CUDA_SUCCESS) {
        free(cb);
        return gb_cu_fail_at(e, __FILE__, __LINE__, "cuMemAlloc", r, " allocating %" PRIu64 " bytes",
                             b->size);
    }
    b->impl = cb;
    return 0;
}

void gb_cuda_buffer_free(gb_buffer *b) {
    cuda_buf *cb = b->impl;
    if (!cb) return;
    /* free cannot fail; a failure is reported on stderr so it is not lost.
     * Work still queued on the stream may use the buffer: wait for it, or the
     * device would write into freed (perhaps reallocated) memory. A broken
     * device's memory is left to the process's end. */
    gb_err e = {0};
    if (!b->dev->broken && gb_cuda_wait_stream(b->dev, "the work using a buffer before it is freed", &e) == 0)
        CU(&e, MemFree, (cb->ptr));
    if (e.msg) fprintf(stderr, "gpubench: warning: freeing a cuda buffer: %s\n", e.msg);
    gb_err_clear(&e);
    free(cb);
    b->impl = NULL;
}

/* Transfers are queued on the stream (so they follow all earlier work) and
 * then waited for, which makes them synchronous as backend.h promises. The
 * stream is waited for first too: a copy from pageable memory makes the
 * driver wait for the stream itself, without a time limit. */
int gb_cuda_upload(gb_buffer *b, uint64_t off, const void *src, uint64_t n, gb_err *e) {
    CUstream s = cuda_dev_of(b->dev)->stream;
    if (gb_cuda_wait_stream(b->dev, "earlier work before an upload", e)) return -1;
    CUresult r = gb_cu.MemcpyHtoDAsync(cuda_ptr_of(b) + off, src, (size_t)n, s);
    if (r != CUDA_SUCCESS) {
        gb_cu_fail_at(e, __FILE__, __LINE__, "cuMemcpyHtoDAsync", r, " uploading %" PRIu64 " bytes", n);
        return gb_cuda_failed(b->dev, r, e);
    }
    return gb_cuda_wait_stream(b->dev, "an upload", e);
}

int gb_cuda_download(gb_buffer *b, uint64_t off, void *dst, uint64_t n, gb_err *e) {
    CUstream s = cuda_dev_of(b->dev)->stream;
    if (gb_cuda_wait_stream(b->dev, "earlier work before a download", e)) return -1;
    CUresult r = gb_cu.MemcpyDtoHAsync(dst, cuda_ptr_of(b) + off, (size_t)n, s);
    if (r != CUDA_SUCCESS) {
        gb_cu_fail_at(e, __FILE__, __LINE__, "cuMemcpyDtoHAsync", r, " downloading %" PRIu64 " bytes", n);
        return gb_cuda_failed(b->dev, r, e);
    }
    return gb_cuda_wait_stream(b->dev, "a download", e);
}

int gb_cuda_fill32(gb_buffer *b, uint64_t off, uint64_t n, uint32_t pattern, gb_err *e) {
    if (off % 4 || n % 4)
        return GB_FAIL(e, "fill32 needs a 4-byte aligned offset and length (got offset %" PRIu64
                          ", %" PRIu64 " bytes)", off, n);
    if (gb_cuda_current(b->dev, e)) return -1;
    return CU(e, MemsetD32Async,
              (cuda_ptr_of(b) + off, pattern, (size_t)(n / 4), cuda_dev_of(b->dev)->stream));
}

int gb_cuda_copy(gb_buffer *dst, uint64_t doff, gb_buffer *src, uint64_t soff, uint64_t n,
                 gb_err *e) {
    if (gb_cuda_current(dst->dev, e)) return -1;
    return CU(e, MemcpyDtoDAsync, (cuda_ptr_of(dst) + doff, cuda_ptr_of(src) + soff, (size_t)n,
                                   cuda_dev_of(dst->dev)->stream));
}

#endif
