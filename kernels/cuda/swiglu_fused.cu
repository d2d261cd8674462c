// gpubench-compile: entry=swiglu_fused defines=MT=1,TILES=1,UNROLL=8,WARPS=4
// gpubench-compile: entry=swiglu_fused defines=MT=8,TILES=1,UNROLL=8,WARPS=4
// gpubench-compile: entry=swiglu_fused defines=MT=3,TILES=2,UNROLL=4,WARPS=2
// gpubench-compile: entry=swiglu_fused defines=MT=8,TILES=1,UNROLL=4,WARPS=8
// Fused SwiGLU: y[t, n] = bf16(silu(g) * u) with g = W[n] . x[t] and
// u = W[N + n] . x[t], for the MT tokens t of x [MT, K] and the packed gate/up
// weight W [2N, K] (bf16, fp32 accumulation; docs/kernels/swiglu.md).
// A warp owns TILES tiles of 8 outputs: one mma tile is the 8 gate rows and
// the 8 up rows of the same outputs, so a lane's accumulators hold g and u of
// one output and the epilogue needs no exchange. Each weight word is read once
// and used for all MT tokens.
// Launch: block 32 * WARPS, grid ceil(N / (8 * TILES * WARPS)); K % 8 == 0.
#include "swiglu_common.cuh"

#if !defined(MT) || !defined(TILES) || !defined(UNROLL) || !defined(WARPS)
#error "swiglu_fused takes MT (tokens, 1..8), TILES, UNROLL and WARPS as defines (lib/gpubench/swiglu_cuda.lua)"
#endif
#if MT < 1 || MT > 8
#error "MT (the rows of x) must be 1..8: the mma has 8 token columns"
#endif

extern "C" __global__ void __launch_bounds__(32 * WARPS, 1)
    swiglu_fused(const unsigned char* __restrict__ w, const unsigned char* __restrict__ x,
                 unsigned short* __restrict__ y, unsigned n, unsigned k)
{
    const sw_u32 lane = threadIdx.x & 31;
    const sw_u32 n0 = (blockIdx.x * WARPS + (threadIdx.x >> 5)) * 8u * TILES;
    if (n0 >= n) return; // the whole warp
    sw_u64 ra[TILES], rb[TILES];
    float acc[TILES][4];
    sw_gpu cx;
    sw_fused_setup<TILES>(lane, n0, n, k, ra, rb, acc);
    sw_warp_dot<MT, TILES, UNROLL>(cx, lane, w, x, k, ra, rb, acc);
    sw_fused_store<MT, TILES>(lane, n0, n, acc, y);
}
