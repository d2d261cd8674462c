// gpubench-compile: entry=gemv_q5_k defines=ROWS=8,WARPS=1,STAGES=2
// gpubench-compile: entry=gemv_q5_k defines=ROWS=4,WARPS=2,STAGES=3
// GEMV y = W x for q5_k weights (FORMATS.md: 176-byte super-blocks of 256
// weights: fp16 d, fp16 dmin, 12 bytes of packed scales and mins as q4_k,
// 32 bytes qh, 128 bytes qs; q = low nibble as q4_k | ((qh[e%32] >> (e/32)) & 1) << 4,
// value (d*sc)*q - dmin*m). k a multiple of 256; any m.
// Launch: block (32 * WARPS), grid ceil(m / (ROWS * WARPS)).
//
// Lanes take the same 32 weights of a super-block as in q4_k (GbKX in
// gemv_common.cuh): code bytes qs[32c + 16h + i], whose fifth bits are bits 2c
// (low nibble, sub-block 2c) and 2c+1 (high nibble) of qh[16h + i]. Super-
// blocks are 16-byte aligned (176 = 11*16): the qh half and the qs bytes are
// two 16-byte shared-memory loads, the scale products come from the prep step
// as in q4_k. A 5-bit code still fits the "2 + q/64" byte-permute decode
// (bits 16..20 of the float).
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

struct GbQ5K {
    enum { QK = 256, BPB = 176, PREP = 16 };
    typedef GbKX X;
    GB_HD static bool active(gb_u32 lane, gb_u32 left) { return (lane >> 3) * 256 < left; }
    GB_HD static void load_x(const float* xt, gb_u32 lane, X& xs) { gb_k_load_x(xt, lane, xs); }
    // delta is always 0: rows and tiles start on 176-byte (16-byte) boundaries.
    GB_HD static void prep(const unsigned char* slot, gb_u32 delta, gb_u32 b, float* out)
    {
        gb_k_prep(slot + delta + 176 * b, out);
    }
    GB_HD static float dot(const unsigned char* slot, gb_u32 delta, gb_u32 lane, const X& xs,
                           const float* prep)
    {
        const gb_u32 p = lane & 7, c = p >> 1;
        const unsigned char* sb = slot + delta + 176 * (lane >> 3);
        gb_u32 qh[4], q[4];
        gb_ld_u32x4(sb + 16 + 16 * (p & 1), qh); // qh[16h ..]
        gb_ld_u32x4(sb + 48 + 16 * p, q);        // qs[32c + 16h ..]
        float lo = 0.0f, hi = 0.0f;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            // g: bit 0 of each byte is the fifth bit of sub-block 2c, bit 1 that
            // of 2c+1. The left shifts compile to IMAD.SHL, on the FMA pipe, which
            // keeps them off the integer pipe the byte permutes already load.
            const gb_u32 g = qh[i] >> (2 * c);
            lo = gb_dot4_magic((q[i] & 0x0F0F0F0Fu) | ((g << 4) & 0x10101010u), xs.lo + 4 * i, lo);
            hi = gb_dot4_magic(((q[i] >> 4) & 0x0F0F0F0Fu) | ((g << 3) & 0x10101010u), xs.hi + 4 * i, hi);
        }
        return gb_k_finish(prep, lane, lo, hi, xs);
    }
};

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    gemv_q5_k(const unsigned char* __restrict__ w, const float* __restrict__ x,
              float* __restrict__ y, unsigned m, unsigned k)
{
    gb_gemv_quant<GbQ5K, ROWS, STAGES, WARPS>(w, x, y, m, k);
}
