// The second launch of a Linear call whose kernel split K into slices
// (the wgmma route's LN_KSPLIT, docs/kernels/cuda-linear.md): y[i] = bf16 of
// the slices' fp32 sums part[z][i] added in slice order (the same result
// whichever block finished first), i over T x N.
// Launch: block (256), any grid (a grid-stride loop).
#include "linear_base.cuh"
#include "linear_reduce.cuh"

extern "C" __global__ void linear_reduce(const float* __restrict__ part, unsigned short* __restrict__ y, unsigned n,
                                         unsigned t, unsigned slices)
{
    const gb_u64 total = (gb_u64)n * t;
    for (gb_u64 i = (gb_u64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (gb_u64)gridDim.x * blockDim.x)
        ln_reduce_one(part, y, total, i, slices);
}
