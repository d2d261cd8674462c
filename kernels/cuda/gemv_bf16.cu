// gpubench-compile: entry=gemv_bf16 defines=ROWS=4,WARPS=2,UNROLL=2,MMA=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_bf16 defines=ROWS=3,WARPS=8,UNROLL=3,MMA=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_bf16 defines=ROWS=4,WARPS=2,UNROLL=2,MMA=0,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_bf16 defines=ROWS=4,WARPS=2,UNROLL=2,MMA=0,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_bf16 defines=ROWS=3,WARPS=8,UNROLL=3,MMA=0,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_bf16 defines=ROWS=3,WARPS=8,UNROLL=3,MMA=0,GEMV_TOKENS=3
// GEMV y = W x for bf16 weights (the upper 16 bits of an f32: converted by a
// shift or a mask, one integer operation per weight). k a multiple of 8 (a row
// is read as 16-byte words of 8 weights), any m.
// Launch: block (32 * WARPS), grid ceil(m / (ROWS * WARPS)).
#include "gemv_common.cuh"
#define GB_GEMV_DENSE 1
#include "gemv_geometry.cuh"
#include "launch_overlap.cuh"

// x and y only after the wait (launch_overlap.cuh).
GB_LAUNCH_OVERLAP
#if !defined(MMA) || MMA != 0
#error "gemv_bf16 is the FMA kernel: -DMMA=0 (MMA=1 is gemv_bf16_tc.cu; lib/gpubench/gemv_cuda.lua)"
#endif

struct GbBF16 {
    enum { EPW = 8 };
    GB_HD static void expand(const gb_u32* w, float* v)
    {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            v[2 * i] = gb_as_float(w[i] << 16);
            v[2 * i + 1] = gb_as_float(w[i] & 0xFFFF0000u);
        }
    }
};

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    gemv_bf16(const unsigned char* __restrict__ w, const float* __restrict__ x,
              float* __restrict__ y, unsigned m, unsigned k)
{
    gb_overlap_start();
    gb_gemv_dense<GbBF16, ROWS, UNROLL, WARPS, GEMV_TOKENS>(w, x, y, m, k);
}
