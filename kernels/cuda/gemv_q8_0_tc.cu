// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=4,KSPLIT=2,TILES=1,UNROLL=2,STAGES=0,INTERLEAVE=1,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=2,KSPLIT=4,TILES=2,UNROLL=2,STAGES=0,INTERLEAVE=1,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=1,KSPLIT=1,TILES=1,UNROLL=1,STAGES=0,INTERLEAVE=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=4,KSPLIT=2,TILES=1,UNROLL=4,STAGES=0,INTERLEAVE=1,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=2,KSPLIT=3,TILES=3,UNROLL=1,STAGES=0,INTERLEAVE=1,GEMV_TOKENS=3
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=8,KSPLIT=1,TILES=1,UNROLL=2,STAGES=0,INTERLEAVE=1,GEMV_TOKENS=4
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=1,KSPLIT=8,TILES=2,UNROLL=4,STAGES=0,INTERLEAVE=1,GEMV_TOKENS=5
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=4,KSPLIT=2,TILES=4,UNROLL=1,STAGES=0,INTERLEAVE=1,GEMV_TOKENS=7
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=1,KSPLIT=2,TILES=2,UNROLL=4,STAGES=2,INTERLEAVE=2,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=2,KSPLIT=2,TILES=1,UNROLL=4,STAGES=2,INTERLEAVE=1,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=1,KSPLIT=2,TILES=1,UNROLL=8,STAGES=2,INTERLEAVE=4,GEMV_TOKENS=5
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=1,KSPLIT=2,TILES=1,UNROLL=4,STAGES=3,INTERLEAVE=2,GEMV_TOKENS=4
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=1,KSPLIT=4,TILES=1,UNROLL=4,STAGES=2,INTERLEAVE=4,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=1,KSPLIT=4,TILES=2,UNROLL=4,STAGES=2,INTERLEAVE=2,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q8_0_tc defines=TC=1,WARPS=1,KSPLIT=2,TILES=2,UNROLL=4,STAGES=2,INTERLEAVE=2,GEMV_TOKENS=8,DYNAMIC=1
// q8_0 GEMV for T = GEMV_TOKENS rows of x on the f16 tensor cores, warps
// independent (gemv_b32_tc.cuh; docs/kernels/cuda-gemv.md, "The f16
// tensor-core q8_0 kernel"). The q8_0 entry's kernel from T = 4 (TC=1,
// TOKEN_RULES in lib/gpubench/gemv_cuda.lua). k a multiple of 256, any m. Launch: block
// 32 * WARPS * KSPLIT, grid ceil(m / (16 * TILES * WARPS)).
#define GB_B32TC_FORMAT GbTcQ8_0
#include "gemv_b32_tc.cuh"

extern "C" __global__ void __launch_bounds__(32 * WARPS * KSPLIT)
    gemv_q8_0_tc(const unsigned char* __restrict__ w, const float* __restrict__ x, float* __restrict__ y,
                 unsigned m, unsigned k)
{
    gb_gemv_b32tc<GB_B32TC_FORMAT, GEMV_TOKENS, UNROLL, TILES, WARPS, KSPLIT, STAGES, INTERLEAVE>(w, x, y, m, k);
}
