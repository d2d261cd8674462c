/* The vendor bf16 GEMM of the CUDA backend (gb_vendor_gemm in backend.h):
 * one cublasLtMatmul per launch, cuBLASLt loaded with dlopen on first use
 * and never needed to build or start gpubench (blaslt.c). */
#ifndef GPUBENCH_CUDA_BLASLT_H
#define GPUBENCH_CUDA_BLASLT_H

#include "cuda_internal.h"

#if GPUBENCH_HAVE_CUDA_HEADERS
/* The backend op: plans y[T,N] = x[T,K] · W[N,K]^T and fills k (backend.h). */
int gb_cuda_vendor_gemm(gb_device *d, gb_kernel *k, uint32_t n, uint32_t kdim, uint32_t t, gb_err *e);
/* Frees k->impl after the launches queued with it have finished. */
void gb_cuda_vendor_gemm_free(gb_kernel *k);
/* Queues one matmul on s; ptrs: the device addresses of W, x and y. Legal
 * inside a stream capture (the workspace is the plan's own). */
int gb_cuda_vendor_gemm_issue(gb_device *d, const void *plan, const uint64_t ptrs[3], CUstream s,
                              gb_err *e);
#endif

#endif
