// Part of the CUDA GEMV kernels' shared code (gemv_common.cuh includes the
// parts in order): the two decodes of the scalar path. The f32 "magic"
// decode (XQ=0) turns codes into floats by bit placement; the integer dot
// (XQ=1, the default) quantizes x per lane and tile to int16 and feeds the
// weight codes to dp2a. Also the k-quants' scale unpacking and the values of
// their prep step, and the staging of the x tiles the integer dot reads from
// shared memory. docs/kernels/cuda-gemv.md: "Common structure", "Integer
// dot", "x through shared memory".
#ifndef GPUBENCH_GEMV_DECODE_CUH
#define GPUBENCH_GEMV_DECODE_CUH

#include "gemv_bits.cuh"

// ------------------------------------------------------------ magic decode
// A code q in 0..63 placed in bits 16..21 of the float 2.0 (0x40000000) is the
// float 2 + q/64, exactly: one byte permute turns a byte of q into a float, with
// no integer-to-float conversion (quarter rate on sm_90) and no subtraction per
// weight. A sub-block's dot product is then recovered from
//     sum q_j x_j = 64 * sum (2 + q_j/64) x_j - 128 * sum x_j,
// where sum x_j is computed once per warp and shared by all its rows. The
// cancellation costs at most ~2^-24 * 64 * 3 relative to sum |x_j|, far inside
// the 1e-4 GEMV tolerance (docs/kernels/cuda-gemv.md, "Common structure",
// derives the bound and shows the adversarial blocks that exceed it).
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
// bytes S0 = S[0..3], S1 = S[4..7], S2 = S[8..11] (docs/FORMATS.md, q4_k):
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
// once per (row, block). Why: the magic decode was bound by its own
// instructions, not by DRAM (docs/kernels/cuda-gemv.md, "Integer dot", has
// the profile and the instruction counts).
//
// Precision: the rounding of x to c costs at most s/2 <= max|x| * 2^-15 per
// element (max over the lane's 32 elements), which on the random blocks of
// docs/FORMATS.md stays well inside the 1e-4 GEMV tolerance (the worst case
// the host emulation found is in docs/kernels/cuda-gemv.md, "Integer dot").
// Integer sums cannot overflow: |c * q| <= 32767 * 255 per element, 32
// elements per sum.

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
// load of the warp touches 32 different L1 lines, and L1 throughput, not
// issue slots, was what the kernels ran out of (docs/kernels/cuda-gemv.md,
// "x through shared memory", has the profile and the diagnostic build with
// the loads coalesced that showed it). So each x tile (4 KiB, 256 chunks of
// 16 bytes) is copied with coalesced cp.async (lane l: chunks l, l + 32, ...)
// into a shared slot, in the copy group of an earlier unit, and each lane
// reads its runs from there. Chunk c is stored at gb_xswz(c): its bits 0-2 XORed
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
// x, so L1 keeps it; the weights' copies bypass it). Bypassing L1 as the
// weights do would have every warp read x from L2, at a far higher cost (why
// .ca, not .cg: docs/kernels/cuda-gemv.md, "x through shared memory").
// Ctx::LANES lanes' share, as gb_stage_tile.
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

#endif
