// gpubench-compile: entry=gemv_bf16_tc defines=MMA=1,WARPS=1,KSPLIT=2,TILES=2,UNROLL=4,STAGES=2,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_bf16_tc defines=MMA=1,WARPS=4,KSPLIT=2,TILES=1,UNROLL=4,STAGES=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_bf16_tc defines=MMA=1,WARPS=4,KSPLIT=2,TILES=1,UNROLL=4,STAGES=0,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_bf16_tc defines=MMA=1,WARPS=1,KSPLIT=1,TILES=2,UNROLL=1,STAGES=0,GEMV_TOKENS=3
// gpubench-compile: entry=gemv_bf16_tc defines=MMA=1,WARPS=1,KSPLIT=4,TILES=1,UNROLL=4,STAGES=2,GEMV_TOKENS=4
// gpubench-compile: entry=gemv_bf16_tc defines=MMA=1,WARPS=4,KSPLIT=1,TILES=2,UNROLL=2,STAGES=3,GEMV_TOKENS=5
// gpubench-compile: entry=gemv_bf16_tc defines=MMA=1,WARPS=1,KSPLIT=8,TILES=1,UNROLL=2,STAGES=2,GEMV_TOKENS=6
// gpubench-compile: entry=gemv_bf16_tc defines=MMA=1,WARPS=1,KSPLIT=3,TILES=3,UNROLL=2,STAGES=0,GEMV_TOKENS=7
// gpubench-compile: entry=gemv_bf16_tc defines=MMA=1,WARPS=4,KSPLIT=2,TILES=1,UNROLL=4,STAGES=2,GEMV_TOKENS=8
// GEMV for T = GEMV_TOKENS rows of x and bf16 weights (the upper halves of f32), on the tensor cores (gemv_dense_tc.cuh;
// docs/kernels/cuda-gemv.md, "Dense tensor-core kernels"). The FMA kernel (gemv_bf16.cu) is the
// default up to T = 2, this one from T = 3 (lib/gpubench/gemv_cuda.lua, TOKEN_RULES). k a multiple of 8,
// any m. Launch: block 32 * WARPS * KSPLIT, grid ceil(m / (16 * TILES * WARPS)).
#define GB_TC_KERNEL_FILE 1
#include "gemv_dense_tc.cuh"

extern "C" __global__ void __launch_bounds__(32 * WARPS * KSPLIT)
    gemv_bf16_tc(const unsigned char* __restrict__ w, const float* __restrict__ x, float* __restrict__ y,
                 unsigned m, unsigned k)
{
    gb_gemv_tc<GbTcBF16, GEMV_TOKENS, UNROLL, TILES, WARPS, KSPLIT, STAGES>(w, x, y, m, k);
}
