// The int8 tensor-core GEMV kernels' entry (gemv_<fmt>_i8.cu, one per format):
// the defines they take (lib/gpubench/gemv_cuda.lua gives them) and the kernel,
// a block of WARPS row warps x KSPLIT k slices running gb_i8_block
// (gemv_i8_common.cuh) over the format's step F. Launch: block
// 32 * WARPS * KSPLIT, grid ceil(m / (16 * WARPS)); k a multiple of 256.
#ifndef GPUBENCH_GEMV_I8_ENTRY_CUH
#define GPUBENCH_GEMV_I8_ENTRY_CUH

#include "gemv_i8_common.cuh"

#if !defined(WARPS) || !defined(KSPLIT) || !defined(PREFETCH) || !defined(GEMV_TOKENS) || !defined(I8) || I8 != 1
#error "the int8 GEMV kernels take -DI8=1, -DWARPS, -DKSPLIT, -DPREFETCH and -DGEMV_TOKENS (lib/gpubench/gemv_cuda.lua)"
#endif

#define GB_I8_KERNEL(NAME, F)                                                                                      \
    extern "C" __global__ void __launch_bounds__(32 * WARPS * KSPLIT)                                              \
        NAME(const unsigned char* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, unsigned m, \
             unsigned k)                                                                                           \
    {                                                                                                              \
        __shared__ GbI8Block<GEMV_TOKENS, WARPS, KSPLIT, F::S> sm;                                                 \
        GbI8DevCtx ctx;                                                                                            \
        gb_i8_block<F, WARPS, KSPLIT, PREFETCH, GEMV_TOKENS>(ctx, w, x, y, m, k, blockIdx.x, sm);                  \
    }

#endif
