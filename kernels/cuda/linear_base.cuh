// Shared code of the CUDA Linear kernels (kernels/cuda/linear_*.cu): bf16
// bit helpers, the bf16 tensor-core product and the device context through
// which every load, store and copy of the kernels goes. y[T, N] = x[T, K] ·
// W[N, K]^T, bf16 x and y, fp32 accumulation (docs/LINEAR.md); the design is
// docs/kernels/cuda-linear.md.
//
// Every helper with a device intrinsic has a host version of the same exact
// semantics, and the kernel bodies (linear_gemv.cuh, linear_mma.cuh) are
// __host__ __device__ templates written over arrays of Ctx::NT threads: on
// the GPU NT = 1 and the context issues the real instructions; the host
// emulation (tests/cuda_host/linear_emulate.cu) runs the same code with NT =
// a whole block and a context that checks every access (the pattern of
// gemv_mma.cuh). The parts include nothing but each other, so NVRTC compiles
// them without host headers.
#ifndef GPUBENCH_LINEAR_BASE_CUH
#define GPUBENCH_LINEAR_BASE_CUH

#include "gemv_bits.cuh" // GB_HD, gb_u32, gb_u64, gb_bits, gb_as_float, gb_half_to_float

#define LN_EACH for (int q = 0; q < Ctx::NT; q++)

// PRMT with its full default mode: result byte n is byte (s >> 4n) & 7 of the
// 8 bytes {b:a}, or, when bit 3 of that selector nibble is set, 0xFF or 0x00
// as the sign bit of that byte (the NVFP4 decode uses both).
GB_HD gb_u32 ln_prmt(gb_u32 a, gb_u32 b, gb_u32 s)
{
#ifdef __CUDA_ARCH__
    gb_u32 r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s));
    return r;
#else
    const gb_u64 v = ((gb_u64)b << 32) | a;
    gb_u32 r = 0;
    for (int n = 0; n < 4; n++) {
        const gb_u32 sel = (s >> (4 * n)) & 15;
        gb_u32 byte = (gb_u32)(v >> (8 * (sel & 7))) & 0xFF;
        if (sel & 8) byte = (byte & 0x80) ? 0xFF : 0x00;
        r |= byte << (8 * n);
    }
    return r;
#endif
}

// (a & m) | c in one LOP3 (the compiler's own choice was two with immediates).
GB_HD gb_u32 ln_andor(gb_u32 a, gb_u32 m, gb_u32 c)
{
#ifdef __CUDA_ARCH__
    gb_u32 r;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(a), "r"(m), "r"(c));
    return r;
#else
    return (a & m) | c;
#endif
}

// The halves of a bf16x2 register as f32 (exact).
GB_HD float ln_lo(gb_u32 w) { return gb_as_float(w << 16); }
GB_HD float ln_hi(gb_u32 w) { return gb_as_float(w & 0xFFFF0000u); }

#ifndef __CUDA_ARCH__
// |v| rounded to `bits` significant bits, ties to even, never to a quantum
// below 2^qmin (the subnormals). Host only: the emulated 16-bit FMAs compute
// a*b+c exactly in double and round once.
static inline double ln_round_sig(double a, int bits, int qmin)
{
    int e;
    __builtin_frexp(a, &e); // a = m * 2^e, m in [0.5, 1)
    int qe = e - bits;
    if (qe < qmin) qe = qmin;
    return __builtin_ldexp(__builtin_nearbyint(__builtin_ldexp(a, -qe)), qe);
}
// The bf16 nearest (ties to even) to an exact value v, as bits.
static inline gb_u32 ln_bf16_of_double(double v)
{
    if (v != v) return 0x7FC0u;
    const gb_u32 sign = __builtin_signbit(v) ? 0x8000u : 0;
    const double out = ln_round_sig(__builtin_fabs(v), 8, -133);
    if (out >= 0x1p128) return sign | 0x7F80u;
    return sign | (gb_bits((float)out) >> 16); // (float)out is exact
}
// The fp16 nearest (ties to even) to an exact value v, as bits (LN_HALF:
// docs/kernels/cuda-linear.md, "Weights in fp16").
static inline gb_u32 ln_f16_of_double(double v)
{
    if (v != v) return 0x7E00u;
    const gb_u32 sign = __builtin_signbit(v) ? 0x8000u : 0;
    const double out = ln_round_sig(__builtin_fabs(v), 11, -24);
    if (out >= 65520.0) return sign | 0x7C00u;
    return sign | gb_h_from_f32((float)out); // exact in fp16, so no second rounding
}
#endif
// f32 -> bf16 bits, round to nearest even (cvt.rn.bf16.f32).
GB_HD gb_u32 ln_bf16(float f)
{
#ifdef __CUDA_ARCH__
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    const gb_u32 u = gb_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u; // NaN stays NaN
    return (u + 0x7FFFu + ((u >> 16) & 1)) >> 16;
#endif
}

// Two f32 as one bf16x2 register, lo in bits 0..15, each rounded to nearest even.
GB_HD gb_u32 ln_pack(float lo, float hi)
{
#ifdef __CUDA_ARCH__
    gb_u32 r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
#else
    return ln_bf16(lo) | ln_bf16(hi) << 16;
#endif
}

// a * b + c on both bf16 halves, one rounding each (fma.rn.bf16x2). The
// decodes use it only where the result is exact.
GB_HD gb_u32 ln_fma2(gb_u32 a, gb_u32 b, gb_u32 c)
{
#ifdef __CUDA_ARCH__
    gb_u32 r;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#else
    const gb_u32 lo = ln_bf16_of_double((double)ln_lo(a) * ln_lo(b) + ln_lo(c));
    const gb_u32 hi = ln_bf16_of_double((double)ln_hi(a) * ln_hi(b) + ln_hi(c));
    return lo | hi << 16;
#endif
}

// f32 -> fp16 bits, round to nearest even (cvt.rn.f16.f32).
GB_HD gb_u32 ln_f16(float f) { return gb_h_from_f32(f); }
// a * b + c on both fp16 halves, one rounding each (fma.rn.f16x2); with c =
// LN_HNZERO2 the plain product, signed zeros kept.
GB_HD gb_u32 ln_hfma2(gb_u32 a, gb_u32 b, gb_u32 c)
{
#ifdef __CUDA_ARCH__
    gb_u32 r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#else
    gb_u32 r = 0;
    for (int h = 0; h < 2; h++) {
        const double v = (double)gb_half_to_float(a >> (16 * h) & 0xFFFF) * gb_half_to_float(b >> (16 * h) & 0xFFFF) +
                         gb_half_to_float(c >> (16 * h) & 0xFFFF);
        r |= ln_f16_of_double(v) << (16 * h);
    }
    return r;
#endif
}
// 2^e as f32 for e in -126 .. 127 (the LN_HALF route's power-of-two factors).
GB_HD float ln_pow2(int e) { return gb_as_float((gb_u32)(e + 127) << 23); }
// bf16x2 constants.
enum : gb_u32 {
    LN_ONE2 = 0x3F803F80u,  // (1, 1)
    LN_NZERO2 = 0x80008000u, // (-0, -0): a * b + (-0) is the plain product, signed zeros kept
    LN_HNZERO2 = 0x80008000u // the same in fp16
};

// ------------------------------------------------------------ the GPU context

#ifdef __CUDACC__
// mma.sync m16n8k16, bf16 A (row) and B (col), f32 accumulators: c += a * b.
__device__ __forceinline__ void ln_mma_bf16(float* c, const gb_u32* a, const gb_u32* b)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// A 16-byte cp.async (.cg: not allocating in L1) to shared address s,
// zero-filled when !pred: the x stages of both tensor-core routes and the
// memory-bound route's 16-byte weight stages.
__device__ __forceinline__ void ln_cp16(gb_u32 s, const void* src, bool pred)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(pred ? 16 : 0) : "memory");
}

// The device side of every load, store and copy. Weights are read once per
// call: streaming loads that do not allocate in L1 (ld_w*); the small planes
// that several units share a sector of (scales, high bits) and x go through
// L1 (ld_c*, ld_x).
struct LnDevCtx {
    enum { NT = 1 };
    __device__ __forceinline__ gb_u32 tid(int) const { return threadIdx.x; }
    __device__ __forceinline__ void ld_w64(const unsigned char* p, gb_u32* o) const
    {
        asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(o[0]), "=r"(o[1]) : "l"(p));
    }
    __device__ __forceinline__ void ld_w128(const unsigned char* p, gb_u32* o) const
    {
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3])
                     : "l"(p));
    }
    __device__ __forceinline__ gb_u32 ld_c8(const unsigned char* p) const { return __ldg(p); }
    __device__ __forceinline__ gb_u32 ld_c16(const unsigned char* p) const
    {
        return __ldg(reinterpret_cast<const unsigned short*>(p));
    }
    __device__ __forceinline__ gb_u32 ld_c32(const unsigned char* p) const
    {
        return __ldg(reinterpret_cast<const unsigned int*>(p));
    }
    __device__ __forceinline__ void ld_x(const unsigned short* p, gb_u32* o) const
    {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
        o[0] = v.x, o[1] = v.y, o[2] = v.z, o[3] = v.w;
    }
    __device__ __forceinline__ void st_y(unsigned short* p, gb_u32 v) const { *p = (unsigned short)v; }
    // x tiles of the tensor-core route: 16-byte cp.async, zero-filled when !pred
    __device__ __forceinline__ void cp_x(unsigned char* dst, const unsigned short* src, bool pred) const
    {
        ln_cp16((gb_u32)__cvta_generic_to_shared(dst), src, pred);
    }
    __device__ __forceinline__ void commit() const { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
    template <int N>
    __device__ __forceinline__ void wait() const
    {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
    }
    // weights of the staged memory-bound route: a B-byte cp.async (16: .cg,
    // not allocating in L1; 4 or 8, the small planes: .ca), zero-filled when !pred
    template <int B>
    __device__ __forceinline__ void cp_w(unsigned char* dst, const unsigned char* src, bool pred) const
    {
        static_assert(B == 4 || B == 8 || B == 16, "cp.async copies 4, 8 or 16 bytes");
        const gb_u32 s = (gb_u32)__cvta_generic_to_shared(dst);
        if (B == 16)
            ln_cp16(s, src, pred);
        else
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src), "n"(B), "r"(pred ? B : 0)
                         : "memory");
    }
    // The staged weights read back: code loads at the shared address XOR key
    // (the stage's swizzle), the small planes as they lie.
    __device__ __forceinline__ void lds_w64(const unsigned char* p, gb_u32 key, gb_u32* o) const
    {
        const gb_u32 s = (gb_u32)__cvta_generic_to_shared(p) ^ key;
        asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(o[0]), "=r"(o[1]) : "r"(s));
    }
    __device__ __forceinline__ void lds_w128(const unsigned char* p, gb_u32 key, gb_u32* o) const
    {
        const gb_u32 s = (gb_u32)__cvta_generic_to_shared(p) ^ key;
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3]) : "r"(s));
    }
    __device__ __forceinline__ gb_u32 lds_c8(const unsigned char* p) const
    {
        unsigned short v;
        asm volatile("ld.shared.u8 %0, [%1];" : "=h"(v) : "r"((gb_u32)__cvta_generic_to_shared(p)));
        return v;
    }
    __device__ __forceinline__ gb_u32 lds_c16(const unsigned char* p) const
    {
        unsigned short v;
        asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"((gb_u32)__cvta_generic_to_shared(p)));
        return v;
    }
    __device__ __forceinline__ gb_u32 lds_c32(const unsigned char* p) const
    {
        gb_u32 v;
        asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"((gb_u32)__cvta_generic_to_shared(p)));
        return v;
    }
    __device__ __forceinline__ void barrier() const { __syncthreads(); }
    __device__ __forceinline__ void lds128(const unsigned char* p, gb_u32* o) const
    {
        const uint4 v = *reinterpret_cast<const uint4*>(p);
        o[0] = v.x, o[1] = v.y, o[2] = v.z, o[3] = v.w;
    }
    __device__ __forceinline__ void mma(float (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2]) const
    {
        ln_mma_bf16(C[0], A[0], B[0]);
    }
};
#endif

#endif
