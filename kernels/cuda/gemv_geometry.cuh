// The launch geometry of a GEMV kernel comes only from its defines. The one
// copy of the defaults is lib/gpubench/gemv_cuda.lua, which gpubench passes
// whole to NVRTC (the first `gpubench-compile:` line of each kernel repeats
// it for the compile test). A kernel compiled without them fails here rather
// than running a second, silently different set of defaults.
//
// Quantized kernels (GB_GEMV_QUANTIZED): MMA (1 tensor-core path, 0 scalar),
// XQ (scalar path: 1 integer dot with x quantized per tile, 0 f32 magic decode),
// SUBN (tensor-core decode through f16 subnormals), ROWS, WARPS, STAGES,
// KSPLIT (warps per row group splitting k; scalar path only, 1 = no split),
// PARTS (row parts per tile, each staged in its own slot; scalar path only).
// Dense kernels (GB_GEMV_DENSE): ROWS, WARPS, UNROLL.
// Every kernel: GEMV_TOKENS (1..8), the T rows of x (and of y) each launch
// multiplies, every weight read once for all of them; T = 1 is the GEMV.
#ifndef GPUBENCH_GEMV_GEOMETRY_CUH
#define GPUBENCH_GEMV_GEOMETRY_CUH

#if !defined(ROWS) || !defined(WARPS)
#error "GEMV kernels take their geometry from -DROWS and -DWARPS (defaults: lib/gpubench/gemv_cuda.lua)"
#endif
#if defined(GB_GEMV_QUANTIZED) && (!defined(MMA) || !defined(XQ) || !defined(SUBN) || !defined(STAGES) || !defined(KSPLIT) || !defined(PARTS))
#error "quantized GEMV kernels also need -DMMA, -DXQ, -DSUBN, -DSTAGES, -DKSPLIT and -DPARTS (defaults: lib/gpubench/gemv_cuda.lua)"
#endif
#if !defined(GEMV_TOKENS)
#error "GEMV kernels take the number of x rows from -DGEMV_TOKENS (1..8; defaults: lib/gpubench/gemv_cuda.lua)"
#elif GEMV_TOKENS < 1 || GEMV_TOKENS > 8
#error "GEMV_TOKENS must be 1..8"
#endif
#if defined(GB_GEMV_DENSE) && !defined(UNROLL)
#error "dense GEMV kernels also need -DUNROLL (defaults: lib/gpubench/gemv_cuda.lua)"
#endif

#endif
