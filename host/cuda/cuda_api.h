/* The CUDA driver API and NVRTC, loaded at run time with dlopen.
 *
 * cuda.h and nvrtc.h are included for their types only: nothing links against
 * CUDA, so one gpubench binary starts on a machine without a driver (and can
 * still compile with NVRTC alone) or without CUDA at all. Each function is
 * reached through a table filled by dlsym; versioned driver symbols
 * (cuMemAlloc_v2, cuEventElapsedTime_v2, ...) are named explicitly so the
 * binding is the same whichever cuda.h the binary was built with.
 *
 * Every call goes through CU() or NVRTC(), which turn a failure into
 * "<call> failed: <NAME> (<description>) [file:line]" in a gb_err. */
#ifndef GPUBENCH_CUDA_API_H
#define GPUBENCH_CUDA_API_H

#include "backend.h"
#include "cuda_backend.h"

#if GPUBENCH_HAVE_CUDA_HEADERS
#include <cuda.h>
#include <cudaProfiler.h>
#include <nvrtc.h>

/* Driver entry points. The member types come from the prototypes in cuda.h
 * (whose macros already map cuMemAlloc to cuMemAlloc_v2 and so on), so a
 * signature cannot be mistyped here. */
typedef struct gb_cu_api {
    __typeof__(&cuGetErrorName) GetErrorName;
    __typeof__(&cuGetErrorString) GetErrorString;
    __typeof__(&cuInit) Init;
    __typeof__(&cuDriverGetVersion) DriverGetVersion;
    __typeof__(&cuDeviceGetCount) DeviceGetCount;
    __typeof__(&cuDeviceGet) DeviceGet;
    __typeof__(&cuDeviceGetName) DeviceGetName;
    __typeof__(&cuDeviceGetAttribute) DeviceGetAttribute;
    __typeof__(&cuDeviceTotalMem) DeviceTotalMem;
    __typeof__(&cuDeviceGetUuid) DeviceGetUuid;
    __typeof__(&cuDevicePrimaryCtxRetain) DevicePrimaryCtxRetain;
    __typeof__(&cuDevicePrimaryCtxRelease) DevicePrimaryCtxRelease;
    __typeof__(&cuCtxSetCurrent) CtxSetCurrent;
    __typeof__(&cuCtxSynchronize) CtxSynchronize;
    __typeof__(&cuStreamCreate) StreamCreate;
    __typeof__(&cuStreamDestroy) StreamDestroy;
    __typeof__(&cuStreamSynchronize) StreamSynchronize;
    __typeof__(&cuStreamQuery) StreamQuery;
    __typeof__(&cuMemAlloc) MemAlloc;
    __typeof__(&cuMemFree) MemFree;
    __typeof__(&cuMemcpyHtoDAsync) MemcpyHtoDAsync;
    __typeof__(&cuMemcpyDtoHAsync) MemcpyDtoHAsync;
    __typeof__(&cuMemcpyDtoDAsync) MemcpyDtoDAsync;
    __typeof__(&cuMemsetD32Async) MemsetD32Async;
    __typeof__(&cuModuleLoadData) ModuleLoadData;
    __typeof__(&cuModuleUnload) ModuleUnload;
    __typeof__(&cuModuleGetFunction) ModuleGetFunction;
    __typeof__(&cuLaunchKernel) LaunchKernel;
    __typeof__(&cuFuncSetAttribute) FuncSetAttribute;
    __typeof__(&cuFuncGetAttribute) FuncGetAttribute;
    __typeof__(&cuOccupancyMaxActiveBlocksPerMultiprocessor) OccupancyMaxActiveBlocksPerMultiprocessor;
    __typeof__(&cuStreamBeginCapture) StreamBeginCapture;
    __typeof__(&cuStreamEndCapture) StreamEndCapture;
    __typeof__(&cuGraphInstantiateWithFlags) GraphInstantiateWithFlags;
    __typeof__(&cuGraphLaunch) GraphLaunch;
    __typeof__(&cuGraphExecDestroy) GraphExecDestroy;
    __typeof__(&cuGraphDestroy) GraphDestroy;
    __typeof__(&cuEventCreate) EventCreate;
    __typeof__(&cuEventDestroy) EventDestroy;
    __typeof__(&cuEventRecord) EventRecord;
    __typeof__(&cuEventSynchronize) EventSynchronize;
    __typeof__(&cuEventQuery) EventQuery;
    __typeof__(&cuEventElapsedTime) EventElapsedTime;
    __typeof__(&cuMemAllocHost) MemAllocHost;
    __typeof__(&cuMemFreeHost) MemFreeHost;
    __typeof__(&cuMemHostGetDevicePointer) MemHostGetDevicePointer;
    /* Optional (NULL when the driver lacks them). */
    __typeof__(&cuStreamWaitValue32) StreamWaitValue32;
    __typeof__(&cuProfilerStart) ProfilerStart;
    __typeof__(&cuProfilerStop) ProfilerStop;
    __typeof__(&cuFuncGetParamInfo) FuncGetParamInfo; /* CUDA 12.4+ */
    __typeof__(&cuGraphUpload) GraphUpload;           /* CUDA 11.1+ */
    __typeof__(&cuLaunchKernelEx) LaunchKernelEx;     /* CUDA 12.0+: launch overlap */
} gb_cu_api;

typedef struct gb_nvrtc_api {
    __typeof__(&nvrtcGetErrorString) GetErrorString;
    __typeof__(&nvrtcVersion) Version;
    __typeof__(&nvrtcCreateProgram) CreateProgram;
    __typeof__(&nvrtcDestroyProgram) DestroyProgram;
    __typeof__(&nvrtcCompileProgram) CompileProgram;
    __typeof__(&nvrtcGetProgramLogSize) GetProgramLogSize;
    __typeof__(&nvrtcGetProgramLog) GetProgramLog;
    __typeof__(&nvrtcGetCUBINSize) GetCUBINSize;
    __typeof__(&nvrtcGetCUBIN) GetCUBIN;
    /* Optional: lets a wrong target get a message listing what is supported. */
    __typeof__(&nvrtcGetNumSupportedArchs) GetNumSupportedArchs;
    __typeof__(&nvrtcGetSupportedArchs) GetSupportedArchs;
} gb_nvrtc_api;

extern gb_cu_api gb_cu;       /* valid after gb_cuda_load_driver() succeeded */
extern gb_nvrtc_api gb_nvrtc; /* valid after gb_cuda_load_nvrtc() succeeded */
extern int gb_cuda_driver_version; /* cuDriverGetVersion, e.g. 13000 */
extern int gb_nvrtc_major, gb_nvrtc_minor;
extern char gb_nvrtc_path[512];    /* the library NVRTC was loaded from */

/* Formats "<call> failed: <NAME> (<description>)<suffix> [file:line]"; -1.
 * The suffix (printf format, may be "") adds context such as the entry name. */
int gb_cu_fail_at(gb_err *e, const char *file, int line, const char *call, CUresult r,
                  const char *suffix_fmt, ...) __attribute__((format(printf, 6, 7)));
int gb_nvrtc_fail_at(gb_err *e, const char *file, int line, const char *call, nvrtcResult r,
                     const char *suffix_fmt, ...) __attribute__((format(printf, 6, 7)));
const char *gb_cu_error_name(CUresult r); /* "CUDA_ERROR_NO_DEVICE", or "CUresult 999" */

/* CU(e, MemAlloc, (&p, n)) calls gb_cu.MemAlloc(&p, n) and yields 0, or -1
 * with e set to "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)". */
#define CU(e, fn, args)                                                                           \
    gb_cu_check_((gb_cu.fn args), (e), __FILE__, __LINE__, "cu" #fn)
#define NVRTC(e, fn, args)                                                                        \
    gb_nvrtc_check_((gb_nvrtc.fn args), (e), __FILE__, __LINE__, "nvrtc" #fn)

static inline int gb_cu_check_(CUresult r, gb_err *e, const char *file, int line, const char *call) {
    return r == CUDA_SUCCESS ? 0 : gb_cu_fail_at(e, file, line, call, r, "%s", "");
}
static inline int gb_nvrtc_check_(nvrtcResult r, gb_err *e, const char *file, int line,
                                  const char *call) {
    return r == NVRTC_SUCCESS ? 0 : gb_nvrtc_fail_at(e, file, line, call, r, "%s", "");
}
#endif /* GPUBENCH_HAVE_CUDA_HEADERS */
#endif
