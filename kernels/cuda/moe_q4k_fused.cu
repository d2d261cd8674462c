// gpubench-compile: entry=moe_q4k_fused defines=ROWS=8,WARPS=1,STAGES=2,PARTS=1,XSHARED=0
// gpubench-compile: entry=moe_q4k_fused defines=ROWS=14,WARPS=1,STAGES=2,PARTS=2
// gpubench-compile: entry=moe_q4k_fused defines=ROWS=8,WARPS=2,STAGES=2,PARTS=1
// Mixture-of-experts Q4_K gate and up projections with the SwiGLU epilogue:
// the `fused_gate_up` variant of experiments/moe_scaling.lua. For every pair
// (token, expert) the warp computes its rows of g = Wgate[e] x and
// u = Wup[e] x and writes y = silu(g) * u = g / (1 + exp(-g)) * u, so the
// down projection's input is produced without g and u ever reaching memory.
// Both stacks have the same shape and strides (moe_q4k.cuh). Each warp runs
// the GEMV pipeline of kernels/cuda/gemv_q4_k.cu (gb_quant_warp) over its
// gate rows, then over the same rows of up, in the same shared-memory slots.
//
// Launch: block (32 * WARPS), grid (ceil(n / (ROWS * WARPS)), m * top_k).
#include "moe_q4k.cuh"

#if !defined(ROWS) || !defined(WARPS) || !defined(STAGES) || !defined(PARTS)
#error "moe_q4k_fused takes -DROWS, -DWARPS, -DSTAGES and -DPARTS (defaults: lib/gpubench/moe_cuda.lua)"
#endif

template <class F, int R, int S, int NWARP, int P>
__device__ __forceinline__ void moe_fused_rows(const unsigned char* Wg, const unsigned char* Wu, const float* x,
                                               float* y, gb_u32 m, gb_u32 k)
{
    static_assert(S >= 2, "STAGES must be at least 2");
    static_assert(P >= 1 && R % P == 0, "PARTS must divide ROWS");
    typedef GbQuantSmem<F, R, S, NWARP, 1, P, false> Smem;
    constexpr bool XSM = Smem::XSM;
    constexpr int XS = XSM ? (int)GbXSlots<S, P>::N : 1;
    static_assert(Smem::BASE <= Smem::LIMIT,
                  "WARPS * STAGES * ROWS / PARTS staging slots exceed the 48 KiB of static shared memory");
    __shared__ __align__(16) unsigned char slots[NWARP][S][R / P][GbTile<F>::SLOT];
    __shared__ __align__(16) float prep[NWARP][(R / P) * GbTile<F>::PREP_ROW];
    __shared__ __align__(16) unsigned char xslots[XSM ? NWARP * XS : 1][XSM ? (int)GB_XSLOT : 16];
    const gb_u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const gb_u32 row0 = (blockIdx.x * NWARP + warp) * R;
    if (row0 >= m) return;
    GbWarpCtx ctx{lane, (gb_u32)__cvta_generic_to_shared(&slots[warp][0][0][0]), &slots[warp][0][0][0]};
    unsigned char(*xs)[GB_XSLOT] = XSM ? reinterpret_cast<unsigned char(*)[GB_XSLOT]>(xslots[warp * XS]) : nullptr;
    float g[R], u[R];
#pragma unroll
    for (int r = 0; r < R; r++) g[r] = 0.0f, u[r] = 0.0f;
    gb_quant_warp<F, R, S, 1, P, XSM, false>(ctx, lane, Wg, x, m, k, row0, 0, slots[warp], prep[warp], xs, g);
    // every copy of the gate pass has landed and been read (its last unit ends
    // with a warp barrier), so the up pass may reuse the slots from the start
    gb_quant_warp<F, R, S, 1, P, XSM, false>(ctx, lane, Wu, x, m, k, row0, 0, slots[warp], prep[warp], xs, u);
    float mine = 0.0f;
#pragma unroll
    for (int r = 0; r < R; r++) {
        const float gs = gb_warp_sum(g[r]), us = gb_warp_sum(u[r]);
        const float h = gs / (1.0f + expf(-gs)) * us; // silu(g) * u; g -> -inf gives -0
        mine = lane == (gb_u32)r ? h : mine;
    }
    if (lane < (gb_u32)R && row0 + lane < m) y[row0 + lane] = mine;
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    moe_q4k_fused(const unsigned char* __restrict__ wg, const unsigned char* __restrict__ wu,
                  const float* __restrict__ x, const int* __restrict__ ids, float* __restrict__ y, unsigned n,
                  unsigned k, unsigned experts, unsigned long long nb02, unsigned top_k, unsigned outer,
                  unsigned inner)
{
    const gb_u32 p = blockIdx.y;
    const gb_u64 off = (gb_u64)moe_expert(ids, p, experts) * nb02;
    moe_fused_rows<MoeQ4KI, ROWS, STAGES, WARPS, PARTS>(wg + off, wu + off, moe_x_row(x, p, top_k, outer, inner),
                                                       y + (gb_u64)p * n, n, k);
}
