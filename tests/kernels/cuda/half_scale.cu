// gpubench-compile: entry=half_scale defines=SCALE=2
// gpubench-compile: entry=half_scale defines=SCALE=0.5f
// Test kernel: needs the CUDA toolkit headers (cuda_fp16.h, cuda_bf16.h),
// which NVRTC does not carry built in, and a define. y[i] = x[i] * SCALE,
// read as fp16 and written as bf16 (tests/c/test_cuda_backend.c).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#ifndef SCALE
#error SCALE must be defined
#endif

extern "C" __global__ void half_scale(const __half* __restrict__ x, __nv_bfloat16* __restrict__ y,
                                      unsigned n)
{
    const unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = __float2bfloat16(__half2float(x[i]) * (float)(SCALE));
}
