/* gb_cuda_backend: the CUDA ops table. The work lives in the other .c
 * files, one job each (api loading, devices, memory, compile, kernels,
 * launches, timers). */
#include "cuda_internal.h"
#include "cuda_blaslt.h"

#if GPUBENCH_HAVE_CUDA_HEADERS

const gb_backend_ops gb_cuda_backend = {
    .name = "cuda",
    .probe = gb_cuda_probe,
    .device_info = gb_cuda_device_info,
    .open = gb_cuda_open,
    .close = gb_cuda_close,
    .buffer_alloc = gb_cuda_buffer_alloc,
    .buffer_free = gb_cuda_buffer_free,
    .upload = gb_cuda_upload,
    .download = gb_cuda_download,
    .fill32 = gb_cuda_fill32,
    .copy = gb_cuda_copy,
    .kernel_load = gb_cuda_kernel_load,
    .kernel_stats = gb_cuda_kernel_stats,
    .kernel_free = gb_cuda_kernel_free,
    .compile_only = gb_cuda_compile_only,
    .launch = gb_cuda_launch,
    .batch_prepare = gb_cuda_batch_prepare,
    .batch_submit = gb_cuda_batch_submit,
    .batch_free = gb_cuda_batch_free,
    .timer_create = gb_cuda_timer_create,
    .timer_record = gb_cuda_timer_record,
    .timer_elapsed_ms = gb_cuda_timer_elapsed_ms,
    .timer_free = gb_cuda_timer_free,
    .profiler_range = gb_cuda_profiler_range,
    .sync = gb_cuda_sync,
    .flush_source = gb_cuda_flush_source,
    .flush_entry = "gpubench_flush_read",
    .hold = gb_cuda_hold,
    .release = gb_cuda_release,
    .clocks = gb_cuda_clocks,
    .vendor_gemm = gb_cuda_vendor_gemm,
};

#else /* built without cuda.h / nvrtc.h */

/* Every entry a caller can reach without an open device says why CUDA is
 * missing. The others are left NULL: no CUDA device can ever be opened, so no
 * buffer, kernel, timer or batch of this backend can exist to reach them. */
static int not_built_probe(int *count, gb_err *e) {
    *count = 0;
    return GB_FAIL(e, GB_CUDA_NOT_BUILT);
}

static int not_built_info(int index, gb_device_info *out, gb_err *e) {
    return GB_FAIL(e, GB_CUDA_NOT_BUILT);
}

static int not_built_open(gb_device *d, int index, gb_err *e) { return GB_FAIL(e, GB_CUDA_NOT_BUILT); }

static int not_built_compile(const gb_kernel_source *src, const char *target, gb_kind *params,
                             int *nparams, gb_kernel_traits *traits, char **log, gb_err *e) {
    return GB_FAIL(e, GB_CUDA_NOT_BUILT);
}

const gb_backend_ops gb_cuda_backend = {
    .name = "cuda",
    .probe = not_built_probe,
    .device_info = not_built_info,
    .open = not_built_open,
    .compile_only = not_built_compile,
    .clocks = gb_cuda_clocks,
};

#endif
