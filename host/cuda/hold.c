/* The CUDA stream hold and the clean flush's read kernel (backend.h).
 *
 * Hold: cuStreamWaitValue32 makes the stream wait, on the device, until a
 * pinned host word reaches a value; release writes it. Each hold waits for
 * the next value of a counter, so a hold whose wait has not yet run when
 * the next one is queued is released by that one's release, never left
 * waiting. nvbench holds its stream with a spinning kernel for the same
 * reason: everything a cold sample queues meanwhile then runs back to back. */
#define _POSIX_C_SOURCE 200809L
#include "cuda_internal.h"

#if GPUBENCH_HAVE_CUDA_HEADERS

const char gb_cuda_flush_source[] =
    "extern \"C\" __global__ void gpubench_flush_read(const uint4 *__restrict__ src,\n"
    "        unsigned *__restrict__ out, unsigned n16, unsigned sentinel) {\n"
    "    unsigned long long n = n16, stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    unsigned acc = 0;\n"
    "    unsigned long long i = tid;\n"
    "    for (; i + 3 * stride < n; i += 4 * stride) {\n"
    "        uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];\n"
    "        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;\n"
    "    }\n"
    "    for (; i < n; i += stride) { uint4 a = src[i]; acc ^= a.x ^ a.y ^ a.z ^ a.w; }\n"
    "    if (acc == sentinel) out[tid] = acc;\n"
    "}\n";

static int hold_word(gb_device *d, gb_err *e) {
    cuda_dev *cd = cuda_dev_of(d);
    if (cd->hold_word) return 0;
    void *p = NULL;
    if (gb_cuda_current(d, e) || CU(e, MemAllocHost, (&p, sizeof(uint32_t)))) return -1;
    if (CU(e, MemHostGetDevicePointer, (&cd->hold_dptr, p, 0))) {
        gb_err ignore = {0};
        CU(&ignore, MemFreeHost, (p));
        gb_err_clear(&ignore);
        return -1;
    }
    cd->hold_word = p;
    *cd->hold_word = 0;
    cd->hold_seq = 0;
    return 0;
}

int gb_cuda_hold(gb_device *d, gb_err *e) {
    if (!gb_cu.StreamWaitValue32)
        return GB_FAIL(e, "stream hold: this driver has no cuStreamWaitValue32");
    cuda_dev *cd = cuda_dev_of(d);
    if (hold_word(d, e)) return -1;
    cd->hold_seq++;
    CUresult r = gb_cu.StreamWaitValue32(cd->stream, cd->hold_dptr, cd->hold_seq, CU_STREAM_WAIT_VALUE_GEQ);
    if (r == CUDA_SUCCESS) return 0;
    cd->hold_seq--;
    gb_cu_fail_at(e, __FILE__, __LINE__, "cuStreamWaitValue32", r, " holding the stream");
    return gb_cuda_failed(d, r, e);
}

int gb_cuda_release(gb_device *d, gb_err *e) {
    cuda_dev *cd = cuda_dev_of(d);
    if (!cd->hold_word) return 0;
    __atomic_store_n(cd->hold_word, cd->hold_seq, __ATOMIC_RELEASE);
    return 0;
}

void gb_cuda_hold_free(gb_device *d) {
    cuda_dev *cd = cuda_dev_of(d);
    if (!cd || !cd->hold_word) return;
    /* Whatever might still wait on it is released first. */
    __atomic_store_n(cd->hold_word, cd->hold_seq, __ATOMIC_RELEASE);
    if (!d->broken) {
        gb_err e = {0};
        CU(&e, MemFreeHost, ((void *)cd->hold_word));
        gb_err_clear(&e);
    }
    cd->hold_word = NULL;
}

#endif
