// The weight formats of the CUDA Linear kernels (docs/FORMATS.md, "Planar
// group formats"): where a lane's weights lie, how they are loaded, and how
// they become mma.sync A fragments.
//
// The lane layout (docs/kernels/cuda-linear.md, "The k mapping"). K is cut
// into units of 64 elements (E = 16 per lane, 4 k-steps); lane t of a quad
// owns a run of 16 elements of the unit for each of its rows: two chunks of
// 8 at unit offsets 8 F::chunk(t, 0) and 8 F::chunk(t, 1). A run decodes to
// 8 bf16x2 registers a[p] holding run elements (2p, 2p + 1), and k-step ks
// uses a[2ks] in k slots (2t, 2t+1) and a[2ks+1] in (2t+8, 2t+9). x is laid
// out the same way (the same chunks), so every k slot of an mma carries one
// matching (w, x) pair: the mma's sum over its 16 k is a sum over 16
// distinct elements of the unit, whichever slot holds which. Every k-step
// lies inside one scale group: F::KG k-steps per group (4: the unit is one
// group of 64; 2 for W8, whose lane takes 8 elements of each of the unit's
// two groups of 32).
//
// Two kinds of decode, both exact (the wgmma route's decode_half, LN_HALF,
// is the one that rounds: code x scale to fp16):
//   LN_SCALE_AFTER (Q4, Q5, Q6, W8): the decode gives the integer codes minus
//     their offset (exact in bf16); each group's fp32 scale multiplies the
//     fp32 partial sums of its k-steps afterwards (linear_tile.cuh).
//   LN_PRESCALED (NVFP4, BF16): the decode gives the weights themselves in
//     bf16: NVFP4's e2m1 * e4m3 (2 + 4 significant bits) and BF16 as stored.
//     NVFP4's tensor scale multiplies the sums at the end (GSCALE).
#ifndef GPUBENCH_LINEAR_FORMATS_CUH
#define GPUBENCH_LINEAR_FORMATS_CUH

#include "linear_base.cuh"

enum { LN_SCALE_AFTER = 0, LN_PRESCALED = 1 };

// The planes of one matrix: first plane (codes, or BF16 values), high bits,
// scales, each with its bytes per row.
struct LnGeo {
    const unsigned char *p0, *p1, *ps;
    gb_u64 r0, r1, rs;
};

GB_HD gb_u32 ln_kpad(gb_u32 K) { return (K + 127u) & ~127u; }

// A lane's pointers into one row's planes at a unit: codes (or values), high
// bits, scales. F::ptr gives them at unit 0 for lane t, ln_at moves them by
// whole units (F::CB, HB, SB bytes per unit), and F::load reads the run of
// unit du past them, so that inside a round of units the loads are one base
// register plus a constant offset each.
struct LnPtr {
    const unsigned char *c, *h, *s;
};
template <class F>
GB_HD LnPtr ln_at(const LnPtr& p, gb_u32 u)
{
    LnPtr r{p.c + (gb_u64)F::CB * u, p.h + (gb_u64)F::HB * u, p.s + (gb_u64)F::SB * u};
    return r;
}

// bf16x2 constants of the decodes: the magic 128 (0x4300) in both halves and
// the offsets -(128 + o) that leave c - o.
enum : gb_u32 {
    LN_MAGIC2 = 0x43004300u,
    LN_NEG136 = 0xC308C308u, // -(128 + 8)
    LN_NEG144 = 0xC310C310u, // -(128 + 16)
    LN_NEG160 = 0xC320C320u, // -(128 + 32)
    // fp16x2: 1, the magic 1024 (0x6400), and the offsets -(1024 + o) that leave c - o
    LN_HONE2 = 0x3C003C00u,
    LN_HMAGIC2 = 0x64006400u,
    LN_HNEG1032 = 0xE408E408u,
    LN_HNEG1040 = 0xE410E410u,
    LN_HNEG1056 = 0xE420E420u,
    LN_HNEG1152 = 0xE480E480u, // -(1024 + 128): W8's byte c ^ 0x80
};

// LN_HALF (the wgmma route, docs/kernels/cuda-linear.md, "Weights in fp16"):
// a group's fp16 scale times the row's 2^-f (f from the prepass,
// linear_half_prep.cu), both halves of one fp16x2 register; exact unless
// it falls below fp16's normal range.
GB_HD gb_u32 ln_half_scale2(gb_u32 s16, float sinv)
{
    const gb_u32 h = ln_f16(gb_half_to_float(s16) * sinv);
    return h | h << 16;
}

// Four pairs (e_s, e_{s+4}) of a word's 4-bit fields (bits 4s and 4s + 16),
// each 128 + code in bf16: hm[s] holds the magic 0x4300 of both halves and
// any high code bits already in place (bits 4.. and 20..); then reordered
// into the natural pairs (e0,e1), (e2,e3), (e4,e5), (e6,e7) and the offset
// removed: 3 SHF, 4 LOP3, 4 HFMA2, 4 PRMT for 8 weights.
// H: the same in fp16 (magic 0x6400, 1024 + code; LN_HALF's decode_half).
template <bool H = false>
GB_HD void ln_nibbles(gb_u32 w, const gb_u32* hm, gb_u32 neg, gb_u32* a)
{
    gb_u32 A[4];
#pragma unroll
    for (int s = 0; s < 4; s++) {
        const gb_u32 v = ln_andor(w >> (4 * s), 0x000F000Fu, hm[s]);
        A[s] = H ? ln_hfma2(v, LN_HONE2, neg) : ln_fma2(v, LN_ONE2, neg);
    }
    a[0] = ln_prmt(A[0], A[1], 0x5410); // (e0, e1): the low halves
    a[1] = ln_prmt(A[2], A[3], 0x5410); // (e2, e3)
    a[2] = ln_prmt(A[0], A[1], 0x7632); // (e4, e5): the high halves
    a[3] = ln_prmt(A[2], A[3], 0x7632); // (e6, e7)
}

// The planes of a padded format from its bytes per unit of 64 elements
// (F::CB codes, F::HB high bits, F::SB scales), one after another, N rows of
// kp / 64 units each; without high bits that plane is empty (r1 = 0, never read).
// The offset p1 first and the row sizes written out again, as the formats had
// them: naming r0 and r1 first changes nvcc's schedule of Q5 and Q6.
template <int B>
GB_HD gb_u64 ln_plane_row(gb_u64 kp)
{
    if constexpr (B == 0) return 0;
    else return kp / (64 / B);
}
template <class F>
GB_HD LnGeo ln_planar_geo(const unsigned char* W, gb_u32 N, gb_u32 K)
{
    const gb_u64 kp = ln_kpad(K), p1 = (gb_u64)N * ln_plane_row<F::CB>(kp);
    LnGeo g{W, W + p1, W + p1 + (gb_u64)N * ln_plane_row<F::HB>(kp), ln_plane_row<F::CB>(kp),
            ln_plane_row<F::HB>(kp), ln_plane_row<F::SB>(kp)};
    return g;
}

// Lane t's pointers at unit 0 of a row: its codes from chunk(t, 0) (CB / 8
// bytes a chunk), its run's HB / 4 bytes of high bits, the row's scales plus
// st (the lane's own group's scale, where groups are runs).
template <class F>
GB_HD LnPtr ln_planar_ptr(const LnGeo& g, gb_u32 row, gb_u32 t, gb_u32 st)
{
    LnPtr p{g.p0 + row * g.r0 + F::chunk(t, 0) * (F::CB / 8), g.p1 + row * g.r1 + (F::HB / 4) * t,
            g.ps + row * g.rs + st};
    return p;
}

// ------------------------------------------------------------ Q4, Q5, Q6 G64_F16S
// 4-bit low codes and B = 0, 1, 2 high bits a code (those of run element i
// are bits B i .. B i + B - 1 of the run's 16 B high bits), one fp16 scale a
// unit; the codes are offset by 2^(3 + B). Raw has the high bits (h) only
// where there are some.
template <int B> struct LnQkRaw { gb_u32 c[2], h, s; };
template <> struct LnQkRaw<0> { gb_u32 c[2], s; };

template <int B>
struct LnQk {
    enum { E = 16, MODE = LN_SCALE_AFTER, GSCALE = 0, KG = 4, NG = 1, SWZ = 1, CB = 32, HB = 8 * B, SB = 2 };
    enum { LW = 8 }; // bytes of each code load of a lane (the staged route's swizzle)
    enum { TAIL_CUT = 0 }; // its load<true> reads the same as load<false>
    GB_HD static gb_u32 chunk(gb_u32 t, int h) { return 2 * t + h; }
    typedef LnQkRaw<B> Raw;
    GB_HD static LnGeo geo(const unsigned char* W, gb_u32 N, gb_u32 K) { return ln_planar_geo<LnQk>(W, N, K); }
    GB_HD static LnPtr ptr(const LnGeo& g, gb_u32 row, gb_u32 t) { return ln_planar_ptr<LnQk>(g, row, t, 0); }
    #pragma nv_exec_check_disable
    template <bool TAIL, class Ctx>
    GB_HD static void load(const Ctx& ctx, const LnPtr& p, gb_u32 du, int kleft, Raw& r)
    {
        ctx.ld_w64(p.c + 32 * du, r.c);
        if constexpr (B == 1) r.h = ctx.ld_c16(p.h + 8 * du);
        if constexpr (B == 2) r.h = ctx.ld_c32(p.h + 16 * du);
        r.s = ctx.ld_c16(p.s + 2 * du);
    }
    GB_HD static float scale(const Raw& r, int) { return gb_half_to_float(r.s); }
    GB_HD static void decode(const Raw& r, gb_u32* a)
    {
        const gb_u32 neg = B == 0 ? LN_NEG136 : B == 1 ? LN_NEG144 : LN_NEG160;
        if constexpr (B == 0) {
            const gb_u32 hm[4] = {LN_MAGIC2, LN_MAGIC2, LN_MAGIC2, LN_MAGIC2};
            ln_nibbles(r.c[0], hm, neg, a);
            ln_nibbles(r.c[1], hm, neg, a + 4);
        } else {
            const gb_u32 lo = (1u << (4 * B)) - 1, all = (1u << (8 * B)) - 1;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const gb_u32 H = r.h >> (8 * B * h); // bits 0 .. 8B-1: elements 8h .. 8h+7
                // element s at bits 4 + B s .., element s + 4 at bits 20 + B s ..
                const gb_u32 G = ((H & lo) << 4) | ((H & (all & ~lo)) << (20 - 4 * B));
                gb_u32 hs[4];
#pragma unroll
                for (int s = 0; s < 4; s++) hs[s] = ln_andor(G >> (B * s), ((1u << B) - 1) * 0x00100010u, LN_MAGIC2);
                ln_nibbles(r.c[h], hs, neg, a + 4 * h);
            }
        }
    }
    // LN_HALF: (code - offset) * scale * 2^-f in fp16, one rounding (the product)
    GB_HD static void decode_half(const Raw& r, float sinv, gb_u32* a)
    {
        const gb_u32 neg = B == 0 ? LN_HNEG1032 : B == 1 ? LN_HNEG1040 : LN_HNEG1056;
        if constexpr (B == 0) {
            const gb_u32 hm[4] = {LN_HMAGIC2, LN_HMAGIC2, LN_HMAGIC2, LN_HMAGIC2};
            ln_nibbles<true>(r.c[0], hm, neg, a);
            ln_nibbles<true>(r.c[1], hm, neg, a + 4);
        } else {
            const gb_u32 lo = (1u << (4 * B)) - 1, all = (1u << (8 * B)) - 1;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const gb_u32 H = r.h >> (8 * B * h);
                const gb_u32 G = ((H & lo) << 4) | ((H & (all & ~lo)) << (20 - 4 * B));
                gb_u32 hs[4];
#pragma unroll
                for (int s = 0; s < 4; s++) hs[s] = ln_andor(G >> (B * s), ((1u << B) - 1) * 0x00100010u, LN_HMAGIC2);
                ln_nibbles<true>(r.c[h], hs, neg, a + 4 * h);
            }
        }
        const gb_u32 s2 = ln_half_scale2(r.s, sinv);
#pragma unroll
        for (int i = 0; i < 8; i++) a[i] = ln_hfma2(a[i], s2, LN_HNZERO2);
    }
};
struct LnQ4 : LnQk<0> {};
struct LnQ5 : LnQk<1> {};
struct LnQ6 : LnQk<2> {};

// ------------------------------------------------------------ W8G32_F16S
// A signed code byte c becomes the f32 2^15 + (c + 128) by one byte permute
// (c ^ 0x80 in byte 1 under the exponent byte 0x47), from which one FADD
// leaves c exactly; two of them are packed into one bf16x2 (exact: |c| <= 128).
GB_HD float ln_w8_magic(gb_u32 u, int i) { return gb_as_float(ln_prmt(u, 0x47000000u, 0x7404u | (i << 4))); }

// A lane's run is 8 elements of each of the unit's two groups (chunks t and
// 4 + t), so that k-steps 0-1 lie in the first group and 2-3 in the second.
struct LnW8 {
    enum { E = 16, MODE = LN_SCALE_AFTER, GSCALE = 0, KG = 2, NG = 2, SWZ = 4, CB = 64, HB = 0, SB = 4 };
    enum { LW = 8 }; // bytes of each code load of a lane (the staged route's swizzle)
    enum { TAIL_CUT = 0 }; // its load<true> reads the same as load<false>
    GB_HD static gb_u32 chunk(gb_u32 t, int h) { return t + 4 * h; }
    struct Raw { gb_u32 c[4], s; };
    GB_HD static LnGeo geo(const unsigned char* W, gb_u32 N, gb_u32 K) { return ln_planar_geo<LnW8>(W, N, K); }
    GB_HD static LnPtr ptr(const LnGeo& g, gb_u32 row, gb_u32 t) { return ln_planar_ptr<LnW8>(g, row, t, 0); }
    #pragma nv_exec_check_disable
    template <bool TAIL, class Ctx>
    GB_HD static void load(const Ctx& ctx, const LnPtr& p, gb_u32 du, int kleft, Raw& r)
    {
        ctx.ld_w64(p.c + 64 * du, r.c);
        ctx.ld_w64(p.c + 64 * du + 32, r.c + 2);
        r.s = ctx.ld_c32(p.s + 4 * du); // the two groups' fp16 scales
    }
    GB_HD static float scale(const Raw& r, int grp) { return gb_half_to_float(r.s >> (16 * grp)); }
    GB_HD static void decode(const Raw& r, gb_u32* a)
    {
#pragma unroll
        for (int h = 0; h < 4; h++) {
            const gb_u32 u = r.c[h] ^ 0x80808080u;
#pragma unroll
            for (int p = 0; p < 2; p++)
                a[2 * h + p] = ln_pack(ln_w8_magic(u, 2 * p) - 32896.0f, ln_w8_magic(u, 2 * p + 1) - 32896.0f);
        }
    }
    // LN_HALF: bytes 2p, 2p + 1 of c ^ 0x80 under the fp16 magic 0x64 (1024 +
    // c + 128) by one byte permute, minus 1152 (exact), times the group's
    // scale * 2^-f (one rounding); words 0-1 are group 0, 2-3 group 1
    GB_HD static void decode_half(const Raw& r, float sinv, gb_u32* a)
    {
        const gb_u32 s2[2] = {ln_half_scale2(r.s & 0xFFFFu, sinv), ln_half_scale2(r.s >> 16, sinv)};
#pragma unroll
        for (int h = 0; h < 4; h++) {
            const gb_u32 u = r.c[h] ^ 0x80808080u;
#pragma unroll
            for (int p = 0; p < 2; p++)
                a[2 * h + p] = ln_hfma2(ln_hfma2(ln_prmt(u, 0x64646464u, p ? 0x4342u : 0x4140u), LN_HONE2, LN_HNEG1152), s2[h >> 1], LN_HNZERO2);
        }
    }
};

// ------------------------------------------------------------ NVFP4
// e2m1 magnitudes by byte lookup: bf16 low and high bytes of 0, 0.5, 1, 1.5,
// 2, 3, 4, 6; the signs by PRMT's sign-replicate mode; the pair then times
// the group's e4m3 scale in bf16 (exact: 2 + 4 significant bits, 2^-10 ..
// 2688). A run of 16 is one group.
struct LnNvfp4 {
    enum { E = 16, MODE = LN_PRESCALED, GSCALE = 1, KG = 4, NG = 1, SWZ = 1, CB = 32, HB = 0, SB = 4 };
    enum { LW = 8 }; // bytes of each code load of a lane (the staged route's swizzle)
    enum { TAIL_CUT = 0 }; // its load<true> reads the same as load<false>
    GB_HD static gb_u32 chunk(gb_u32 t, int h) { return 2 * t + h; }
    struct Raw { gb_u32 c[2], s; };
    GB_HD static LnGeo geo(const unsigned char* W, gb_u32 N, gb_u32 K) { return ln_planar_geo<LnNvfp4>(W, N, K); }
    GB_HD static LnPtr ptr(const LnGeo& g, gb_u32 row, gb_u32 t) { return ln_planar_ptr<LnNvfp4>(g, row, t, t); }
    #pragma nv_exec_check_disable
    template <bool TAIL, class Ctx>
    GB_HD static void load(const Ctx& ctx, const LnPtr& p, gb_u32 du, int kleft, Raw& r)
    {
        ctx.ld_w64(p.c + 32 * du, r.c);
        r.s = ctx.ld_c8(p.s + 4 * du);
    }
    GB_HD static float scale(const Raw&, int) { return 1.0f; }
    // E4M3 bits in f32 bits 20..26 are the value times 2^-120 (subnormals
    // included, as f32 subnormals): one exact multiply; 0x7F/0xFF are NaN.
    GB_HD static float e4m3(gb_u32 b)
    {
        const float v = gb_as_float(((b & 0x7Fu) << 20) | ((b & 0x80u) << 24)) * 0x1p120f;
        return (b & 0x7Fu) == 0x7Fu ? gb_as_float(0x7FC00000u) : v;
    }
    GB_HD static void decode(const Raw& r, gb_u32* a)
    {
        const float sf = e4m3(r.s);
        const gb_u32 s2 = ln_pack(sf, sf);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const gb_u32 w = r.c[h], m = w & 0x77777777u, w4 = w << 4;
#pragma unroll
            for (int half = 0; half < 2; half++) { // codes 4 half .. 4 half + 3
                const gb_u32 sel = m >> (16 * half);
                const gb_u32 L = ln_prmt(0xC0800000u, 0xC0804000u, sel);
                // sign of code 2i: bit 7 of byte i of w << 4; of code 2i+1: of byte i of w
                const gb_u32 S = ln_prmt(w4, w, half ? 0xFBEAu : 0xD9C8u);
                const gb_u32 H = ln_andor(S, 0x80808080u, ln_prmt(0x3F3F3F00u, 0x40404040u, sel));
                a[4 * h + 2 * half] = ln_fma2(ln_prmt(L, H, 0x5140), s2, LN_NZERO2);
                a[4 * h + 2 * half + 1] = ln_fma2(ln_prmt(L, H, 0x7362), s2, LN_NZERO2);
            }
        }
    }
};

// ------------------------------------------------------------ BF16
// Not padded: a run's two 16-byte words are loaded only below K (K % 8 == 0).
// Chunks t and 4 + t, as W8's: a quarter-warp's 16-byte loads of a row are
// then 64 contiguous bytes (two whole sectors); with chunks 2t and 2t + 1 each
// load took half of four sectors and the L2 served every sector twice.
struct LnBf16 {
    enum { E = 16, MODE = LN_PRESCALED, GSCALE = 0, KG = 4, NG = 1, SWZ = 4, CB = 128, HB = 0, SB = 0 };
    enum { LW = 16 }; // bytes of each code load of a lane (the staged route's swizzle)
    enum { TAIL_CUT = 1 }; // its load<true> reads only the words below K
    GB_HD static gb_u32 chunk(gb_u32 t, int h) { return t + 4 * h; }
    struct Raw { gb_u32 c[8]; };
    GB_HD static LnGeo geo(const unsigned char* W, gb_u32, gb_u32 K)
    {
        LnGeo g{W, W, W, 2 * (gb_u64)K, 0, 0};
        return g;
    }
    GB_HD static LnPtr ptr(const LnGeo& g, gb_u32 row, gb_u32 t) { return ln_planar_ptr<LnBf16>(g, row, t, 0); }
    #pragma nv_exec_check_disable
    template <bool TAIL, class Ctx>
    GB_HD static void load(const Ctx& ctx, const LnPtr& p, gb_u32 du, int kleft, Raw& r)
    {
        // TAIL: only the words below K; kleft = K minus the k of this lane's chunk 0
#pragma unroll
        for (int c = 0; c < 2; c++) {
            if (!TAIL || 32 * c < kleft)
                ctx.ld_w128(p.c + 128 * du + 64 * c, r.c + 4 * c);
            else r.c[4 * c] = r.c[4 * c + 1] = r.c[4 * c + 2] = r.c[4 * c + 3] = 0;
        }
    }
    GB_HD static float scale(const Raw&, int) { return 1.0f; }
    GB_HD static void decode(const Raw& r, gb_u32* a)
    {
#pragma unroll
        for (int i = 0; i < 8; i++) a[i] = r.c[i];
    }
};

#endif
