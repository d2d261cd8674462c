// gpubench-compile: entry=gemv_q4_k_i8 defines=I8=1,WARPS=4,KSPLIT=1,PREFETCH=0,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q4_k_i8 defines=I8=1,WARPS=4,KSPLIT=4,PREFETCH=1,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q4_k_i8 defines=I8=1,WARPS=4,KSPLIT=2,PREFETCH=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k_i8 defines=I8=1,WARPS=4,KSPLIT=2,PREFETCH=0,GEMV_TOKENS=5
// gpubench-compile: entry=gemv_q4_k_i8 defines=I8=1,WARPS=2,KSPLIT=8,PREFETCH=1,GEMV_TOKENS=3
// gpubench-compile: entry=gemv_q4_k_i8 defines=I8=1,WARPS=1,KSPLIT=1,PREFETCH=1,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_q4_k_i8 defines=I8=1,WARPS=8,KSPLIT=2,PREFETCH=0,GEMV_TOKENS=5
// q4_k GEMV for T = GEMV_TOKENS rows of x on the int8 tensor cores
// (gemv_q4k_q5k_i8.cuh): the q4_k kernel's variant with I8=1, q4_k's default
// from T = 5 (lib/gpubench/gemv_cuda.lua, TOKEN_RULES). Launch: block
// 32 * WARPS * KSPLIT, grid ceil(m / (16 * WARPS)); k a multiple of 256; the weights 16-byte
// aligned.
#include "gemv_q4k_q5k_i8.cuh"
#include "gemv_i8_entry.cuh"

GB_I8_KERNEL(gemv_q4_k_i8, GbI8Q4K)
