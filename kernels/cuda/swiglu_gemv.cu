// gpubench-compile: entry=swiglu_gemv defines=MT=1,TILES=1,UNROLL=8,WARPS=4
// gpubench-compile: entry=swiglu_gemv defines=MT=8,TILES=1,UNROLL=8,WARPS=4
// gpubench-compile: entry=swiglu_gemv defines=MT=5,TILES=2,UNROLL=4,WARPS=2
// The chain's GEMV: h[t, r] = bf16(W[r] . x[t]) for every row r of W [R, K]
// and the MT tokens of x [MT, K] (bf16, fp32 accumulation): over the packed
// gate/up weight (R = 2N) it writes h [MT, 2N] = [gate | up] per token, the
// layout of the vendor GEMM's y, which swiglu_mul.cu reads. The same mma loop
// as the fused kernel (swiglu_common.cuh); a tile is 16 consecutive rows.
// Launch overlap as the fused kernel's.
// Launch: block 32 * WARPS, grid ceil(R / (16 * TILES * WARPS)); K % 8 == 0.
#include "launch_overlap.cuh"
#include "swiglu_common.cuh"

GB_LAUNCH_OVERLAP

#if !defined(MT) || !defined(TILES) || !defined(UNROLL) || !defined(WARPS)
#error "swiglu_gemv takes MT (tokens, 1..8), TILES, UNROLL and WARPS as defines (lib/gpubench/swiglu_cuda.lua)"
#endif
#if MT < 1 || MT > 8
#error "MT (the rows of x) must be 1..8: the mma has 8 token columns"
#endif

extern "C" __global__ void __launch_bounds__(32 * WARPS, 1)
    swiglu_gemv(const unsigned char* __restrict__ w, const unsigned char* __restrict__ x,
                unsigned short* __restrict__ h, unsigned rows, unsigned k)
{
    const sw_u32 lane = threadIdx.x & 31;
    const sw_u32 r0 = (blockIdx.x * WARPS + (threadIdx.x >> 5)) * 16u * TILES;
    gb_overlap_start();
    if (r0 >= rows) return; // the whole warp
    sw_u64 ra[TILES], rb[TILES];
    float acc[TILES][4];
    sw_gpu cx;
    sw_gemv_setup<TILES>(lane, r0, rows, k, ra, rb, acc);
    sw_warp_dot<MT, TILES, UNROLL>(cx, lane, w, x, k, ra, rb, acc);
    sw_gemv_store<MT, TILES>(lane, r0, rows, acc, h);
}
