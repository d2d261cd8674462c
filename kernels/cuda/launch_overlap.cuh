// Launch overlap (programmatic dependent launch, sm_90): a kernel file that
// states GB_LAUNCH_OVERLAP may be launched, inside a batch that asks for
// overlap, while the launch before it finishes (docs/LUA_API.md, "Batches").
// The promise it makes: every thread calls gb_overlap_wait() before it reads
// anything an earlier launch may write and before it writes anything. What
// comes before the wait reads only what no launch writes (the weights), so it
// overlaps the previous launch's tail: the block's start, the first loads,
// an L2 prefetch. Every block waits before it ends, so that a launch that has
// ended implies the one before it has too (the launch after it waits for it
// alone). gb_overlap_release() lets the next launch start as soon as every
// block of this one has called it. Without overlap (any other launch, any
// other device) both are no-ops: the wait returns at once.
#ifndef GPUBENCH_LAUNCH_OVERLAP_CUH
#define GPUBENCH_LAUNCH_OVERLAP_CUH

// One per kernel file, at file scope (the host reads it from the CUBIN). A
// host emulation that compiles several kernel files in one unit defines
// GB_LAUNCH_OVERLAP_NO_SYMBOL first (the symbol would be defined twice).
#ifdef GB_LAUNCH_OVERLAP_NO_SYMBOL
#define GB_LAUNCH_OVERLAP
#else
#define GB_LAUNCH_OVERLAP extern "C" __device__ const unsigned gpubench_launch_overlap = 1;
#endif

// L2_PREFETCH=1 (a define; default 0): the kernels that take it ask L2 for their
// block's weights before the wait (gb_overlap_start_rows).
#ifndef L2_PREFETCH
#define L2_PREFETCH 0
#endif

#ifdef __CUDACC__
__device__ __forceinline__ void gb_overlap_release()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void gb_overlap_wait()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Asks L2 to fetch [p, p + bytes) (bulk prefetch, sm_90): p 16-byte aligned,
// bytes a multiple of 16, the range inside one allocation. It holds no
// registers, so it may run before the wait for bytes no launch writes.
__device__ __forceinline__ void gb_prefetch_l2(const void* p, unsigned bytes)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#endif
}

// The start of an overlapping kernel whose block reads rows [r0, r1) of a
// row-major matrix at a 16-byte aligned base (rows clamped to `rows`): the
// next launch released, with `prefetch` those rows asked of L2 by one thread,
// then the wait. The range is widened to 16-byte boundaries, so the
// allocation must reach the 16-byte boundary past its last row (gemv.lua's
// buffer_bytes do). Call it from every thread before anything else.
__device__ __forceinline__ void gb_overlap_start_rows(const void* base, unsigned long long r0,
                                                      unsigned long long r1, unsigned long long rows,
                                                      unsigned long long row_bytes, bool prefetch)
{
    gb_overlap_release();
    if (prefetch && threadIdx.x == 0 && threadIdx.y == 0 && r0 < rows) {
        const unsigned long long end = (r1 < rows ? r1 : rows) * row_bytes;
        unsigned long long at = r0 * row_bytes / 16 * 16, left = (end + 15) / 16 * 16 - at;
        for (; left > 0;) { // a prefetch's size is 32 bits
            const unsigned step = left < (1ull << 30) ? (unsigned)left : (1u << 30);
            gb_prefetch_l2(static_cast<const unsigned char*>(base) + at, step);
            at += step;
            left -= step;
        }
    }
    gb_overlap_wait();
}
#endif

#endif
