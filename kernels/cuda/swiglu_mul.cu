// The unfused paths' elementwise step: y[t, n] = bf16(silu(g) * u) with
// g = h[t, n] and u = h[t, N + n], h [M, 2N] bf16 (the packed GEMV's or the
// vendor GEMM's output), y [M, N] bf16. With N % 8 == 0 a thread does 8
// outputs with 16-byte loads and stores; otherwise one output per thread.
// Launch: block 256, grid ceil(M * N / (N % 8 ? 1 : 8) / 256) (the loop is
// grid-stride, so fewer blocks also cover it).
// Launch overlap: it reads what the launch before it wrote, so it waits first.
#include "launch_overlap.cuh"
#include "swiglu_common.cuh"

GB_LAUNCH_OVERLAP

extern "C" __global__ void swiglu_mul(const unsigned short* __restrict__ h, unsigned short* __restrict__ y,
                                      unsigned n, unsigned m)
{
    gb_overlap_start();
    sw_mul_thread((sw_u64)blockIdx.x * blockDim.x + threadIdx.x, (sw_u64)gridDim.x * blockDim.x, h, y, n, m);
}
