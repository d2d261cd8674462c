// Shared machinery of the CUDA GEMV kernels (kernels/cuda/gemv_<fmt>.cu):
// y[m] = W[m,k] . x[k], W in a GGML format (FORMATS.md), x and y f32, fp32
// accumulation. Design notes and instruction budgets: docs/kernels/cuda-gemv.md.
//
// The header includes nothing, so NVRTC compiles it without host headers. The
// decode helpers and the per-warp main loops are __host__ __device__ templates
// over a "context" that does the copies and barriers: on the GPU it issues
// cp.async and __syncwarp; in a host build (nvcc, no __CUDA_ARCH__) a test
// harness supplies a context that copies with memcpy, so the exact decode and
// index arithmetic of every kernel can be checked against the FP64 reference
// on a machine without a GPU.
#ifndef GPUBENCH_GEMV_COMMON_CUH
#define GPUBENCH_GEMV_COMMON_CUH

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

// ------------------------------------------------------------ magic decode
// A code q in 0..63 placed in bits 16..21 of the float 2.0 (0x40000000) is the
// float 2 + q/64, exactly: one byte permute turns a byte of q into a float, with
// no integer-to-float conversion (quarter rate on sm_90) and no subtraction per
// weight. A sub-block's dot product is then recovered from
//     sum q_j x_j = 64 * sum (2 + q_j/64) x_j - 128 * sum x_j,
// where sum x_j is computed once per warp and shared by all its rows. The
// cancellation costs at most ~2^-24 * 64 * 3 relative to sum |x_j|, far inside
// the 1e-4 GEMV tolerance (docs/kernels/cuda-gemv.md has the bound).
//
// Selector for byte b of the code word: result bytes {0x00, 0x00, q_b, 0x40}.
#define GB_MAGIC_SEL(b) (0x7044u | ((b) << 8))

// acc + sum_{b<4} (2 + q_b/64) * x[b]; every byte of q must be below 64.
GB_HD float gb_dot4_magic(gb_u32 q, const float* x, float acc)
{
    acc = fmaf(gb_as_float(gb_prmt(q, 0x40000000u, GB_MAGIC_SEL(0))), x[0], acc);
    acc = fmaf(gb_as_float(gb_prmt(q, 0x40000000u, GB_MAGIC_SEL(1))), x[1], acc);
    acc = fmaf(gb_as_float(gb_prmt(q, 0x40000000u, GB_MAGIC_SEL(2))), x[2], acc);
    acc = fmaf(gb_as_float(gb_prmt(q, 0x40000000u, GB_MAGIC_SEL(3))), x[3], acc);
    return acc;
}

// Byte b (0..3) of w as the float 2^23 + byte (0x4B0000bb), exactly.
GB_HD float gb_byte_magic(gb_u32 w, gb_u32 b)
{
    return gb_as_float(gb_prmt(w, 0x4B000000u, 0x7440u | b));
}

// q4_k / q5_k: the 6-bit scales (sc4) and mins (m4) of sub-blocks 0..3
// (upper = false) or 4..7 (upper = true), one byte each, from the 12 packed
// bytes S0 = S[0..3], S1 = S[4..7], S2 = S[8..11] (FORMATS.md):
//   s < 4:  sc = S[s] & 63,                            m = S[s+4] & 63
//   s >= 4: sc = (S[s+4] & 15) | ((S[s-4] >> 6) << 4),  m = (S[s+4] >> 4) | ((S[s] >> 6) << 4)
// computed for four sub-blocks per word operation. The whole-word shifts pull
// bits of the neighbouring byte into bits that the masks clear.
GB_HD void gb_k_scales(gb_u32 S0, gb_u32 S1, gb_u32 S2, bool upper, gb_u32& sc4, gb_u32& m4)
{
    sc4 = upper ? (S2 & 0x0F0F0F0Fu) | ((S0 >> 2) & 0x30303030u) : S0 & 0x3F3F3F3Fu;
    m4 = upper ? ((S2 >> 4) & 0x0F0F0F0Fu) | ((S1 >> 2) & 0x30303030u) : S1 & 0x3F3F3F3Fu;
}

// q4_k / q5_k lanes: lane l of a 1024-column tile takes super-block l/8 and,
// with c = (l%8)/2 and h = l%2, code bytes qs[32c + 16h + i] (i < 16): their
// low nibbles are elements 64c + 16h + i (sub-block 2c), their high nibbles
// elements 64c + 32 + 16h + i (sub-block 2c+1). GbKX holds those x values.
struct GbKX {
    float lo[16], hi[16];
    float slo, shi; // sums of lo and hi
};

GB_HD void gb_k_load_x(const float* xt, gb_u32 lane, GbKX& xs)
{
    const gb_u32 p = lane & 7;
    const float* b = xt + 256 * (lane >> 3) + 64 * (p >> 1) + 16 * (p & 1);
    gb_load_x<16>(b, xs.lo);
    gb_load_x<16>(b + 32, xs.hi);
    xs.slo = gb_sum<16>(xs.lo);
    xs.shi = gb_sum<16>(xs.hi);
}

// q4_k / q5_k prep: the scale products of one super-block of one row, as
// out[4c .. 4c+3] = {d*sc[2c], d*sc[2c+1], dmin*m[2c], dmin*m[2c+1]}: the four
// values lane c of the super-block needs, one 16-byte load for it.
GB_HD void gb_k_prep(const unsigned char* sb, float* out)
{
    gb_u32 hd[4]; // d | dmin << 16, S0, S1, S2
    gb_ld_u32x4(sb, hd);
    const float d = gb_half_to_float(hd[0] & 0xFFFF), dmin = gb_half_to_float(hd[0] >> 16);
    // d*sc as fmaf(d, 2^23 + sc, -d * 2^23): the fused multiply-add rounds once,
    // and d*sc (at most 11 + 6 significant bits) is exact, so this equals the
    // reference's f32 product with one instruction instead of two.
    const float nd = d * -8388608.0f, ndmin = dmin * -8388608.0f; // exact: powers of two
#pragma unroll
    for (int half = 0; half < 2; half++) { // sub-blocks 0..3, then 4..7
        gb_u32 sc4, m4;
        gb_k_scales(hd[1], hd[2], hd[3], half == 1, sc4, m4);
#pragma unroll
        for (int c2 = 0; c2 < 2; c2++) { // c = 2*half + c2: bytes 2*c2, 2*c2+1
            float4 v;
            v.x = fmaf(d, gb_byte_magic(sc4, 2 * c2), nd);
            v.y = fmaf(d, gb_byte_magic(sc4, 2 * c2 + 1), nd);
            v.z = fmaf(dmin, gb_byte_magic(m4, 2 * c2), ndmin);
            v.w = fmaf(dmin, gb_byte_magic(m4, 2 * c2 + 1), ndmin);
            *reinterpret_cast<float4*>(out + 8 * half + 4 * c2) = v;
        }
    }
}

// The lane's contribution to one row, from the magic sums lo, hi of its two
// 16-weight runs (sum (2 + q/64) x) and the row's prep values:
//   sum w x = (d*sc) * sum q x - (dmin*m) * sum x,   sum q x = 64*S - 128*sum x.
GB_HD float gb_k_finish(const float* prep_row, gb_u32 lane, float lo, float hi, const GbKX& xs)
{
    const float4 s = *reinterpret_cast<const float4*>(prep_row + 16 * (lane >> 3) + 4 * ((lane & 7) >> 1));
    float r = s.x * fmaf(64.0f, lo, -128.0f * xs.slo);
    r = fmaf(s.y, fmaf(64.0f, hi, -128.0f * xs.shi), r);
    r = fmaf(-s.z, xs.slo, r);
    return fmaf(-s.w, xs.shi, r);
}

// ------------------------------------------------------------ integer dot (XQ=1)
// The scalar path's second decode (XQ=1, the default): each lane quantizes
// its 32 x values of a tile to int16 with one power-of-two scale (x ~ s * c,
// |c| <= 32767), once per tile, shared by the warp's ROWS rows; the weights'
// codes stay integers and meet x in dp2a (two int16 x int8 products and an add
// per instruction). Per 4 weights that is 2 instructions instead of the magic
// decode's 8 (4 PRMT + 4 FFMA), and no per-weight conversion at all: a 4-bit
// word costs 2 masks (the high nibbles masked in place, 16 q, as unsigned
// bytes) plus 4 dp2a for 8 weights. Block and scale arithmetic stays in f32,
// once per (row, block).
//
// Precision: the rounding of x to c costs at most s/2 <= max|x| * 2^-15 per
// element (max over the lane's 32 elements); on the random blocks of
// FORMATS.md the worst relative row error is 2.7e-5, inside the 1e-4 GEMV
// tolerance (host emulation, docs/kernels/cuda-gemv.md). Integer sums cannot
// overflow: |c * q| <= 32767 * 255 per element, 32 elements per sum.

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

// max(|a|, b) for b >= 0 that is NaN when a or b is: a NaN in x must reach y
// (fmaxf would drop it).
GB_HD float gb_absmax_nan(float a, float b)
{
#ifdef __CUDA_ARCH__
    // abs folds into the max's operand modifier (one FMNMX.NAN per element)
    float r;
    asm("{\n\t.reg .f32 t;\n\tabs.f32 t, %1;\n\tmax.NaN.f32 %0, t, %2;\n\t}" : "=f"(r) : "f"(a), "f"(b));
    return r;
#else
    const float fa = gb_as_float(gb_bits(a) & 0x7FFFFFFFu);
    if (fa != fa || b != b) return gb_as_float(0x7FFFFFFFu);
    return fa > b ? fa : b;
#endif
}

// dp2a: acc + x2.lo * w.byte(2H) + x2.hi * w.byte(2H+1), x2 two signed 16-bit
// values, w's bytes signed (U = false; codes < 128 read the same signed or
// not) or unsigned (U = true: the high nibbles of a code word masked in
// place, 16 q, go in without a shift).
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
    return acc + (int)(short)(x2 & 0xFFFF) * w0 + (int)(short)(x2 >> 16) * w1;
#endif
}

// acc + sum_{b<4} byte_b(w) * c[4i + b] for the word of elements 4i..4i+3 of
// a run whose codes are the pairs x2 (x2[2i], x2[2i+1]); bytes signed
// (gb_dot4i) or unsigned (gb_dot4u).
GB_HD int gb_dot4i(gb_u32 w, const gb_u32* x2, int i, int acc)
{
    return gb_dp2a<true, false>(x2[2 * i + 1], w, gb_dp2a<false, false>(x2[2 * i], w, acc));
}

GB_HD int gb_dot4u(gb_u32 w, const gb_u32* x2, int i, int acc)
{
    return gb_dp2a<true, true>(x2[2 * i + 1], w, gb_dp2a<false, true>(x2[2 * i], w, acc));
}

// A lane's x for one tile, quantized: two runs of 16 elements (a, b: which
// elements is the format's choice), codes as int16 pairs in element order.
struct GbXQ {
    gb_u32 a[8], b[8];
    float s;        // x ~ s * code
    int sa, sb;     // sums of the codes of each run
    float fa, fb;   // the same as floats (exact: |sum| < 2^24)
};

// fmaf(v, inv, 1.5 * 2^23) holds rint(v * inv) in its low 23 bits (two's
// complement below 0) for |v * inv| <= 2^22: one instruction per element
// instead of a multiply and a quarter-rate F2I. PRMT keeps the low halves.
GB_HD gb_u32 gb_xq_pair(float v0, float v1, float inv)
{
    return gb_prmt(gb_bits(fmaf(v0, inv, 12582912.0f)), gb_bits(fmaf(v1, inv, 12582912.0f)), 0x5410u);
}

// A lane's x runs for one tile as read from shared memory (gb_xq_read) and
// their quantized form (gb_xq_make).
struct GbXRaw {
    float a[16], b[16];
};

// x tiles go through shared memory. Loaded straight from global memory, each
// lane's 32 values are 128 contiguous bytes of their own, so every 16-byte
// load of the warp touched 32 different cache lines of L1: on an H200 the
// same loads issued as coalesced 512-byte rows (a diagnostic build, wrong
// results) made q4_0 at 14336 x 5120 18 % faster (tools/gemv_diag.lua,
// docs/kernels/cuda-gemv.md). So each x tile (4 KiB, 256 chunks of 16 bytes)
// is copied with coalesced cp.async (lane l: chunks l, l + 32, ...) into a
// shared slot, in the copy group of an earlier unit, and each lane reads
// its runs from there. Chunk c is stored at gb_xswz(c): its bits 0-2 XORed
// with bits 3-5 mixed so that the eight lanes of a quarter-warp hit eight
// different 16-byte bank groups, for every format's lane layout (q4_0/q8_0:
// chunks 8l + i; q4_k/q5_k: 64(l/8) + 16(p/2) + 4(p%2) + i and + 8; q6_k:
// 64(l/8) + 32(p/4) + 8(p/2%2) + 4(p%2) + i and + 16; p = l % 8) and for the
// copies (consecutive chunks): conflict-free both ways.
enum { GB_XCHUNKS = 256, GB_XSLOT = 4096 }; // of a 1024-column tile (GB_TILE, below)

GB_HD gb_u32 gb_xswz(gb_u32 c)
{
    return c ^ ((((c >> 3) ^ (c >> 4)) & 1u) | ((c >> 4) & 2u) | ((c >> 1) & 4u));
}

// Copies the x tile starting at xt (`left` floats of x remain from there,
// a multiple of 4) into xslot, through L1 (ctx.copy16_l1: every warp reads
// x, so L1 keeps it; the weights' copies bypass it). Ctx::LANES lanes'
// share, as gb_stage_tile.
#pragma nv_exec_check_disable
template <class Ctx>
GB_HD void gb_stage_x(Ctx& ctx, const float* xt, gb_u32 left, unsigned char* xslot)
{
#pragma unroll
    for (int j = 0; j < Ctx::LANES; j++) {
#pragma unroll
        for (int i = 0; i < GB_XCHUNKS / 32; i++) {
            const gb_u32 c = ctx.lane + j + 32 * i;
            ctx.copy16_l1(xslot + 16 * gb_xswz(c), reinterpret_cast<const unsigned char*>(xt + 4 * c), 4 * c < left);
        }
    }
}

// The same runs loaded straight from global memory (pa, pb: their first
// floats), for geometries whose x slots do not fit (GbQuantSmem).
GB_HD void gb_xq_fetch(const float* pa, const float* pb, GbXRaw& r)
{
    gb_load_x<16>(pa, r.a);
    gb_load_x<16>(pb, r.b);
}

// The lane's runs a (chunks ca .. ca+3) and b (cb .. cb+3) from an x slot.
GB_HD void gb_xq_read(const unsigned char* xslot, gb_u32 ca, gb_u32 cb, GbXRaw& r)
{
#pragma unroll
    for (int i = 0; i < 4; i++) {
        gb_u32 w[4];
        gb_ld_u32x4(xslot + 16 * gb_xswz(ca + i), w);
#pragma unroll
        for (int e = 0; e < 4; e++) r.a[4 * i + e] = gb_as_float(w[e]);
        gb_ld_u32x4(xslot + 16 * gb_xswz(cb + i), w);
#pragma unroll
        for (int e = 0; e < 4; e++) r.b[4 * i + e] = gb_as_float(w[e]);
    }
}

GB_HD void gb_xq_make(const GbXRaw& r, GbXQ& xs)
{
    const float* va = r.a;
    const float* vb = r.b;
    // max |x| as a tree (5 levels, not a 16-long chain: this is on the
    // critical path of every tile)
    float mt[16];
#pragma unroll
    for (int i = 0; i < 16; i++) mt[i] = gb_absmax_nan(va[i], gb_absmax_nan(vb[i], 0.0f));
#pragma unroll
    for (int lv = 3; lv >= 0; lv--)
#pragma unroll
        for (int i = 0; i < 8; i++)
            if (i < (1 << lv)) mt[i] = gb_absmax_nan(mt[i], mt[i + (1 << lv)]);
    const gb_u32 mb = gb_bits(mt[0]);
    // Scale by powers of two read off max|x|'s exponent (no division, and x
    // values with few significant bits, such as a one-hot x, are coded
    // exactly): inv = 2^(14 - e) puts max|x| * inv in [2^14, 2^15); one more
    // step down when it would round to 2^15, which does not fit an int16.
    // E is clamped so that inv stays a finite float for zero and subnormal x
    // (s is then 2^-126: the codes lose what lies below 2^-127). A NaN
    // or infinite x gives s = NaN, so the row's result is NaN, as the
    // reference's is not finite either.
    gb_u32 E = (mb >> 23) + ((mb & 0x7FFFFFu) >= 0x7FFF00u ? 1u : 0u);
    E = E < 15 ? 15 : E;
    const float inv = gb_as_float((268 - E) << 23);
    xs.s = mb >= 0x7F800000u ? gb_as_float(0x7FC00000u) : gb_as_float((E - 14) << 23);
    int sa[2] = {0, 0}, sb[2] = {0, 0}; // two chains each
#pragma unroll
    for (int i = 0; i < 8; i++) {
        xs.a[i] = gb_xq_pair(va[2 * i], va[2 * i + 1], inv);
        xs.b[i] = gb_xq_pair(vb[2 * i], vb[2 * i + 1], inv);
        sa[i & 1] = gb_dp2a<false, false>(xs.a[i], 0x0101u, sa[i & 1]);
        sb[i & 1] = gb_dp2a<false, false>(xs.b[i], 0x0101u, sb[i & 1]);
    }
    xs.sa = sa[0] + sa[1], xs.sb = sb[0] + sb[1];
    xs.fa = (float)xs.sa, xs.fb = (float)xs.sb;
}

// q4_k / q5_k with XQ: what the two share (BPB bytes per super-block). The
// lane's runs are GbKX's lo (a) and hi (b).
template <int BPB_>
struct GbKQI {
    enum { QK = 256, BPB = BPB_, PREP = 16, XQI = 1 };
    typedef GbXQ X;
    GB_HD static bool active(gb_u32 lane, gb_u32 left) { return (lane >> 3) * 256 < left; }
    // runs a, b: floats 256(l/8) + 64(p/2) + 16(p%2) and 32 further (GbKX)
    GB_HD static void x_chunks(gb_u32 lane, gb_u32& ca, gb_u32& cb)
    {
        const gb_u32 p = lane & 7;
        ca = 64 * (lane >> 3) + 16 * (p >> 1) + 4 * (p & 1), cb = ca + 8;
    }
    GB_HD static void make_x(const GbXRaw& r, X& xs) { gb_xq_make(r, xs); }
    GB_HD static void prep(const unsigned char* slot, gb_u32 delta, gb_u32 b, float* out)
    {
        gb_k_prep(slot + delta + BPB_ * b, out);
    }
};

// q4_0 / q8_0 with XQ: one block per lane, runs a = elements 0..15, b = 16..31.
// A block is fp16 d then CW words of codes, 2-byte aligned in the slot: fetch
// reads d and the CW + 1 words that cover the codes (gb_ld_raw); dot shifts
// them into place (gb_funnel<CW>(w, sh, ...)).
template <int BPB_>
struct GbB32QI {
    enum { QK = 32, BPB = BPB_, PREP = 0, XQI = 1, CW = (BPB_ - 2) / 4 };
    typedef GbXQ X;
    struct Wd { gb_u32 d, sh, w[CW + 1]; };
    GB_HD static bool active(gb_u32 lane, gb_u32 left) { return lane * 32 < left; }
    GB_HD static void fetch(const unsigned char* slot, gb_u32 delta, gb_u32 lane, const float*, Wd& wd)
    {
        const gb_u32 off = delta + BPB_ * lane;
        wd.d = gb_ld_u16(slot + off);
        wd.sh = gb_ld_raw<CW>(slot, off + 2, wd.w);
    }
    GB_HD static void x_chunks(gb_u32 lane, gb_u32& ca, gb_u32& cb) { ca = 8 * lane, cb = ca + 4; }
    GB_HD static void make_x(const GbXRaw& r, X& xs) { gb_xq_make(r, xs); }
};

// q4_k / q5_k with XQ: the lane's contribution to one row from the integer
// sums ia, ib of its two runs and the row's prep values (gb_k_prep, read by
// gb_kq_scales):
//   sum w x = s * ((d*sc_a) ia + (d*sc_b) ib - (dmin*m_a) sa - (dmin*m_b) sb).
GB_HD float4 gb_kq_scales(const float* prep_row, gb_u32 lane)
{
    return *reinterpret_cast<const float4*>(prep_row + 16 * (lane >> 3) + 4 * ((lane & 7) >> 1));
}

GB_HD float gb_kq_finish(const float4& s, int ia, int ib, const GbXQ& xs)
{
    float r = s.x * (float)ia;
    r = fmaf(s.y, (float)ib, r);
    r = fmaf(-s.z, xs.fa, r);
    r = fmaf(-s.w, xs.fb, r);
    return xs.s * r;
}

// ------------------------------------------------------------ warp reduction

__device__ __forceinline__ float gb_warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o >= 1; o /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

// ------------------------------------------------------------ quantized GEMV
// One warp computes R consecutive rows. The columns are cut into tiles of 1024
// (32 lanes x 32 weights); for each tile the warp copies the tile's bytes of
// its R rows into a shared-memory slot with 16-byte cp.async (coalesced, no
// registers held, L1 bypassed so L1 keeps x), while earlier tiles are decoded
// (S slots, S-1 tiles in flight). Lane l then decodes "granule" l of the tile
// (32 weights: a q4_0/q8_0 block, or 1/8 of a k-quant super-block) for all R
// rows, loading its 32 x values once. Rows past m read row m-1 and are not
// written, so every lane runs the same loop.
//
// The copies are whole 16-byte words covering each row's tile, so the last
// row's last word may extend up to 15 bytes past the weights: the buffer must
// be at least the weight bytes rounded up to 16 (gemv.buffer_bytes gives that
// plus 16).
//
// A format F provides:
//   QK, BPB         elements and bytes per block
//   struct X        the lane's x values (and their sums) for one tile
//   active(l, n)    granule l has weights when n elements of the tile remain
//   load_x(xt, l, X)
//   dot(slot, delta, l, X, prep) -> the granule's contribution to one row, where
//                   the row's tile starts at byte `delta` (0..15) of the slot
//   PREP            floats that prep() writes per block (0: no prep step)
//   prep(slot, delta, b, out) -> per-block values of one row that all lanes
//                   decoding block b share (the k-quants' scale products): the
//                   warp computes them once per (row, block), lane u doing
//                   pair u, into shared memory, and dot() gets the row's
//                   array (blocks of the tile x PREP floats) as `prep`
//   XQI             0 for the f32 magic decode (the interface above); 1 for
//                   the integer dot (XQ=1), which replaces load_x and dot by
//   x_chunks(l, ca, cb) and make_x(GbXRaw, X&): the 16-byte chunks of an x
//                   tile where the lane's two runs of 16 values start (the
//                   tile is staged in shared memory, gb_stage_x) and their
//                   quantized form;
//   struct Wd, fetch(slot, delta, l, prep_row, Wd&) -> one row's granule bytes
//                   (and scale values), all rows fetched before any is decoded;
//   dot(Wd, X) ->   the granule's contribution to that row

enum { GB_TILE = 1024 };
static_assert(GB_XSLOT == 4 * GB_TILE && GB_XCHUNKS == GB_TILE / 4, "an x slot holds one tile of x");

template <class F>
struct GbTile {
    enum {
        BYTES = GB_TILE / F::QK * F::BPB,   // bytes of one row's tile
        WORDS = (BYTES + 15 + 15) / 16,     // 16-byte words covering it at any alignment
        SLOT = (WORDS + 1) * 16,            // + one word for decoders' over-read
        COPY_ITERS = (WORDS + 31) / 32,     // copies per lane per row
        BLOCKS = GB_TILE / F::QK,           // blocks per row per tile
        PREP_ROW = BLOCKS * (F::PREP > 0 ? F::PREP : 1), // prep floats per row
    };
};

// x slots of an XQ warp with S unit slots of P parts per tile: x tile j is
// staged at the refill of unit (j - 1) P - (S - 1) and read at unit j P, so
// tile j + N, staged at unit (j + N - 1) P - (S - 1), must come after it:
// (N - 1) P > S - 1.
template <int S, int P>
struct GbXSlots {
    enum { N = 2 + (S - 1) / P };
};

// Static shared memory of a block of gb_gemv_quant (NWARP row groups of KS
// warps): BASE without the x slots; XSM when the x slots (XQ formats) fit
// with it in the 48 KiB, in which case x goes through shared memory.
template <class F, int R, int S, int NWARP, int KS, int P, bool BLK>
struct GbQuantSmem {
    enum : unsigned long long {
        BASE = (gb_u64)NWARP * KS * (S * (R / P) * GbTile<F>::SLOT + (F::PREP > 0 ? 4 * (R / P) * GbTile<F>::PREP_ROW : 0)) +
               (KS > 1 ? 4 * NWARP * KS * R : 0) + (BLK ? 8 * NWARP * KS * S : 0), // BLK: the mbarriers
        X = (gb_u64)NWARP * KS * GbXSlots<S, P>::N * GB_XSLOT,
        LIMIT = 48 * 1024,
    };
    static constexpr bool XSM = F::XQI && BASE + X <= LIMIT;
};

// Copies tile t of the R rows into slot[r]: the row's tile bytes start at
// byte off[r] + t*BYTES of Wb (16-byte aligned) and are copied as the 16-byte
// words that cover them, so they land at byte (off[r] + t*BYTES) & 15 of the
// slot row. `tb` is the tile's byte count (BYTES except in a row's last tile).
// Ctx::LANES lanes' share is done by this call: 1 on the GPU (each lane its
// own), 32 in a host emulation (the whole warp's).
#pragma nv_exec_check_disable
template <class F, int R, class Ctx>
GB_HD void gb_stage_tile(Ctx& ctx, const unsigned char* Wb, const gb_u32* off, gb_u32 t, gb_u32 tb,
                         unsigned char (*slot)[GbTile<F>::SLOT])
{
#pragma unroll
    for (int r = 0; r < R; r++) {
        const gb_u32 rs = off[r] + t * (gb_u32)GbTile<F>::BYTES;
        const gb_u32 a16 = rs & ~15u, re = rs + tb;
#pragma unroll
        for (int j = 0; j < Ctx::LANES; j++) {
            // Written so that Wb + 16*lane is loop-invariant and the
            // iterations differ by immediate offsets.
            const gb_u32 lo = 16 * (ctx.lane + j);
            const unsigned char* src = (Wb + lo) + a16;
#pragma unroll
            for (int it = 0; it < GbTile<F>::COPY_ITERS; it++)
                ctx.copy16(&slot[r][lo + 512 * it], src + 512 * it, a16 + lo + 512 * it < re);
        }
    }
}

// BULK=1: the same words of tile t of the R rows, each row's with one bulk
// copy (cp.async.bulk, Hopper) by lane 0, all completing on the unit's
// mbarrier `bar` (ctx.bulk_*): one instruction per row instead of one per
// 16 bytes and lane. The sizes are whole 16-byte words, as above.
#pragma nv_exec_check_disable
template <class F, int R, class Ctx>
GB_HD void gb_stage_tile_bulk(Ctx& ctx, const unsigned char* Wb, const gb_u32* off, gb_u32 t, gb_u32 tb,
                              unsigned char (*slot)[GbTile<F>::SLOT], gb_u32 bar)
{
    if (ctx.lane != 0) return; // (a host emulation's ctx.lane is 0: it copies the warp's share)
    gb_u32 a16[R], bytes[R], total = 0;
#pragma unroll
    for (int r = 0; r < R; r++) {
        const gb_u32 rs = off[r] + t * (gb_u32)GbTile<F>::BYTES;
        a16[r] = rs & ~15u;
        bytes[r] = ((rs + tb + 15) & ~15u) - a16[r];
        total += bytes[r];
    }
    ctx.bulk_expect(bar, total);
#pragma unroll
    for (int r = 0; r < R; r++) ctx.copy_bulk(slot[r], Wb + a16[r], bytes[r], bar);
}

// The prep step of tile t: pair (row r, block b), numbered u = r * BLOCKS + b,
// is done by lane u % 32, for the blocks that hold weights (`left` elements of
// the tile remain). Each lane runs the prep body once per pair it owns (once
// when R * BLOCKS <= 32, the k-quants' ROWS <= 8), with r a run-time value:
// unrolled over r, the warp would execute every row's copy of the body. So the
// row's offset is recomputed here rather than read from the register array off[].
#pragma nv_exec_check_disable
template <class F, int R, class Ctx>
GB_HD void gb_prep_tile(Ctx& ctx, unsigned char (*slot)[GbTile<F>::SLOT], gb_u32 lead, gb_u32 row0,
                        gb_u32 m, gb_u32 row_bytes, gb_u32 t, gb_u32 left, float* prep)
{
    const gb_u32 BLOCKS = GbTile<F>::BLOCKS;
#pragma unroll
    for (int j = 0; j < Ctx::LANES; j++) {
#pragma unroll
        for (gb_u32 u = ctx.lane + j; u < R * BLOCKS; u += 32) {
            const gb_u32 r = u / BLOCKS, b = u % BLOCKS;
            const gb_u32 off = lead + ((row0 + r < m ? row0 + r : m - 1) - row0) * row_bytes;
            if (b * F::QK < left)
                F::prep(slot[r], (off + t * (gb_u32)GbTile<F>::BYTES) & 15, b,
                        prep + r * GbTile<F>::PREP_ROW + b * F::PREP);
        }
    }
}

// The per-warp main loop: adds lane `lane`'s partial dot products of rows
// row0 .. row0+R-1 to acc[0..R-1] (the caller reduces them over the warp).
// With split-K (KS > 1) the warp is slice `slice` of KS and walks only tiles
// slice, slice + KS, slice + 2 KS, ... (KS = 1, slice = 0: every tile). A
// slice with no tile (fewer tiles than slices) adds nothing.
//
// The staging ring works on *units*: part p of tile t is rows p*RP ..
// p*RP+RP-1 of it (RP = R/P rows, P parts per tile), and the warp's units run
// in order (tile 0 parts 0..P-1, tile 1, ...), unit u in slot u % S, with
// S - 1 units in flight while one is decoded. P = 1 is the whole tile per
// slot. Why parts: a slot is free as soon as its part is decoded, so the same
// shared memory keeps more bytes in flight; the first decode starts after one
// part has landed; and the last decode, which no copy overlaps, is 1/P of a
// tile. x is converted once per tile and shared by its P parts.
#pragma nv_exec_check_disable
template <class F, int R, int S, int KS, int P, bool XSM, bool BLK, class Ctx>
GB_HD void gb_quant_warp(Ctx& ctx, gb_u32 lane, const unsigned char* W, const float* x, gb_u32 m,
                         gb_u32 k, gb_u32 row0, gb_u32 slice,
                         unsigned char (*slots)[R / P][GbTile<F>::SLOT], float* prep,
                         unsigned char (*xslots)[GB_XSLOT], float* acc)
{
    static_assert(P >= 1 && R % P == 0, "PARTS must divide ROWS");
    static_assert(!XSM || F::XQI, "x goes through shared memory only for the XQ formats (GbQuantSmem)");
    constexpr int RP = R / P;
    const gb_u32 row_bytes = k / F::QK * F::BPB;
    // Offsets are 32-bit, relative to the 16-byte-aligned start of row0: R
    // rows of any practical k stay far below 4 GiB.
    const gb_u64 first = (gb_u64)row0 * row_bytes;
    const unsigned char* Wb = W + (first & ~(gb_u64)15);
    gb_u32 off[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        off[r] = (gb_u32)(first & 15) + ((row0 + r < m ? row0 + r : m - 1) - row0) * row_bytes;
    const gb_u32 ntiles = (k + GB_TILE - 1) / GB_TILE;
    // This slice's tile count (the whole row without the split).
    const gb_u32 n = KS == 1 ? ntiles : slice < ntiles ? (ntiles - slice + KS - 1) / KS : 0;
    const gb_u32 TB = GbTile<F>::BYTES;
    // XQ formats with XSM (x through shared memory, GbQuantSmem): the slice's
    // x tile j goes to xslots[j % XS] in the copy group of unit (j - 1,
    // part 0) (tile 0: of unit (0, 0)), so it has landed, and been seen by
    // every lane, before unit (j, 0) begins; a slot is refilled only after
    // the unit that read it (GbXSlots). Without XSM (geometries whose x slots
    // would not fit the 48 KiB) each lane loads its runs from global memory
    // a tile ahead, into registers.
    constexpr int XS = GbXSlots<S, P>::N;
    auto stage_x = [&](gb_u32 j) {
        if constexpr (XSM) {
            if (j < n) {
                const gb_u32 t = slice + j * KS;
                gb_stage_x(ctx, x + (gb_u64)t * GB_TILE, k - t * GB_TILE, xslots[j % XS]);
            }
        }
    };
    // Starts the copies of part `part` of the slice's tile j (nothing past the
    // slice's last tile) into slot `sidx`, and commits them as one group
    // (empty groups keep the count uniform when there are fewer units; with
    // BLK the weights' bulk copies complete on the slot's mbarrier instead,
    // and the group holds the x copies only).
    auto stage_unit = [&](gb_u32 j, int part, gb_u32 sidx) {
        if (part == 0) stage_x(j + 1);
        if (j < n) {
            const gb_u32 t = slice + j * KS;
            const gb_u32 left = row_bytes - t * TB;
            if constexpr (BLK)
                gb_stage_tile_bulk<F, RP>(ctx, Wb, off + part * RP, t, left < TB ? left : TB, slots[sidx], sidx);
            else
                gb_stage_tile<F, RP>(ctx, Wb, off + part * RP, t, left < TB ? left : TB, slots[sidx]);
        }
        ctx.commit();
    };
    // The lane's x runs of the slice's tile j from global memory (no XSM).
    auto fetch_x = [&](gb_u32 j, GbXRaw& r) {
        if constexpr (F::XQI) {
            const gb_u32 t = slice + j * KS;
            gb_u32 ca, cb;
            F::x_chunks(lane, ca, cb);
            gb_xq_fetch(x + (gb_u64)t * GB_TILE + 4 * ca, x + (gb_u64)t * GB_TILE + 4 * cb, r);
        }
    };

    // Prologue: the slice's units 0 .. S-2 in flight (unit s: part s % P of
    // the slice's tile s / P, both known at compile time).
    stage_x(0); // committed with the first unit
#pragma unroll
    for (int s = 0; s < S - 1; s++) stage_unit((gb_u32)(s / P), s % P, (gb_u32)s);
    GbXRaw xr; // no XSM: x a tile ahead
    if constexpr (F::XQI && !XSM)
        if (n > 0 && F::active(lane, k - slice * GB_TILE)) fetch_x(0, xr);
    for (gb_u32 i = 0; i < n; i++) {
        const gb_u32 t = slice + i * KS;
        const gb_u32 left = k - t * GB_TILE;
        const bool active = F::active(lane, left);
        typename F::X xs;
#pragma unroll
        for (int p = 0; p < P; p++) {
            const gb_u32 u = i * P + p, slot = u % S;
            // Refill the slot that the previous unit used (the barrier at the
            // end of that unit guarantees every lane is done reading it) with
            // unit u + S - 1: part (p + S - 1) % P of the slice's tile
            // i + (p + S - 1) / P.
            stage_unit(i + (gb_u32)((p + S - 1) / P), (p + S - 1) % P, (u + S - 1) % S);
            if (p == 0) {
                // x first: it does not need the tile, so its conversion
                // overlaps the copies still in flight (but for tile 0, whose
                // x came with unit 0).
                if constexpr (XSM) {
                    if (i == 0) {
                        ctx.template wait<S - 1>();
                        ctx.sync();
                    }
                    if (active) {
                        gb_u32 ca, cb;
                        F::x_chunks(lane, ca, cb);
                        gb_xq_read(xslots[i % XS], ca, cb, xr);
                        F::make_x(xr, xs);
                    }
                } else if constexpr (F::XQI) {
                    if (active) F::make_x(xr, xs);
                    // ... and the next tile's x is loaded now, to be used a tile later
                    if (i + 1 < n && F::active(lane, k - (t + KS) * GB_TILE)) fetch_x(i + 1, xr);
                } else if (active) {
                    F::load_x(x + (gb_u64)t * GB_TILE, lane, xs);
                }
            }
            ctx.template wait<S - 1>(); // this lane's copies of unit u have landed
            if constexpr (BLK) ctx.bulk_wait(slot, (u / S) & 1); // the bulk copies: slot's (u / S)-th use
            ctx.sync();                 // ... and so have every other lane's
#ifdef GB_STAGING_ONLY
            // Diagnostic build (tools/gemv_diag.lua GB_STAGING_ONLY): the copy pipeline
            // alone, one byte of each row read, the memory side's own ceiling.
            // The results are not a GEMV.
#pragma unroll
            for (int r = 0; r < RP; r++) acc[p * RP + r] += (float)slots[slot][r][lane];
            ctx.sync();
            continue;
#endif
            if constexpr (F::PREP > 0) {
                // the part's row p*RP is row 0 of the prep step; its lead keeps
                // the byte alignment of the rows (only & 15 is used)
                gb_prep_tile<F, RP>(ctx, slots[slot], (gb_u32)(first & 15) + (gb_u32)(p * RP) * row_bytes,
                                    row0 + p * RP, m, row_bytes, t, left, prep);
                ctx.sync(); // every lane's prep values are written
            }
            if constexpr (F::XQI) {
                // Every row's bytes first, then the arithmetic: the shared-memory
                // latency is paid once per unit, not once per row.
                if (active) {
                    typename F::Wd wd[RP];
#pragma unroll
                    for (int r = 0; r < RP; r++)
                        F::fetch(slots[slot][r], (off[p * RP + r] + t * TB) & 15, lane,
                                 prep + r * GbTile<F>::PREP_ROW, wd[r]);
#pragma unroll
                    for (int r = 0; r < RP; r++) acc[p * RP + r] += F::dot(wd[r], xs);
                }
            } else if (active) {
#pragma unroll
                for (int r = 0; r < RP; r++)
                    acc[p * RP + r] += F::dot(slots[slot][r], (off[p * RP + r] + t * TB) & 15, lane, xs,
                                              prep + r * GbTile<F>::PREP_ROW);
            }
            ctx.sync(); // the slot (and the prep values) are free for reuse
        }
    }
}

// ------------------------------------------------------------ split-K
// A block of the quantized kernels has NWARP row groups x KS k-slices of
// warps: warp w is slice w % KS of group w / KS (the slices of a group are
// neighbouring warps). Each slice's warp reduces its R partial sums over its
// lanes; lane r < R puts row r's partial into red[(g * KS + s) * R + r]
// (shared memory); after a block barrier, lane r of slice 0 adds the KS
// partials of row r in slice order and writes y. Shared by the kernel and the
// host emulation, which runs the block's warps in sequence and then the sums.
template <int KS>
GB_HD void gb_ksplit_warp(gb_u32 warp, gb_u32& group, gb_u32& slice)
{
    group = warp / KS, slice = warp % KS;
}

template <int R, int KS>
GB_HD void gb_ksplit_put(float* red, gb_u32 group, gb_u32 slice, gb_u32 lane, float partial)
{
    if (lane < (gb_u32)R) red[(group * KS + slice) * R + lane] = partial;
}

template <int R, int KS>
GB_HD float gb_ksplit_sum(const float* red, gb_u32 group, gb_u32 lane)
{
    const float* p = red + group * KS * R + lane;
    float v = p[0];
#pragma unroll
    for (int s = 1; s < KS; s++) v += p[s * R];
    return v;
}

// cp.async primitives shared by the scalar (GbWarpCtx) and tensor-core
// (GbMmaDevCtx, gemv_mma.cuh) device contexts: one predicated 16-byte copy
// global -> shared (s = shared-window address), commit, wait for all but N.
// The copy bypasses L1 (.cg: the weights, read once) unless L1 is true
// (.ca: x, which every warp reads and L1 keeps).
template <bool L1 = false>
__device__ __forceinline__ void gb_cp_async16(gb_u32 s, const unsigned char* src, bool pred)
{
    if constexpr (L1)
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t"
                     "@p cp.async.ca.shared.global [%0], [%1], 16;\n\t}\n" ::"r"(s),
                     "l"(src), "r"((int)pred)
                     : "memory");
    else
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t"
                     "@p cp.async.cg.shared.global [%0], [%1], 16;\n\t}\n" ::"r"(s),
                     "l"(src), "r"((int)pred)
                     : "memory");
}
__device__ __forceinline__ void gb_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void gb_cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Hopper bulk copies (BULK=1): global -> shared, completing on an mbarrier
// whose phase also counts the bytes expected (expect_tx). A slot read by
// ordinary loads is refilled by the async proxy only after a proxy fence.
__device__ __forceinline__ void gb_mbar_init(gb_u32 bar, gb_u32 count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void gb_mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
__device__ __forceinline__ void gb_mbar_expect(gb_u32 bar, gb_u32 bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void gb_bulk_copy(gb_u32 dst, const void* src, gb_u32 bytes, gb_u32 bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void gb_mbar_wait(gb_u32 bar, gb_u32 parity)
{
    gb_u32 done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}
__device__ __forceinline__ void gb_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// The GPU context: this lane's copies as cp.async into shared memory (BULK:
// lane 0's bulk copies, on the warp's mbarriers `bars`, one per slot).
struct GbWarpCtx {
    enum { LANES = 1 };
    gb_u32 lane;
    gb_u32 smem_u32;             // shared-window address of smem_ptr
    const unsigned char* smem_ptr;
    gb_u32 bars = 0;             // shared-window address of the mbarriers (BULK)
    __device__ __forceinline__ void bulk_expect(gb_u32 slot, gb_u32 bytes)
    {
        gb_fence_proxy_async(); // the lanes' reads of the slot's last unit come first
        gb_mbar_expect(bars + 8 * slot, bytes);
    }
    __device__ __forceinline__ void copy_bulk(unsigned char* dst, const unsigned char* src, gb_u32 bytes, gb_u32 slot)
    {
        gb_bulk_copy(smem_u32 + (gb_u32)(dst - smem_ptr), src, bytes, bars + 8 * slot);
    }
    __device__ __forceinline__ void bulk_wait(gb_u32 slot, gb_u32 parity) { gb_mbar_wait(bars + 8 * slot, parity); }
    __device__ __forceinline__ void copy16(unsigned char* dst, const unsigned char* src, bool pred)
    {
        gb_cp_async16(smem_u32 + (gb_u32)(dst - smem_ptr), src, pred);
    }
    __device__ __forceinline__ void copy16_l1(unsigned char* dst, const unsigned char* src, bool pred)
    {
        gb_cp_async16<true>((gb_u32)__cvta_generic_to_shared(dst), src, pred);
    }
    __device__ __forceinline__ void commit() { gb_cp_async_commit(); }
    template <int N>
    __device__ __forceinline__ void wait() { gb_cp_async_wait<N>(); }
    __device__ __forceinline__ void sync() { __syncwarp(); }
};

// The kernel body of every quantized format: NWARP row groups of R rows per
// block (rows_per_group = NWARP * R), KS warps (k-slices) per group, so
// 32 * NWARP * KS threads; S staging slots per warp, each of R/P rows (P parts
// per tile, gb_quant_warp).
template <class F, int R, int S, int NWARP, int KS, int P>
__device__ __forceinline__ void gb_gemv_quant(const unsigned char* W, const float* x, float* y,
                                              gb_u32 m, gb_u32 k)
{
    static_assert(KS >= 1, "KSPLIT must be at least 1");
    // One slot is enough when other slices' warps overlap this warp's copies
    // (at k = 5120 and KSPLIT = 5 a warp has one tile: a second slot would stay empty).
    static_assert(S >= 2 || (S == 1 && KS > 1), "STAGES must be at least 2 (1 only with KSPLIT > 1)");
    // (prep is counted only where used: the compiler drops the unused array)
    static_assert(P >= 1 && R % P == 0, "PARTS must divide ROWS");
    typedef GbQuantSmem<F, R, S, NWARP, KS, P, GB_BULK> Smem;
    constexpr bool XSM = Smem::XSM;
    constexpr int XS = XSM ? (int)GbXSlots<S, P>::N : 1; // x tiles (gb_quant_warp); 1: unused
    static_assert(Smem::BASE <= Smem::LIMIT,
                  "WARPS * KSPLIT * STAGES * ROWS / PARTS staging slots exceed the 48 KiB of static shared memory");
    __shared__ __align__(16) unsigned char slots[NWARP * KS][S][R / P][GbTile<F>::SLOT];
    __shared__ __align__(16) float prep[NWARP * KS][(R / P) * GbTile<F>::PREP_ROW];
    // (without XSM a 16-byte stand-in, never used)
    __shared__ __align__(16) unsigned char xslots[XSM ? NWARP * KS * XS : 1][XSM ? (int)GB_XSLOT : 16];
    // BULK: one mbarrier per slot (gb_stage_tile_bulk)
    __shared__ __align__(8) unsigned long long bars[GB_BULK ? NWARP * KS : 1][GB_BULK ? S : 1];
    const gb_u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    gb_u32 group, slice;
    gb_ksplit_warp<KS>(warp, group, slice);
    const gb_u32 row0 = (blockIdx.x * NWARP + group) * R;
    const bool live = row0 < m; // the same for all slices of a group
    // Without the split no barrier spans warps, so a warp without rows leaves
    // now; with it, every warp must reach the block barrier below.
    if (KS == 1 && !live) return;
    float mine = 0.0f;
    if (live) {
        float acc[R];
#pragma unroll
        for (int r = 0; r < R; r++) acc[r] = 0.0f;
        GbWarpCtx ctx{lane, (gb_u32)__cvta_generic_to_shared(&slots[warp][0][0][0]),
                      &slots[warp][0][0][0]};
        if constexpr (GB_BULK) {
            ctx.bars = (gb_u32)__cvta_generic_to_shared(&bars[warp][0]);
            if (lane == 0) {
#pragma unroll
                for (int i = 0; i < S; i++) gb_mbar_init(ctx.bars + 8 * i, 1);
                gb_mbar_init_fence();
            }
            __syncwarp();
        }
        gb_quant_warp<F, R, S, KS, P, XSM, GB_BULK>(ctx, lane, W, x, m, k, row0, slice, slots[warp], prep[warp],
                                           XSM ? reinterpret_cast<unsigned char(*)[GB_XSLOT]>(xslots[warp * XS]) : nullptr, acc);
#pragma unroll
        for (int r = 0; r < R; r++) acc[r] = gb_warp_sum(acc[r]);
        // Lane r keeps row r: one store instruction per warp instead of R.
        mine = acc[0];
#pragma unroll
        for (int r = 1; r < R; r++) mine = lane == (gb_u32)r ? acc[r] : mine;
    }
    if constexpr (KS > 1) {
        __shared__ float red[NWARP * KS * R];
        if (live) gb_ksplit_put<R, KS>(red, group, slice, lane, mine);
        __syncthreads(); // every slice's partials are in red
        if (!live || slice != 0 || lane >= (gb_u32)R) return;
        mine = gb_ksplit_sum<R, KS>(red, group, lane);
    }
    if (lane < (gb_u32)R && row0 + lane < m) y[row0 + lane] = mine;
}

// ------------------------------------------------------------ dense GEMV
// f32, f16, bf16: rows are 16-byte aligned (k is a multiple of 8), so lanes
// read 16-byte words of R rows directly (a warp reads 512 contiguous bytes per
// row per step), each with the matching x words loaded once for the R rows.
// U steps are issued before any is used, to keep U*R 16-byte loads in flight.
//
// A dense format D provides EPW (elements per 16-byte word) and
// expand(word, out) -> EPW floats.

// Weights are read once: no L1 allocation, so L1 keeps x.
__device__ __forceinline__ uint4 gb_ld_stream(const uint4* p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

GB_HD void gb_ld_w16(const unsigned char* p, gb_u32* out) // p 16-byte aligned, global memory
{
#ifdef __CUDA_ARCH__
    const uint4 v = gb_ld_stream(reinterpret_cast<const uint4*>(p));
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
#else
    gb_ld_u32x4(p, out);
#endif
}

// One lane's partial dot products of rows row0 .. row0+R-1 (acc, added to).
template <class D, int R, int U>
GB_HD void gb_dense_lane(gb_u32 lane, const unsigned char* W, const float* x, gb_u32 m, gb_u32 k,
                         gb_u32 row0, float* acc)
{
    const gb_u32 words = k / D::EPW; // 16-byte words per row
    gb_u64 base[R];                  // byte offset of each row
#pragma unroll
    for (int r = 0; r < R; r++) base[r] = (gb_u64)(row0 + r < m ? row0 + r : m - 1) * words * 16;
    gb_u32 i = lane;
    for (; i + 32 * (U - 1) < words; i += 32 * U) {
        gb_u32 w[U][R][4];
        float xv[U][D::EPW];
#pragma unroll
        for (int u = 0; u < U; u++) {
#pragma unroll
            for (int r = 0; r < R; r++) gb_ld_w16(W + base[r] + 16ull * (i + 32 * u), w[u][r]);
            gb_load_x<D::EPW>(x + (gb_u64)(i + 32 * u) * D::EPW, xv[u]);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
#pragma unroll
            for (int r = 0; r < R; r++) {
                float v[D::EPW];
                D::expand(w[u][r], v);
#pragma unroll
                for (int e = 0; e < D::EPW; e++) acc[r] = fmaf(v[e], xv[u][e], acc[r]);
            }
        }
    }
    for (; i < words; i += 32) { // the last < U steps
        float xv[D::EPW];
        gb_load_x<D::EPW>(x + (gb_u64)i * D::EPW, xv);
#pragma unroll
        for (int r = 0; r < R; r++) {
            gb_u32 w[4];
            gb_ld_w16(W + base[r] + 16ull * i, w);
            float v[D::EPW];
            D::expand(w, v);
#pragma unroll
            for (int e = 0; e < D::EPW; e++) acc[r] = fmaf(v[e], xv[e], acc[r]);
        }
    }
}

template <class D, int R, int U, int NWARP>
__device__ __forceinline__ void gb_gemv_dense(const unsigned char* W, const float* x, float* y,
                                              gb_u32 m, gb_u32 k)
{
    const gb_u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const gb_u32 row0 = (blockIdx.x * NWARP + warp) * R;
    if (row0 >= m) return;
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; r++) acc[r] = 0.0f;
    gb_dense_lane<D, R, U>(lane, W, x, m, k, row0, acc);
#pragma unroll
    for (int r = 0; r < R; r++) acc[r] = gb_warp_sum(acc[r]);
    float mine = acc[0];
#pragma unroll
    for (int r = 1; r < R; r++) mine = lane == (gb_u32)r ? acc[r] : mine;
    if (lane < (gb_u32)R && row0 + lane < m) y[row0 + lane] = mine;
}

#endif
