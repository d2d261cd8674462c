// gpubench-compile: entry=moe_q4k_pairs defines=ROWS=14,WARPS=1,STAGES=2,PARTS=2
// gpubench-compile: entry=moe_q4k_pairs defines=ROWS=8,WARPS=1,STAGES=2,PARTS=1
// gpubench-compile: entry=moe_q4k_pairs defines=ROWS=16,WARPS=2,STAGES=2,PARTS=2
// gpubench-compile: entry=moe_q4k_pairs defines=ROWS=14,WARPS=1,STAGES=2,PARTS=2,XSHARED=0
// Mixture-of-experts Q4_K GEMV over (token, expert) pairs: the `batched` and
// the `per_token` variants of experiments/moe_scaling.lua (moe_q4k.cuh has the
// layout). Block (x, y) computes rows x * ROWS * WARPS .. of pair
// pair0 + y: one GEMV of expert ids[pair] with that pair's activation row,
// the body of kernels/cuda/gemv_q4_k.cu (integer dot, tiles staged with
// cp.async, row parts). `batched` launches grid.y = m * top_k once;
// `per_token` launches grid.y = top_k with pair0 = t * top_k once per token.
// One entry serves both, so batched == per_token holds bit for bit by
// construction (the same decode order); the tests check it all the same.
//
// Launch: block (32 * WARPS), grid (ceil(n / (ROWS * WARPS)), pairs). k a
// multiple of 256, n any; the stack buffer must hold 16 bytes past the last
// expert's weights (whole-word copies, as gemv.buffer_bytes).
#include "moe_q4k.cuh"

#if !defined(ROWS) || !defined(WARPS) || !defined(STAGES) || !defined(PARTS)
#error "moe_q4k_pairs takes -DROWS, -DWARPS, -DSTAGES and -DPARTS (defaults: lib/gpubench/moe_cuda.lua)"
#endif

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    moe_q4k_pairs(const unsigned char* __restrict__ w, const float* __restrict__ x, const int* __restrict__ ids,
                  float* __restrict__ y, unsigned n, unsigned k, unsigned experts, unsigned long long nb02,
                  unsigned top_k, unsigned pair0, unsigned outer, unsigned inner)
{
    const gb_u32 p = pair0 + blockIdx.y;
    const gb_u32 e = moe_expert(ids, p, experts);
    gb_gemv_quant<MoeQ4KI, ROWS, STAGES, WARPS, 1, PARTS>(w + (gb_u64)e * nb02, moe_x_row(x, p, top_k, outer, inner),
                                                         y + (gb_u64)p * n, n, k);
}
