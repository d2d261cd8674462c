// One output of linear_reduce.cu: the slices' fp32 sums of element i added
// in slice order, rounded once to bf16. __host__ __device__, so that the
// wgmma route's host emulation (tests/cuda_host/linear_wgmma_emulate.cu)
// reduces its slices with the same code.
#ifndef GPUBENCH_LINEAR_REDUCE_CUH
#define GPUBENCH_LINEAR_REDUCE_CUH

#include "linear_base.cuh"

GB_HD void ln_reduce_one(const float* part, unsigned short* y, gb_u64 total, gb_u64 i, unsigned slices)
{
    float s = part[i];
    for (unsigned z = 1; z < slices; z++) s += part[z * total + i];
    y[i] = (unsigned short)ln_bf16(s);
}

#endif
