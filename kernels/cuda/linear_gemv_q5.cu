// gpubench-compile: entry=linear_gemv_q5 defines=LN_NW=4,LN_RT=2,LN_NJ=1,LN_U=2,LN_KC=0,LN_STAGE=3
// gpubench-compile: entry=linear_gemv_q5 defines=LN_NW=4,LN_RT=2,LN_NJ=1,LN_U=4,LN_KC=0,LN_STAGE=0
// gpubench-compile: entry=linear_gemv_q5 defines=LN_NW=4,LN_RT=2,LN_NJ=2,LN_U=2,LN_KC=0,LN_STAGE=0
// gpubench-compile: entry=linear_gemv_q5 defines=LN_NW=2,LN_RT=1,LN_NJ=1,LN_U=3,LN_KC=1,LN_STAGE=0
// gpubench-compile: entry=linear_gemv_q5 defines=LN_NW=8,LN_RT=4,LN_NJ=1,LN_U=1,LN_KC=0,LN_STAGE=0
// gpubench-compile: entry=linear_gemv_q5 defines=LN_NW=4,LN_RT=2,LN_NJ=2,LN_U=2,LN_KC=0,LN_STAGE=3
// gpubench-compile: entry=linear_gemv_q5 defines=LN_NW=4,LN_RT=2,LN_NJ=1,LN_U=2,LN_KC=0,LN_STAGE=4
// gpubench-compile: entry=linear_gemv_q5 defines=LN_NW=4,LN_RT=2,LN_NJ=2,LN_U=2,LN_KC=0,LN_STAGE=4
// The memory-bound Linear route for q5 weights (docs/kernels/cuda-linear.md):
// y[T, N] = x[T, K] . W[N, K]^T for T <= 8 LN_NJ, every weight read once.
// Launch: block (32 LN_NW), grid ceil(N / (16 LN_RT)); LN_STAGE >= 2 stages
// the weights through shared memory ("Staged memory-bound route").
#define LN_ROUTE_GEMV 1
#include "linear_geometry.cuh"
#include "linear_gemv.cuh"

extern "C" __global__ void __launch_bounds__(32 * LN_NW)
    linear_gemv_q5(const unsigned char* __restrict__ w, const unsigned short* __restrict__ x,
                   unsigned short* __restrict__ y, unsigned n, unsigned k, unsigned t, float gscale)
{
    ln_gemv<LnQ5, LN_NW, LN_RT, LN_NJ, LN_U, LN_KC, LN_STAGE>(w, x, y, n, k, t, gscale);
}
