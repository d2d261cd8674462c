/* Loading the CUDA driver and NVRTC with dlopen, and the error formatting of
 * their result codes (see cuda_api.h). */
#define _GNU_SOURCE
#include "cuda_api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if GPUBENCH_HAVE_CUDA_HEADERS
#include <dlfcn.h>
#include <stddef.h>

gb_cu_api gb_cu;
gb_nvrtc_api gb_nvrtc;
int gb_cuda_driver_version;
int gb_nvrtc_major, gb_nvrtc_minor;
char gb_nvrtc_path[512];

/* A symbol and the names it may carry, newest ABI first: a CUDA 12.0-12.7
 * driver has only cuEventElapsedTime, 12.8+ and 13 add cuEventElapsedTime_v2. */
typedef struct sym {
    size_t offset; /* of the member in the table */
    int required;
    const char *names[3];
} sym;

#define CU_SYM(field, req, ...) {offsetof(gb_cu_api, field), req, {__VA_ARGS__}}
static const sym cu_syms[] = {
    CU_SYM(GetErrorName, 1, "cuGetErrorName"),
    CU_SYM(GetErrorString, 1, "cuGetErrorString"),
    CU_SYM(Init, 1, "cuInit"),
    CU_SYM(DriverGetVersion, 1, "cuDriverGetVersion"),
    CU_SYM(DeviceGetCount, 1, "cuDeviceGetCount"),
    CU_SYM(DeviceGet, 1, "cuDeviceGet"),
    CU_SYM(DeviceGetName, 1, "cuDeviceGetName"),
    CU_SYM(DeviceGetAttribute, 1, "cuDeviceGetAttribute"),
    CU_SYM(DeviceTotalMem, 1, "cuDeviceTotalMem_v2"),
    CU_SYM(DeviceGetUuid, 1, "cuDeviceGetUuid_v2", "cuDeviceGetUuid"),
    CU_SYM(DevicePrimaryCtxRetain, 1, "cuDevicePrimaryCtxRetain"),
    CU_SYM(DevicePrimaryCtxRelease, 1, "cuDevicePrimaryCtxRelease_v2"),
    CU_SYM(CtxSetCurrent, 1, "cuCtxSetCurrent"),
    CU_SYM(CtxSynchronize, 1, "cuCtxSynchronize"),
    CU_SYM(StreamCreate, 1, "cuStreamCreate"),
    CU_SYM(StreamDestroy, 1, "cuStreamDestroy_v2"),
    CU_SYM(StreamSynchronize, 1, "cuStreamSynchronize"),
    CU_SYM(StreamQuery, 1, "cuStreamQuery"),
    CU_SYM(MemAlloc, 1, "cuMemAlloc_v2"),
    CU_SYM(MemFree, 1, "cuMemFree_v2"),
    CU_SYM(MemcpyHtoDAsync, 1, "cuMemcpyHtoDAsync_v2"),
    CU_SYM(MemcpyDtoHAsync, 1, "cuMemcpyDtoHAsync_v2"),
    CU_SYM(MemcpyDtoDAsync, 1, "cuMemcpyDtoDAsync_v2"),
    CU_SYM(MemsetD32Async, 1, "cuMemsetD32Async"),
    CU_SYM(ModuleLoadData, 1, "cuModuleLoadData"),
    CU_SYM(ModuleUnload, 1, "cuModuleUnload"),
    CU_SYM(ModuleGetFunction, 1, "cuModuleGetFunction"),
    CU_SYM(LaunchKernel, 1, "cuLaunchKernel"),
    CU_SYM(FuncSetAttribute, 1, "cuFuncSetAttribute"),
    CU_SYM(FuncGetAttribute, 1, "cuFuncGetAttribute"),
    CU_SYM(OccupancyMaxActiveBlocksPerMultiprocessor, 1, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
    /* The unversioned cuStreamBeginCapture is the CUDA 10.0 form without a mode. */
    CU_SYM(StreamBeginCapture, 1, "cuStreamBeginCapture_v2"),
    CU_SYM(StreamEndCapture, 1, "cuStreamEndCapture"),
    /* Not cuGraphInstantiate: its CUDA 11 ABI took an error node and a log buffer. */
    CU_SYM(GraphInstantiateWithFlags, 1, "cuGraphInstantiateWithFlags"),
    CU_SYM(GraphLaunch, 1, "cuGraphLaunch"),
    CU_SYM(GraphExecDestroy, 1, "cuGraphExecDestroy"),
    CU_SYM(GraphDestroy, 1, "cuGraphDestroy"),
    CU_SYM(EventCreate, 1, "cuEventCreate"),
    CU_SYM(EventDestroy, 1, "cuEventDestroy_v2"),
    CU_SYM(EventRecord, 1, "cuEventRecord"),
    CU_SYM(EventSynchronize, 1, "cuEventSynchronize"),
    CU_SYM(EventQuery, 1, "cuEventQuery"),
    CU_SYM(EventElapsedTime, 1, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    /* Optional: a driver without them still runs everything but profiler ranges. */
    CU_SYM(MemAllocHost, 1, "cuMemAllocHost_v2"),
    CU_SYM(MemFreeHost, 1, "cuMemFreeHost"),
    CU_SYM(MemHostGetDevicePointer, 1, "cuMemHostGetDevicePointer_v2"),
    CU_SYM(ProfilerStart, 0, "cuProfilerStart"),
    CU_SYM(StreamWaitValue32, 0, "cuStreamWaitValue32_v2"),
    CU_SYM(ProfilerStop, 0, "cuProfilerStop"),
    CU_SYM(FuncGetParamInfo, 0, "cuFuncGetParamInfo"),
    CU_SYM(GraphUpload, 0, "cuGraphUpload"),
    CU_SYM(LaunchKernelEx, 0, "cuLaunchKernelEx"),
};

#define NVRTC_SYM(field, req, ...) {offsetof(gb_nvrtc_api, field), req, {__VA_ARGS__}}
static const sym nvrtc_syms[] = {
    NVRTC_SYM(GetErrorString, 1, "nvrtcGetErrorString"),
    NVRTC_SYM(Version, 1, "nvrtcVersion"),
    NVRTC_SYM(CreateProgram, 1, "nvrtcCreateProgram"),
    NVRTC_SYM(DestroyProgram, 1, "nvrtcDestroyProgram"),
    NVRTC_SYM(CompileProgram, 1, "nvrtcCompileProgram"),
    NVRTC_SYM(GetProgramLogSize, 1, "nvrtcGetProgramLogSize"),
    NVRTC_SYM(GetProgramLog, 1, "nvrtcGetProgramLog"),
    NVRTC_SYM(GetCUBINSize, 1, "nvrtcGetCUBINSize"),
    NVRTC_SYM(GetCUBIN, 1, "nvrtcGetCUBIN"),
    NVRTC_SYM(GetNumSupportedArchs, 0, "nvrtcGetNumSupportedArchs"),
    NVRTC_SYM(GetSupportedArchs, 0, "nvrtcGetSupportedArchs"),
};

/* Fills a table from lib; returns the first missing required name, or NULL. */
static const char *resolve(void *lib, void *table, const sym *syms, size_t n) {
    for (size_t i = 0; i < n; i++) {
        void *p = NULL;
        for (int j = 0; j < 3 && syms[i].names[j] && !p; j++) p = dlsym(lib, syms[i].names[j]);
        if (!p && syms[i].required) return syms[i].names[0];
        /* POSIX guarantees that a dlsym result converts to a function pointer. */
        memcpy((char *)table + syms[i].offset, &p, sizeof p);
    }
    return NULL;
}

/* The outcome of a load is kept so that every later call reports the same
 * reason without retrying (cuInit, for one, fails the same way every time). */
typedef struct load_state {
    int done;   /* 0 not tried, 1 loaded, -1 failed */
    char *why;  /* the full message of the failure */
} load_state;

static int replay(load_state *s, gb_err *e) {
    if (s->done > 0) return 0;
    free(e->msg);
    e->msg = strdup(s->why ? s->why : "CUDA library failed to load");
    return -1;
}

static int remember_failure(load_state *s, gb_err *e) {
    s->done = -1;
    s->why = strdup(e->msg ? e->msg : "CUDA library failed to load");
    return -1;
}

static load_state driver_state, nvrtc_state;

int gb_cuda_load_driver(gb_err *e) {
    if (driver_state.done) return replay(&driver_state, e);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        GB_FAIL(e, "%s", why ? why : "libcuda.so.1: cannot be loaded");
        return remember_failure(&driver_state, e);
    }
    const char *missing = resolve(lib, &gb_cu, cu_syms, sizeof cu_syms / sizeof cu_syms[0]);
    if (missing) {
        GB_FAIL(e, "libcuda.so.1 has no %s: the NVIDIA driver is too old (gpubench needs a CUDA 12 "
                   "or newer driver)", missing);
        return remember_failure(&driver_state, e);
    }
    if (CU(e, Init, (0)) || CU(e, DriverGetVersion, (&gb_cuda_driver_version)))
        return remember_failure(&driver_state, e);
    /* The library stays loaded for the life of the process: the function
     * table points into it. */
    driver_state.done = 1;
    return 0;
}

int gb_cuda_load_nvrtc(gb_err *e) {
    if (nvrtc_state.done) return replay(&nvrtc_state, e);
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    const char *dirs[] = {getenv("CUDA_HOME"), "/usr/local/cuda/lib64"};
    char first_error[1024] = "";
    char tried[1024] = "";
    void *lib = NULL;
    for (int d = -1; d < 2 && !lib; d++) { /* d = -1: the loader's own search path */
        if (d >= 0 && (!dirs[d] || !*dirs[d])) continue;
        for (int i = 0; i < 3 && !lib; i++) {
            char path[700];
            if (d < 0)
                snprintf(path, sizeof path, "%s", names[i]);
            else
                snprintf(path, sizeof path, "%s%s%s", dirs[d], d == 0 ? "/lib64/" : "/", names[i]);
            lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (lib) break;
            const char *why = dlerror();
            if (!first_error[0]) snprintf(first_error, sizeof first_error, "%s", why ? why : path);
            size_t used = strlen(tried);
            snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", path);
        }
    }
    if (!lib) {
        GB_FAIL(e, "cannot load NVRTC: %s (tried %s; set LD_LIBRARY_PATH or CUDA_HOME)",
                first_error, tried);
        return remember_failure(&nvrtc_state, e);
    }
    const char *missing = resolve(lib, &gb_nvrtc, nvrtc_syms, sizeof nvrtc_syms / sizeof nvrtc_syms[0]);
    if (missing) {
        GB_FAIL(e, "NVRTC has no %s (gpubench needs NVRTC from CUDA 12 or newer)", missing);
        return remember_failure(&nvrtc_state, e);
    }
    if (NVRTC(e, Version, (&gb_nvrtc_major, &gb_nvrtc_minor))) return remember_failure(&nvrtc_state, e);
    /* Where NVRTC lives tells where its toolkit's headers are (compile.c). */
    Dl_info info;
    if (dladdr((void *)gb_nvrtc.Version, &info) && info.dli_fname)
        snprintf(gb_nvrtc_path, sizeof gb_nvrtc_path, "%s", info.dli_fname);
    nvrtc_state.done = 1;
    return 0;
}

/* ------------------------------------------------------------ error codes */

/* Names for the codes a broken installation produces, for when the driver
 * cannot name them itself: the link-time libcuda.so.1 that a toolkit ships
 * (found where no driver is installed) answers every call, cuGetErrorName
 * included, with CUDA_ERROR_STUB_LIBRARY. */
static const struct {
    CUresult code;
    const char *name, *description;
} known_errors[] = {
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY",
     "libcuda.so.1 is the CUDA toolkit's link-time library, not an NVIDIA driver"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "the user-mode driver does not match the kernel driver"},
};

static int known_error(CUresult r) {
    for (size_t i = 0; i < sizeof known_errors / sizeof known_errors[0]; i++)
        if (known_errors[i].code == r) return (int)i;
    return -1;
}

const char *gb_cu_error_name(CUresult r) {
    static char buf[32];
    const char *name = NULL;
    if (gb_cu.GetErrorName && gb_cu.GetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
    int k = known_error(r);
    if (k >= 0) return known_errors[k].name;
    snprintf(buf, sizeof buf, "CUresult %d", (int)r);
    return buf;
}

static int fail_with(gb_err *e, const char *file, int line, const char *call, const char *name,
                     const char *desc, const char *suffix_fmt, va_list ap) {
    char suffix[1024];
    vsnprintf(suffix, sizeof suffix, suffix_fmt, ap);
    return gb_fail_at(e, file, line, "%s failed: %s (%s)%s", call, name, desc, suffix);
}

int gb_cu_fail_at(gb_err *e, const char *file, int line, const char *call, CUresult r,
                  const char *suffix_fmt, ...) {
    const char *desc = NULL;
    if (!gb_cu.GetErrorString || gb_cu.GetErrorString(r, &desc) != CUDA_SUCCESS || !desc) {
        int k = known_error(r);
        desc = k >= 0 ? known_errors[k].description : "no description from the driver";
    }
    va_list ap;
    va_start(ap, suffix_fmt);
    int rc = fail_with(e, file, line, call, gb_cu_error_name(r), desc, suffix_fmt, ap);
    va_end(ap);
    return rc;
}

/* nvrtcGetErrorString returns only the symbolic name; these say what it means. */
static const char *nvrtc_description(nvrtcResult r) {
    switch (r) {
    case NVRTC_ERROR_OUT_OF_MEMORY: return "out of host memory";
    case NVRTC_ERROR_PROGRAM_CREATION_FAILURE: return "the program could not be created";
    case NVRTC_ERROR_INVALID_INPUT: return "invalid input";
    case NVRTC_ERROR_INVALID_PROGRAM: return "invalid program handle";
    case NVRTC_ERROR_INVALID_OPTION: return "an option was not accepted; see the log";
    case NVRTC_ERROR_COMPILATION: return "compilation failed";
    case NVRTC_ERROR_BUILTIN_OPERATION_FAILURE: return "the builtin headers could not be loaded";
    case NVRTC_ERROR_INTERNAL_ERROR: return "internal compiler error";
    default: return "see the NVRTC documentation";
    }
}

int gb_nvrtc_fail_at(gb_err *e, const char *file, int line, const char *call, nvrtcResult r,
                     const char *suffix_fmt, ...) {
    char fallback[32];
    const char *name = gb_nvrtc.GetErrorString ? gb_nvrtc.GetErrorString(r) : NULL;
    if (!name) {
        snprintf(fallback, sizeof fallback, "nvrtcResult %d", (int)r);
        name = fallback;
    }
    va_list ap;
    va_start(ap, suffix_fmt);
    int rc = fail_with(e, file, line, call, name, nvrtc_description(r), suffix_fmt, ap);
    va_end(ap);
    return rc;
}

#else /* no CUDA headers at build time */

int gb_cuda_load_driver(gb_err *e) { return GB_FAIL(e, GB_CUDA_NOT_BUILT); }
int gb_cuda_load_nvrtc(gb_err *e) { return GB_FAIL(e, GB_CUDA_NOT_BUILT); }

#endif
