/* The CUDA backend beyond its ops table (gb_cuda_backend in backend.h): the
 * library loaders, for callers that need to know which part of CUDA is
 * present (a compile-only test needs NVRTC but no driver). Free of CUDA
 * types, so any file may include it. */
#ifndef GPUBENCH_CUDA_BACKEND_H
#define GPUBENCH_CUDA_BACKEND_H

#include "backend.h"

#define GB_CUDA_NOT_BUILT "CUDA backend not built (cuda.h not found at build time)"

/* Load the driver (and cuInit(0)) / NVRTC once; later calls return the first
 * outcome. 0 on success, -1 with the reason (e.g. "libcuda.so.1: cannot open
 * shared object file: No such file or directory"). Available in every build:
 * without CUDA headers they fail with GB_CUDA_NOT_BUILT. */
int gb_cuda_load_driver(gb_err *e);
int gb_cuda_load_nvrtc(gb_err *e);
/* cuBLASLt, the vendor GEMM's library (blaslt.c), loaded the same way: on
 * success *path names the file and *version is cublasLtGetVersion(). */
int gb_cuda_load_blaslt(const char **path, uint64_t *version, gb_err *e);

/* The clocks of the NVIDIA GPU info describes, through NVML (nvml.c);
 * available in every build, since NVML needs no CUDA header. */
int gb_cuda_clocks(const gb_device_info *info, gb_clocks *out, gb_err *e);

#endif
