// The launch geometry of a Linear kernel comes only from its defines; the one
// copy of the defaults is lib/gpubench/linear_cuda.lua (each kernel's first
// `gpubench-compile:` line repeats them for the compile test). A kernel
// compiled without them fails here rather than running a second, silently
// different set of defaults.
//
// Memory-bound route (LN_ROUTE_GEMV): LN_NW warps per block splitting K,
// LN_RT m16 row tiles per block (16 LN_RT rows), LN_NJ n8 column tiles
// (T <= 8 LN_NJ), LN_U units in flight per warp, LN_KC = 1 a warp's units
// of a round consecutive (0: interleaved with the other warps'), LN_STAGE = 0
// weights straight into registers, S >= 2: through S shared-memory stages.
// Tensor-core route (LN_ROUTE_MMA): LN_NW warps per block (32 LN_NW rows),
// LN_BN rows of x per block, LN_STAGES shared-memory stages of x.
// wgmma route (LN_ROUTE_WGMMA): LN_WG warpgroups of LN_MT m64 row tiles each,
// LN_BN rows of x, LN_STAGES stages of weights and x, LN_WPF units of weights
// in flight in registers, LN_WS = 1 a warpgroup that only fills the stages,
// LN_KSPLIT slices of K (grid.z; the fp32 sums added by linear_reduce.cu),
// LN_CLOSE = 1 the pipeline closed after the loop, LN_STAGGER = 1 the last
// warpgroup's products half a unit behind, LN_HALF = 1 weights and x in fp16
// from a prepass (linear_half_prep.cu), LN_XCOPY = 1 x's copies from
// addresses set once per thread, LN_CLUSTER = 1 the slices of a tile one
// thread block cluster adding their sums in shared memory, LN_TAIL = 1 grid.y
// counting the tiles of W from the last, LN_XTILE = 1 each unit's x one bulk
// copy from the prepass's tiled copy (3: with k permuted, the weights in
// registers as wgmma's A; 4: the same, each unit's products waited for), LN_EPI = 1 the sums out through shared
// memory and LN_HALF's factors read once (linear_wgmma.cuh).
#ifndef GPUBENCH_LINEAR_GEOMETRY_CUH
#define GPUBENCH_LINEAR_GEOMETRY_CUH

#if defined(LN_ROUTE_GEMV) && (!defined(LN_NW) || !defined(LN_RT) || !defined(LN_NJ) || !defined(LN_U) || !defined(LN_KC) || !defined(LN_STAGE))
#error "memory-bound Linear kernels take their geometry from -DLN_NW, -DLN_RT, -DLN_NJ, -DLN_U, -DLN_KC and -DLN_STAGE (defaults: lib/gpubench/linear_cuda.lua)"
#endif
#if defined(LN_ROUTE_MMA) && (!defined(LN_NW) || !defined(LN_BN) || !defined(LN_STAGES))
#error "tensor-core Linear kernels take their geometry from -DLN_NW, -DLN_BN and -DLN_STAGES (defaults: lib/gpubench/linear_cuda.lua)"
#endif
#if defined(LN_ROUTE_WGMMA) && (!defined(LN_WG) || !defined(LN_MT) || !defined(LN_BN) || !defined(LN_STAGES) || !defined(LN_WPF) || !defined(LN_WS) || !defined(LN_KSPLIT) || !defined(LN_CLOSE) || !defined(LN_STAGGER) || !defined(LN_HALF) || !defined(LN_XCOPY) || !defined(LN_CLUSTER) || !defined(LN_TAIL) || !defined(LN_XTILE) || !defined(LN_EPI))
#error "wgmma Linear kernels take their geometry from -DLN_WG, -DLN_MT, -DLN_BN, -DLN_STAGES, -DLN_WPF, -DLN_WS, -DLN_KSPLIT, -DLN_CLOSE, -DLN_STAGGER, -DLN_HALF, -DLN_XCOPY, -DLN_CLUSTER, -DLN_TAIL, -DLN_XTILE and -DLN_EPI (defaults: lib/gpubench/linear_cuda.lua)"
#endif
// The wgmma kernels' slices as one thread block cluster (LN_CLUSTER = 1): its
// dimensions are the kernel's, so a plain launch of grid.z = LN_KSPLIT makes them.
#if defined(LN_ROUTE_WGMMA) && LN_CLUSTER
#define LN_CLUSTER_DIMS __cluster_dims__(1, 1, LN_KSPLIT)
#else
#define LN_CLUSTER_DIMS
#endif

#endif
