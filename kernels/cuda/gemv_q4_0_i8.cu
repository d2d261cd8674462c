// gpubench-compile: entry=gemv_q4_0_i8 defines=I8=1,WARPS=4,KSPLIT=2,PREFETCH=0,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q4_0_i8 defines=I8=1,WARPS=4,KSPLIT=1,PREFETCH=0,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_q4_0_i8 defines=I8=1,WARPS=4,KSPLIT=4,PREFETCH=1,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q4_0_i8 defines=I8=1,WARPS=4,KSPLIT=2,PREFETCH=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0_i8 defines=I8=1,WARPS=4,KSPLIT=2,PREFETCH=0,GEMV_TOKENS=4
// gpubench-compile: entry=gemv_q4_0_i8 defines=I8=1,WARPS=2,KSPLIT=8,PREFETCH=1,GEMV_TOKENS=3
// gpubench-compile: entry=gemv_q4_0_i8 defines=I8=1,WARPS=1,KSPLIT=1,PREFETCH=1,GEMV_TOKENS=5
// gpubench-compile: entry=gemv_q4_0_i8 defines=I8=1,WARPS=8,KSPLIT=2,PREFETCH=0,GEMV_TOKENS=7
// q4_0 GEMV for T = GEMV_TOKENS rows of x on the int8 tensor cores
// (gemv_b32_i8.cuh, the q4_k kernel's design: docs/kernels/cuda-gemv.md,
// "The int8 tensor-core q8_0 and q4_0 kernels"): q4_0's kernel from T = 4
// (TOKEN_RULES in lib/gpubench/gemv_cuda.lua). Launch: block
// 32 * WARPS * KSPLIT, grid ceil(m / (16 * WARPS)); k a multiple of 256; the
// weights 4-byte aligned.
#include "gemv_b32_i8.cuh"
#include "gemv_i8_entry.cuh"

typedef GbI8B32<GbI8Q4_0> GbI8Q40Step;
GB_I8_KERNEL(gemv_q4_0_i8, GbI8Q40Step)
