// gpubench-compile: entry=linear_mma_q4 defines=LN_NW=4,LN_BN=64,LN_STAGES=4
// gpubench-compile: entry=linear_mma_q4 defines=LN_NW=8,LN_BN=64,LN_STAGES=4
// gpubench-compile: entry=linear_mma_q4 defines=LN_NW=8,LN_BN=128,LN_STAGES=3
// gpubench-compile: entry=linear_mma_q4 defines=LN_NW=2,LN_BN=32,LN_STAGES=2
// gpubench-compile: entry=linear_mma_q4 defines=LN_NW=4,LN_BN=32,LN_STAGES=3
// The tensor-core Linear route for q4 weights (docs/kernels/cuda-linear.md):
// y[T, N] = x[T, K] . W[N, K]^T, tiles of 32 LN_NW rows x LN_BN rows of x.
// Launch: block (32 LN_NW), grid (ceil(N / (32 LN_NW)), ceil(T / LN_BN)).
#define LN_ROUTE_MMA 1
#include "linear_geometry.cuh"
#include "linear_mma.cuh"

extern "C" __global__ void __launch_bounds__(32 * LN_NW, 1)
    linear_mma_q4(const unsigned char* __restrict__ w, const unsigned short* __restrict__ x,
                  unsigned short* __restrict__ y, unsigned n, unsigned k, unsigned t, float gscale)
{
    ln_mma<LnQ4, LN_NW, LN_BN, LN_STAGES>(w, x, y, n, k, t, gscale);
}
