// Shared memory past the 48 KiB a static __shared__ declaration may hold.
// A kernel file states its bytes once, at file scope, with
// GB_DYNAMIC_SHARED(bytes); the host reads that symbol from the CUBIN
// (host/cuda/cubin.c), raises the function's limit and launches every call
// with those bytes (docs/LUA_API.md, "Kernels"). 0 declares none.
#ifndef GPUBENCH_DYNAMIC_SHARED_CUH
#define GPUBENCH_DYNAMIC_SHARED_CUH

// What a static __shared__ declaration may hold; above it, dynamic.
#define GB_STATIC_SHARED_LIMIT 49152u

// One per kernel file (a second is a redefinition error): the bytes every launch gets.
#define GB_DYNAMIC_SHARED(bytes) extern "C" __device__ const unsigned gpubench_dynamic_shared_bytes = (bytes);

// DYNAMIC=1, a define of the kernels that take it (the tensor-core GEMV):
// their stages go dynamic whatever their size, to A/B the mechanism itself
// against the static declaration of the same geometry.
#if defined(DYNAMIC) && DYNAMIC == 1
#define GB_DYNAMIC_ALWAYS true
#else
#define GB_DYNAMIC_ALWAYS false
#endif

// The dynamic bytes of a block whose warp-private stages take `stages` bytes
// beside `other` bytes of static shared memory: the stages go dynamic when the
// two would pass the static limit (the file's GB_DYNAMIC_SHARED says this
// value; GB_WARP_STAGES decides by the same test).
#ifdef __CUDACC__
__host__ __device__
#endif
constexpr unsigned gb_stage_dynamic_bytes(unsigned stages, unsigned other)
{
    return (GB_DYNAMIC_ALWAYS && stages > 0) || stages + other > GB_STATIC_SHARED_LIMIT ? stages : 0u;
}

// The file-scope declaration that goes with GB_WARP_STAGES: the same three
// arguments (NWARPS warps of PER_WARP stage bytes beside OTHER static bytes).
#define GB_WARP_STAGES_SHARED(NWARPS, PER_WARP, OTHER) \
    GB_DYNAMIC_SHARED(gb_stage_dynamic_bytes((NWARPS) * (PER_WARP), (OTHER)))

#ifdef __CUDACC__
// The dynamic shared memory, after checking that the launch gave at least
// `bytes`: a launch without them (a host that ignored the symbol) would
// address past the block's shared memory, so it traps instead.
__device__ __forceinline__ unsigned char* gb_dynamic_shared(unsigned bytes)
{
    extern __shared__ __align__(128) unsigned char gb_dynamic_smem[];
    unsigned have;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(have));
    if (have < bytes) __trap();
    return gb_dynamic_smem;
}

// Points st at warp w's PER_WARP bytes of NWARPS warps' stages: static, or
// dynamic as gb_stage_dynamic_bytes(NWARPS * PER_WARP, OTHER) says. A macro, so
// that the static array stays declared in the kernel's own scope (the code the
// compiler makes for it is then the same as before dynamic shared memory).
#define GB_WARP_STAGES(st, NWARPS, PER_WARP, OTHER, w)                                                 \
    if constexpr (gb_stage_dynamic_bytes((NWARPS) * (PER_WARP), (OTHER)) > 0) {                       \
        static_assert((PER_WARP) % 16 == 0, "a warp's stages must keep cp.async destinations aligned"); \
        st = gb_dynamic_shared((NWARPS) * (PER_WARP)) + (w) * (PER_WARP);                              \
    } else {                                                                                           \
        __shared__ __align__(128) unsigned char gb_stage_[NWARPS][PER_WARP];                           \
        st = gb_stage_[w];                                                                             \
    }
#endif

#endif
