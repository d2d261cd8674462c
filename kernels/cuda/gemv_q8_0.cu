// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=4,BULK=0,I8=0,TC=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=4,BULK=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=3,KSPLIT=1,PARTS=2,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=1,KSPLIT=2,PARTS=4,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=1,XQ=0,SUBN=1,ROWS=16,WARPS=4,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=8,WARPS=1,STAGES=3,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=4,WARPS=1,STAGES=2,KSPLIT=2,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=0,SUBN=1,ROWS=4,WARPS=2,STAGES=2,KSPLIT=2,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=1,XQ=0,SUBN=0,ROWS=16,WARPS=4,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=4,BULK=0,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=4,BULK=0,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q8_0 defines=MMA=1,XQ=0,SUBN=1,ROWS=16,WARPS=2,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=3
// gpubench-compile: entry=gemv_q8_0 defines=MMA=1,XQ=0,SUBN=0,ROWS=16,WARPS=1,STAGES=3,KSPLIT=1,PARTS=1,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q8_0 defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=2,PARTS=1,GEMV_TOKENS=8
// GEMV y = W x for q8_0 weights (docs/FORMATS.md: 34-byte blocks of 32
// weights, fp16 d then 32 signed bytes; value q * d). Any k that is a multiple
// of 32; any m. Launch: block (32 * WARPS * KSPLIT), grid
// ceil(m / (ROWS * WARPS)).
//
// Lane l of a warp decodes block l of each 1024-column tile for the warp's ROWS
// rows (the scalar path, gemv_warp.cuh). Blocks are 2-byte aligned in the
// staged tile, so the 32 code bytes are read as nine words and funnel-shifted
// into eight aligned ones. The integer dot feeds the signed bytes to dp2a as
// they are. An 8-bit code does not fit the 6-bit "2 + q/64" trick the magic
// decode uses for the 4-bit formats, so there each byte, offset to unsigned
// (q ^ 0x80 = q + 128), becomes the float 2^23 + q + 128 by one byte permute
// and q by one exact subtraction (docs/kernels/cuda-gemv.md, "Common
// structure").
#define GB_GEMV_QUANTIZED 1
#if defined(I8) && I8 != 0
#error "I8=1 is the int8 tensor-core kernel, kernels/cuda/gemv_q8_0_i8.cu (gemv_cuda.variant switches the file)"
#endif
#include "gemv_geometry.cuh"
#include "launch_overlap.cuh"

// x and y only after the wait (launch_overlap.cuh).
GB_LAUNCH_OVERLAP
#include "gemv_mma.cuh"

// Three decodes, one struct each (below; gb_gemv_quant_kernel in gemv_mma.cuh
// picks one by the defines): the integer dot (GbQ8_0I, XQ=1) is the default;
// the f32 magic decode (GbQ8_0, XQ=0) and the tensor-core path (GbQ8_0M,
// MMA=1) are variants, both measured slower (docs/kernels/cuda-gemv.md,
// "Each format's default, step by step").

struct GbQ8_0 {
    enum { QK = 32, BPB = 34, PREP = 0, XQI = 0 };
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


// XQ=1 (integer dot, gemv_decode.cuh): the signed code bytes go to dp2a as
// they are; run a is elements 0..15, run b 16..31.
struct GbQ8_0I : GbB32QI<34> {
    GB_HD static float dot(const Wd& wd, const X& xs)
    {
        gb_u32 q[CW];
        gb_funnel<CW>(wd.w, wd.sh, q);
        int ia = 0, ib = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            ia = gb_dot4i(q[i], xs.a, i, ia);
            ib = gb_dot4i(q[4 + i], xs.b, i, ib);
        }
        return (gb_half_to_float(wd.d) * xs.s) * (float)(ia + ib);
    }
};

// Tensor-core path (gemv_mma.cuh). Unit = block; lane t of a quad takes code
// bytes 8t..8t+7 (two words): each word, offset to unsigned (q ^ 0x80 = q + 128)
// and masked, gives bytes 0, 2 (slots 2t, 2t+1) and, shifted by 8, bytes 1, 3
// (slots 2t+8, 2t+9) as the f16 of q + 128 (8 bits fit the 10-bit fraction);
// offset -128 by the offset mma.
struct GbQ8_0M {
    enum { QK = 32, BPB = 34, U = 32, OFF = -128, MIN = 0 };
    struct P {};
    GB_HD static gb_u32 kcol(gb_u32 u, gb_u32 j, gb_u32 t, gb_u32 i)
    {
        return 32 * u + 8 * t + 4 * j + (i >= 2 ? 1 : 0) + 2 * (i & 1);
    }
    GB_HD static bool k16(gb_u32, gb_u32) { return false; }
    GB_HD static void prep(const unsigned char*, gb_u32, gb_u32, P&) {}
    GB_HD static void afrag(const unsigned char* s, gb_u32 delta, gb_u32 u, gb_u32 t, const P&, gb_u32 (*a)[2])
    {
        const gb_u32 o = delta + 34 * u + 2 + 8 * t;
        const gb_u32* p = reinterpret_cast<const gb_u32*>(s + (o & ~3u));
        const gb_u32 sh = (o & 3) * 8, p0 = p[0], p1 = p[1], p2 = p[2];
        const gb_u32 w[2] = {gb_funnel_r(p0, p1, sh), gb_funnel_r(p1, p2, sh)};
        const gb_u32 w8[2] = {gb_funnel_r(p0, p1, sh + 8), gb_funnel_r(p1, p2, sh + 8)};
#pragma unroll
        for (int j = 0; j < 2; j++) {
            a[j][0] = gb_afix((w[j] ^ 0x00800080u) & 0x00FF00FFu);
            a[j][1] = gb_afix((w8[j] ^ 0x00800080u) & 0x00FF00FFu);
        }
    }
    GB_HD static float scale(const unsigned char* s, gb_u32 delta, gb_u32 G, gb_u32 t, const P&, float&)
    {
        return gb_half_to_float(gb_ld_u16(s + delta + 34 * (4 * G + t)));
    }
};

extern "C" __global__ void __launch_bounds__(32 * WARPS * KSPLIT)
    gemv_q8_0(const unsigned char* __restrict__ w, const float* __restrict__ x,
              float* __restrict__ y, unsigned m, unsigned k)
{
    gb_overlap_start();
    gb_gemv_quant_kernel<GbQ8_0, GbQ8_0I, GbQ8_0M>(w, x, y, m, k);
}
