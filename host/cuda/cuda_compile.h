/* NVRTC compilation of CUDA kernel sources to CUBIN, through the disk cache. */
#ifndef GPUBENCH_CUDA_COMPILE_H
#define GPUBENCH_CUDA_COMPILE_H

#include <stddef.h>

#include "backend.h"

/* Compiles src for target ("sm_90") with
 *   --gpu-architecture=<target> -std=c++17 -lineinfo -D<defines>
 *   -I<src->dir> -I<include dirs> -I<CUDA toolkit include> [-I<toolkit>/cccl]
 * (no --use_fast_math: kernels are checked against an FP64 reference). The
 * NVRTC program is named src->label, so the log reads "kernels/cuda/x.cu(12):
 * error: ...". The toolkit include directory (for cuda_fp16.h / cuda_bf16.h,
 * which NVRTC does not carry built in) is $GPUBENCH_CUDA_INCLUDE, else
 * $CUDA_HOME/include, else the include/ beside NVRTC's library, else
 * /usr/local/cuda/include: the first that has cuda_fp16.h.
 *
 * The cache key covers the NVRTC version, these options, the toolkit include
 * directory, the target, entry, defines, source and included files
 * (kernel_cache.h); entries have the extension "cubin". read_cache = 0 skips
 * the lookup (to replace a cached binary the driver rejected) but still stores.
 *
 * On success *cubin is malloc'd, *cache_hit says where it came from and *log
 * (when log is not NULL) holds the compiler's warnings (malloc'd) or NULL. A
 * compile error is a gb_err with NVRTC's whole log. */
int gb_cuda_compile(const gb_kernel_source *src, const char *target, int read_cache, void **cubin,
                    size_t *len, char **log, int *cache_hit, gb_err *e);

#endif
