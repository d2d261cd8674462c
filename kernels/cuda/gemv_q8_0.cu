// gpubench-compile: entry=gemv_q8_0 defines=ROWS=4,WARPS=1,STAGES=2
// gpubench-compile: entry=gemv_q8_0 defines=ROWS=8,WARPS=1,STAGES=3
// GEMV y = W x for q8_0 weights (FORMATS.md: 34-byte blocks of 32 weights, fp16
// d then 32 signed bytes; value q * d). Any k that is a multiple of 32; any m.
// Launch: block (32 * WARPS), grid ceil(m / (ROWS * WARPS)).
//
// Lane l of a warp decodes block l of each 1024-column tile for the warp's ROWS
// rows. Blocks are 2-byte aligned in the staged tile, so the 32 code bytes are
// read as nine words and funnel-shifted into eight aligned ones. An 8-bit code
// does not fit the 6-bit "2 + q/64" trick of the 4-bit formats, so each byte,
// offset to unsigned (q ^ 0x80 = q + 128), becomes the float 2^23 + q + 128 by
// one byte permute and q by one exact subtraction.
//
// ROWS = 4 (not 8 as for the 4-bit formats): a q8_0 weight is twice the bytes,
// so 4 rows already re-use each x value as many times per weight byte, at half
// the shared memory.
#include "gemv_common.cuh"

#ifndef ROWS
#define ROWS 4
#endif
#ifndef WARPS
#define WARPS 1
#endif
#ifndef STAGES
#define STAGES 2
#endif

struct GbQ8_0 {
    enum { QK = 32, BPB = 34, PREP = 0 };
    struct X {
        float v[32];
    };
    GB_HD static bool active(gb_u32 lane, gb_u32 left) { return lane * 32 < left; }
    GB_HD static void load_x(const float* xt, gb_u32 lane, X& xs) { gb_load_x<32>(xt + 32 * lane, xs.v); }
    GB_HD static float dot(const unsigned char* slot, gb_u32 delta, gb_u32 lane, const X& xs,
                           const float*)
    {
        const gb_u32 off = delta + 34 * lane;
        const float d = gb_half_to_float(gb_ld_u16(slot + off));
        gb_u32 q[8];
        gb_ld_words<8>(slot, off + 2, q);
        float s0 = 0.0f, s1 = 0.0f; // two chains
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const gb_u32 u = q[i] ^ 0x80808080u; // signed -> offset binary
            float& s = (i & 1) ? s1 : s0;
#pragma unroll
            for (int b = 0; b < 4; b++) {
                const float v = gb_byte_magic(u, b) - 8388736.0f; // 2^23 + 128: exact
                s = fmaf(v, xs.v[4 * i + b], s);
            }
        }
        return d * (s0 + s1);
    }
};

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    gemv_q8_0(const unsigned char* __restrict__ w, const float* __restrict__ x,
              float* __restrict__ y, unsigned m, unsigned k)
{
    gb_gemv_quant<GbQ8_0, ROWS, STAGES, WARPS>(w, x, y, m, k);
}
