// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=8,LN_R=4,LN_TT=1,LN_U=1,LN_KS=1
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=4,LN_R=8,LN_TT=1,LN_U=2,LN_KS=1
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=4,LN_R=8,LN_TT=2,LN_U=1,LN_KS=1
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=4,LN_R=16,LN_TT=1,LN_U=1,LN_KS=1
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=4,LN_R=16,LN_TT=2,LN_U=1,LN_KS=1
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=2,LN_R=8,LN_TT=4,LN_U=1,LN_KS=1
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=1,LN_R=3,LN_TT=3,LN_U=3,LN_KS=1
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=8,LN_R=32,LN_TT=1,LN_U=1,LN_KS=1
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=4,LN_R=8,LN_TT=1,LN_U=1,LN_KS=1
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=2,LN_R=4,LN_TT=1,LN_U=2,LN_KS=3
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=4,LN_R=8,LN_TT=2,LN_U=1,LN_KS=2
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=4,LN_R=16,LN_TT=1,LN_U=1,LN_KS=4
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=8,LN_R=4,LN_TT=1,LN_U=1,LN_KS=2
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=8,LN_R=4,LN_TT=1,LN_U=1,LN_KS=4
// gpubench-compile: entry=linear_dot_q6 defines=LN_NW=4,LN_R=4,LN_TT=1,LN_U=1,LN_KS=1
// The integer-dot Linear route for q6 weights (docs/kernels/cuda-linear.md,
// "Integer-dot route"): y[T, N] = x[T, K] . W[N, K]^T for T <= LN_TT, every
// weight read once, x quantized to int16 per lane and tile, dp2a.
// Launch: block (32 LN_NW LN_KS), grid ceil(N / (LN_NW LN_R)).
#define LN_ROUTE_DOT 1
#include "linear_dot.cuh"

extern "C" __global__ void __launch_bounds__(32 * LN_NW * LN_KS)
    linear_dot_q6(const unsigned char* __restrict__ w, const unsigned short* __restrict__ x,
                  unsigned short* __restrict__ y, unsigned n, unsigned k, unsigned t, float gscale)
{
    ln_dot<LnDotQ6, LN_NW, LN_R, LN_TT, LN_U, LN_KS>(w, x, y, n, k, t);
}
