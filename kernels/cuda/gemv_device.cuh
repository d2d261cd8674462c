// Part of the CUDA GEMV kernels' shared code (gemv_common.cuh includes the
// parts in order): the device-only side of the scalar quantized path. The
// cp.async and mbarrier primitives (shared with the tensor-core path,
// gemv_mma.cuh), the GPU copy context GbWarpCtx, and gb_gemv_quant, the
// kernel body that lays out shared memory, runs gb_quant_warp per warp and
// reduces and stores the rows.
#ifndef GPUBENCH_GEMV_DEVICE_CUH
#define GPUBENCH_GEMV_DEVICE_CUH

#include "gemv_warp.cuh"

// cp.async primitives shared by the scalar (GbWarpCtx) and tensor-core
// (GbMmaDevCtx, gemv_mma.cuh) device contexts: one predicated 16-byte copy
// global -> shared (s = shared-window address), commit, wait for all but N.
// The copy bypasses L1 (.cg: the weights, read once) unless L1 is true
// (.ca: x, which every warp reads and L1 keeps).
template <bool L1 = false>
__device__ __forceinline__ void gb_cp_async16(gb_u32 s, const unsigned char* src, bool pred)
{
    if constexpr (L1)
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t"
                     "@p cp.async.ca.shared.global [%0], [%1], 16;\n\t}\n" ::"r"(s),
                     "l"(src), "r"((int)pred)
                     : "memory");
    else
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t"
                     "@p cp.async.cg.shared.global [%0], [%1], 16;\n\t}\n" ::"r"(s),
                     "l"(src), "r"((int)pred)
                     : "memory");
}
__device__ __forceinline__ void gb_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void gb_cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Hopper bulk copies (BULK=1): global -> shared, completing on an mbarrier
// whose phase also counts the bytes expected (expect_tx). A slot read by
// ordinary loads is refilled by the async proxy only after a proxy fence.
__device__ __forceinline__ void gb_mbar_init(gb_u32 bar, gb_u32 count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void gb_mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
__device__ __forceinline__ void gb_mbar_expect(gb_u32 bar, gb_u32 bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void gb_bulk_copy(gb_u32 dst, const void* src, gb_u32 bytes, gb_u32 bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void gb_mbar_wait(gb_u32 bar, gb_u32 parity)
{
    gb_u32 done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}
__device__ __forceinline__ void gb_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// The GPU context: this lane's copies as cp.async into shared memory (BULK:
// lane 0's bulk copies, on the warp's mbarriers `bars`, one per slot).
struct GbWarpCtx {
    enum { LANES = 1 };
    gb_u32 lane;
    gb_u32 smem_u32;             // shared-window address of smem_ptr
    const unsigned char* smem_ptr;
    gb_u32 bars = 0;             // shared-window address of the mbarriers (BULK)
    __device__ __forceinline__ void bulk_expect(gb_u32 slot, gb_u32 bytes)
    {
        gb_fence_proxy_async(); // the lanes' reads of the slot's last unit come first
        gb_mbar_expect(bars + 8 * slot, bytes);
    }
    __device__ __forceinline__ void copy_bulk(unsigned char* dst, const unsigned char* src, gb_u32 bytes, gb_u32 slot)
    {
        gb_bulk_copy(smem_u32 + (gb_u32)(dst - smem_ptr), src, bytes, bars + 8 * slot);
    }
    __device__ __forceinline__ void bulk_wait(gb_u32 slot, gb_u32 parity) { gb_mbar_wait(bars + 8 * slot, parity); }
    __device__ __forceinline__ void copy16(unsigned char* dst, const unsigned char* src, bool pred)
    {
        gb_cp_async16(smem_u32 + (gb_u32)(dst - smem_ptr), src, pred);
    }
    __device__ __forceinline__ void copy16_l1(unsigned char* dst, const unsigned char* src, bool pred)
    {
        gb_cp_async16<true>((gb_u32)__cvta_generic_to_shared(dst), src, pred);
    }
    __device__ __forceinline__ void commit() { gb_cp_async_commit(); }
    template <int N>
    __device__ __forceinline__ void wait() { gb_cp_async_wait<N>(); }
    __device__ __forceinline__ void sync() { __syncwarp(); }
};

// The kernel body of every quantized format: NWARP row groups of R rows per
// block (rows_per_group = NWARP * R), KS warps (k-slices) per group, so
// 32 * NWARP * KS threads; S staging slots per warp, each of R/P rows (P parts
// per tile, gb_quant_warp), for T rows of x: row r of x row t is y[t * m + r].
template <class F, int R, int S, int NWARP, int KS, int P, int T = 1>
__device__ __forceinline__ void gb_gemv_quant(const unsigned char* W, const float* x, float* y,
                                              gb_u32 m, gb_u32 k)
{
    static_assert(KS >= 1, "KSPLIT must be at least 1");
    // One slot is enough when other slices' warps overlap this warp's copies
    // (at k = 5120 and KSPLIT = 5 a warp has one tile: a second slot would stay empty).
    static_assert(S >= 2 || (S == 1 && KS > 1), "STAGES must be at least 2 (1 only with KSPLIT > 1)");
    // (prep is counted only where used: the compiler drops the unused array)
    static_assert(P >= 1 && R % P == 0, "PARTS must divide ROWS");
    typedef GbQuantSmem<F, R, S, NWARP, KS, P, GB_BULK, T> Smem;
    constexpr bool XSM = Smem::XSM;
    constexpr int XS = XSM ? (int)GbXSlots<S, P, T>::N * T : 1; // x tiles (gb_quant_warp); 1: unused
    static_assert(Smem::BASE <= Smem::LIMIT,
                  "WARPS * KSPLIT * STAGES * ROWS / PARTS staging slots exceed the 48 KiB of static shared memory");
    __shared__ __align__(16) unsigned char slots[NWARP * KS][S][R / P][GbTile<F>::SLOT];
    __shared__ __align__(16) float prep[NWARP * KS][(R / P) * GbTile<F>::PREP_ROW];
    // (without XSM a 16-byte stand-in, never used)
    __shared__ __align__(16) unsigned char xslots[XSM ? NWARP * KS * XS : 1][XSM ? (int)GB_XSLOT : 16];
    // BULK: one mbarrier per slot (gb_stage_tile_bulk)
    __shared__ __align__(8) unsigned long long bars[GB_BULK ? NWARP * KS : 1][GB_BULK ? S : 1];
    const gb_u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    gb_u32 group, slice;
    gb_ksplit_warp<KS>(warp, group, slice);
    const gb_u32 row0 = (blockIdx.x * NWARP + group) * R;
    const bool live = row0 < m; // the same for all slices of a group
    // Without the split no barrier spans warps, so a warp without rows leaves
    // now; with it, every warp must reach the block barrier below.
    if (KS == 1 && !live) return;
    float mine[T];
#pragma unroll
    for (int t = 0; t < T; t++) mine[t] = 0.0f;
    if (live) {
        float acc[T * R];
#pragma unroll
        for (int r = 0; r < T * R; r++) acc[r] = 0.0f;
        GbWarpCtx ctx{lane, (gb_u32)__cvta_generic_to_shared(&slots[warp][0][0][0]),
                      &slots[warp][0][0][0]};
        if constexpr (GB_BULK) {
            ctx.bars = (gb_u32)__cvta_generic_to_shared(&bars[warp][0]);
            if (lane == 0) {
#pragma unroll
                for (int i = 0; i < S; i++) gb_mbar_init(ctx.bars + 8 * i, 1);
                gb_mbar_init_fence();
            }
            __syncwarp();
        }
        gb_quant_warp<F, R, S, KS, P, XSM, GB_BULK, T>(ctx, lane, W, x, m, k, row0, slice, slots[warp], prep[warp],
                                           XSM ? reinterpret_cast<unsigned char(*)[GB_XSLOT]>(xslots[warp * XS]) : nullptr, acc);
#pragma unroll
        for (int r = 0; r < T * R; r++) acc[r] = gb_warp_sum(acc[r]);
        // Lane r keeps row r: one store instruction per warp and x row instead of R.
#pragma unroll
        for (int t = 0; t < T; t++) {
            mine[t] = acc[t * R];
#pragma unroll
            for (int r = 1; r < R; r++) mine[t] = lane == (gb_u32)r ? acc[t * R + r] : mine[t];
        }
    }
    if constexpr (KS > 1) {
        // x row t's partials in their own NWARP * KS * R floats
        __shared__ float red[T * NWARP * KS * R];
#pragma unroll
        for (int t = 0; t < T; t++)
            if (live) gb_ksplit_put<R, KS>(red + t * NWARP * KS * R, group, slice, lane, mine[t]);
        __syncthreads(); // every slice's partials are in red
        if (!live || slice != 0 || lane >= (gb_u32)R) return;
#pragma unroll
        for (int t = 0; t < T; t++) mine[t] = gb_ksplit_sum<R, KS>(red + t * NWARP * KS * R, group, lane);
    }
#pragma unroll
    for (int t = 0; t < T; t++)
        if (lane < (gb_u32)R && row0 + lane < m) (y + (gb_u64)t * m)[row0 + lane] = mine[t];
}

#endif
