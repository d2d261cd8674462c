// The wgmma route of the CUDA Linear kernels (large T, sm_90a): a tiled GEMM
// on Hopper's warpgroup MMA, yT[N, T] = W[N, K] . xT, both operands read by
// the tensor cores from shared memory. docs/kernels/cuda-linear.md, "wgmma route".
//
// A block of LN_WG warpgroups computes BM = 64 LN_MT LN_WG rows of W by LN_BN
// rows t of x, K walked in units of 64. Per unit the block's threads load the
// weights of the tile (4 lanes a row, F's runs, LN_WPF units ahead in
// registers), decode them exactly to bf16 (codes minus their offset, or the
// prescaled formats' values) and store them into a shared-memory stage, the
// rows' fp32 scales beside them; x goes to the stage by cp.async, LN_STAGES -
// 2 units ahead. Both tiles are K-major, 128 bytes (64 bf16) a row, in the
// 128-byte swizzle (chunk c of row r at c ^ (r & 7)), so that wgmma's matrix
// descriptors read them as they lie. Warpgroup g multiplies rows
// [64 LN_MT g, 64 LN_MT (g + 1)) by the whole x tile: for nvfp4 and bf16
// straight into fp32 accumulators (one commit group per unit, one left in
// flight while the next unit is decoded); for the formats with scales after
// the sum on their integer codes, the accumulators rescaled per group (below),
// so that no weight is rounded, as on the other routes. With LN_HALF = 1
// (H below) the formats with scales after the sum instead store code x scale
// x 2^-f in fp16 and multiply x in fp16 from a first launch
// (linear_half_prep.cu): no rescale, one unit left in flight, the sums
// times 2^(f + g) at the end (docs/kernels/cuda-linear.md, "Weights in fp16").
//
// Lockstep (LN_WS = 0): a stage is rewritten only after every warpgroup's
// wgmma that read it has completed: the weights of unit u go to stage u % S,
// last read by unit u - S, whose completion each warpgroup waited for before
// the barrier of unit u - S + 2 <= u - 1 (S >= 3); x of unit u + S - 2 goes,
// after the barrier of unit u, to the stage of unit u - 2, waited for before
// it. The warp-specialized variant (LN_WS = 1) orders the same by mbarriers.
//
// Closing the pipeline (LN_CLOSE): 0, the last unit waits for all its
// products inside the loop (so the loop's back-edge merges paths with and
// without products in flight, and ptxas injects a warpgroup.wait there,
// advisory C7517); 1, every unit leaves the same products in flight across
// the back-edge, as CUTLASS's main loop does, and the wait, with the formats'
// last scale, comes after the loop (no injected wait). docs/kernels/cuda-linear.md,
// "Closing the pipeline".
//
// The kernel bodies are __host__ __device__ templates over a per-thread
// context C through which every shared-memory access, copy, barrier,
// mbarrier and wgmma goes (LwDevCtx below issues the instructions); the host
// emulation (tests/cuda_host/linear_wgmma_emulate.cu) runs every thread of a
// block as a coroutine with a context that models them and checks each.
#ifndef GPUBENCH_LINEAR_WGMMA_CUH
#define GPUBENCH_LINEAR_WGMMA_CUH

#include "dynamic_shared.cuh"
#include "linear_formats.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "the wgmma route needs sm_90a: compile it with the define GB_ARCH_SPECIFIC=1 (lib/gpubench/linear_cuda.lua)"
#endif

// A stage: the weights (BM rows of 128 bytes), x (BN rows), and for the
// formats with scales after the sum two fp32 arrays per group (the rows'
// ratios r and scales e, below); each stage 1024-byte aligned (the 128-byte swizzle repeats every 8
// rows of 128 bytes), plus 1024 bytes to align the first.
// (LN_HALF = 1, H: the weights go to the stage already scaled, no arrays;
// LN_XTILE = 3 or 4, XT: the weights stay in registers, a stage is x alone.)
template <class F, int WG, int MT, int BN, int H = 0, int XT = 0>
GB_HD constexpr unsigned lw_stage_bytes()
{
    return ((XT >= 3 ? 0 : 64 * MT * WG * 128) + BN * 128 +
            ((int)F::MODE == (int)LN_SCALE_AFTER && !H ? 2 * F::NG * 64 * MT * WG * 4 : 0) + 1023) / 1024 * 1024;
}
// x's offset in a stage: after the weights, or (LN_XTILE = 3, 4) at its start.
template <int BM, int XT>
GB_HD constexpr unsigned lw_x_at()
{
    return XT >= 3 ? 0 : BM * 128;
}
// With LN_WS = 1, 2 S mbarriers after the stages; with LN_XTILE = 1, S; 2 to 4, 2 S.
// Then with LN_HALF = 1 and LN_WS = 0 the epilogue's factors, fp32: 2^g of
// the tile's BN rows of x, then 2^f of its rows of W (lw_factors); the
// dynamic shared memory asked for adds the 1024 bytes that align the first stage.
template <class F, int WG, int MT, int BN, int S, int WS, int H = 0, int XT = 0>
GB_HD constexpr unsigned lw_factors_at()
{
    return S * lw_stage_bytes<F, WG, MT, BN, H, XT>() + (WS ? 16 * S : 0) + 8 * (XT >= 3 ? 2 : XT) * S;
}
template <class F, int WG, int MT, int BN, int S, int WS, int H = 0, int XT = 0>
GB_HD constexpr unsigned lw_shared_bytes_ws()
{
    return lw_factors_at<F, WG, MT, BN, S, WS, H, XT>() + (H && !WS ? 4 * (BN + 64 * MT * WG) : 0) + 1024;
}

#define LW_REGS32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define LW_REGS64 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define LW_REGS128 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

// A shared-memory matrix descriptor of a K-major bf16 tile in the 128-byte
// swizzle: start address, leading offset unused (1), 1024 bytes between
// groups of 8 rows, swizzle mode 1 (128 B). A k-step of 16 moves the start
// by 32 bytes inside the swizzled row.
GB_HD gb_u64 lw_desc(gb_u32 saddr)
{
    return (gb_u64)((saddr & 0x3FFFFu) >> 4) | (gb_u64)1 << 16 | (gb_u64)(1024 >> 4) << 32 | (gb_u64)1 << 62;
}

// D[64 x N] = A[64 x 16] . B[16 x N] + (acc ? D : 0), A and B from shared
// memory (K-major both), fp32 D: thread (warp w, lane g * 4 + t) holds d[4 j + c] = row
// 16 w + g + 8 (c >> 1), column 8 j + 2 t + (c & 1). The operands bf16, or
// fp16 with H (LN_HALF). One wrapper per width: the operand lists differ
// only in length (inline asm takes no variadic register list).
#define LW_D32 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define LW_D64 LW_D32, \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define LW_D128 LW_D64, \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define LW_MMA(SHAPE, TY, REGS, AB, P) \
    "{\n.reg .pred p;\nsetp.ne.b32 p, " P ", 0;\n"                                                     \
    "wgmma.mma_async.sync.aligned." SHAPE ".f32." TY "." TY " {" REGS "}, " AB ", p, 1, 1, 0, 0;\n}\n"

template <bool H>
__device__ __forceinline__ void lw_mma_n64(float* d, gb_u64 da, gb_u64 db, int acc)
{
    if constexpr (H) asm volatile(LW_MMA("m64n64k16", "f16", LW_REGS32, "%32, %33", "%34") : LW_D32 : "l"(da), "l"(db), "r"(acc));
    else asm volatile(LW_MMA("m64n64k16", "bf16", LW_REGS32, "%32, %33", "%34") : LW_D32 : "l"(da), "l"(db), "r"(acc));
}
template <bool H>
__device__ __forceinline__ void lw_mma_n128(float* d, gb_u64 da, gb_u64 db, int acc)
{
    if constexpr (H) asm volatile(LW_MMA("m64n128k16", "f16", LW_REGS64, "%64, %65", "%66") : LW_D64 : "l"(da), "l"(db), "r"(acc));
    else asm volatile(LW_MMA("m64n128k16", "bf16", LW_REGS64, "%64, %65", "%66") : LW_D64 : "l"(da), "l"(db), "r"(acc));
}
template <bool H>
__device__ __forceinline__ void lw_mma_n256(float* d, gb_u64 da, gb_u64 db, int acc)
{
    if constexpr (H) asm volatile(LW_MMA("m64n256k16", "f16", LW_REGS128, "%128, %129", "%130") : LW_D128 : "l"(da), "l"(db), "r"(acc));
    else asm volatile(LW_MMA("m64n256k16", "bf16", LW_REGS128, "%128, %129", "%130") : LW_D128 : "l"(da), "l"(db), "r"(acc));
}

// The same with A from registers (LN_XTILE = 3; fp16 only): a[4] is the
// thread's fragment of A[64 x 16], as mma.m16n8k16's of its warp's 16 rows:
// a[0] row g, k 2 t and 2 t + 1 (low half first), a[1] row g + 8, a[2] row g,
// k 2 t + 8 and 2 t + 9, a[3] row g + 8 (lane g * 4 + t).
#define LW_MMA_RA(SHAPE, REGS, A, B, P) \
    "{\n.reg .pred p;\nsetp.ne.b32 p, " P ", 0;\n" \
    "wgmma.mma_async.sync.aligned." SHAPE ".f32.f16.f16 {" REGS "}, {" A "}, " B ", p, 1, 1, 0;\n}\n"
template <int N>
__device__ __forceinline__ void lw_mma_ra(float* d, const gb_u32* a, gb_u64 db)
{
    static_assert(N == 64 || N == 128 || N == 256, "LN_BN must be 64, 128 or 256");
    if constexpr (N == 64)
        asm volatile(LW_MMA_RA("m64n64k16", LW_REGS32, "%32, %33, %34, %35", "%36", "%37")
                     : LW_D32 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
    else if constexpr (N == 128)
        asm volatile(LW_MMA_RA("m64n128k16", LW_REGS64, "%64, %65, %66, %67", "%68", "%69")
                     : LW_D64 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
    else
        asm volatile(LW_MMA_RA("m64n256k16", LW_REGS128, "%128, %129, %130, %131", "%132", "%133")
                     : LW_D128 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}

template <int N, bool H>
__device__ __forceinline__ void lw_mma(float* d, gb_u64 da, gb_u64 db, int acc)
{
    static_assert(N == 64 || N == 128 || N == 256, "LN_BN must be 64, 128 or 256");
    if constexpr (N == 64) lw_mma_n64<H>(d, da, db, acc);
    else if constexpr (N == 128) lw_mma_n128<H>(d, da, db, acc);
    else lw_mma_n256<H>(d, da, db, acc);
}

__device__ __forceinline__ void lw_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void lw_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void lw_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the accumulators in place around the asynchronous products (the
// compiler must not copy them while a wgmma owns them), as CUTLASS's
// warpgroup_fence_operand.
template <int N>
__device__ __forceinline__ void lw_hold(float* d)
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}

// A register-A fragment written here, not earlier: volatile asm keeps its
// place after the wait before it (LwMma::unit_ra).
__device__ __forceinline__ void lw_set_frag(gb_u32* f, gb_u32 a0, gb_u32 a1, gb_u32 a2, gb_u32 a3)
{
    asm volatile("mov.b32 %0, %4;\nmov.b32 %1, %5;\nmov.b32 %2, %6;\nmov.b32 %3, %7;\n"
                 : "=r"(f[0]), "=r"(f[1]), "=r"(f[2]), "=r"(f[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3));
}

// The threads' st.shared and cp.async writes made visible to wgmma's reads.
__device__ __forceinline__ void lw_proxy_fence() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void lw_sts128(gb_u32 saddr, const gb_u32* v)
{
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(saddr), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3])
                 : "memory");
}

// mbarriers of the warp-specialized variant (LN_WS = 1).
__device__ __forceinline__ void lw_bar_init(gb_u32 bar, gb_u32 count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void lw_bar_arrive(gb_u32 bar)
{
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}
// One bulk copy of `bytes` (a multiple of 16) from global memory into shared
// memory, its completion counted on an mbarrier as bytes (LN_XTILE), after
// the issuing thread's arrival that expects them.
__device__ __forceinline__ void lw_bar_expect(gb_u32 bar, gb_u32 bytes)
{
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void lw_bulk(gb_u32 dst, const void* src, gb_u32 bytes, gb_u32 bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst), "l"(src),
                 "r"(bytes), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void lw_bar_wait(gb_u32 bar, gb_u32 parity)
{
    asm volatile("{\n.reg .pred p;\nLW_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@p bra LW_DONE;\nbra LW_WAIT;\nLW_DONE:\n}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

// The device side of the wgmma route's context (the kernel bodies below are
// written over it): shared memory by 32-bit offsets, the wgmma group and its
// fences, mbarriers; LnDevCtx's loads, cp.async groups and barrier.
struct LwDevCtx : LnDevCtx {
    __device__ __forceinline__ gb_u32 thread() const { return threadIdx.x; }
    __device__ __forceinline__ gb_u32 block(int d) const { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }
    // the block's dynamic shared memory (at least BYTES), 1024-byte aligned
    template <unsigned BYTES>
    __device__ __forceinline__ gb_u32 shared_base() const
    {
        return ((gb_u32)__cvta_generic_to_shared(gb_dynamic_shared(BYTES)) + 1023u) & ~1023u;
    }
    __device__ __forceinline__ void sts128(gb_u32 a, const gb_u32* v) const { lw_sts128(a, v); }
    __device__ __forceinline__ void sts_f32(gb_u32 a, float v) const
    {
        asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(a), "f"(v) : "memory");
    }
    __device__ __forceinline__ float lds_f32(gb_u32 a) const
    {
        float v;
        asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(a));
        return v;
    }
    __device__ __forceinline__ void lds_v4(gb_u32 a, float* v) const
    {
        asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3]) : "r"(a));
    }
    // 4 bf16 of y (lo: the first two) in one 8-byte store; p 8-byte aligned
    __device__ __forceinline__ void st_y4(unsigned short* p, gb_u32 lo, gb_u32 hi) const
    {
        *reinterpret_cast<uint2*>(p) = make_uint2(lo, hi);
    }
    __device__ __forceinline__ void cp16(gb_u32 a, const void* src, bool pred) const { ln_cp16(a, src, pred); }
    __device__ __forceinline__ void proxy_fence() const { lw_proxy_fence(); }
    template <int N, bool H = false>
    __device__ __forceinline__ void wgmma(float* d, gb_u64 da, gb_u64 db) const { lw_mma<N, H>(d, da, db, 1); }
    template <int N>
    __device__ __forceinline__ void wgmma_ra(float* d, const gb_u32* a, gb_u64 db) const { lw_mma_ra<N>(d, a, db); }
    __device__ __forceinline__ void set_frag(gb_u32* f, gb_u32 a0, gb_u32 a1, gb_u32 a2, gb_u32 a3) const
    {
        lw_set_frag(f, a0, a1, a2, a3);
    }
    // the LN_HALF prepass's exponents (linear_half_prep.cu)
    __device__ __forceinline__ int ld_ex(const int* p) const { return __ldg(p); }
    __device__ __forceinline__ void wg_fence() const { lw_fence(); }
    __device__ __forceinline__ void wg_commit() const { lw_commit(); }
    template <int N>
    __device__ __forceinline__ void wg_wait() const { lw_wait<N>(); }
    template <int N>
    __device__ __forceinline__ void hold(float* d) const { lw_hold<N>(d); }
    __device__ __forceinline__ void bar_init(gb_u32 a, gb_u32 count) const { lw_bar_init(a, count); }
    __device__ __forceinline__ void bar_arrive(gb_u32 a) const { lw_bar_arrive(a); }
    __device__ __forceinline__ void bar_wait(gb_u32 a, gb_u32 parity) const { lw_bar_wait(a, parity); }
    __device__ __forceinline__ void bar_expect(gb_u32 a, gb_u32 bytes) const { lw_bar_expect(a, bytes); }
    // barrier `id` (1 ..) of `count` threads: a warpgroup's own
    __device__ __forceinline__ void named_barrier(gb_u32 id, gb_u32 count) const
    {
        asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
    }
    __device__ __forceinline__ void bar_init_fence() const { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
    __device__ __forceinline__ void bulk(gb_u32 a, const void* src, gb_u32 bytes, gb_u32 bar) const { lw_bulk(a, src, bytes, bar); }
    // v as lane 0 of the warp has it: a value ptxas knows is warp-uniform
    __device__ __forceinline__ gb_u32 warp_uniform(gb_u32 v) const { return __shfl_sync(0xffffffffu, v, 0); }
    __device__ __forceinline__ void st_part(float* part, gb_u64 i, float v) const { part[i] = v; }
    // thread block clusters (LN_CLUSTER): every thread of the cluster's blocks
    // arrives, its shared-memory writes released to them, and waits for them
    __device__ __forceinline__ void cluster_sync() const
    {
        asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
    }
    // 16 bytes at shared offset a of the cluster's block `rank`
    __device__ __forceinline__ void ld_cluster_v4(gb_u32 a, gb_u32 rank, float* v) const
    {
        gb_u32 ra;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(ra) : "r"(a), "r"(rank));
        asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                     : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
                     : "r"(ra)
                     : "memory");
    }
};

// Byte offset of chunk c (8 bf16) of row r in a swizzled tile.
GB_HD gb_u32 lw_swz(gb_u32 r, gb_u32 c) { return r * 128 + ((c ^ (r & 7)) << 4); }

// LN_XTILE: x unit u of the tile of rows t0 .. t0 + BN - 1 as one bulk copy to
// shared dst from the prepass's tiled copy (linear_half_prep.cuh, ln_half_x_at:
// each unit's BN rows of 64 contiguous, swizzled as the stage wants them,
// zeros past T and K; nunits: K's units), its bytes counted on mbarrier
// `bar`; one thread issues it.
template <int BN, class C>
GB_HD void lw_bulk_x(C& ctx, gb_u32 dst, const unsigned short* x, gb_u32 t0, gb_u32 nunits, gb_u32 u, gb_u32 bar)
{
    ctx.bar_expect(bar, BN * 128);
    ctx.bulk(dst, x + ((gb_u64)(t0 / BN) * nunits + u) * (BN * 64), BN * 128, bar);
}

// The runs of one unit of weights: run i of a thread is row rq + NP / 4 i of
// the tile, lane t of its quad.
template <class F, int RUNS>
struct LwRuns {
    typename F::Raw r[RUNS];
};

// Formats with scales after the sum (q4, q5, q6, w8) keep their weights
// exact: the tensor cores multiply the integer codes, and the accumulators
// hold the sum so far in units of the current group's scale. With e_g the
// scale of group g of a row (a zero scale carries the previous one, and its
// codes are stored as zeros) and r_g = e_(g-1) / e_g, the accumulators are
// multiplied by r_g before group g's products are added, and by the last
// e at the end: D_g = r_g D_(g-1) + C_g, y = e_last D_last. One accumulator
// set, products as wide as the tile; each group waits for the previous one's
// products before its rescale (the other warpgroup's products fill the gap).

// What NP threads (p = 0 .. NP - 1) do to fill the stages: the tile's weights
// of a unit (loaded, decoded, stored with their r and e) and its x.
// With H (LN_HALF = 1) the weights go to the stage as fp16, (code - offset)
// times the group's scale times 2^-f of the row (f from the prepass), and x
// is the prepass's fp16 copy. XC (LN_XCOPY = 1): x's copies from addresses
// set once per thread (stage_x).
template <class F, int BM, int BN, int NP, int STAGE, int H = 0, int XC = 0>
struct LwFill {
    enum { RUNS = BM * 4 / NP, XCP = BN * 8 / NP, A_BYTES = BM * 128, B_BYTES = BN * 128,
           AFTER = (int)F::MODE == (int)LN_SCALE_AFTER && !H };
    static_assert(!H || (int)F::MODE == (int)LN_SCALE_AFTER, "LN_HALF is for the formats with group scales (q4, q5, q6, w8)");
    static_assert(RUNS * NP == BM * 4, "the tile's rows must split evenly over the filling threads");
    static_assert(XCP * NP == BN * 8, "the x tile's 16-byte chunks must split evenly over the filling threads");
    typedef LwRuns<F, RUNS> Runs;
    gb_u32 base, p, t, rq, K, T, t0, nunits;
    const unsigned short* x;
    LnPtr P[RUNS];
    float eprev[RUNS]; // the previous group's scale (scales after the sum)
    float sinv[RUNS];  // 2^-f of the run's row (H)
    gb_u32 rows[RUNS];
    const unsigned short* xr; // XC: x at the thread's first row of the tile and its chunk, unit 0
    gb_u32 xoff, xrow;        // XC: its swizzled offset in a stage's x tile; that row (t0 + r0)

    // Rows past N are read as row N - 1: their sums are never stored.
    GB_HD LwFill(gb_u32 base_, gb_u32 p_, const unsigned char* W, const unsigned short* x_,
                                      gb_u32 N, gb_u32 K_, gb_u32 T_, gb_u32 n0, gb_u32 t0_)
        : base(base_), p(p_), t(p_ & 3), rq(p_ >> 2), K(K_), T(T_), t0(t0_), nunits((K_ + 63) / 64), x(x_)
    {
        const LnGeo geo = F::geo(W, N, K);
#pragma unroll
        for (int i = 0; i < RUNS; i++) {
            const gb_u32 row = n0 + rq + NP / 4 * i;
            rows[i] = row < N ? row : N - 1;
            P[i] = F::ptr(geo, rows[i], t);
            eprev[i] = 1.0f;
            sinv[i] = 1.0f;
        }
        xrow = t0 + p / 8;
        xr = x + (gb_u64)xrow * K + 8 * (p % 8);
        xoff = lw_swz(p / 8, p % 8);
    }
    // H: the rows' exponents f, ex_rows[n] (linear_half_prep.cu)
    template <class C>
    GB_HD void half_rows(const C& ctx, const int* ex_rows)
    {
#pragma unroll
        for (int i = 0; i < RUNS; i++) sinv[i] = ln_pow2(-ctx.ld_ex(ex_rows + rows[i]));
    }
    template <class C>
    GB_HD void load_unit(const C& ctx, gb_u32 u, Runs& c) const
    {
        // Formats whose load reads less at K's end (TAIL_CUT: bf16) take a tail
        // and a plain load behind a branch; the others one load whatever the
        // unit: with the branch, ptxas merged their two identical loads with
        // moves that waited for the load, so nothing was loaded ahead
        // (docs/kernels/cuda-linear.md, "Loads that waited").
        const int kleft = (int)K - 64 * (int)u - 8 * (int)F::chunk(t, 0);
#pragma unroll
        for (int i = 0; i < RUNS; i++) {
            const LnPtr pr = ln_at<F>(P[i], u);
            if (F::TAIL_CUT && u + 1 != nunits) F::template load<false>(ctx, pr, 0, 0, c.r[i]);
            else F::template load<true>(ctx, pr, 0, kleft, c.r[i]);
        }
    }
    // The weights of a unit into stage st as bf16, exact: the prescaled
    // formats' values, or codes minus their offset (zeros in a group whose
    // scale is 0) with the rows' r and e per group (lane 0 of each row).
    template <class C>
    GB_HD void store_unit(C& ctx, const Runs& c, int st)
    {
        const gb_u32 a = base + st * STAGE;
#pragma unroll
        for (int i = 0; i < RUNS; i++) {
            gb_u32 d[8];
            if constexpr (H) F::decode_half(c.r[i], sinv[i], d);
            else F::decode(c.r[i], d);
            const gb_u32 row = rq + NP / 4 * i;
            if constexpr (AFTER) {
#pragma unroll
                for (int grp = 0; grp < F::NG; grp++) {
                    const float sc = F::scale(c.r[i], grp), e = sc != 0.0f ? sc : eprev[i];
#pragma unroll
                    for (int w = 0; w < 8; w++)
                        if ((F::NG == 2 ? w / 4 : 0) == grp && sc == 0.0f) d[w] = 0;
                    if (t == 0) {
                        const gb_u32 at = a + A_BYTES + B_BYTES + 4 * (2 * grp * BM + row);
                        ctx.sts_f32(at, eprev[i] / e);
                        ctx.sts_f32(at + 4 * BM, e);
                    }
                    eprev[i] = e;
                }
            }
            ctx.sts128(a + lw_swz(row, F::chunk(t, 0)), d);
            ctx.sts128(a + lw_swz(row, F::chunk(t, 1)), d + 4);
        }
    }
    // LN_XTILE = 1, 2: x unit u of the tile into stage st by one bulk copy (lw_bulk_x)
    template <class C>
    GB_HD void bulk_x(C& ctx, gb_u32 u, int st, gb_u32 bar) const
    {
        lw_bulk_x<BN>(ctx, base + st * STAGE + A_BYTES, x, t0, nunits, u, bar);
    }
    // LN_XTILE = 3: the weights of a unit decoded to fp16 (H) in registers,
    // run i's 16 to a[i] in F's chunk order (chunk(t, 0)'s 8, then chunk(t,
    // 1)'s, two a word): with x's k permuted as ln_half_prep's PERM writes
    // it, word 2 s + h of a run is its row's pair of k-step s, half h, of the
    // wgmma's A fragment (LwMma::unit_ra).
    GB_HD void decode_ra(const Runs& c, gb_u32 (&a)[RUNS][8]) const
    {
        static_assert(H != 0, "the weights from registers are LN_HALF's fp16");
#pragma unroll
        for (int i = 0; i < RUNS; i++) F::decode_half(c.r[i], sinv[i], a[i]);
    }
    // x unit u (k = 64 u .. 64 u + 63) of rows t0 .. t0 + BN - 1 into stage st,
    // zero-filled past T and past K. XC = 1: a thread's chunks are chunk p % 8
    // of rows p / 8 + NP / 8 m (NP a multiple of 64, so every such row has the
    // same row & 7 and the swizzled offsets differ by NP / 8 x 128 bytes);
    // from the address set once, a unit adds 64 elements and a chunk a row
    // stride; XC = 0 works each copy's address out again
    // (docs/kernels/cuda-linear.md, "Copies of x").
    template <class C>
    GB_HD void stage_x(C& ctx, gb_u32 u, int st) const
    {
        const gb_u32 b = base + st * STAGE + A_BYTES;
        if constexpr (XC != 0) {
            static_assert(NP % 64 == 0, "LN_XCOPY = 1 takes a multiple of 64 filling threads");
            const bool kok = 64 * u + 8 * (p % 8) < K;
            const unsigned short* s = xr + 64 * (gb_u64)u;
#pragma unroll
            for (int m = 0; m < XCP; m++) {
                const bool ok = kok && xrow + NP / 8 * m < T;
                ctx.cp16(b + xoff + NP / 8 * 128 * m, s + (gb_u64)(NP / 8 * m) * K, ok);
            }
        } else {
#pragma unroll
            for (int m = 0; m < XCP; m++) {
                const gb_u32 id = p + NP * m, r = id / 8, c = id % 8;
                const gb_u32 k = 64 * u + 8 * c, tt = t0 + r;
                const bool ok = tt < T && k < K;
                const unsigned short* src = ok ? x + (gb_u64)tt * K + k : x;
                ctx.cp16(b + lw_swz(r, c), src, ok);
            }
        }
    }
};

// The products side of a warpgroup: MT m64 tiles of rows [64 MT wg, 64 MT
// (wg + 1)) of the block tile by its BN rows of x, into fp32 accumulators.
// XAT: x's offset in a stage (lw_x_at).
template <class F, int MT, int BN, int BM, int STAGE, int H = 0, int XAT = BM * 128>
struct LwMma {
    enum { A_BYTES = XAT, B_BYTES = BN * 128, AFTER = (int)F::MODE == (int)LN_SCALE_AFTER && !H };
    gb_u32 base, wg, g, w4;
    float acc[MT][BN / 2];

    GB_HD LwMma(gb_u32 base_, gb_u32 wg_, gb_u32 lane, gb_u32 w4_)
        : base(base_), wg(wg_), g(lane >> 2), w4(w4_)
    {
#pragma unroll
        for (int m = 0; m < MT; m++)
#pragma unroll
            for (int j = 0; j < BN / 2; j++) acc[m][j] = 0.0f;
    }
    template <class C>
    GB_HD void hold(const C& ctx)
    {
#pragma unroll
        for (int m = 0; m < MT; m++) ctx.template hold<BN / 2>(acc[m]);
    }
    // the k-steps ks0 .. ks0 + n - 1 of stage st, one commit group
    template <class C>
    GB_HD void products(C& ctx, int st, int ks0, int n)
    {
        const gb_u32 a = base + st * STAGE + wg * (MT * 64 * 128), b = base + st * STAGE + A_BYTES;
        ctx.wg_fence();
        hold(ctx);
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
            if (kk < n) {
#pragma unroll
                for (int m = 0; m < MT; m++)
                    ctx.template wgmma<BN, H != 0>(acc[m], lw_desc(a + m * 64 * 128 + 32 * (ks0 + kk)), lw_desc(b + 32 * (ks0 + kk)));
            }
        ctx.wg_commit();
        hold(ctx);
    }
    // LN_XTILE = 3: a unit's 4 k-steps with A from registers (a: the
    // warp's two runs, rows g and g + 8, as LwFill::decode_ra leaves them) and
    // x from stage st, a commit group each. The fragment of k-step kk lives
    // in frag[kk] across units; writing a wgmma's A registers before the
    // wait that completes it is undefined (the PTX ISA), so each k-step
    // first waits until the last unit's k-step kk has completed (3 groups
    // left), then writes frag[kk] (ctx.set_frag: after that wait, which a
    // plain assignment need not be), then issues, as CUTLASS's register-A
    // mainloop does. ptxas may still reuse those registers earlier
    // (docs/kernels/cuda-linear.md, "The weights from registers"). When
    // this returns, the last unit's products have completed.
    // SERIAL (LN_XTILE = 4, a diagnostic): every product of the unit waited
    // for at its end, so that no fragment register is rewritten or reused
    // while a product is in flight whatever ptxas schedules (the overlap of
    // the decode with the products given up).
    template <bool SERIAL = false, class C>
    GB_HD void unit_ra(C& ctx, int st, const gb_u32 (&a)[2][8], gb_u32 (&frag)[4][4])
    {
        static_assert(MT == 1 && H != 0, "the weights from registers: one m64 tile a warpgroup, fp16 (LN_HALF = 1)");
        const gb_u32 b = base + st * STAGE + A_BYTES;
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            ctx.template wg_wait<3>();
            ctx.set_frag(frag[kk], a[0][2 * kk], a[1][2 * kk], a[0][2 * kk + 1], a[1][2 * kk + 1]);
            ctx.wg_fence();
            hold(ctx);
            ctx.template wgmma_ra<BN>(acc[0], frag[kk], lw_desc(b + 32 * kk));
            ctx.wg_commit();
            hold(ctx);
        }
        if constexpr (SERIAL) ctx.template wg_wait<0>();
    }
    // acc times the per-row values at array `which` (0: r, 1: e) of group grp
    // in stage st: rows g and g + 8 of each of the warp's m16 slices.
    template <class C>
    GB_HD void scale_rows(const C& ctx, int st, int grp, int which)
    {
        const gb_u32 sc =
            base + st * STAGE + A_BYTES + B_BYTES + 4 * ((2 * grp + which) * BM + (wg * MT) * 64 + 16 * w4 + g);
#pragma unroll
        for (int m = 0; m < MT; m++) {
            const float s0 = ctx.lds_f32(sc + 4 * 64 * m), s1 = ctx.lds_f32(sc + 4 * (64 * m + 8));
#pragma unroll
            for (int j = 0; j < BN / 2; j++) acc[m][j] *= (j & 2) ? s1 : s0;
        }
    }
    // unit u of stage st; the previous unit's products complete when this returns
    // for the formats with scales after the sum (rescaled before each group), one
    // unit left in flight for the others; `last` closes the pipeline
    template <class C>
    GB_HD void unit(C& ctx, gb_u32 u, int st, bool last)
    {
        if constexpr (!AFTER) {
            products(ctx, st, 0, 4);
            // the last unit closes the pipeline here, so that no path leaves the
            // loop with a product in flight (ptxas would serialize them all)
            if (!last) ctx.template wg_wait<1>();
            else ctx.template wg_wait<0>();
        } else {
#pragma unroll
            for (int grp = 0; grp < F::NG; grp++) {
                if (u > 0 || grp > 0) {
                    ctx.template wg_wait<0>();
                    hold(ctx);
                    scale_rows(ctx, st, grp, 0);
                }
                products(ctx, st, grp * F::KG, F::KG);
            }
            if (last) finish(ctx, st, true);
        }
    }
    // Closing the pipeline (the last unit with LN_CLOSE = 0, after the loop with
    // 1): every product completes and (scales after the sum) the last unit's e
    // multiplies the accumulators (any: the slice had a unit; st: the last
    // one's stage, which no fill rewrites after it)
    template <class C>
    GB_HD void finish(C& ctx, int st, bool any)
    {
        ctx.template wg_wait<0>();
        hold(ctx);
        if constexpr (AFTER)
            if (any) scale_rows(ctx, st, F::NG - 1, 1);
    }
    // out(nl, tl, v) for every sum of the thread's fragment, rows nl and
    // columns tl of the tile (inside N and T or not): NVFP4's tensor scale
    // applied; with H the sums times 2^f of the row and 2^g of the row of x
    // (ex: g[T], then f[N])
    // fac (SF): those factors from shared memory at fac, as lw_factors left
    // them (2^g of the tile's rows of x, then 2^f of its rows of W); else each
    // read from ex here, which ptxas issued a few at a time, each batch
    // waiting for L2 (docs/kernels/cuda-linear.md, "The epilogue's factors").
    template <bool SF = false, class C, class Out>
    GB_HD void each_sum(C& ctx, gb_u32 N, gb_u32 T, gb_u32 n0, gb_u32 t0, gb_u32 t, float gscale, const int* ex, Out&& out,
                        gb_u32 fac = 0)
    {
        hold(ctx);
#pragma unroll
        for (int m = 0; m < MT; m++) {
            const gb_u32 nl = (wg * MT + m) * 64 + 16 * w4 + g, nm = n0 + nl; // rows nm and nm + 8
            float rf[2] = {1.0f, 1.0f}; // H: 2^f of those rows, read once
            if constexpr (H != 0) {
                for (int h = 0; h < 2; h++) {
                    if (SF) rf[h] = ctx.lds_f32(fac + 4 * (BN + nl + 8 * h));
                    else if (nm + 8 * h < N) rf[h] = ln_pow2(ctx.ld_ex(ex + T + nm + 8 * h));
                }
            }
#pragma unroll
            for (int j = 0; j < BN / 8; j++) {
                const gb_u32 tl = 8 * j + 2 * t, tj = t0 + tl; // rows of x tj and tj + 1
                float tf[2] = {1.0f, 1.0f};                    // H: their 2^g
                if constexpr (H != 0) {
                    for (int b = 0; b < 2; b++) {
                        if (SF) tf[b] = ctx.lds_f32(fac + 4 * (tl + b));
                        else if (tj + b < T) tf[b] = ln_pow2(ctx.ld_ex(ex + tj + b));
                    }
                }
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    float v = F::GSCALE ? acc[m][4 * j + c] * gscale : acc[m][4 * j + c];
                    if constexpr (H != 0) v = v * rf[c >> 1] * tf[c & 1];
                    out(nl + 8 * (c >> 1), tl + (c & 1), v);
                }
            }
        }
    }
    // y[T, N] as bf16, or (part) this slice's fp32 sums at part[T, N]
    template <bool SF = false, class C>
    GB_HD void store(C& ctx, unsigned short* y, float* part, gb_u32 N, gb_u32 T, gb_u32 n0, gb_u32 t0,
                                          gb_u32 t, float gscale, const int* ex, gb_u32 fac = 0)
    {
        each_sum<SF>(ctx, N, T, n0, t0, t, gscale, ex, [&](gb_u32 nl, gb_u32 tl, float v) {
            const gb_u32 n = n0 + nl, tt = t0 + tl;
            if (n < N && tt < T) {
                if (part) ctx.st_part(part, (gb_u64)tt * N + n, v);
                else ctx.st_y(y + ((gb_u64)tt * N + n), ln_bf16(v));
            }
        }, fac);
    }
};

// Steps fn(u, c) for u = 0 .. nunits - 1 with register set c = cur[u % WPF],
// WPF units a trip so that the index is a constant; nested, so that ptxas
// sees every skipped step leave no product in flight.
template <int WPF, class R, class Fn>
GB_HD void lw_each_unit(gb_u32 nunits, R* cur, Fn&& fn)
{
    // (u counts from 0: a caller with a slice of K adds the slice's first unit)
    for (gb_u32 u = 0; u < nunits; u += WPF) {
        fn(u, cur[0]);
        if constexpr (WPF > 1) {
            if (u + 1 < nunits) {
                fn(u + 1, cur[WPF > 1 ? 1 : 0]);
                if constexpr (WPF > 2) {
                    if (u + 2 < nunits) {
                        fn(u + 2, cur[WPF > 2 ? 2 : 0]);
                        if constexpr (WPF > 3)
                            if (u + 3 < nunits) fn(u + 3, cur[WPF > 3 ? 3 : 0]);
                    }
                }
            }
        }
    }
}

// The lockstep kernel's unit loop, i counting the slice's units (the stages
// and the pipeline follow i). LATE (LN_STAGGER = 1, the last warpgroup):
// unit i - 1 is multiplied before the barrier of unit i instead of unit i
// after it, so that these products run while the other warpgroup waits and
// rescales, and the other way round; each unit's products are still waited
// for before the barrier two units on, as the stages' reuse needs.
// XT (LN_XTILE = 1): x of unit i + D goes in by one bulk copy that thread 0
// issues after the barrier of unit i (the stage's last readers, unit i - 2,
// have completed), counted on mbarrier bars + 8 ((i + D) % S); each thread
// waits for unit i's before its products of unit i.
template <bool LATE, int S, int WPF, int CLOSE, int XT = 0, class C, class Fill, class Mm>
GB_HD void lw_lockstep_loop(C& ctx, Fill& fill, Mm& mm, typename Fill::Runs* cur, gb_u32 u0, gb_u32 nunits, gb_u32 bars = 0)
{
    enum { D = S - 2 };
    lw_each_unit<WPF>(nunits, cur, [&](gb_u32 i, typename Fill::Runs& c) {
        const int st = (int)(i % S);
        fill.store_unit(ctx, c, st);
        if (i + WPF < nunits) fill.load_unit(ctx, u0 + i + WPF, c);
        if constexpr (LATE)
            if (i > 0) mm.unit(ctx, i - 1, (int)((i - 1) % S), false);
        if constexpr (!XT) ctx.template wait<D - 1>(); // this thread's copies of x unit i have landed
        ctx.proxy_fence();
        ctx.barrier(); // unit i's stage is whole; every warpgroup has finished unit i - 2
        if constexpr (XT) {
            if (fill.p == 0 && i + D < nunits) fill.bulk_x(ctx, u0 + i + D, (int)((i + D) % S), bars + 8 * ((i + D) % S));
            ctx.bar_wait(bars + 8 * st, (i / S) & 1); // x of unit i has landed
        } else {
            if (i + D < nunits) fill.stage_x(ctx, u0 + i + D, (int)((i + D) % S));
            ctx.commit();
        }
        if constexpr (!LATE) mm.unit(ctx, i, st, !CLOSE && i + 1 == nunits);
    });
    if constexpr (LATE) mm.unit(ctx, nunits - 1, (int)((nunits - 1) % S), false); // nunits > 0
    if constexpr (CLOSE != 0) mm.finish(ctx, (int)((nunits + S - 1) % S), nunits > 0);
}

// LN_XTILE = 2: no block barrier in the loop. Each warpgroup stages its own
// rows of W (warpgroup barrier 1 + wg); x's bulk copy of unit i + D, issued
// by thread 0 at unit i, first waits for both warpgroups to release the stage
// (S more mbarriers after the full ones, one arrival a warp once its
// products of the stage's last unit, i + D - S, have completed). A warpgroup
// waits only for its own rows and for x: the two run apart by up to a unit.
// (fill: the warpgroup's rows; xfill: the block's, whose bulk_x copies x)
template <int S, int WPF, class C, class Fill, class Mm, class XFill>
GB_HD void lw_async_loop(C& ctx, Fill& fill, Mm& mm, typename Fill::Runs* cur, gb_u32 u0, gb_u32 nunits, gb_u32 bars,
                         gb_u32 tid, const XFill& xfill)
{
    enum { D = S - 2 };
    const gb_u32 wg = tid >> 7;
    lw_each_unit<WPF>(nunits, cur, [&](gb_u32 i, typename Fill::Runs& c) {
        const int st = (int)(i % S);
        fill.store_unit(ctx, c, st);
        if (i + WPF < nunits) fill.load_unit(ctx, u0 + i + WPF, c);
        ctx.proxy_fence();
        ctx.named_barrier(1 + wg, 128);           // this warpgroup's rows of unit i are whole
        ctx.bar_wait(bars + 8 * st, (i / S) & 1); // x of unit i has landed
        mm.unit(ctx, i, st, false);                // unit i - 1's products have completed
        ctx.warp_uniform(0);                       // every lane of the warp is past that wait
        if (i > 0 && (tid & 31) == 0) ctx.bar_arrive(bars + 8 * (S + (i - 1) % S));
        // after its own products, so that waiting for the other warpgroup holds
        // back only this warpgroup's next unit, not the products of this one
        if (tid == 0 && i + D < nunits) {
            const gb_u32 v = i + D;
            if (v >= (gb_u32)S) ctx.bar_wait(bars + 8 * (S + v % S), (v / S - 1) & 1); // unit v - S released by both
            xfill.bulk_x(ctx, u0 + v, (int)(v % S), bars + 8 * (v % S));
        }
    });
    mm.finish(ctx, (int)((nunits + S - 1) % S), nunits > 0);
}

// LN_XTILE = 3: the weights from registers. Each warp decodes its own 16 rows
// of W (lane g * 4 + t: rows g and g + 8, its 16 k of each as the stores'
// path has them) into the A fragments of wgmma and multiplies x from the
// stage (the prepass's copy, k permuted to match: ln_ra_k), so that no
// barrier and no shared store sits between the decode and the products; the
// stages hold x only. x of unit i + D (D = S - 3), issued by thread 0 at
// unit i by one bulk copy, first waits for both warpgroups to release the
// stage (unit i + D - S = i - 3, released by each warp once its products
// have completed, at unit i - 2): the warpgroups run up to two units apart.
// (fill: the warp's rows; put_x(v, st): x unit v of the slice into stage st.)
template <int S, int WPF, bool SERIAL, class C, class Fill, class Mm, class PutX>
GB_HD void lw_ra_loop(C& ctx, Fill& fill, Mm& mm, typename Fill::Runs* cur, gb_u32 u0, gb_u32 nunits, gb_u32 bars,
                      gb_u32 tid, PutX&& put_x)
{
    enum { D = S - 3 };
    static_assert(Fill::RUNS == 2, "a lane decodes two rows of its warp's 16");
    // (with two units of codes in flight, ptxas serialized the products: C7513)
    static_assert(WPF == 1, "LN_XTILE = 3, 4 takes LN_WPF = 1");
    gb_u32 frag[4][4]; // the k-steps' A fragments (LwMma::unit_ra)
    lw_each_unit<WPF>(nunits, cur, [&](gb_u32 i, typename Fill::Runs& c) {
        const int st = (int)(i % S);
        gb_u32 a[2][8];
        fill.decode_ra(c, a);
        if (i + WPF < nunits) fill.load_unit(ctx, u0 + i + WPF, c);
        ctx.bar_wait(bars + 8 * st, (i / S) & 1); // x of unit i has landed
        mm.template unit_ra<SERIAL>(ctx, st, a, frag); // unit i - 1's products have completed
        ctx.warp_uniform(0);                       // every lane of the warp is past that wait
        if (i > 0 && (tid & 31) == 0) ctx.bar_arrive(bars + 8 * (S + (i - 1) % S));
        if (tid == 0 && i + D < nunits) {
            const gb_u32 v = i + D;
            if (v >= (gb_u32)S) ctx.bar_wait(bars + 8 * (S + v % S), (v / S - 1) & 1); // unit v - S released by both
            put_x(v, (int)(v % S));
        }
    });
    mm.finish(ctx, (int)((nunits + S - 1) % S), nunits > 0);
}

// A fill of a warpgroup's or a warp's own rows (LN_XTILE = 2 to 4): its rows'
// 2^-f (ex_rows: f[N]) and its first WPF units of weights.
template <int WPF, class C, class Fill>
GB_HD void lw_own_first(C& ctx, Fill& own, typename Fill::Runs* wcur, const int* ex_rows, gb_u32 u0, gb_u32 nunits)
{
    own.half_rows(ctx, ex_rows);
#pragma unroll
    for (int w = 0; w < WPF; w++)
        if ((gb_u32)w < nunits) own.load_unit(ctx, u0 + w, wcur[w]);
}

// The epilogue's factors (LN_HALF = 1) into shared memory at fac: 2^g of
// rows t0 .. t0 + BN - 1 of x, then 2^f of rows n0 .. n0 + BM - 1 of W (ex:
// g[T], then f[N]; 1 past T and N), read once a block while its first units
// load instead of a few at a time in the epilogue (LwMma::each_sum). Visible
// to the other threads after the next block barrier.
template <int BM, int BN, int NTH, class C>
GB_HD void lw_factors(C& ctx, gb_u32 fac, const int* ex, gb_u32 N, gb_u32 T, gb_u32 n0, gb_u32 t0, gb_u32 tid)
{
#pragma unroll
    for (gb_u32 i = tid; i < (gb_u32)(BN + BM); i += NTH) {
        const bool xrow = i < (gb_u32)BN;
        const gb_u32 r = xrow ? t0 + i : n0 + (i - BN);
        const bool in = xrow ? r < T : r < N;
        ctx.sts_f32(fac + 4 * i, in ? ln_pow2(ctx.ld_ex(ex + (xrow ? 0 : T) + r)) : 1.0f);
    }
}

// A tile's sums out through shared memory (the stages, free once every
// product has completed): each thread stores its fp32 sums, scaled as
// LwMma::store scales them, as columns of x of BM + 4 floats (the padding
// spreads a warp's stores over the banks); after a barrier the block's
// threads read 4 consecutive rows of W of a column at a time and store them
// to y as one 8-byte store (4 bf16; 2-byte stores where N is not a multiple
// of 4 or past N), a warp a column: 16-byte reads, whole sectors written,
// where the fragment's own stores were 2 bytes each with a bounds check
// apiece (docs/kernels/cuda-linear.md, "The epilogue's factors"); !V: 2-byte
// stores throughout (LN_EPI = 0's clusters).
// CLU (LN_CLUSTER = 1): the slices' sums of a tile through a thread block
// cluster: the KS blocks of a tile (grid.z, cluster dims (1, 1, KS), so
// block z is the cluster's rank z) each store their sums so; after the
// cluster's barrier block z adds columns [z BN / KS, (z + 1) BN / KS) of
// all KS blocks through distributed shared memory in slice order
// (linear_reduce.cuh's order: the same bits) and stores y. No fp32 sums in
// global memory, no second launch ("Slices in a cluster"). ln_wgmma checks
// KS (2 to 8) and that the sums fit.
template <int BM, int BN>
GB_HD constexpr unsigned lw_tile_sums_bytes()
{
    return BN * (BM + 4) * 4;
}
template <int BM, int BN, int KS, int NTH, bool SF, bool CLU, bool V = true, class C, class Mm>
GB_HD void lw_tile_sums(C& ctx, Mm& mm, gb_u32 base, unsigned short* y, gb_u32 N, gb_u32 T, gb_u32 n0, gb_u32 t0,
                        gb_u32 tid, float gscale, const int* ex, gb_u32 fac)
{
    enum { LD = BM + 4, Q = BM / 4 };
    static_assert(BM % 4 == 0, "the tile's rows are added 4 at a time");
    static_assert(CLU || KS == 1, "a tile's sums through shared memory: one slice, or a cluster's");
    ctx.barrier(); // every warpgroup's products have completed: the stages are free
    mm.template each_sum<SF>(ctx, N, T, n0, t0, tid & 3, gscale, ex,
                [&](gb_u32 nl, gb_u32 tl, float v) { ctx.sts_f32(base + 4 * (tl * LD + nl), v); }, fac);
    if constexpr (CLU) ctx.cluster_sync(); // every slice's sums are in its block's shared memory
    else ctx.barrier();
    const gb_u32 z = CLU ? ctx.block(2) : 0, c0 = z * BN / KS, c1 = (z + 1) * BN / KS, cols = T - t0 < c1 ? T - t0 : c1;
    const bool quad = V && (N & 3) == 0; // every row of y starts 8-byte aligned (V: 8-byte stores at all)
    for (gb_u32 i = tid; c0 + i / Q < cols; i += NTH) {
        const gb_u32 tl = c0 + i / Q, nl = 4 * (i % Q), a = base + 4 * (tl * LD + nl), n = n0 + nl;
        float s[4];
        if constexpr (CLU) {
            float v[4];
            ctx.ld_cluster_v4(a, 0, s);
            for (gb_u32 r = 1; r < (gb_u32)KS; r++) {
                ctx.ld_cluster_v4(a, r, v);
#pragma unroll
                for (int e = 0; e < 4; e++) s[e] += v[e];
            }
        } else ctx.lds_v4(a, s);
        unsigned short* yr = y + (gb_u64)(t0 + tl) * N + n;
        if (quad && n + 4 <= N)
            ctx.st_y4(yr, ln_bf16(s[0]) | ln_bf16(s[1]) << 16, ln_bf16(s[2]) | ln_bf16(s[3]) << 16);
        else
#pragma unroll
            for (int e = 0; e < 4; e++)
                if (n + e < N) ctx.st_y(yr + e, ln_bf16(s[e]));
    }
    if constexpr (CLU) ctx.cluster_sync(); // no block leaves while another reads its shared memory
}

// Lockstep (LN_WS = 0): every thread fills and multiplies; one barrier a unit.
// With KS > 1 (LN_KSPLIT) block z of grid.z takes units [z U / KS, (z + 1) U
// / KS) of the U units of K and writes its fp32 sums to part[z][T][N];
// kernels/cuda/linear_reduce.cu adds the slices into y (the call's second
// launch): more blocks where the tiles alone would leave SMs idle. With CLU
// (LN_CLUSTER = 1, KS <= 8) the slices of a tile are one cluster and add
// their sums in shared memory instead (lw_tile_sums; part is not written).
// With H (LN_HALF = 1) x is the prepass's fp16 copy and ex its exponents
// (linear_half_prep.cu: g[T] of the rows of x, then f[N] of the rows of W).
// With TAIL (LN_TAIL = 1) grid.y counts the tiles of W from the last: a
// launch of fewer rows than N's covers the tiles that a launch over the first
// ones left (gpubench.linear's tail: whole tiles in the first launch, the
// rest in slices; docs/kernels/cuda-linear.md, "The last wave in slices").
// With XT (LN_XTILE = 1, LN_HALF = 1) x is the prepass's tiled copy and each
// unit's x one bulk copy (lw_lockstep_loop; "x by bulk copies"); XT = 3 the
// same with k permuted, the weights from registers (lw_ra_loop; "The weights
// from registers"); XT = 4 the same with each unit's products waited for at
// its end (a diagnostic).
template <class F, int WG, int MT, int BN, int S, int WPF, int KS, int CLOSE, int STAGGER, int H, int XC, int CLU, int TAIL = 0, int XT = 0,
          int EPI = 1, class C>
GB_HD void ln_wgmma(C& ctx, const unsigned char* W, const unsigned short* x, unsigned short* y, gb_u32 N,
                                         gb_u32 K, gb_u32 T, float gscale, float* part, const int* ex)
{
    enum { NTH = 128 * WG, BM = 64 * MT * WG, STAGE = lw_stage_bytes<F, WG, MT, BN, H, XT>(), D = XT >= 3 ? S - 3 : S - 2,
           XAT = lw_x_at<BM, XT>() };
    static_assert(S >= 3, "LN_STAGES must be at least 3 (a stage is rewritten two units after its last reader)");
    static_assert(WPF == 1 || WPF == 2 || WPF == 4, "LN_WPF must be 1, 2 or 4 (at 3 ptxas serializes the products)");
    static_assert(F::E == 16, "the wgmma route takes runs of 16 (units of 64)");
    static_assert(KS >= 1 && KS <= 64, "LN_KSPLIT must be 1 to 64");
    static_assert(CLOSE == 0 || CLOSE == 1, "LN_CLOSE must be 0 or 1");
    static_assert(STAGGER == 0 || (STAGGER == 1 && CLOSE == 1 && WG == 2), "LN_STAGGER = 1 takes 2 warpgroups and LN_CLOSE = 1");
    static_assert(CLU == 0 || (CLU == 1 && KS >= 2 && KS <= 8), "LN_CLUSTER = 1 takes 2 to 8 slices of K (the portable cluster size)");
    static_assert(lw_tile_sums_bytes<BM, BN>() <= S * STAGE, "the tile's sums must fit the stages");
    static_assert(XT == 0 || (XT >= 1 && XT <= 4 && H == 1), "LN_XTILE = 1 to 4 takes the prepass's tiled x (LN_HALF = 1)");
    static_assert(XT < 2 || (CLOSE == 1 && WG == 2), "LN_XTILE = 2 to 4 takes LN_CLOSE = 1 and 2 warpgroups");
    static_assert(XT < 3 || (MT == 1 && STAGGER == 0 && S >= 4),
                  "LN_XTILE = 3, 4 (the weights from registers) takes LN_MT = 1, LN_STAGGER = 0 and at least 4 stages");
    static_assert(EPI == 0 || EPI == 1, "LN_EPI must be 0 or 1");
    const gb_u32 base = ctx.template shared_base<lw_shared_bytes_ws<F, WG, MT, BN, S, 0, H, XT>()>();
    const gb_u32 bars = base + S * STAGE; // XT: one mbarrier a stage, x's bytes (XT = 2: then one a stage, its release)
    const gb_u32 fac = base + lw_factors_at<F, WG, MT, BN, S, 0, H, XT>(); // H: the epilogue's factors
    static_assert(TAIL == 0 || TAIL == 1, "LN_TAIL must be 0 or 1");
    const gb_u32 tid = ctx.thread(), t0 = ctx.block(0) * BN;
    const gb_u32 n0 = (TAIL ? (N + BM - 1) / BM - 1 - ctx.block(1) : ctx.block(1)) * BM;
    typedef LwFill<F, BM, BN, NTH, STAGE, H, XC> Fill;
    Fill fill(base, tid, W, x, N, K, T, n0, t0);
    if constexpr (H != 0 && XT < 2) fill.half_rows(ctx, ex + T); // (XT = 2, 3: the warpgroups' or warps' own fills scale the rows)
    LwMma<F, MT, BN, BM, STAGE, H, XAT> mm(base, tid >> 7, tid & 31, (tid >> 5) & 3);
    const gb_u32 z = KS > 1 ? ctx.block(2) : 0;
    const gb_u32 u0 = (gb_u32)((gb_u64)fill.nunits * z / KS), nunits = (gb_u32)((gb_u64)fill.nunits * (z + 1) / KS) - u0;
    // XT: x unit v of the slice into stage st by one bulk copy, counted on the stage's mbarrier
    auto put_x = [&](gb_u32 v, int st) { lw_bulk_x<BN>(ctx, base + st * STAGE + XAT, x, t0, fill.nunits, u0 + v, bars + 8 * st); };
    // XT: x's mbarriers (XT = 2, 3: then the stages' releases, one arrival a
    // warp) and its first D bulk copies, before any thread waits on them
    auto start_x = [&] {
        if (tid == 0) {
            for (int st = 0; st < (XT >= 3 ? 2 : XT) * S; st++) ctx.bar_init(bars + 8 * st, st < S ? 1 : 8);
            ctx.bar_init_fence(); // seen initialized by the bulk copies' completions
            for (int d = 0; d < D; d++)
                if ((gb_u32)d < nunits) put_x((gb_u32)d, d);
        }
        ctx.barrier();
    };
    // XT = 2 to 4, after lw_own_first: x's first bulk copies and the epilogue's factors
    auto own_start = [&] {
        start_x();
        if constexpr (EPI != 0) lw_factors<BM, BN, NTH>(ctx, fac, ex, N, T, n0, t0, tid);
    };
    if constexpr (XT >= 3) {
        // each warp decodes its own 16 rows into registers; the block's fill only names K's units
        const gb_u32 wg = tid >> 7, w4 = (tid >> 5) & 3;
        typedef LwFill<F, 16, BN, 32, STAGE, H, XC> WarpFill;
        WarpFill own(base, tid & 31, W, x, N, K, T, n0 + 64 * wg + 16 * w4, t0);
        typename WarpFill::Runs wcur[WPF];
        lw_own_first<WPF>(ctx, own, wcur, ex + T, u0, nunits);
        own_start();
        lw_ra_loop<S, WPF, XT == 4>(ctx, own, mm, wcur, u0, nunits, bars, tid, put_x);
    } else if constexpr (XT == 2) {
        // each warpgroup loads and stages its own rows; the block's fill only copies x
        const gb_u32 wg = tid >> 7;
        typedef LwFill<F, 64 * MT, BN, 128, STAGE, H, XC> WgFill;
        WgFill own(base + wg * (64 * MT * 128), tid & 127, W, x, N, K, T, n0 + wg * 64 * MT, t0);
        typename WgFill::Runs wcur[WPF];
        lw_own_first<WPF>(ctx, own, wcur, ex + T, u0, nunits);
        own_start();
        lw_async_loop<S, WPF>(ctx, own, mm, wcur, u0, nunits, bars, tid, fill);
    } else {
        typename Fill::Runs cur[WPF];
#pragma unroll
        for (int w = 0; w < WPF; w++)
            if ((gb_u32)w < nunits) fill.load_unit(ctx, u0 + w, cur[w]);
        if constexpr (XT != 0) {
            start_x();
        } else {
#pragma unroll
            for (int d = 0; d < D; d++) {
                if ((gb_u32)d < nunits) fill.stage_x(ctx, u0 + d, d);
                ctx.commit();
            }
        }
        if constexpr (H != 0 && EPI != 0) lw_factors<BM, BN, NTH>(ctx, fac, ex, N, T, n0, t0, tid);
        // LN_STAGGER = 1: one loop per role, the role warp-uniform (else ptxas
        // serializes); a slice without units stores its zeros (a guard on the
        // late role's last products after its loop made ptxas serialize them all)
        if (STAGGER && ctx.warp_uniform(tid >> 7) == WG - 1) {
            if (nunits > 0) lw_lockstep_loop<STAGGER != 0, S, WPF, CLOSE, XT>(ctx, fill, mm, cur, u0, nunits, bars);
        } else lw_lockstep_loop<false, S, WPF, CLOSE, XT>(ctx, fill, mm, cur, u0, nunits, bars);
    }
    // EPI (LN_EPI = 1): one slice, or a cluster's, through shared memory
    // (lw_tile_sums; its first barrier also shows every thread the factors);
    // slices through the workspace, each sum to part. EPI = 0: each sum
    // stored from the fragment, the factors read from ex there.
    constexpr bool SF = H != 0 && EPI != 0;
    if constexpr (CLU != 0) lw_tile_sums<BM, BN, KS, NTH, SF, true, EPI != 0>(ctx, mm, base, y, N, T, n0, t0, tid, gscale, ex, fac);
    else if constexpr (KS == 1 && EPI != 0) lw_tile_sums<BM, BN, 1, NTH, SF, false>(ctx, mm, base, y, N, T, n0, t0, tid, gscale, ex, fac);
    else {
        if constexpr (SF) ctx.barrier(); // every thread's factors are in (a slice without units met no barrier)
        mm.template store<SF>(ctx, y, KS > 1 ? part + (gb_u64)z * T * N : nullptr, N, T, n0, t0, tid & 3, gscale, ex, fac);
    }
}

// Warp-specialized (LN_WS = 1): warpgroup WG fills the stages (weights LN_WPF
// units ahead, x LN_STAGES - 2 units ahead) and warpgroups 0 .. WG - 1 only
// multiply. Stage st has two mbarriers: full (the 128 filling threads arrive
// once their weights are stored and their copies of x have landed) and empty
// (the multiplying threads arrive once their products that read it have
// completed); no block-wide barrier in the loop, so one warpgroup's rescale
// and waits overlap the other's products.
template <class F, int WG, int MT, int BN, int S, int WPF, int CLOSE, int H, int XC, class C>
GB_HD void ln_wgmma_ws(C& ctx, const unsigned char* W, const unsigned short* x, unsigned short* y,
                                            gb_u32 N, gb_u32 K, gb_u32 T, float gscale, const int* ex)
{
    enum { BM = 64 * MT * WG, STAGE = lw_stage_bytes<F, WG, MT, BN, H>(), D = S - 2 };
    static_assert(S >= 3, "LN_STAGES must be at least 3");
    static_assert(CLOSE == 0 || CLOSE == 1, "LN_CLOSE must be 0 or 1");
    static_assert(WPF == 1 || WPF == 2 || WPF == 4, "LN_WPF must be 1, 2 or 4 (at 3 ptxas serializes the products)");
    static_assert(F::E == 16, "the wgmma route takes runs of 16 (units of 64)");
    const gb_u32 base = ctx.template shared_base<lw_shared_bytes_ws<F, WG, MT, BN, S, 1, H>()>();
    const gb_u32 bars = base + S * STAGE; // full[S], then empty[S], 8 bytes each
    const gb_u32 tid = ctx.thread(), t0 = ctx.block(0) * BN, n0 = ctx.block(1) * BM;
    if (tid == 0) {
        for (int st = 0; st < S; st++) {
            ctx.bar_init(bars + 8 * st, 128);
            ctx.bar_init(bars + 8 * (S + st), 128 * WG);
        }
    }
    ctx.barrier();
    const gb_u32 nunits = (K + 63) / 64;
    // the role from a value ptxas knows is uniform across the warp (else it
    // serializes the products of a divergent path), as CUTLASS does
    const gb_u32 role = ctx.warp_uniform(tid / 128);
    if (role >= WG) {
        typedef LwFill<F, BM, BN, 128, STAGE, H, XC> Fill;
        Fill fill(base, tid - 128 * WG, W, x, N, K, T, n0, t0);
        if constexpr (H != 0) fill.half_rows(ctx, ex + T);
        typename Fill::Runs cur[WPF];
#pragma unroll
        for (int w = 0; w < WPF; w++)
            if ((gb_u32)w < nunits) fill.load_unit(ctx, w, cur[w]);
#pragma unroll
        for (int d = 0; d < D; d++) {
            if ((gb_u32)d < nunits) fill.stage_x(ctx, d, d);
            ctx.commit();
        }
        lw_each_unit<WPF>(nunits, cur, [&](gb_u32 u, typename Fill::Runs& c) {
            const int st = (int)(u % S);
            // x of unit u + D goes to the stage of unit u + D - S: wait for its release
            const gb_u32 v = u + D;
            if (v >= (gb_u32)S && v < nunits) ctx.bar_wait(bars + 8 * (S + v % S), ((v / S) - 1) & 1);
            if (v < nunits) fill.stage_x(ctx, v, (int)(v % S));
            ctx.commit();
            fill.store_unit(ctx, c, st); // its stage was released before x of unit u went in
            if (u + WPF < nunits) fill.load_unit(ctx, u + WPF, c);
            ctx.template wait<D>(); // this thread's copies of x unit u have landed
            ctx.proxy_fence();
            ctx.bar_arrive(bars + 8 * st);
        });
    } else {
        LwMma<F, MT, BN, BM, STAGE, H> mm(base, tid >> 7, tid & 31, (tid >> 5) & 3);
        // LN_CLOSE = 0 leaves right after the last unit's wait for all its
        // products, so that no path out of the loop has one in flight
        for (gb_u32 u = 0; CLOSE ? u < nunits : nunits > 0; u++) {
            const int st = (int)(u % S);
            const bool last = !CLOSE && u + 1 == nunits;
            ctx.bar_wait(bars + 8 * st, (u / S) & 1);
            mm.unit(ctx, u, st, last);
            // unit u - 1's products have completed (unit() waited for them)
            if (u > 0) ctx.bar_arrive(bars + 8 * (S + (u - 1) % S));
            if (last) break;
        }
        if constexpr (CLOSE != 0) mm.finish(ctx, (int)((nunits + S - 1) % S), nunits > 0);
        mm.store(ctx, y, nullptr, N, T, n0, t0, tid & 3, gscale, ex);
    }
}

#endif
