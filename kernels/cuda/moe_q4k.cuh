// Shared code of the CUDA mixture-of-experts Q4_K GEMV kernels
// (kernels/cuda/moe_q4k_*.cu; docs/kernels/moe.md has the design and the
// measurements).
//
// The weights are a stack of E experts, each an N x K q4_k matrix
// (docs/FORMATS.md), with ferrum's strides: row n of expert e starts at byte
// e * nb02 + n * nb01, nb01 = (K / 256) * 144, nb02 = N * nb01. A step has
// m tokens with top_k experts each; pair p = t * top_k + s (token t, slot s)
// uses expert ids[p] and the activation row at float offset
// t * outer + s * inner (ferrum's two-stride walk: gate/up outer = K,
// inner = 0; down outer = top_k * K, inner = K), and writes y[p * N ..].
#ifndef GPUBENCH_MOE_Q4K_CUH
#define GPUBENCH_MOE_Q4K_CUH

#include "gemv_common.cuh"
#include "gemv_q4k_xq.cuh"

// The decode: the q4_k GEMV's integer dot (x quantized per tile to int16,
// dp2a on the nibbles, the k-quant prep step).
typedef GbQ4KI MoeQ4KI;

// The expert of pair p, clamped into 0 .. experts-1 so that a bad id cannot
// read outside the stack (gpubench.moe refuses such ids before any launch).
__device__ __forceinline__ gb_u32 moe_expert(const int* ids, gb_u32 p, gb_u32 experts)
{
    const int e = ids[p];
    return e < 0 ? 0u : (gb_u32)e >= experts ? experts - 1 : (gb_u32)e;
}

// The activation row of pair p (ferrum's two-stride walk).
__device__ __forceinline__ const float* moe_x_row(const float* x, gb_u32 p, gb_u32 top_k, gb_u32 outer,
                                                  gb_u32 inner)
{
    const gb_u32 t = p / top_k, s = p - t * top_k;
    return x + (gb_u64)t * outer + (gb_u64)s * inner;
}

#endif
