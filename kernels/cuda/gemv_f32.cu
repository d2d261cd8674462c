// gpubench-compile: entry=gemv_f32 defines=ROWS=4,WARPS=2,UNROLL=2,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_f32 defines=ROWS=1,WARPS=4,UNROLL=4,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_f32 defines=ROWS=4,WARPS=2,UNROLL=2,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_f32 defines=ROWS=4,WARPS=2,UNROLL=2,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_f32 defines=ROWS=1,WARPS=4,UNROLL=4,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_f32 defines=ROWS=1,WARPS=4,UNROLL=4,GEMV_TOKENS=3
// GEMV y = W x for f32 weights; the control of every GEMV table: no decode
// at all, so when it moves together with a quantized kernel the cause is the
// harness, not the kernel (how cera's wgpu_gemv_bench caught its positional
// artifact, docs/DESIGN.md, "Measurement methods"). k a multiple of 8 (4
// would do: the rows are read as 16-byte words), any m. Launch: block
// (32 * WARPS), grid ceil(m / (ROWS * WARPS)).
//
// Each lane reads 16-byte words of ROWS rows, a warp 512 contiguous bytes per
// row per step (gb_dense_lane in gemv_dense.cuh), and the matching x word once
// for all rows.
#include "gemv_common.cuh"
#define GB_GEMV_DENSE 1
#include "gemv_geometry.cuh"
#include "launch_overlap.cuh"

// x and y only after the wait (launch_overlap.cuh).
GB_LAUNCH_OVERLAP

struct GbF32 {
    enum { EPW = 4 };
    GB_HD static void expand(const gb_u32* w, float* v)
    {
#pragma unroll
        for (int i = 0; i < 4; i++) v[i] = gb_as_float(w[i]);
    }
};

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    gemv_f32(const unsigned char* __restrict__ w, const float* __restrict__ x,
             float* __restrict__ y, unsigned m, unsigned k)
{
    gb_overlap_start();
    gb_gemv_dense<GbF32, ROWS, UNROLL, WARPS, GEMV_TOKENS>(w, x, y, m, k);
}
