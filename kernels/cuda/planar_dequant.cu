// gpubench-compile: entry=planar_dequant_q4,planar_dequant_q5,planar_dequant_q6,planar_dequant_w8,planar_dequant_nvfp4
// Planar weights (docs/FORMATS.md, "Planar group formats") decoded to a
// row-major bf16 [N, K] matrix: what the vendor GEMM baseline of the Linear
// benchmark runs on. One thread per element over a grid stride; it runs once
// per weight group, untimed, so it is written to be obviously right, not fast.
// Parameters: (planar W, bf16 out, u32 N, u32 K, f32 gscale).

#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "grid_stride.cuh"

typedef unsigned long long u64;

static __device__ __forceinline__ unsigned k_pad_of(unsigned k) { return (k + 127u) / 128u * 128u; }

static __device__ __forceinline__ float f16_at(const unsigned char* p)
{
    return __half2float(__ushort_as_half((unsigned short)(p[0] | (p[1] << 8))));
}

static __device__ __forceinline__ unsigned nibble(const unsigned char* row, unsigned i)
{
    return (row[i >> 1] >> ((i & 1u) * 4u)) & 15u;
}

// E2M1: bit 3 the sign, magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6.
static __device__ __forceinline__ float e2m1(unsigned c)
{
    const float mag[8] = { 0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f };
    const float m = mag[c & 7u];
    return (c & 8u) ? -m : m;
}

// E4M3: bias 7, subnormals at E = 0, 0x7F / 0xFF NaN, no infinities.
static __device__ __forceinline__ float e4m3(unsigned b)
{
    const unsigned e = (b >> 3) & 15u, m = b & 7u;
    float v;
    if ((b & 0x7Fu) == 0x7Fu) v = __int_as_float(0x7FC00000);
    else if (e == 0) v = ldexpf((float)m / 8.f, -6);
    else v = ldexpf(1.f + (float)m / 8.f, (int)e - 7);
    return (b & 0x80u) ? -v : v;
}

enum { Q4, Q5, Q6, W8, NVFP4 };

template <int F>
static __device__ float value(const unsigned char* w, unsigned n_rows, unsigned kp, unsigned n, unsigned i, float gscale)
{
    const u64 N = n_rows;
    if (F == Q4 || F == Q5 || F == Q6) {
        const unsigned char* low = w + (u64)n * (kp / 2);
        unsigned c = nibble(low, i);
        const unsigned char* after_low = w + N * (kp / 2);
        const unsigned char* scales;
        int offset;
        if (F == Q4) {
            scales = after_low;
            offset = 8;
        } else if (F == Q5) {
            const unsigned char* high = after_low + (u64)n * (kp / 8);
            c |= ((high[i >> 3] >> (i & 7u)) & 1u) << 4;
            scales = after_low + N * (kp / 8);
            offset = 16;
        } else {
            const unsigned char* high = after_low + (u64)n * (kp / 4);
            c |= ((high[i >> 2] >> (2u * (i & 3u))) & 3u) << 4;
            scales = after_low + N * (kp / 4);
            offset = 32;
        }
        const float s = f16_at(scales + (u64)n * (kp / 32) + 2u * (i / 64u));
        return (float)((int)c - offset) * s;
    } else if (F == W8) {
        const signed char c = (signed char)w[(u64)n * kp + i];
        const float s = f16_at(w + N * kp + (u64)n * (kp / 16) + 2u * (i / 32u));
        return (float)c * s;
    } else {
        const unsigned c = nibble(w + (u64)n * (kp / 2), i);
        const unsigned char sb = w[N * (kp / 2) + (u64)n * (kp / 16) + i / 16u];
        return (e2m1(c) * e4m3(sb)) * gscale;
    }
}

template <int F>
static __device__ void dequant(const unsigned char* __restrict__ w, __nv_bfloat16* __restrict__ out,
                               unsigned n_rows, unsigned k, float gscale)
{
    const unsigned kp = k_pad_of(k);
    const u64 total = (u64)n_rows * k;
    for (u64 e = linear_thread(); e < total; e += total_threads()) {
        const unsigned n = (unsigned)(e / k), i = (unsigned)(e % k);
        out[e] = __float2bfloat16_rn(value<F>(w, n_rows, kp, n, i, gscale));
    }
}

// Entries written out: the parameter reflection reads them from the source text.
extern "C" __global__ void planar_dequant_q4(const unsigned char* __restrict__ w, __nv_bfloat16* __restrict__ out,
                                       unsigned n, unsigned k, float gscale)
{
    dequant<Q4>(w, out, n, k, gscale);
}

extern "C" __global__ void planar_dequant_q5(const unsigned char* __restrict__ w, __nv_bfloat16* __restrict__ out,
                                       unsigned n, unsigned k, float gscale)
{
    dequant<Q5>(w, out, n, k, gscale);
}

extern "C" __global__ void planar_dequant_q6(const unsigned char* __restrict__ w, __nv_bfloat16* __restrict__ out,
                                       unsigned n, unsigned k, float gscale)
{
    dequant<Q6>(w, out, n, k, gscale);
}

extern "C" __global__ void planar_dequant_w8(const unsigned char* __restrict__ w, __nv_bfloat16* __restrict__ out,
                                       unsigned n, unsigned k, float gscale)
{
    dequant<W8>(w, out, n, k, gscale);
}

extern "C" __global__ void planar_dequant_nvfp4(const unsigned char* __restrict__ w, __nv_bfloat16* __restrict__ out,
                                       unsigned n, unsigned k, float gscale)
{
    dequant<NVFP4>(w, out, n, k, gscale);
}
