// The exponents of the wgmma route's LN_HALF = 1 (docs/kernels/cuda-linear.md,
// "Weights in fp16"): a row of x is scaled by 2^-g so that its largest
// magnitude lies in [2^14, 2^15) and rounded to fp16 (exact for every element
// above 2^-31 of that magnitude: bf16's 8 significant bits fit fp16's 11), and
// a row of W by 2^-f so that its largest group scale lies in [1, 2), which
// keeps code x scale inside fp16's range for every fp16 scale. The kernel's
// sums are multiplied back by 2^(f + g). __host__ __device__, so that the
// host emulation runs the same code (tests/cuda_host/linear_wgmma_emulate.cu).
#ifndef GPUBENCH_LINEAR_HALF_PREP_CUH
#define GPUBENCH_LINEAR_HALF_PREP_CUH

#include "linear_formats.cuh"

// floor(log2(v)) of a normal positive f32: its exponent field.
GB_HD int ln_exp_of(float v) { return (int)(gb_bits(v) >> 23) - 127; }

// g of a row of x from the largest bf16 magnitude bits m (sign cleared): 0
// for a row of zeros or with an infinity or NaN (which then stays what it
// is); at least -126, so that 2^g and 2^-g are normal f32. (A bf16
// subnormal is an f32 subnormal: times 2^64 it is normal, exactly.)
GB_HD int ln_half_x_exp(gb_u32 m)
{
    if (m == 0 || m >= 0x7F80u) return 0;
    const int e = (m >> 7) ? (int)(m >> 7) - 127 : ln_exp_of(gb_as_float(m << 16) * 0x1p64f) - 64;
    const int g = e - 14;
    return g < -126 ? -126 : g;
}

// f of a row of W from its largest fp16 scale magnitude bits m: 0 for a row
// of zero scales or with an infinity or NaN. (Every fp16, subnormals too, is
// a normal f32.)
GB_HD int ln_half_w_exp(gb_u32 m)
{
    if (m == 0 || m >= 0x7C00u) return 0;
    return ln_exp_of(gb_half_to_float(m));
}

// One element of x as fp16 bits, scaled by 2^-g.
GB_HD gb_u32 ln_half_x(gb_u32 xb, float inv) { return ln_f16(gb_as_float(xb << 16) * inv); }

// Where element (t, k) of x goes in the tiled copy of LN_XTILE = 1
// (linear_wgmma.cuh, LwFill::bulk_x): per tile of BN rows of x and unit of
// 64 of K (nunits of them), BN rows of 64 fp16, chunk c (8 elements) of row
// r at c ^ (r & 7): the stage's 128-byte swizzle, so that one bulk copy of
// the unit's BN x 128 bytes lands as the wgmma's descriptor reads it. The
// copy holds ceil(T / BN) BN rows and nunits 64 columns, zeros past T and K.
template <int BN>
GB_HD gb_u64 ln_half_x_at(gb_u32 t, gb_u32 k, gb_u32 nunits)
{
    const gb_u32 r = t % BN, c = (k % 64) / 8;
    return (((gb_u64)(t / BN) * nunits + k / 64) * BN + r) * 64 + ((c ^ (r & 7)) << 3) + k % 8;
}

// Where element k of x lies inside its unit in the copy that the wgmma route
// with the weights from registers reads (LN_XTILE = 3, register A; a tiled
// copy as above, with k permuted inside each unit of 64): position 8 c + 2 t
// + j of a unit holds k = 8 F::chunk(t, c / 4) + 2 (c % 4) + j, so that the
// 16 weights lane t of a quad decodes for a row (F's chunks chunk(t, 0) and
// chunk(t, 1), the same run as the stores' path) are, pair by pair, that
// lane's k of the wgmma's A fragment (k 2 t, 2 t + 1 and 2 t + 8, 2 t + 9 of
// each k-step of 16): no exchange between lanes (docs/kernels/cuda-linear.md,
// "The weights from registers"). The returned position keeps k's unit.
template <class F>
GB_HD gb_u32 ln_ra_k(gb_u32 k)
{
    const gb_u32 kc = (k % 64) / 8;
    gb_u32 lane = 0, h = 0;
    for (gb_u32 a = 0; a < 4; a++)
        for (gb_u32 b = 0; b < 2; b++)
            if (F::chunk(a, (int)b) == kc) lane = a, h = b;
    return k - k % 64 + 8 * (4 * h + (k % 8) / 2) + 2 * lane + k % 2;
}

// The largest magnitude bits of two fp16 values in a word (what the scales
// plane holds: every format with LN_HALF has fp16 group scales).
GB_HD gb_u32 ln_half_max2(gb_u32 w, gb_u32 m)
{
    const gb_u32 a = w & 0x7FFFu, b = (w >> 16) & 0x7FFFu;
    const gb_u32 c = a > b ? a : b;
    return c > m ? c : m;
}

// The largest magnitude bits of eight bf16 (or fp16) values, 16 bytes of x.
GB_HD gb_u32 ln_half_max8(uint4 v, gb_u32 m)
{
    return ln_half_max2(v.w, ln_half_max2(v.z, ln_half_max2(v.y, ln_half_max2(v.x, m))));
}

// Eight elements of x (bf16, 16 bytes) as fp16 scaled by 2^-g (inv = 2^-g).
GB_HD gb_u32 ln_half_x2(gb_u32 w, float inv) { return ln_half_x(w & 0xFFFFu, inv) | ln_half_x(w >> 16, inv) << 16; }
GB_HD uint4 ln_half_x8(uint4 v, float inv)
{
    return make_uint4(ln_half_x2(v.x, inv), ln_half_x2(v.y, inv), ln_half_x2(v.z, inv), ln_half_x2(v.w, inv));
}

// The largest magnitude bits of row `row` of W's scales over the words
// first, first + step, ... of the groups that hold elements below K (those
// past it have scale +0: docs/FORMATS.md, "Padding and geometry"), two fp16
// scales a word of the scales plane (the last one's high half past K when
// the groups are odd); f is ln_half_w_exp of it. The prepass takes a warp a
// row (first = lane, step 32).
template <class F>
GB_HD gb_u32 ln_half_w_max(const unsigned char* w, gb_u32 n, gb_u32 k, gb_u32 row, gb_u32 first, gb_u32 step)
{
    const LnGeo geo = F::geo(w, n, k);
    const gb_u32 groups = (k + 128 / F::SB - 1) / (128 / F::SB);
    const gb_u32* sr = reinterpret_cast<const gb_u32*>(geo.ps + row * geo.rs);
    gb_u32 m = 0;
    for (gb_u32 i = first; i < (groups + 1) / 2; i += step) m = ln_half_max2(i < groups / 2 ? sr[i] : sr[i] & 0xFFFFu, m);
    return m;
}

// The prepass's block (linear_half_prep.cu's kernel, whose comment says what
// its blocks do; the host emulation runs it with its own context C:
// thread(), block(), barrier(), warp_max(v) over the warp's lanes,
// ld16(p, i): chunk i (16 bytes) of p, st16(p, v): 16 bytes at p). TILE: LN_PREP_TILE; HOLD:
// LN_PREP_HOLD, the chunks of 16 bytes a thread holds so that a row of x is
// read once (0: every row read twice). PERM (LN_PREP_PERM = 1, TILE > 0):
// the copy with k permuted inside each unit (ln_ra_k), a 16-byte chunk of x
// going out as four 4-byte stores (ctx.st4). part: 8 words of shared memory.
template <class F, int TILE, int HOLD, int PERM = 0, class C>
GB_HD void ln_half_prep_block(C& ctx, const unsigned short* __restrict__ x, unsigned short* __restrict__ xh,
                              int* __restrict__ ex, const unsigned char* __restrict__ w, gb_u32 n, gb_u32 k, gb_u32 t,
                              gb_u32* part)
{
    enum { BN = TILE ? TILE : 64, HN = HOLD > 0 ? HOLD : 1 };
    const gb_u32 b = ctx.block(), tid = ctx.thread();
    const gb_u32 rows = TILE ? (t + BN - 1) / BN * BN : t, nunits = (k + 63) / 64;
    // 8-element chunks a row of the copy: the tiled copy's whole units, else K's
    const gb_u32 chunks = TILE ? 8 * nunits : k / 8;
    const uint4 zero = make_uint4(0, 0, 0, 0);
    if (b < t) {
        const unsigned short* xr = x + (gb_u64)b * k;
        const gb_u64 row0 = (gb_u64)b * k; // the row-major copy's row
        static_assert(PERM == 0 || (PERM == 1 && TILE != 0), "LN_PREP_PERM = 1 takes the tiled copy (LN_PREP_TILE > 0)");
        // chunk i of the row's copy (8 elements, converted) to where the kernel reads it
        auto put = [&](gb_u32 i, uint4 v) {
            if constexpr (PERM != 0) {
                const gb_u32 wd[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int q = 0; q < 4; q++) ctx.st4(xh + ln_half_x_at<BN>(b, ln_ra_k<F>(8 * i + 2 * q), nunits), wd[q]);
            } else ctx.st16(xh + (TILE ? ln_half_x_at<BN>(b, 8 * i, nunits) : row0 + 8 * i), v);
        };
        // the row read once and held in registers where it fits (its chunks all issued at once), else read twice
        const bool held = HOLD > 0 && chunks <= 256 * (gb_u32)HOLD;
        uint4 v[HN];
        gb_u32 m = 0;
        if (held) {
#pragma unroll
            for (int j = 0; j < HN; j++) {
                const gb_u32 i = tid + 256 * j;
                v[j] = i < k / 8 ? ctx.ld16(xr, i) : zero;
            }
#pragma unroll
            for (int j = 0; j < HN; j++) m = ln_half_max8(v[j], m);
        } else {
            for (gb_u32 i = tid; i < k / 8; i += 256) m = ln_half_max8(ctx.ld16(xr, i), m);
        }
        m = ctx.warp_max(m);
        if ((tid & 31) == 0) part[tid >> 5] = m;
        ctx.barrier();
        m = part[0];
        for (int i = 1; i < 8; i++) m = part[i] > m ? part[i] : m;
        const int g = ln_half_x_exp(m);
        if (tid == 0) ex[b] = g;
        const float inv = ln_pow2(-g);
        if (held) {
#pragma unroll
            for (int j = 0; j < HN; j++) {
                const gb_u32 i = tid + 256 * j;
                if (i < chunks) put(i, ln_half_x8(v[j], inv)); // zeros past K (ln_half_x8 of 0 is 0)
            }
        } else {
            for (gb_u32 i = tid; i < chunks; i += 256) put(i, i < k / 8 ? ln_half_x8(ctx.ld16(xr, i), inv) : zero);
        }
    } else if (b < rows) {
        // a row of the tiled copy's last tile past T: zeros (its 8-element chunks are 16-byte aligned)
        for (gb_u32 i = tid; i < chunks; i += 256) ctx.st16(xh + ln_half_x_at<BN>(b, 8 * i, nunits), zero);
    } else {
        // a warp a row of W, its lanes over the row's scale words
        const gb_u32 row = (b - rows) * 8 + (tid >> 5), lane = tid & 31;
        if (row >= n) return;
        const gb_u32 m = ctx.warp_max(ln_half_w_max<F>(w, n, k, row, lane, 32));
        if (lane == 0) ex[t + row] = ln_half_w_exp(m);
    }
}

#endif
