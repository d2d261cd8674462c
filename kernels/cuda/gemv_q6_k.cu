// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=1,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=3,KSPLIT=1,PARTS=1,BULK=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=1,KSPLIT=2,PARTS=4,BULK=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=3,KSPLIT=1,PARTS=2,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=1,KSPLIT=2,PARTS=4,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=1,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=2,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=0,SUBN=1,ROWS=4,WARPS=2,STAGES=2,KSPLIT=2,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=1,XQ=0,SUBN=0,ROWS=16,WARPS=4,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=1,XQ=0,SUBN=1,ROWS=16,WARPS=2,STAGES=4,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_q6_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,GEMV_TOKENS=8
// GEMV y = W x for q6_k weights (docs/FORMATS.md: 210-byte super-blocks of 256
// weights: 128 bytes ql, 64 bytes qh, 16 signed 8-bit scales, fp16 d last;
// element e = 128h + 32k + l has low bits from ql[64h + 32(k&1) + l] (low
// nibble if k < 2, else high), high bits (qh[32h + l] >> 2k) & 3, value
// d * scales[e/16] * (q - 32)). k a multiple of 256; any m.
// Launch: block (32 * WARPS * KSPLIT), grid ceil(m / (ROWS * WARPS)).
//
// A 1024-column tile is four super-blocks; lane l takes super-block l/8 and,
// with p = l%8 = 4h + 2j + g, the 16 ql bytes ql[64h + 32j + 16g + i] at byte
// 16p: their low nibbles are the weights of k = j (elements 128h + 32j + 16g + i,
// scale 8h + 2j + g), their high nibbles those of k = j+2 (64 elements later,
// scale index + 4); both take their high bits from qh[32h + 16g + i]. Super-
// blocks (210 bytes) are 2-byte aligned, so ql and qh are read as five words
// and funnel-shifted. The 6-bit code fits the "2 + q/64" byte-permute decode:
//     sum (q - 32) x = 64 * sum (2 + q/64) x - 160 * sum x.
// At k >= 4096 gpubench runs this kernel with BULK=1, the only case where bulk
// copies pay (gemv_cuda.for_shape; docs/kernels/cuda-gemv.md, "Bulk copies").
#define GB_GEMV_QUANTIZED 1
#include "gemv_geometry.cuh"
#include "launch_overlap.cuh"

// x and y only after the wait (launch_overlap.cuh).
GB_LAUNCH_OVERLAP
#include "gemv_mma.cuh"

// Three decodes, one struct each (below; gb_gemv_quant_kernel in gemv_mma.cuh
// picks one by the defines): the integer dot (GbQ6KI, XQ=1) is the default;
// the f32 magic decode (GbQ6K, XQ=0) and the tensor-core path (GbQ6KM,
// MMA=1) are variants, both measured slower (docs/kernels/cuda-gemv.md,
// "Each format's default, step by step").

struct GbQ6K {
    enum { QK = 256, BPB = 210, PREP = 0, XQI = 0 };
    struct X {
        float a[16], b[16]; // elements of k = j and k = j+2
        float ca, cb;       // 160 * their sums
    };
    GB_HD static bool active(gb_u32 lane, gb_u32 left) { return (lane >> 3) * 256 < left; }
    GB_HD static void load_x(const float* xt, gb_u32 lane, X& xs)
    {
        const gb_u32 p = lane & 7;
        const float* base = xt + 256 * (lane >> 3) + 128 * (p >> 2) + 32 * ((p >> 1) & 1) + 16 * (p & 1);
        gb_load_x<16>(base, xs.a);
        gb_load_x<16>(base + 64, xs.b);
        xs.ca = 160.0f * gb_sum<16>(xs.a);
        xs.cb = 160.0f * gb_sum<16>(xs.b);
    }
    GB_HD static float dot(const unsigned char* slot, gb_u32 delta, gb_u32 lane, const X& xs,
                           const float*)
    {
        const gb_u32 p = lane & 7, h = p >> 2, j = (p >> 1) & 1, g = p & 1;
        const gb_u32 sb = delta + 210 * (lane >> 3);
        gb_u32 ql[4], ql4[4], qh[4];
        gb_ld_words2<4>(slot, sb + 16 * p, ql, ql4);         // ql and ql >> 4
        gb_ld_words<4>(slot, sb + 128 + 32 * h + 16 * g, qh);
        const float sc_a = (float)(signed char)slot[sb + 192 + 8 * h + 2 * j + g];
        const float sc_b = (float)(signed char)slot[sb + 196 + 8 * h + 2 * j + g];
        const float d = gb_half_to_float(gb_ld_u16(slot + sb + 208));
        float sa = 0.0f, sbv = 0.0f;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const gb_u32 t = qh[i] >> (2 * j); // bits 0,1 of each byte: k = j; bits 4,5: k = j+2
            const gb_u32 qa = (ql[i] & 0x0F0F0F0Fu) | ((t << 4) & 0x30303030u);
            const gb_u32 qb = (ql4[i] & 0x0F0F0F0Fu) | (t & 0x30303030u);
            sa = gb_dot4_magic(qa, xs.a + 4 * i, sa);
            sbv = gb_dot4_magic(qb, xs.b + 4 * i, sbv);
        }
        return d * fmaf(sc_a, fmaf(64.0f, sa, -xs.ca), sc_b * fmaf(64.0f, sbv, -xs.cb));
    }
};


// XQ=1 (integer dot, gemv_decode.cuh): the same bytes as GbQ6K; run a is the
// k = j weights, run b the k = j+2 ones (one scale each):
//     sum (q - 32) x = s * (sum q c - 32 * sum c).
struct GbQ6KI {
    enum { QK = 256, BPB = 210, PREP = 0, XQI = 1 };
    typedef GbXQ X;
    struct Wd { gb_u32 ql[5], qh[5], shl, shh, d; int sc_a, sc_b; };
    GB_HD static bool active(gb_u32 lane, gb_u32 left) { return (lane >> 3) * 256 < left; }
    // runs a, b: floats 256(l/8) + 128(p/4) + 32(p/2%2) + 16(p%2) and 64 further
    GB_HD static void x_chunks(gb_u32 lane, gb_u32& ca, gb_u32& cb)
    {
        const gb_u32 p = lane & 7;
        ca = 64 * (lane >> 3) + 32 * (p >> 2) + 8 * ((p >> 1) & 1) + 4 * (p & 1), cb = ca + 16;
    }
    GB_HD static void make_x(const GbXRaw& r, X& xs)
    {
        gb_xq_make(r, xs);
        xs.sa *= 32, xs.sb *= 32; // the offset terms, once per tile
    }
    GB_HD static void fetch(const unsigned char* slot, gb_u32 delta, gb_u32 lane, const float*, Wd& wd)
    {
        const gb_u32 p = lane & 7, h = p >> 2, j = (p >> 1) & 1, g = p & 1;
        const gb_u32 sb = delta + 210 * (lane >> 3);
        wd.shl = gb_ld_raw<4>(slot, sb + 16 * p, wd.ql);
        wd.shh = gb_ld_raw<4>(slot, sb + 128 + 32 * h + 16 * g, wd.qh) + 2 * j; // + the k = j bit pair
        wd.sc_a = (signed char)slot[sb + 192 + 8 * h + 2 * j + g];
        wd.sc_b = (signed char)slot[sb + 196 + 8 * h + 2 * j + g];
        wd.d = gb_ld_u16(slot + sb + 208);
    }
    GB_HD static float dot(const Wd& wd, const X& xs)
    {
        gb_u32 ql[4], ql4[4], t[4];
        gb_funnel<4>(wd.ql, wd.shl, ql);
        gb_funnel<4>(wd.ql, wd.shl, ql4, 4);
        gb_funnel<4>(wd.qh, wd.shh, t); // bits 0,1 of each byte: k = j; bits 4,5: k = j+2
        int ia = 0, ib = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            ia = gb_dot4i((ql[i] & 0x0F0F0F0Fu) | ((t[i] << 4) & 0x30303030u), xs.a, i, ia);
            ib = gb_dot4i((ql4[i] & 0x0F0F0F0Fu) | (t[i] & 0x30303030u), xs.b, i, ib);
        }
        return (gb_half_to_float(wd.d) * xs.s) * fmaf((float)wd.sc_a, (float)(ia - xs.sa), (float)wd.sc_b * (float)(ib - xs.sb));
    }
};

// Tensor-core path (gemv_mma.cuh). A tile is one super-block; unit = one scale's
// 16 elements, u = e/16 = 8h + 2k + g' (e = 128h + 32k + 16g' + i). Lane t of a
// quad takes i = 4t .. 4t+3: one ql word (low nibbles for k < 2, high ones,
// shifted by 4, for k >= 2) and one qh word (bits 2k, 2k+1 shifted onto bits
// 4, 5), merged by one bit-select and cut by 0x003F003F into bytes 0, 2 (slots
// 2t, 2t+1) and 1, 3 (slots 2t+8, 2t+9). The 12 words a lane needs per row are
// loaded once per tile (super-blocks are 2-byte aligned: funnel shifts).
// Offset -32 by the offset mma.
struct GbQ6KM {
    enum { QK = 256, BPB = 210, U = 16, OFF = -32, MIN = 0 };
    struct P { float d; gb_u32 ql[2][4], qh[2][2]; };
    GB_HD static gb_u32 kcol(gb_u32 u, gb_u32, gb_u32 t, gb_u32 i)
    {
        return 128 * (u >> 3) + 32 * ((u >> 1) & 3) + 16 * (u & 1) + 4 * t + (i >= 2 ? 1 : 0) + 2 * (i & 1);
    }
    GB_HD static bool k16(gb_u32, gb_u32) { return false; }
    GB_HD static void prep(const unsigned char* s, gb_u32 delta, gb_u32 t, P& p)
    {
        p.d = gb_half_to_float(gb_ld_u16(s + delta + 208));
        gb_u32 unused;
#pragma unroll
        for (int h = 0; h < 2; h++) {
#pragma unroll
            for (int b = 0; b < 4; b++) gb_ld_w8(s, delta + 64 * h + 16 * b + 4 * t, p.ql[h][b], unused);
#pragma unroll
            for (int g = 0; g < 2; g++) gb_ld_w8(s, delta + 128 + 32 * h + 16 * g + 4 * t, p.qh[h][g], unused);
        }
    }
    GB_HD static void afrag(const unsigned char*, gb_u32, gb_u32 u, gb_u32, const P& p, gb_u32 (*a)[2])
    {
        const gb_u32 h = u >> 3, kk = (u >> 1) & 3, half = u & 1;
        const gb_u32 wl = p.ql[h][2 * (kk & 1) + half], wh = p.qh[h][half];
        const gb_u32 src = kk >= 2 ? wl >> 4 : wl;
        const gb_u32 hb = kk == 0 ? wh << 4 : kk == 1 ? wh << 2 : kk == 2 ? wh : wh >> 2;
        const gb_u32 w6 = (src & 0x0F0F0F0Fu) | (hb & 0xF0F0F0F0u);
        a[0][0] = gb_afix(w6 & 0x003F003Fu), a[0][1] = gb_afix((w6 >> 8) & 0x003F003Fu);
    }
    GB_HD static float scale(const unsigned char* s, gb_u32 delta, gb_u32 G, gb_u32 t, const P& p, float&)
    {
        return p.d * (float)(signed char)s[delta + 192 + 4 * G + t];
    }
};

extern "C" __global__ void __launch_bounds__(32 * WARPS * KSPLIT)
    gemv_q6_k(const unsigned char* __restrict__ w, const float* __restrict__ x,
              float* __restrict__ y, unsigned m, unsigned k)
{
    gb_overlap_start();
    gb_gemv_quant_kernel<GbQ6K, GbQ6KI, GbQ6KM>(w, x, y, m, k);
}
