// Launch overlap (programmatic dependent launch, sm_90): a kernel file that
// states GB_LAUNCH_OVERLAP may be launched, inside a batch that asks for
// overlap, while the launch before it finishes (docs/LUA_API.md, "Batches").
// The promise it makes: every thread calls gb_overlap_wait() before it reads
// anything an earlier launch may write and before it writes anything, and
// every block waits before it ends, so that a launch that has ended implies
// the one before it has too. What overlaps is the launch itself and the
// blocks' start. The next launch may start once every block of this one has
// ended or called gb_overlap_release(). Without overlap (any
// other launch, any other device) both are no-ops: the wait returns at once.
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

// A block releases the next launch by ending, so the next launch's blocks are
// placed once this one's have all ended; EARLY_RELEASE=1 (a define) releases
// it in gb_overlap_start instead, and the next launch's blocks then take SMs
// as soon as they have room, where they wait: that measured slower for the
// GEMV and SwiGLU kernels on the H200 (docs/kernels/cuda-gemv.md, "Launch overlap").
#ifndef EARLY_RELEASE
#define EARLY_RELEASE 0
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

// The start of an overlapping kernel: with EARLY_RELEASE the next launch
// released, then the wait. Call it from every thread before anything else.
__device__ __forceinline__ void gb_overlap_start()
{
    if (EARLY_RELEASE) gb_overlap_release();
    gb_overlap_wait();
}
#endif

#endif
