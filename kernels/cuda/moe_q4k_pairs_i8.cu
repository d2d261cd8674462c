// gpubench-compile: entry=moe_q4k_pairs_i8 defines=I8=1,WARPS=4,KSPLIT=2,PREFETCH=0
// gpubench-compile: entry=moe_q4k_pairs_i8 defines=I8=1,WARPS=2,KSPLIT=4,PREFETCH=1
// The `batched` and `per_token` MoE variants (moe_q4k_pairs.cu's pairs, the same
// launch and walk) with the q4_k GEMV's int8 tensor-core body for one row of x
// (gemv_q4k_q5k_i8.cuh, T = 1, x quantized per block): the integer dot's
// decode costs about three instructions per weight and lane, which a step whose
// experts sit in L2 pays in full (docs/kernels/moe.md, "The pairs kernel on the
// tensor cores"). Launch: block 32 * WARPS * KSPLIT, grid (ceil(n / (16 * WARPS)),
// pairs); k a multiple of 256, n any; activation rows 16-byte aligned.
#include "moe_q4k.cuh"
#include "gemv_q4k_q5k_i8.cuh"

#if !defined(I8) || I8 != 1 || !defined(WARPS) || !defined(KSPLIT) || !defined(PREFETCH)
#error "moe_q4k_pairs_i8 takes -DI8=1, -DWARPS, -DKSPLIT and -DPREFETCH (defaults: lib/gpubench/moe_cuda.lua)"
#endif

extern "C" __global__ void __launch_bounds__(32 * WARPS * KSPLIT)
    moe_q4k_pairs_i8(const unsigned char* __restrict__ w, const float* __restrict__ x, const int* __restrict__ ids,
                     float* __restrict__ y, unsigned n, unsigned k, unsigned experts, unsigned long long nb02,
                     unsigned top_k, unsigned pair0, unsigned outer, unsigned inner)
{
    const gb_u32 p = pair0 + blockIdx.y;
    const gb_u32 e = moe_expert(ids, p, experts);
    gb_i8_entry<GbI8Q4K, WARPS, KSPLIT, PREFETCH, 1, 0, 0>(w + (gb_u64)e * nb02, moe_x_row(x, p, top_k, outer, inner),
                                                          y + (gb_u64)p * n, n, k);
}
