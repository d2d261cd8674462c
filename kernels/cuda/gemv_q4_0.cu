// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,I8=0,TC=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=3,KSPLIT=1,PARTS=2,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=1,KSPLIT=2,PARTS=4,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=1,XQ=0,SUBN=1,ROWS=16,WARPS=4,STAGES=4,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=2,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=3,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=1,XQ=0,SUBN=0,ROWS=16,WARPS=1,STAGES=3,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q4_0 defines=MMA=1,XQ=0,SUBN=1,ROWS=16,WARPS=2,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=3
// gpubench-compile: entry=gemv_q4_0 defines=MMA=1,XQ=0,SUBN=0,ROWS=16,WARPS=1,STAGES=3,KSPLIT=1,PARTS=1,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q4_0 defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=2,PARTS=1,GEMV_TOKENS=8
// GEMV y = W x for q4_0 weights (docs/FORMATS.md: 18-byte blocks of 32
// weights, fp16 d then 16 bytes of nibbles; element j < 16 is the low nibble
// of byte j, element j + 16 its high nibble; value (q - 8) * d). Any k that is
// a multiple of 32; any m. Launch: block (32 * WARPS * KSPLIT), grid
// ceil(m / (ROWS * WARPS)).
//
// Lane l of a warp decodes block l of each 1024-column tile for the warp's ROWS
// rows (the scalar path, gemv_warp.cuh). Blocks are 2-byte aligned in the
// staged tile, so the 16 code bytes are read as five words and funnel-shifted
// into four aligned ones. The magic decode then turns each byte into a float
// with one byte permute (gemv_decode.cuh, "magic decode"):
//     sum_j (q_j - 8) x_j = 64 * sum_j (2 + q_j/64) x_j - 136 * sum_j x_j;
// the integer dot feeds the masked code words to dp2a instead.
#define GB_GEMV_QUANTIZED 1
#if defined(I8) && I8 != 0
#error "I8=1 is the int8 tensor-core kernel, kernels/cuda/gemv_q4_0_i8.cu (gemv_cuda.variant switches the file)"
#endif
#include "gemv_geometry.cuh"
#include "launch_overlap.cuh"

// x and y only after the wait (launch_overlap.cuh).
GB_LAUNCH_OVERLAP
#include "gemv_mma.cuh"

// Three decodes, one struct each (below; gb_gemv_quant_kernel in gemv_mma.cuh
// picks one by the defines): the integer dot (GbQ4_0I, XQ=1) is the default;
// the f32 magic decode (GbQ4_0, XQ=0) and the tensor-core path (GbQ4_0M,
// MMA=1) are variants, both measured slower (docs/kernels/cuda-gemv.md,
// "Each format's default, step by step").

struct GbQ4_0 {
    enum { QK = 32, BPB = 18, PREP = 0, XQI = 0 };
    struct X {
        float v[32];
        float c; // 136 * sum(v)
    };
    GB_HD static bool active(gb_u32 lane, gb_u32 left) { return lane * 32 < left; }
    GB_HD static void load_x(const float* xt, gb_u32 lane, X& xs)
    {
        gb_load_x<32>(xt + 32 * lane, xs.v);
        xs.c = 136.0f * gb_sum<32>(xs.v);
    }
    GB_HD static float dot(const unsigned char* slot, gb_u32 delta, gb_u32 lane, const X& xs,
                           const float*)
    {
        const gb_u32 off = delta + 18 * lane;
        const float d = gb_half_to_float(gb_ld_u16(slot + off));
        // Low nibbles: the code words shifted into place; high nibbles: shifted
        // 4 bits further in the same funnel shift (the next byte's low nibble
        // that enters bits 28..31 is masked off).
        gb_u32 lo_w[4], hi_w[4];
        gb_ld_words2<4>(slot, off + 2, lo_w, hi_w);
        float lo = 0.0f, hi = 0.0f; // two chains: elements 0..15 and 16..31
#pragma unroll
        for (int i = 0; i < 4; i++) {
            lo = gb_dot4_magic(lo_w[i] & 0x0F0F0F0Fu, xs.v + 4 * i, lo);
            hi = gb_dot4_magic(hi_w[i] & 0x0F0F0F0Fu, xs.v + 16 + 4 * i, hi);
        }
        return d * fmaf(64.0f, lo + hi, -xs.c);
    }
};


// XQ=1 (integer dot, gemv_decode.cuh): the same bytes as GbQ4_0; run a is
// elements 0..15 (low nibbles), run b 16..31 (high nibbles), one scale d:
//     sum (q - 8) x = s * (sum q c - 8 * sum c).
struct GbQ4_0I : GbB32QI<18> {
    GB_HD static void make_x(const GbXRaw& r, X& xs)
    {
        gb_xq_make(r, xs);
        xs.sa = 8 * (xs.sa + xs.sb); // the offset term, once per tile
    }
    GB_HD static float dot(const Wd& wd, const X& xs)
    {
        // the code words shifted into place; high nibbles masked in place (16 q)
        gb_u32 q[CW];
        gb_funnel<CW>(wd.w, wd.sh, q);
        int ia = 0, ib = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            ia = gb_dot4i(q[i] & 0x0F0F0F0Fu, xs.a, i, ia);
            ib = gb_dot4u(q[i] & 0xF0F0F0F0u, xs.b, i, ib);
        }
        return (gb_half_to_float(wd.d) * xs.s) * (float)(ia + (ib >> 4) - xs.sa); // ib: a multiple of 16
    }
};

// Tensor-core path (gemv_mma.cuh). Unit = block (32 columns), lane t of a quad
// takes code word t (bytes 4t..4t+3 of qs): masked in place, its low nibbles
// (elements 4t, 4t+2 | 4t+1, 4t+3 from the word shifted by 8) fill k slots
// 2t, 2t+1 and its high nibbles (elements 16+4t, 18+4t | 17+4t, 19+4t), as 16q,
// slots 2t+8, 2t+9 (class 16: B holds x/16 there). Offset -8 by the offset mma.
struct GbQ4_0M {
    enum { QK = 32, BPB = 18, U = 32, OFF = -8, MIN = 0 };
    struct P {};
    GB_HD static gb_u32 kcol(gb_u32 u, gb_u32 j, gb_u32 t, gb_u32 i)
    {
        return 32 * u + (i >= 2 ? 16 : 0) + 4 * t + 2 * (i & 1) + j;
    }
    GB_HD static bool k16(gb_u32, gb_u32 i) { return i >= 2; }
    GB_HD static void prep(const unsigned char*, gb_u32, gb_u32, P&) {}
    GB_HD static void afrag(const unsigned char* s, gb_u32 delta, gb_u32 u, gb_u32 t, const P&, gb_u32 (*a)[2])
    {
        gb_u32 w, w8;
        gb_ld_w8(s, delta + 18 * u + 2 + 4 * t, w, w8);
        a[0][0] = gb_afix(w & 0x000F000Fu), a[0][1] = gb_afix(w & 0x00F000F0u);
        a[1][0] = gb_afix(w8 & 0x000F000Fu), a[1][1] = gb_afix(w8 & 0x00F000F0u);
    }
    GB_HD static float scale(const unsigned char* s, gb_u32 delta, gb_u32 G, gb_u32 t, const P&, float&)
    {
        return gb_half_to_float(gb_ld_u16(s + delta + 18 * (4 * G + t)));
    }
};

extern "C" __global__ void __launch_bounds__(32 * WARPS * KSPLIT)
    gemv_q4_0(const unsigned char* __restrict__ w, const float* __restrict__ x,
              float* __restrict__ y, unsigned m, unsigned k)
{
    gb_overlap_start();
    gb_gemv_quant_kernel<GbQ4_0, GbQ4_0I, GbQ4_0M>(w, x, y, m, k);
}
