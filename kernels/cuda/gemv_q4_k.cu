// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=1,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,I8=0,GEMV_TOKENS=1,XSHARED=0
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,I8=0,GEMV_TOKENS=4
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=2,KSPLIT=1,PARTS=1,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=3,KSPLIT=1,PARTS=2,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=1,SUBN=1,ROWS=16,WARPS=1,STAGES=1,KSPLIT=2,PARTS=4,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=2,STAGES=2,KSPLIT=1,PARTS=1,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=1,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=2,PARTS=1,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=1,KSPLIT=5,PARTS=1,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=1,XQ=0,SUBN=0,ROWS=16,WARPS=2,STAGES=2,KSPLIT=1,PARTS=1,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=1,XQ=0,SUBN=1,ROWS=16,WARPS=4,STAGES=4,KSPLIT=1,PARTS=1,I8=0,GEMV_TOKENS=1
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,I8=0,GEMV_TOKENS=2
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=1,SUBN=1,ROWS=14,WARPS=1,STAGES=2,KSPLIT=1,PARTS=2,BULK=0,I8=0,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q4_k defines=MMA=1,XQ=0,SUBN=1,ROWS=16,WARPS=2,STAGES=2,KSPLIT=1,PARTS=1,I8=0,GEMV_TOKENS=3
// gpubench-compile: entry=gemv_q4_k defines=MMA=1,XQ=0,SUBN=0,ROWS=16,WARPS=1,STAGES=3,KSPLIT=1,PARTS=1,I8=0,GEMV_TOKENS=8
// gpubench-compile: entry=gemv_q4_k defines=MMA=0,XQ=0,SUBN=1,ROWS=8,WARPS=1,STAGES=2,KSPLIT=2,PARTS=1,I8=0,GEMV_TOKENS=8
// GEMV y = W x for q4_k weights (docs/FORMATS.md: 144-byte super-blocks of
// 256 weights: fp16 d, fp16 dmin, 12 bytes of packed 6-bit sub-block scales
// and mins, 128 bytes of nibbles; value (d*sc)*q - dmin*m). k a multiple of
// 256; any m. Launch: block (32 * WARPS * KSPLIT), grid ceil(m / (ROWS * WARPS)).
//
// A 1024-column tile is four super-blocks; lane l takes 32 weights of super-
// block l/8 (16 code bytes, see GbKX in gemv_decode.cuh). Super-blocks are
// 16-byte aligned (144 = 9*16), so the lane reads its 16 code bytes with one
// 16-byte shared-memory load. The scale products d*sc and dmin*m are computed
// once per (row, super-block) by the prep step (gb_k_prep) and read back as
// one 16-byte load per row: unpacking them in every lane cost more than the
// decode (docs/kernels/cuda-gemv.md, "Common structure", k-quant prep step).
#define GB_GEMV_QUANTIZED 1
#if defined(I8) && I8 != 0
#error "I8=1 is the int8 tensor-core kernel, kernels/cuda/gemv_q4_k_i8.cu (gemv_cuda.variant switches the file)"
#endif
#include "gemv_geometry.cuh"
#include "launch_overlap.cuh"

// x and y only after the wait (launch_overlap.cuh).
GB_LAUNCH_OVERLAP
#include "gemv_mma.cuh"
#include "gemv_q4k_xq.cuh"

// Three decodes, one struct each (below; gb_gemv_quant_kernel in gemv_mma.cuh
// picks one by the defines): the integer dot (GbQ4KI, XQ=1) is the default;
// the f32 magic decode (GbQ4K, XQ=0) and the tensor-core path (GbQ4KM,
// MMA=1) are variants, both measured slower (docs/kernels/cuda-gemv.md,
// "Each format's default, step by step").

struct GbQ4K {
    enum { QK = 256, BPB = 144, PREP = 16, XQI = 0 };
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


// XQ=1 (integer dot): GbQ4KI, the same bytes and prep as GbQ4K, is in
// gemv_q4k_xq.cuh, since the MoE kernels run it too.

// Tensor-core path (gemv_mma.cuh). A tile is one super-block; unit = sub-block
// s (32 columns), c = s/2. Lane t of a quad takes qs[32c + 8t .. +7] (one
// 8-byte load, super-blocks are 16-byte aligned): low nibbles for even s, high
// nibbles (16q: class 16, the whole unit) for odd s, bytes 0, 2 of each word in
// slots 2t, 2t+1 and bytes 1, 3 in slots 2t+8, 2t+9. The mins: the A = 1 mma
// gives sum x' per unit (x'/16 for odd units: times 16 again in the epilogue).
struct GbQ4KM {
    enum { QK = 256, BPB = 144, U = 32, OFF = 0, MIN = 1 };
    struct P { float dsc[2], dm[2]; };
    GB_HD static gb_u32 kcol(gb_u32 u, gb_u32 j, gb_u32 t, gb_u32 i)
    {
        return 32 * u + 8 * t + 4 * j + (i >= 2 ? 1 : 0) + 2 * (i & 1);
    }
    GB_HD static bool k16(gb_u32 u, gb_u32) { return (u & 1) != 0; }
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
    // delta is always 0: rows and tiles start on 144-byte (16-byte) boundaries.
    GB_HD static void prep(const unsigned char* s, gb_u32, gb_u32 t, P& p) { prep_scales(s, t, p.dsc, p.dm); }
    GB_HD static void afrag(const unsigned char* s, gb_u32, gb_u32 u, gb_u32 t, const P&, gb_u32 (*a)[2])
    {
        const uint2 v = *reinterpret_cast<const uint2*>(s + 16 + 32 * (u >> 1) + 8 * t);
        const gb_u32 mask = (u & 1) ? 0x00F000F0u : 0x000F000Fu;
        a[0][0] = gb_afix(v.x & mask), a[0][1] = gb_afix((v.x >> 8) & mask);
        a[1][0] = gb_afix(v.y & mask), a[1][1] = gb_afix((v.y >> 8) & mask);
    }
    GB_HD static float scale(const unsigned char*, gb_u32, gb_u32 G, gb_u32, const P& p, float& mc)
    {
        mc = p.dm[G];
        return p.dsc[G];
    }
};

extern "C" __global__ void __launch_bounds__(32 * WARPS * KSPLIT)
    gemv_q4_k(const unsigned char* __restrict__ w, const float* __restrict__ x,
              float* __restrict__ y, unsigned m, unsigned k)
{
    gb_overlap_start();
    gb_gemv_quant_kernel<GbQ4K, GbQ4KI, GbQ4KM>(w, x, y, m, k);
}
