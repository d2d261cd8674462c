/* CUDA devices: probing, what a device reports, opening (primary context and
 * one stream), synchronizing, and profiler ranges. */
#define _POSIX_C_SOURCE 200809L
#include "cuda_internal.h"

#if GPUBENCH_HAVE_CUDA_HEADERS
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* NVTX3 is header-only: its calls are no-ops until a tool (Nsight) injects
 * itself through NVTX_INJECTION64_PATH, so nothing more is linked. */
#include <nvtx3/nvToolsExt.h>

int gb_cuda_probe(int *count, gb_err *e) {
    if (gb_cuda_load_driver(e)) return -1;
    int n = 0;
    if (CU(e, DeviceGetCount, (&n))) return -1;
    *count = n;
    return 0;
}

static int get_device(int index, CUdevice *dev, gb_err *e) {
    int count = 0;
    if (gb_cuda_probe(&count, e)) return -1;
    if (index < 0 || index >= count)
        return GB_FAIL(e, "cuda device %d does not exist (%d device%s found)", index, count,
                       count == 1 ? "" : "s");
    return CU(e, DeviceGet, (dev, index));
}

/* Reads one attribute. An attribute the driver does not know (CUDA 13 retired
 * some) answers CUDA_ERROR_INVALID_VALUE: it is then unknown, i.e. 0, unless
 * the caller cannot do without it. */
static int attr(CUdevice dev, CUdevice_attribute a, const char *what, int required, int *out,
                gb_err *e) {
    *out = 0;
    CUresult r = gb_cu.DeviceGetAttribute(out, a, dev);
    if (r == CUDA_SUCCESS) return 0;
    *out = 0;
    if (r == CUDA_ERROR_INVALID_VALUE && !required) return 0;
    return gb_cu_fail_at(e, __FILE__, __LINE__, "cuDeviceGetAttribute", r, " reading %s", what);
}

#define ATTR(name, required, out) attr(dev, CU_DEVICE_ATTRIBUTE_##name, #name, required, out, e)

static uint32_t positive(int v) { return v > 0 ? (uint32_t)v : 0; }

int gb_cuda_device_info(int index, gb_device_info *out, gb_err *e) {
    CUdevice dev;
    if (get_device(index, &dev, e)) return -1;
    memset(out, 0, sizeof *out);
    snprintf(out->backend, sizeof out->backend, "cuda");
    out->index = index;
    if (CU(e, DeviceGetName, (out->name, (int)sizeof out->name, dev))) return -1;

    int v = gb_cuda_driver_version;
    snprintf(out->driver_version, sizeof out->driver_version, "%d.%d", v / 1000, (v % 1000) / 10);
    snprintf(out->api_version, sizeof out->api_version, "%d.%d", v / 1000, (v % 1000) / 10);

    int major, minor, sms, l2, clock_khz, bus_bits, warp, max_threads, bdim[3], gdim[3], shared,
        integrated;
    if (ATTR(COMPUTE_CAPABILITY_MAJOR, 1, &major) || ATTR(COMPUTE_CAPABILITY_MINOR, 1, &minor) ||
        ATTR(MULTIPROCESSOR_COUNT, 0, &sms) || ATTR(L2_CACHE_SIZE, 0, &l2) ||
        ATTR(MEMORY_CLOCK_RATE, 0, &clock_khz) || ATTR(GLOBAL_MEMORY_BUS_WIDTH, 0, &bus_bits) ||
        ATTR(WARP_SIZE, 0, &warp) || ATTR(MAX_THREADS_PER_BLOCK, 0, &max_threads) ||
        ATTR(MAX_BLOCK_DIM_X, 0, &bdim[0]) || ATTR(MAX_BLOCK_DIM_Y, 0, &bdim[1]) ||
        ATTR(MAX_BLOCK_DIM_Z, 0, &bdim[2]) || ATTR(MAX_GRID_DIM_X, 0, &gdim[0]) ||
        ATTR(MAX_GRID_DIM_Y, 0, &gdim[1]) || ATTR(MAX_GRID_DIM_Z, 0, &gdim[2]) ||
        ATTR(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0, &shared) || ATTR(INTEGRATED, 0, &integrated))
        return -1;
    snprintf(out->arch, sizeof out->arch, "sm_%d%d", major, minor);
    snprintf(out->device_type, sizeof out->device_type, "%s", integrated ? "integrated" : "discrete");
    out->vendor_id = 0x10de; /* NVIDIA's PCI vendor id; the driver API has no product id */
    out->sm_count = positive(sms);
    out->l2_bytes = positive(l2);
    out->memory_clock_khz = positive(clock_khz);
    out->memory_bus_bits = positive(bus_bits);
    /* DDR: two transfers per clock, bus_bits/8 bytes per transfer. */
    if (out->memory_clock_khz && out->memory_bus_bits)
        out->spec_gbs = 2.0 * out->memory_clock_khz * 1e3 * (out->memory_bus_bits / 8.0) / 1e9;
    /* The resolution cuEventElapsedTime documents for CUDA events: around half
     * a microsecond. */
    out->timestamp_period_ns = 500.0;
    out->subgroup_size = positive(warp);
    out->max_threads_per_group = positive(max_threads);
    for (int i = 0; i < 3; i++) {
        out->max_group_size[i] = positive(bdim[i]);
        out->max_groups[i] = positive(gdim[i]);
    }
    out->max_shared_bytes = positive(shared);
    out->max_push_bytes = 4096; /* kernel parameter space */
    /* Programmatic dependent launch: griddepcontrol is sm_90's, the launch
     * attribute needs cuLaunchKernelEx. */
    out->launch_overlap = major >= 9 && gb_cu.LaunchKernelEx != NULL;

    size_t total = 0;
    if (CU(e, DeviceTotalMem, (&total, dev))) return -1;
    out->memory_bytes = total;
    out->max_buffer_bytes = total; /* CUDA has no per-allocation limit below device memory */

    CUuuid uuid;
    if (CU(e, DeviceGetUuid, (&uuid, dev))) return -1;
    memcpy(out->uuid, uuid.bytes, sizeof out->uuid);
    out->has_uuid = 1;
    return 0;
}

int gb_cuda_current(gb_device *d, gb_err *e) { return CU(e, CtxSetCurrent, (cuda_dev_of(d)->ctx)); }

int gb_cuda_open(gb_device *d, int index, gb_err *e) {
    cuda_dev *cd = calloc(1, sizeof *cd);
    if (!cd) return GB_FAIL(e, "out of host memory opening cuda device %d", index);
    if (gb_cuda_device_info(index, &d->info, e) || CU(e, DeviceGet, (&cd->dev, index)) ||
        CU(e, DevicePrimaryCtxRetain, (&cd->ctx, cd->dev))) {
        free(cd);
        return -1;
    }
    /* Non-blocking: the stream never waits on the legacy default stream, which
     * another library in the process might be using. */
    if (CU(e, CtxSetCurrent, (cd->ctx)) ||
        CU(e, StreamCreate, (&cd->stream, CU_STREAM_NON_BLOCKING))) {
        gb_err ignore = {0};
        CU(&ignore, DevicePrimaryCtxRelease, (cd->dev));
        gb_err_clear(&ignore);
        free(cd);
        return -1;
    }
    d->impl = cd;
    return 0;
}

/* Errors after which the context can do nothing more: every later call
 * returns the same error (CUDA calls them sticky). */
static int is_sticky(CUresult r) {
    switch (r) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        return 1;
    default:
        return 0;
    }
}

int gb_cuda_failed(gb_device *d, CUresult r, gb_err *e) {
    if (is_sticky(r)) gb_device_break(d, e && e->msg ? e->msg : gb_cu_error_name(r));
    return -1;
}

/* The polling loop of the two waits: query until it stops answering
 * CUDA_ERROR_NOT_READY, yielding for the first 2 ms and then sleeping 20 us
 * between queries, so a short wait costs little latency and a long one
 * little CPU. */
static int wait_until(gb_device *d, CUstream s, CUevent ev, const char *call, const char *what,
                      gb_err *e) {
    double limit;
    if (gb_wait_limit(&limit, e)) return -1;
    double t0 = gb_clock_seconds();
    for (;;) {
        CUresult r = ev ? gb_cu.EventQuery(ev) : gb_cu.StreamQuery(s);
        if (r == CUDA_SUCCESS) return 0;
        if (r != CUDA_ERROR_NOT_READY) {
            const char *last = cuda_dev_of(d)->last_kernel;
            gb_cu_fail_at(e, __FILE__, __LINE__, call, r, " waiting for %s%s%s", what,
                          last[0] ? "; the kernel launched last was " : "", last);
            return gb_cuda_failed(d, r, e);
        }
        double spent = gb_clock_seconds() - t0;
        if (limit > 0 && spent > limit) return gb_wait_timed_out(d, call, what, limit, e);
        if (spent < 0.002) {
            sched_yield();
        } else {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
}

int gb_cuda_wait_stream(gb_device *d, const char *what, gb_err *e) {
    if (gb_cuda_current(d, e)) return -1;
    return wait_until(d, cuda_dev_of(d)->stream, NULL, "cuStreamQuery", what, e);
}

int gb_cuda_wait_event(gb_device *d, CUevent ev, const char *what, gb_err *e) {
    if (gb_cuda_current(d, e)) return -1;
    return wait_until(d, NULL, ev, "cuEventQuery", what, e);
}

void gb_cuda_close(gb_device *d) {
    cuda_dev *cd = cuda_dev_of(d);
    if (!cd) return;
    /* close cannot fail: whatever goes wrong here is reported on stderr and
     * the context released anyway. A broken device's work may never finish
     * (or its context is dead): its driver objects are left to the process's
     * end, which frees them. */
    gb_err e = {0};
    gb_cuda_release(d, &e); /* a stream left held would never finish */
    if (!d->broken &&
        gb_cuda_wait_stream(d, "the device's work to finish before it closes", &e) == 0 &&
        CU(&e, CtxSetCurrent, (cd->ctx)) == 0)
        CU(&e, StreamDestroy, (cd->stream));
    gb_cuda_hold_free(d);
    if (e.msg) fprintf(stderr, "gpubench: warning: closing cuda device %d: %s\n", d->info.index, e.msg);
    gb_err_clear(&e);
    if (!d->broken) CU(&e, DevicePrimaryCtxRelease, (cd->dev));
    gb_err_clear(&e);
    free(cd);
    d->impl = NULL;
}

int gb_cuda_sync(gb_device *d, gb_err *e) {
    /* Our stream first, within the time limit; then the whole context, since a
     * library called from a script (a vendor BLAS) may have queued work on
     * streams of its own. */
    if (gb_cuda_wait_stream(d, "the device (sync)", e)) return -1;
    CUresult r = gb_cu.CtxSynchronize();
    if (r == CUDA_SUCCESS) return 0;
    gb_cu_fail_at(e, __FILE__, __LINE__, "cuCtxSynchronize", r, "%s", "");
    return gb_cuda_failed(d, r, e);
}

int gb_cuda_profiler_range(gb_device *d, const char *name, int begin, gb_err *e) {
    if (!gb_cu.ProfilerStart || !gb_cu.ProfilerStop)
        return GB_FAIL(e, "profiler range: this driver has no cuProfilerStart/cuProfilerStop");
    if (gb_cuda_current(d, e)) return -1;
    if (begin) {
        nvtxRangePushA(name && *name ? name : "gpubench");
        if (CU(e, ProfilerStart, ()) == 0) return 0;
        nvtxRangePop(); /* keep the NVTX stack balanced when the range never opened */
        return -1;
    }
    int rc = CU(e, ProfilerStop, ());
    nvtxRangePop();
    return rc;
}

#endif
