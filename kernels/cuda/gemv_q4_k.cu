// gpubench-compile: entry=gemv_q4_k defines=ROWS=8,WARPS=1,STAGES=2
// gpubench-compile: entry=gemv_q4_k defines=ROWS=2,WARPS=4,STAGES=4
// GEMV y = W x for q4_k weights (FORMATS.md: 144-byte super-blocks of 256
// weights: fp16 d, fp16 dmin, 12 bytes of packed 6-bit sub-block scales and
// mins, 128 bytes of nibbles; value (d*sc)*q - dmin*m). k a multiple of 256;
// any m. Launch: block (32 * WARPS), grid ceil(m / (ROWS * WARPS)).
//
// A 1024-column tile is four super-blocks; lane l takes 32 weights of super-
// block l/8 (16 code bytes, see GbKX in gemv_common.cuh). Super-blocks are
// 16-byte aligned (144 = 9*16), so the lane reads its 16 code bytes with one
// 16-byte shared-memory load. The scale products d*sc and dmin*m are computed
// once per (row, super-block) by the prep step (gb_k_prep) and read back as
// one 16-byte load per row.
#include "gemv_common.cuh"

#ifndef ROWS
#define ROWS 8
#endif
#ifndef WARPS
#define WARPS 1
#endif
#ifndef STAGES
#define STAGES 2
#endif

struct GbQ4K {
    enum { QK = 256, BPB = 144, PREP = 16 };
    typedef GbKX X;
    GB_HD static bool active(gb_u32 lane, gb_u32 left) { return (lane >> 3) * 256 < left; }
    GB_HD static void load_x(const float* xt, gb_u32 lane, X& xs) { gb_k_load_x(xt, lane, xs); }
    // delta is always 0: rows and tiles start on 144-byte (16-byte) boundaries.
    GB_HD static void prep(const unsigned char* slot, gb_u32 delta, gb_u32 b, float* out)
    {
        gb_k_prep(slot + delta + 144 * b, out);
    }
    GB_HD static float dot(const unsigned char* slot, gb_u32 delta, gb_u32 lane, const X& xs,
                           const float* prep)
    {
        gb_u32 q[4];
        gb_ld_u32x4(slot + delta + 144 * (lane >> 3) + 16 + 16 * (lane & 7), q); // qs[32c + 16h ..]
        float lo = 0.0f, hi = 0.0f;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            lo = gb_dot4_magic(q[i] & 0x0F0F0F0Fu, xs.lo + 4 * i, lo);
            hi = gb_dot4_magic((q[i] >> 4) & 0x0F0F0F0Fu, xs.hi + 4 * i, hi);
        }
        return gb_k_finish(prep, lane, lo, hi, xs);
    }
};

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    gemv_q4_k(const unsigned char* __restrict__ w, const float* __restrict__ x,
              float* __restrict__ y, unsigned m, unsigned k)
{
    gb_gemv_quant<GbQ4K, ROWS, STAGES, WARPS>(w, x, y, m, k);
}
