// gpubench-compile: entry=swiglu_fused defines=MT=1,TILES=1,UNROLL=8,WARPS=4,KSPLIT=1,STAGES=0
// gpubench-compile: entry=swiglu_fused defines=MT=8,TILES=1,UNROLL=8,WARPS=4,KSPLIT=1,STAGES=0
// gpubench-compile: entry=swiglu_fused defines=MT=3,TILES=2,UNROLL=4,WARPS=2,KSPLIT=3,STAGES=0
// gpubench-compile: entry=swiglu_fused defines=MT=8,TILES=1,UNROLL=4,WARPS=8,KSPLIT=1,STAGES=0
// gpubench-compile: entry=swiglu_fused defines=MT=8,TILES=1,UNROLL=8,WARPS=1,KSPLIT=4,STAGES=0
// gpubench-compile: entry=swiglu_fused defines=MT=1,TILES=2,UNROLL=8,WARPS=2,KSPLIT=2,STAGES=0
// gpubench-compile: entry=swiglu_fused defines=MT=1,TILES=1,UNROLL=4,WARPS=1,KSPLIT=2,STAGES=4
// gpubench-compile: entry=swiglu_fused defines=MT=8,TILES=1,UNROLL=4,WARPS=1,KSPLIT=2,STAGES=3
// gpubench-compile: entry=swiglu_fused defines=MT=5,TILES=2,UNROLL=2,WARPS=1,KSPLIT=3,STAGES=2
// gpubench-compile: entry=swiglu_fused defines=MT=8,TILES=1,UNROLL=1,WARPS=1,KSPLIT=1,STAGES=8
// gpubench-compile: entry=swiglu_fused defines=MT=8,TILES=1,UNROLL=8,WARPS=1,KSPLIT=1,STAGES=3
// gpubench-compile: entry=swiglu_fused defines=MT=8,TILES=1,UNROLL=2,WARPS=1,KSPLIT=8,STAGES=2
// gpubench-compile: entry=swiglu_fused defines=MT=8,TILES=1,UNROLL=4,WARPS=1,KSPLIT=4,STAGES=3
// Fused SwiGLU: y[t, n] = bf16(silu(g) * u) with g = W[n] . x[t] and
// u = W[N + n] . x[t], for the MT tokens t of x [MT, K] and the packed gate/up
// weight W [2N, K] (bf16, fp32 accumulation; docs/kernels/swiglu.md).
// A warp owns TILES tiles of 8 outputs: one mma tile is the 8 gate rows and
// the 8 up rows of the same outputs, so a lane's accumulators hold g and u of
// one output and the epilogue needs no exchange. Each weight word is read once
// and used for all MT tokens. KSPLIT warps share a warp's outputs, each
// walking one slice of k (sw_slice); their sums meet in shared memory and the
// first slice's warp stores: more warps, so more bytes in flight, for shapes
// whose N / 8 warps leave the SMs short of them (docs/kernels/swiglu.md).
// STAGES >= 2: the weights go through shared memory instead (sw_staged_dot):
// each lane copies 16-byte pieces of whole row runs with cp.async, so one
// copy instruction reads 512 contiguous bytes of a row, and the mma operands
// are read back from the warp's stages; STAGES = 0 is the direct loop.
// Launch overlap (kernels/cuda/launch_overlap.cuh): x and y only after the wait.
// Launch: block 32 * WARPS * KSPLIT, grid ceil(N / (8 * TILES * WARPS)); K % 8 == 0.
#include "dynamic_shared.cuh"
#include "launch_overlap.cuh"
#include "swiglu_common.cuh"

GB_LAUNCH_OVERLAP

#if !defined(MT) || !defined(TILES) || !defined(UNROLL) || !defined(WARPS) || !defined(KSPLIT) || !defined(STAGES)
#error "swiglu_fused takes MT (tokens, 1..8), TILES, UNROLL, WARPS, KSPLIT and STAGES as defines (lib/gpubench/swiglu_cuda.lua)"
#endif
#if STAGES == 1 || STAGES > 8
#error "STAGES is 0 (direct loads) or 2..8 (shared-memory stages)"
#endif
#if MT < 1 || MT > 8
#error "MT (the rows of x) must be 1..8: the mma has 8 token columns"
#endif

// The stages go dynamic when they and the k-slice sums pass the static limit
// (gb_stage_dynamic_bytes, spelled for the preprocessor: a kernel that is not a
// template keeps its static array in its own scope, so its code stays the same).
#define SW_FUSED_STAGE_BYTES (STAGES >= 2 ? WARPS * KSPLIT * SW_STAGE_BYTES(TILES, UNROLL) * STAGES : 0)
#define SW_FUSED_RED_BYTES (KSPLIT > 1 ? (KSPLIT - 1) * WARPS * 4 * TILES * 32 * 4 : 0)
#define SW_FUSED_DYNAMIC (SW_FUSED_STAGE_BYTES + SW_FUSED_RED_BYTES > GB_STATIC_SHARED_LIMIT)
static_assert(SW_FUSED_RED_BYTES == sw_red_bytes(WARPS, KSPLIT, TILES) &&
                  (SW_FUSED_DYNAMIC ? SW_FUSED_STAGE_BYTES : 0) ==
                      gb_stage_dynamic_bytes(SW_FUSED_STAGE_BYTES, SW_FUSED_RED_BYTES),
              "the preprocessor's shared-memory sums must be gb_stage_dynamic_bytes'");
GB_DYNAMIC_SHARED(SW_FUSED_DYNAMIC ? SW_FUSED_STAGE_BYTES : 0)

extern "C" __global__ void __launch_bounds__(32 * WARPS * KSPLIT, 1)
    swiglu_fused(const unsigned char* __restrict__ w, const unsigned char* __restrict__ x,
                 unsigned short* __restrict__ y, unsigned n, unsigned k)
{
    const sw_u32 lane = threadIdx.x & 31, wid = threadIdx.x >> 5, rw = wid % WARPS, s = wid / WARPS;
    const sw_u32 n0 = (blockIdx.x * WARPS + rw) * 8u * TILES;
    gb_overlap_start();
    sw_u64 ra[TILES], rb[TILES];
    float acc[TILES][4];
    sw_fused_setup<TILES>(lane, n0, n, k, ra, rb, acc);
    sw_u32 k0, kl;
    sw_slice(k, KSPLIT, s, k0, kl);
    sw_gpu cx;
#if STAGES >= 2
    // warp-private stages: no block barrier until the k-slice reduction
#if SW_FUSED_DYNAMIC
    unsigned char* st = gb_dynamic_shared(SW_FUSED_STAGE_BYTES) + wid * (SW_STAGE_BYTES(TILES, UNROLL) * STAGES);
#else
    __shared__ __align__(128) unsigned char stage[WARPS * KSPLIT][SW_STAGE_BYTES(TILES, UNROLL) * STAGES];
    unsigned char* st = stage[wid];
#endif
    if (n0 < n)
        sw_staged_dot<MT, TILES, UNROLL, STAGES>(cx, lane, n0, n, w + 2ull * k0, x + 2ull * k0, k, kl, acc,
                                                 st);
#else
    if (n0 < n) sw_warp_dot_range<MT, TILES, UNROLL>(cx, lane, w + 2ull * k0, x + 2ull * k0, k, kl, ra, rb, acc);
#endif
#if KSPLIT > 1
    // no warp returns before the barrier: a warp past N skips its work only
    __shared__ float red[KSPLIT - 1][WARPS][4 * TILES][32];
    if (s > 0)
        for (int j = 0; j < TILES; j++)
            for (int i = 0; i < 4; i++) red[s - 1][rw][4 * j + i][lane] = acc[j][i];
    __syncthreads();
    if (s > 0) return;
    for (int q = 1; q < KSPLIT; q++) // slice order, as tests/cuda_host/swiglu_emulate.cu adds them
        for (int j = 0; j < TILES; j++)
            for (int i = 0; i < 4; i++) acc[j][i] += red[q - 1][rw][4 * j + i][lane];
#endif
    if (n0 < n) sw_fused_store<MT, TILES>(lane, n0, n, acc, y);
}
