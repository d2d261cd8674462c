// Part of the CUDA GEMV kernels' shared code (gemv_common.cuh includes the
// parts in order): the build switches and integer types, bit helpers with the
// device intrinsics' exact semantics in their host versions, and reads from a
// warp's staging slot, including the word-at-any-byte-offset loads that the
// 2-byte-aligned block formats (q4_0, q8_0, q6_k) are decoded from.
#ifndef GPUBENCH_GEMV_BITS_CUH
#define GPUBENCH_GEMV_BITS_CUH

#define GB_HD __host__ __device__ __forceinline__

// BULK=1: the scalar path stages the weights with Hopper bulk copies
// (gb_stage_tile_bulk) instead of lanes' 16-byte cp.async (the default, 0).
#ifndef BULK
#define BULK 0
#endif
#define GB_BULK (BULK != 0)

typedef unsigned int gb_u32;
typedef unsigned long long gb_u64;

// ------------------------------------------------------------ bit helpers
// Each has the device intrinsic's exact semantics in its host version.

// dp2a: acc + x2.lo * w.byte(2H) + x2.hi * w.byte(2H+1), x2 two signed 16-bit
// values, w's bytes signed (U = false; codes < 128 read the same signed or
// not) or unsigned (U = true: the high nibbles of a code word masked in
// place, 16 q, go in without a shift). Used by the GEMV and Linear kernels.
template <bool H, bool U>
GB_HD int gb_dp2a(gb_u32 x2, gb_u32 w, int acc)
{
#ifdef __CUDA_ARCH__
    int r;
    if constexpr (H && U) asm("dp2a.hi.s32.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x2), "r"(w), "r"(acc));
    else if constexpr (H) asm("dp2a.hi.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x2), "r"(w), "r"(acc));
    else if constexpr (U) asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x2), "r"(w), "r"(acc));
    else asm("dp2a.lo.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x2), "r"(w), "r"(acc));
    return r;
#else
    const gb_u32 b0 = (w >> (H ? 16 : 0)) & 0xFF, b1 = (w >> (H ? 24 : 8)) & 0xFF;
    const int w0 = U ? (int)b0 : (int)(signed char)b0, w1 = U ? (int)b1 : (int)(signed char)b1;
    // in unsigned arithmetic: the device's sum wraps, and signed overflow is undefined in C++
    return (int)((gb_u32)acc + (gb_u32)((int)(short)(x2 & 0xFFFF) * w0) + (gb_u32)((int)(short)(x2 >> 16) * w1));
#endif
}

// Byte permute: result byte n is byte ((s >> 4n) & 7) of the 8 bytes {b:a}.
GB_HD gb_u32 gb_prmt(gb_u32 a, gb_u32 b, gb_u32 s)
{
#ifdef __CUDA_ARCH__
    return __byte_perm(a, b, s);
#else
    const gb_u64 v = ((gb_u64)b << 32) | a;
    gb_u32 r = 0;
    for (int n = 0; n < 4; n++)
        r |= (gb_u32)((v >> (8 * ((s >> (4 * n)) & 7))) & 0xFF) << (8 * n);
    return r;
#endif
}

// Low 32 bits of {hi:lo} >> (sh & 31).
GB_HD gb_u32 gb_funnel_r(gb_u32 lo, gb_u32 hi, gb_u32 sh)
{
#ifdef __CUDA_ARCH__
    return __funnelshift_r(lo, hi, sh);
#else
    sh &= 31;
    return sh ? (lo >> sh) | (hi << (32 - sh)) : lo;
#endif
}

GB_HD float gb_as_float(gb_u32 u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    union { gb_u32 u; float f; } c;
    c.u = u;
    return c.f;
#endif
}

GB_HD gb_u32 gb_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    union { float f; gb_u32 u; } c;
    c.f = f;
    return c.u;
#endif
}

// fp16 bits (low 16 bits of h) to f32, exact (subnormals kept).
GB_HD float gb_half_to_float(gb_u32 h)
{
#ifdef __CUDA_ARCH__
    float f;
    const unsigned short s = (unsigned short)h;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(s));
    return f;
#else
    const gb_u32 sign = (h & 0x8000u) << 16, e = (h >> 10) & 31, man = h & 1023;
    if (e == 0) { // zero or subnormal: man * 2^-24, exact in f32
        const float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    if (e == 31) return gb_as_float(sign | 0x7F800000u | (man << 13));
    return gb_as_float(sign | ((e + 112) << 23) | (man << 13));
#endif
}

// f32 -> f16 bits, round to nearest even (the cvt.rn.f16.f32 of the GPU).
GB_HD gb_u32 gb_h_from_f32(float f)
{
#ifdef __CUDA_ARCH__
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    union { float f; gb_u32 u; } c;
    c.f = f;
    const gb_u32 sign = (c.u >> 16) & 0x8000u, a = c.u & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) return sign | 0x7C00u | (a > 0x7F800000u ? 0x200u : 0);
    if (a >= 0x477FF000u) return sign | 0x7C00u; // rounds to infinity
    const int e = (int)(a >> 23) - 127;
    gb_u64 man = (a & 0x7FFFFFu) | (e > -127 ? 0x800000u : 0);
    int sh; // bits to drop: normal f16 keeps 10 fraction bits, subnormal units of 2^-24
    gb_u32 base;
    if (e >= -14) { sh = 13; base = (gb_u32)(e + 14) << 10; } // q keeps the implicit bit: +1 exponent
    else { sh = -e - 1; base = 0; if (e == -127) sh = 126; }
    if (sh > 40) return sign;
    gb_u64 q = man >> sh;
    const gb_u64 rem = man & ((1ull << sh) - 1), half = 1ull << (sh - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return sign | (base + (gb_u32)q); // a carry out of the fraction steps the exponent, as it should
#endif
}

// Loads N consecutive floats (N a multiple of 4, p 16-byte aligned) with
// 16-byte loads through the read-only path: x is re-read by every warp, so it
// should stay in L1.
template <int N>
GB_HD void gb_load_x(const float* p, float* out)
{
#pragma unroll
    for (int i = 0; i < N; i += 4) {
#ifdef __CUDA_ARCH__
        const float4 v = __ldg(reinterpret_cast<const float4*>(p + i));
        out[i] = v.x, out[i + 1] = v.y, out[i + 2] = v.z, out[i + 3] = v.w;
#else
        out[i] = p[i], out[i + 1] = p[i + 1], out[i + 2] = p[i + 2], out[i + 3] = p[i + 3];
#endif
    }
}

// Sum of N floats (N a multiple of 4) in four interleaved chains: a shorter
// dependency chain than one running sum. Loops with constant trip counts only,
// so the array stays in registers.
template <int N>
GB_HD float gb_sum(const float* v)
{
    float s0 = v[0], s1 = v[1], s2 = v[2], s3 = v[3];
#pragma unroll
    for (int i = 4; i < N; i += 4) s0 += v[i], s1 += v[i + 1], s2 += v[i + 2], s3 += v[i + 3];
    return (s0 + s1) + (s2 + s3);
}

// ------------------------------------------------------------ staged bytes
// Reads from a warp's staging slot (shared memory on the GPU).

GB_HD gb_u32 gb_ld_u16(const unsigned char* p) // p 2-byte aligned
{
    return *reinterpret_cast<const unsigned short*>(p);
}

GB_HD void gb_ld_u32x4(const unsigned char* p, gb_u32* out) // p 16-byte aligned: one 16-byte load
{
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
}

// N little-endian words starting at any byte offset: N+1 aligned 4-byte loads
// (gb_ld_raw) and N funnel shifts (gb_funnel). The 2-byte-aligned blocks (q4_0,
// q8_0, q6_k) are decoded from words shifted into place this way, so every
// later step works on whole words with compile-time byte positions. Reads up
// to 4 bytes past the last word; the staging slots have that slack. The XQ
// decoders call the two halves apart, to load every row's bytes before
// decoding any (gb_quant_warp).
template <int N>
GB_HD gb_u32 gb_ld_raw(const unsigned char* base, gb_u32 off, gb_u32* w)
{
    const gb_u32* p = reinterpret_cast<const gb_u32*>(base + (off & ~3u));
#pragma unroll
    for (int i = 0; i <= N; i++) w[i] = p[i];
    return (off & 3) * 8;
}

// The N words from gb_ld_raw's N+1 and shift sh, shifted `extra` bits further.
template <int N>
GB_HD void gb_funnel(const gb_u32* w, gb_u32 sh, gb_u32* out, gb_u32 extra = 0)
{
#pragma unroll
    for (int i = 0; i < N; i++) out[i] = gb_funnel_r(w[i], w[i + 1], sh + extra);
}

template <int N>
GB_HD void gb_ld_words(const unsigned char* base, gb_u32 off, gb_u32* out)
{
    gb_u32 w[N + 1];
    gb_funnel<N>(w, gb_ld_raw<N>(base, off, w), out);
}

// As gb_ld_words, also returning each word shifted right by 4 more bits (the
// high nibbles of its bytes in the low nibbles; bits 28..31 come from the next
// byte): one funnel shift each instead of a funnel shift plus a shift.
template <int N>
GB_HD void gb_ld_words2(const unsigned char* base, gb_u32 off, gb_u32* out, gb_u32* out4)
{
    gb_u32 w[N + 1];
    const gb_u32 sh = gb_ld_raw<N>(base, off, w);
    gb_funnel<N>(w, sh, out);
    gb_funnel<N>(w, sh, out4, 4);
}

#endif
