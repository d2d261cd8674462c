// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=1,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=3,KSPLIT=1,PARTS=2,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=1,KSPLIT=2,PARTS=4,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=2,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=1,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=2,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=0,SUBN=1,ROWS=4,WARPS=1,STAGES=2,KSPLIT=5,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=1,XQ=0,SUBN=0,ROWS=16,WARPS=2,STAGES=4,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=1,XQ=0,SUBN=1,ROWS=16,WARPS=4,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q5_k defines=MMA=1,XQ=0,SUBN=1,ROWS=16,WARPS=2,STAGES=2,KSPLIT=1,PARTS=1,GEMV_TOKENS=3
// gpubench-compile: entry=gemv_q5_k defines=MMA=1,XQ=0,SUBN=0,ROWS=16,WARPS=1,STAGES=3,KSPLIT=1,PARTS=1,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q5_k defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=2,PARTS=1,GEMV_TOKENS=8
// GEMV y = W x for q5_k weights (docs/FORMATS.md: 176-byte super-blocks of
// 256 weights: fp16 d, fp16 dmin, 12 bytes of packed scales and mins as q4_k,
// 32 bytes qh, 128 bytes qs; q = low nibble as q4_k
// | ((qh[e%32] >> (e/32)) & 1) << 4, value (d*sc)*q - dmin*m). k a multiple
// of 256; any m. Launch: block (32 * WARPS * KSPLIT), grid
// ceil(m / (ROWS * WARPS)).
//
// Lanes take the same 32 weights of a super-block as in q4_k (GbKX in
// gemv_decode.cuh): code bytes qs[32c + 16h + i], whose fifth bits are bits 2c
// (low nibble, sub-block 2c) and 2c+1 (high nibble) of qh[16h + i]. Super-
// blocks are 16-byte aligned (176 = 11*16): the qh half and the qs bytes are
// two 16-byte shared-memory loads, the scale products come from the prep step
// as in q4_k. A 5-bit code still fits the "2 + q/64" byte-permute decode
// (bits 16..20 of the float).
#define GB_GEMV_QUANTIZED 1
#include "gemv_geometry.cuh"
#include "launch_overlap.cuh"

// x and y only after the wait (launch_overlap.cuh).
GB_LAUNCH_OVERLAP
#include "gemv_mma.cuh"

// Three decodes, one struct each (below; gb_gemv_quant_kernel in gemv_mma.cuh
// picks one by the defines): the integer dot (GbQ5KI, XQ=1) is the default;
// the f32 magic decode (GbQ5K, XQ=0) and the tensor-core path (GbQ5KM,
// MMA=1) are variants, both measured slower (docs/kernels/cuda-gemv.md,
// "Each format's default, step by step").

struct GbQ5K {
    enum { QK = 256, BPB = 176, PREP = 16, XQI = 0 };
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


// XQ=1 (integer dot, gemv_decode.cuh): the same bytes and prep as GbQ5K.
struct GbQ5KI : GbKQI<176> {
    struct Wd { gb_u32 qh[4], q[4], c2; float4 s; };
    GB_HD static void fetch(const unsigned char* slot, gb_u32 delta, gb_u32 lane, const float* prep, Wd& wd)
    {
        const gb_u32 p = lane & 7;
        const unsigned char* sb = slot + delta + 176 * (lane >> 3);
        gb_ld_u32x4(sb + 16 + 16 * (p & 1), wd.qh); // qh[16h ..]
        gb_ld_u32x4(sb + 48 + 16 * p, wd.q);        // qs[32c + 16h ..]
        wd.c2 = 2 * (p >> 1);
        wd.s = gb_kq_scales(prep, lane);
    }
    GB_HD static float dot(const Wd& wd, const X& xs)
    {
        int ia = 0, ib = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            // bit 0 of each byte: the fifth bit of run a (sub-block 2c); bit 1: run b
            const gb_u32 g = wd.qh[i] >> wd.c2;
            ia = gb_dot4i((wd.q[i] & 0x0F0F0F0Fu) | ((g << 4) & 0x10101010u), xs.a, i, ia);
            ib = gb_dot4i(((wd.q[i] >> 4) & 0x0F0F0F0Fu) | ((g << 3) & 0x10101010u), xs.b, i, ib);
        }
        return gb_kq_finish(wd.s, ia, ib, xs);
    }
};

// Tensor-core path (gemv_mma.cuh). As q4_k (lane t: qs[32c + 8t .. +7]), with
// the fifth bits from qh[8t .. 8t+7] (bit s for sub-block s), loaded once per
// tile: per word, the nibble (shifted down by 4 for odd s) and the qh word
// shifted so that bit s lands on bit 4 are merged by one bit-select; the masks
// 0x001F001F that cut bytes 0, 2 (and, shifted, 1, 3) clear the rest. All
// units are class 1.
struct GbQ5KM {
    enum { QK = 256, BPB = 176, U = 32, OFF = 0, MIN = 1 };
    struct P { float dsc[2], dm[2]; gb_u32 h[2]; };
    GB_HD static gb_u32 kcol(gb_u32 u, gb_u32 j, gb_u32 t, gb_u32 i)
    {
        return 32 * u + 8 * t + 4 * j + (i >= 2 ? 1 : 0) + 2 * (i & 1);
    }
    GB_HD static bool k16(gb_u32, gb_u32) { return false; }
    GB_HD static void prep_scales(const unsigned char* sb, gb_u32 t, float* dsc, float* dm)
    {
        gb_u32 hd[4]; // d | dmin << 16, S0, S1, S2
        gb_ld_u32x4(sb, hd);
        const float d = gb_half_to_float(hd[0] & 0xFFFF), dmin = gb_half_to_float(hd[0] >> 16);
        // sub-blocks t and 4+t (docs/FORMATS.md, q4_k); d*sc, dmin*m are exact products
        const gb_u32 b0 = hd[1] >> (8 * t), b1 = hd[2] >> (8 * t), b2 = hd[3] >> (8 * t);
        dsc[0] = d * (float)(b0 & 63), dm[0] = dmin * (float)(b1 & 63);
        dsc[1] = d * (float)((b2 & 15) | ((b0 >> 2) & 48));
        dm[1] = dmin * (float)(((b2 >> 4) & 15) | ((b1 >> 2) & 48));
    }
    // delta is always 0: rows and tiles start on 176-byte (16-byte) boundaries.
    GB_HD static void prep(const unsigned char* s, gb_u32, gb_u32 t, P& p)
    {
        prep_scales(s, t, p.dsc, p.dm);
        const uint2 v = *reinterpret_cast<const uint2*>(s + 16 + 8 * t);
        p.h[0] = v.x, p.h[1] = v.y;
    }
    GB_HD static void afrag(const unsigned char* s, gb_u32, gb_u32 u, gb_u32 t, const P& p, gb_u32 (*a)[2])
    {
        const uint2 v = *reinterpret_cast<const uint2*>(s + 48 + 32 * (u >> 1) + 8 * t);
        const gb_u32 w[2] = {v.x, v.y};
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const gb_u32 src = (u & 1) ? w[j] >> 4 : w[j];
            const gb_u32 hb = u <= 4 ? p.h[j] << (4 - u) : p.h[j] >> (u - 4);
            const gb_u32 w5 = (src & 0x0F0F0F0Fu) | (hb & 0xF0F0F0F0u);
            a[j][0] = gb_afix(w5 & 0x001F001Fu), a[j][1] = gb_afix((w5 >> 8) & 0x001F001Fu);
        }
    }
    GB_HD static float scale(const unsigned char*, gb_u32, gb_u32 G, gb_u32, const P& p, float& mc)
    {
        mc = p.dm[G];
        return p.dsc[G];
    }
};

extern "C" __global__ void __launch_bounds__(32 * WARPS * KSPLIT)
    gemv_q5_k(const unsigned char* __restrict__ w, const float* __restrict__ x,
              float* __restrict__ y, unsigned m, unsigned k)
{
    gb_overlap_start();
    gb_gemv_quant_kernel<GbQ5K, GbQ5KI, GbQ5KM>(w, x, y, m, k);
}
