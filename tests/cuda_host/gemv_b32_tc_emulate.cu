// Host emulation of the f16 tensor-core q8_0 and q4_0 GEMV (kernels/cuda/gemv_b32_tc.cuh)
// against the FP64 reference: the kernel's own warp code (its scale, loads,
// code decode, x split, mmas and outputs) runs on the CPU for every lane of
// every warp and k slice, the 32 lanes as fibers (emu_staged.cuh's pool),
// since a warp's mma and shuffles exchange values between lanes: those are
// collective here, each lane's operands gathered and the mma computed by the
// CPU model of mma.m16n8k16 (emu_mma.cuh, from the PTX ISA's fragment
// tables, not from the kernel's helpers) with f16 inputs; f16 conversions
// are modelled bit-exactly (round to nearest even, subnormals). The slices
// are summed in the kernel's order. Checks: random weights and x at every T
// from 1 to 8, ragged m, slices past the end, several (NW, KS, U, TL); rows
// of x 1e-12 .. 1e12 apart and outliers within a row; one-hot x, which pins
// every k slot and every token's B column and must give each dequantized
// weight exactly; every load inside its buffer and aligned; the mma count
// per lane. A model with two B registers swapped must fail. Run by
// tests/cli/test_gemv_b32_tc_emulate.sh.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gemv_b32_tc.cuh"
#include "emu_mma.cuh"

extern "C" {
#include "formats.h"
#include "ref_blocks.h"
#include "ref_gemv.h"
}
#include "emu_report.cuh"
#include "emu_rand.cuh"
#include "emu_staged.cuh"

static float dec_f16(gb_u32 h) { return gb_half_to_float(h); }

// f32 -> f16 bits, round to nearest even, subnormals and overflow to inf (cvt.rn.f16.f32).
static gb_u32 enc_f16(float f)
{
    const double v = f;
    const gb_u32 sign = std::signbit(f) ? 0x8000u : 0u;
    if (std::isnan(f)) return 0x7E00u;
    const double a = std::fabs(v);
    if (a >= 65520.0) return sign | 0x7C00u; // rounds past the largest f16
    if (a < std::ldexp(1.0, -14)) {           // subnormal: a multiple of 2^-24
        const double q = std::nearbyint(a * std::ldexp(1.0, 24));
        return sign | (gb_u32)q; // q = 1024 is the smallest normal's bits
    }
    int e;
    std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1)
    const double q = std::nearbyint(std::ldexp(a, 11 - e)); // 11 significant bits
    gb_u32 bits = ((gb_u32)(e - 1 + 15) << 10) + (gb_u32)q - 1024u;
    return sign | bits; // q = 2048 carries into the exponent
}

static bool swap_b = false; // the deliberately wrong model: b0 and b1 exchanged

// A warp's exchange area for the collective operations.
struct Exchange {
    gb_u32 A[32][4], B[32][2];
    float C[32][4], S[32];
};

// One lane's context: the staged loop's (emu_staged.cuh: x loads, cp.async
// queued per commit group, syncwarp, the stage buffer) plus 4-byte weight and
// stage loads checked to lie in their buffer and be aligned, f16 arithmetic
// on the host, mma and shuffles through the exchange area between two warp
// barriers.
struct LaneCx : StagedCx {
    Exchange* ex;
    int lane;
    long mmas = 0, bad = 0;
    void check4(bool c, const char* what, long long at)
    {
        checks++;
        if (c) return;
        if (bad++ < 5) printf("FAIL (lane %d): %s at %lld\n", lane, what, at);
        failures++;
    }
    sw_u32 load4(const unsigned char* p, const unsigned char* base, size_t bytes, const char* what)
    {
        sw_u32 v = 0;
        const bool in = p >= base && (size_t)(p - base) + 4 <= bytes && (size_t)(p - base) % 4 == 0;
        check4(in, what, (long long)(p - base));
        if (in) memcpy(&v, p, 4);
        return v;
    }
    __noinline__ sw_u32 ld_w4(const unsigned char* p) { return load4(p, w, wbytes, "weight load outside the weights or unaligned, byte"); }
    __noinline__ sw_u32 lds4(const unsigned char* p) { return load4(p, stage, sbytes, "stage load outside the stages or unaligned, byte"); }
    // bias: q8_0's 1152 (codes -128..127) or q4_0's 1032 (-8..7), in both halves
    __noinline__ sw_u32 hsub2(sw_u32 v, sw_u32 bias)
    {
        sw_u32 r = 0;
        const float b = gb_half_to_float(bias & 0xFFFFu), lo = b == 1152.0f ? -128.0f : -8.0f, hi = b == 1152.0f ? 127.0f : 7.0f;
        check4((b == 1152.0f || b == 1032.0f) && bias >> 16 == (bias & 0xFFFFu), "a bias neither 1152 nor 1032, bits", bias);
        for (int h = 0; h < 2; h++) {
            const float d = gb_half_to_float((v >> (16 * h)) & 0xFFFFu) - b; // exact: integers below 2^11
            check4(d >= lo && d <= hi && d == std::floor(d), "a code outside the format's range, value", (long long)d);
            r |= enc_f16(d) << (16 * h);
        }
        return r;
    }
    sw_u32 f16x2(float a, float b) { return enc_f16(a) | (enc_f16(b) << 16); }
    __noinline__ void mma16(float (&c)[4], const sw_u32 (&a)[4], const sw_u32 (&b)[2])
    {
        memcpy(ex->A[lane], a, sizeof a);
        memcpy(ex->B[lane], b, sizeof b);
        if (swap_b) std::swap(ex->B[lane][0], ex->B[lane][1]);
        memcpy(ex->C[lane], c, sizeof c);
        bar->arrive(++syncs, "mma operands");
        if (lane == 0) mma_model_t<dec_f16>(ex->C, ex->A, ex->B);
        bar->arrive(++syncs, "mma result");
        memcpy(c, ex->C[lane], sizeof c);
        mmas++;
    }
    float gather(float v, int src, const char* what)
    {
        ex->S[lane] = v;
        bar->arrive(++syncs, what);
        const float r = ex->S[src];
        bar->arrive(++syncs, what);
        return r;
    }
    __noinline__ float shfl_xor(float v, int mask) { return gather(v, lane ^ mask, "shfl_xor"); }
    __noinline__ float shfl(float v, sw_u32 src) { return gather(v, (int)src, "shfl"); }
};

static LanePool* pool;

// The reference's name and block bytes of a kernel format.
template <class Fm> struct FmRef;
template <> struct FmRef<GbTcQ8_0> { static constexpr const char* name = "q8_0"; };
template <> struct FmRef<GbTcQ4_0> { static constexpr const char* name = "q4_0"; };
template <class Fm> static const gb_format* fmt_of() { return gb_format_find(FmRef<Fm>::name); }
template <class Fm> static size_t weight_bytes(gb_u32 m, gb_u32 k) { return (size_t)m * k / 64 * Fm::PAIR_BYTES; }

// y (T rows of m) through the kernel's code: NW row warps of TL tiles a
// block, KS slices, U pairs in flight (S = 0) or per stage of S, the stages
// poisoned with NaN bytes.
template <class Fm, int T, int U, int TL, int NW, int KS, int S = 0, int IL = 1>
static std::vector<float> run(const std::vector<unsigned char>& W, const std::vector<float>& x, gb_u32 m, gb_u32 k)
{
    std::vector<float> y((size_t)T * m, NAN);
    const gb_u32 blocks = (m + 16 * TL * NW - 1) / (16 * TL * NW), pairs = k / 64, per = 4 * ((pairs / 4 + KS - 1) / KS);
    const size_t sbytes = S >= 2 ? (size_t)GB_B32TC_STAGE_BYTES(Fm::PAIR_BYTES, TL, U) * S : 16;
    std::vector<uint4> sbuf(sbytes / 16);
    static Exchange ex;
    static LaneCx cxs[32];
    for (gb_u32 blk = 0; blk < blocks; blk++)
        for (int rw = 0; rw < NW; rw++) {
            const gb_u32 r0 = (blk * NW + rw) * 16u * TL;
            if (r0 >= m) continue;
            float v[KS][32][TL][4] = {};
            for (int s = 0; s < KS; s++) {
                std::fill(sbuf.begin(), sbuf.end(), make_uint4(~0u, ~0u, ~0u, ~0u));
                pool->run([&](int l) {
                    LaneCx& cx = cxs[l];
                    cx = LaneCx{};
                    static_cast<StagedCx&>(cx) = StagedCx{W.data(), (const unsigned char*)x.data(), W.size(), x.size() * 4,
                                                          (unsigned char*)sbuf.data(), sbytes, nullptr, &pool->warp};
                    cx.ex = &ex, cx.lane = l;
                    gb_b32tc_part<Fm, T, U, TL, KS, S, IL>(cx, (sw_u32)l, W.data(), x.data(), m, k, r0, (sw_u32)s, v[s][l],
                                                             cx.stage);
                    size_t pending = cx.open.size();
                    for (const auto& grp : cx.groups) pending += grp.size();
                    cx.check(pending == 0, "lane %d ended with %zu copies not landed", l, pending);
                    pool->warp.arrive(-1, "a warp's end"); // every lane made the same collective calls
                });
                const gb_u32 p0 = per * s < pairs ? per * s : pairs, np = (p0 + per < pairs ? p0 + per : pairs) - p0;
                const long want = (long)np * 2 * 2 * GbTcB<T>::NB * TL;
                for (int l = 0; l < 32; l++) {
                    checks += cxs[l].checks;
                    EXPECT(cxs[l].mmas == want, "lane %d: %ld mmas for %u pairs, expected %ld", l, cxs[l].mmas, np, want);
                }
            }
            for (int j = 0; j < TL; j++) {
                if (r0 + 16u * j >= m) continue;
                for (int lane = 0; lane < 32; lane++) {
                    float out[4];
                    for (int i = 0; i < 4; i++) {
                        out[i] = v[0][lane][j][i];
                        for (int s = 1; s < KS; s++) out[i] += v[s][lane][j][i]; // slice order, as gb_tc_finish
                    }
                    gb_tc_store<T>((sw_u32)lane, r0 + 16u * j, m, out, y.data());
                }
            }
        }
    return y;
}

// Random weights and x: x row t times 10^(scale (t % 5 - 2)), so rows of very
// different magnitude share one launch, and with outliers every 37th value
// times 20. Returns the rows beyond 1e-4 of sum |w x|.
template <class Fm, int T, int U, int TL, int NW, int KS, int S = 0, int IL = 1>
static int random_case(gb_u32 m, gb_u32 k, int seed, int scale, bool outliers, bool report = true, int block_scale = 0)
{
    std::vector<unsigned char> W(weight_bytes<Fm>(m, k));
    gb_err e = {0};
    EXPECT(gb_ref_random_blocks(fmt_of<Fm>(), (uint64_t)m * k / 32, seed, W.data(), &e) == 0, "random weights: %s", e.msg ? e.msg : "");
    std::vector<float> x((size_t)T * k);
    for (int t = 0; t < T; t++)
        for (gb_u32 i = 0; i < k; i++)
            x[(size_t)t * k + i] = rnd() * (float)std::pow(10.0, scale * (t % 5 - 2) + block_scale * ((int)(i / 32 + t) % 3 - 1)) *
                                   (outliers && i % 37 == 5 ? 20.0f : 1.0f);
    const std::vector<float> y = run<Fm, T, U, TL, NW, KS, S, IL>(W, x, m, k);
    std::vector<double> r(m), a(m);
    double worst = 0;
    int bad = 0;
    for (int t = 0; t < T; t++) {
        EXPECT(gb_ref_gemv(fmt_of<Fm>(), W.data(), W.size(), m, k, x.data() + (size_t)t * k, r.data(), a.data(), &e) == 0, "ref");
        for (gb_u32 i = 0; i < m; i++) {
            const double yv = y[(size_t)t * m + i], rel = std::fabs(yv - r[i]) / (a[i] > 0 ? a[i] : 1);
            if (!(rel <= 1e-4)) bad++;
            if (!(rel <= worst)) worst = rel;
        }
    }
    if (report) {
        EXPECT(bad == 0, "%s T=%d U=%d TL=%d NW=%d KS=%d S=%d IL=%d m=%u k=%u scale=%d: %d row(s) beyond 1e-4 of sum|w x|, worst %g",
               FmRef<Fm>::name, T, U, TL, NW, KS, S, IL, m, k, scale, bad, worst);
        printf("%s %s T=%d U=%d TL=%d NW=%d KS=%d S=%d IL=%d m=%u k=%u scale=%d block_scale=%d%s: worst %.3g of sum|w x|\n",
               bad ? "not ok" : "ok  ", FmRef<Fm>::name, T, U, TL, NW, KS, S, IL, m, k, scale, block_scale, outliers ? " outliers" : "", worst);
    }
    gb_err_clear(&e);
    return bad;
}

// An infinite x in the last row, which the lanes without a token read too
// (with scale 0: their columns turn NaN): every other row exact to 1e-4 of
// sum |w x|, the last row not finite.
template <class Fm, int T, int U, int TL, int NW, int KS, int S = 0, int IL = 1>
static void inf_case(gb_u32 m, gb_u32 k)
{
    std::vector<unsigned char> W(weight_bytes<Fm>(m, k));
    gb_err e = {0};
    EXPECT(gb_ref_random_blocks(fmt_of<Fm>(), (uint64_t)m * k / 32, 31, W.data(), &e) == 0, "random weights");
    std::vector<float> x((size_t)T * k);
    for (auto& v : x) v = rnd();
    x[(size_t)(T - 1) * k + 5] = INFINITY;
    const std::vector<float> y = run<Fm, T, U, TL, NW, KS, S, IL>(W, x, m, k);
    std::vector<double> r(m), a(m);
    int bad = 0;
    for (int t = 0; t < T; t++) {
        EXPECT(gb_ref_gemv(fmt_of<Fm>(), W.data(), W.size(), m, k, x.data() + (size_t)t * k, r.data(), a.data(), &e) == 0, "ref");
        for (gb_u32 i = 0; i < m; i++) {
            const double yv = y[(size_t)t * m + i];
            bad += t < T - 1 ? !(std::fabs(yv - r[i]) <= 1e-4 * a[i]) : std::isfinite(yv);
        }
    }
    EXPECT(bad == 0, "%s T=%d: an infinite x in the last row: %d outputs wrong", FmRef<Fm>::name, T, bad);
    printf("%s %s T=%d U=%d TL=%d NW=%d KS=%d S=%d IL=%d m=%u k=%u: an infinite x in the last row, the others exact\n",
           bad ? "not ok" : "ok  ", FmRef<Fm>::name, T, U, TL, NW, KS, S, IL, m, k);
    gb_err_clear(&e);
}

// x rows one-hot at columns (c0 + t) % k: y[t][i] must be the dequantized
// weight W[i][(c0 + t) % k] exactly (x' = 2^14, lo = 0, d q exact in f32).
template <class Fm, int T, int U, int TL, int NW, int KS, int S = 0, int IL = 1>
static void one_hot_case(gb_u32 m, gb_u32 k)
{
    std::vector<unsigned char> W(weight_bytes<Fm>(m, k));
    gb_err e = {0};
    EXPECT(gb_ref_random_blocks(fmt_of<Fm>(), (uint64_t)m * k / 32, 77, W.data(), &e) == 0, "random weights");
    int bad = 0;
    for (gb_u32 c0 = 0; c0 < k; c0 += T) {
        std::vector<float> x((size_t)T * k, 0.0f);
        for (int t = 0; t < T; t++) x[(size_t)t * k + (c0 + t) % k] = 1.0f;
        const std::vector<float> y = run<Fm, T, U, TL, NW, KS, S, IL>(W, x, m, k);
        std::vector<double> r(m), a(m);
        for (int t = 0; t < T; t++) {
            // one term: the reference's sum is the dequantized weight W[i][(c0 + t) % k] itself
            EXPECT(gb_ref_gemv(fmt_of<Fm>(), W.data(), W.size(), m, k, x.data() + (size_t)t * k, r.data(), a.data(), &e) == 0, "ref");
            for (gb_u32 i = 0; i < m; i++)
                if (!(y[(size_t)t * m + i] == (float)r[i])) bad++;
        }
    }
    EXPECT(bad == 0, "%s one-hot T=%d U=%d TL=%d NW=%d KS=%d S=%d m=%u k=%u: %d outputs not the weight", FmRef<Fm>::name, T, U,
           TL, NW, KS, S, m, k, bad);
    printf("%s %s one-hot T=%d U=%d TL=%d NW=%d KS=%d S=%d IL=%d m=%u k=%u: every column of every row exactly\n",
           bad ? "not ok" : "ok  ", FmRef<Fm>::name, T, U, TL, NW, KS, S, IL, m, k);
    gb_err_clear(&e);
}

// Plain byte loads for the decode test.
struct BytesLd {
    const unsigned char* base;
    sw_u32 ld_w4(const unsigned char* p) const
    {
        sw_u32 v;
        memcpy(&v, p, 4);
        return v;
    }
};

// Block b's code c (0..31) and d of a pair, read from the bytes as the format defines them (not the kernel's words).
static int code_of(const gb_format* f, const unsigned char* pair, int b, int c)
{
    if (!strcmp(f->name, "q8_0")) return (signed char)pair[34 * b + 2 + c];
    const unsigned char q = pair[18 * b + 2 + c % 16];
    return (c < 16 ? q & 15 : q >> 4) - 8;
}

// Every lane's load, codes and f16 conversion against the bytes' codes, and its d, over random pairs.
template <class Fm>
static void decode_case()
{
    const gb_format* f = fmt_of<Fm>();
    std::vector<unsigned char> P(64 * Fm::PAIR_BYTES);
    gb_err e = {0};
    EXPECT(gb_ref_random_blocks(f, 128, 41, P.data(), &e) == 0, "random blocks");
    LaneCx cx{};
    BytesLd ld{P.data()};
    int bad = 0, n = 0;
    for (int p = 0; p < 64; p++)
        for (sw_u32 t = 0; t < 4; t++) {
            const unsigned char* pair = P.data() + p * Fm::PAIR_BYTES;
            sw_u32 w[Fm::WORDS];
            Fm::load(ld, pair, t, w);
            for (int b = 0; b < 2; b++) {
                sw_u32 lo, hi, h[4];
                Fm::codes(w, t, b, lo, hi);
                gb_b32tc_f16<Fm>(cx, lo, h[0], h[1]);
                gb_b32tc_f16<Fm>(cx, hi, h[2], h[3]);
                for (int i = 0; i < 8; i++, n++)
                    bad += gb_half_to_float((h[i / 2] >> (16 * (i % 2))) & 0xFFFFu) != (float)code_of(f, pair, b, 8 * (int)t + i);
                const unsigned char* db = pair + (Fm::PAIR_BYTES / 2) * b;
                bad += Fm::d(w, b) != gb_half_to_float(db[0] | (db[1] << 8));
            }
        }
    checks += cx.checks;
    EXPECT(bad == 0, "%s: %d codes or scales decoded wrong", f->name, bad);
    printf("%s %s code decode: %d codes of every lane and block, and their d\n", bad ? "not ok" : "ok  ", f->name, n);
    gb_err_clear(&e);
}

template <class Fm>
static void all_cases()
{
    decode_case<Fm>();
    // one-hot: both B layouts (T <= 4, T > 4), slices, tiles, pairs in flight
    one_hot_case<Fm, 1, 1, 1, 1, 1>(16, 256);
    one_hot_case<Fm, 3, 2, 1, 2, 2>(37, 256);
    one_hot_case<Fm, 5, 2, 2, 1, 3>(40, 512);
    one_hot_case<Fm, 8, 4, 1, 1, 1>(23, 256);
    // random: every T, ragged m, slices shorter than U and past the last pair
    random_case<Fm, 1, 2, 1, 2, 2>(40, 1024, 1, 0, false);
    random_case<Fm, 2, 4, 1, 1, 3>(37, 768, 2, 0, false);
    random_case<Fm, 3, 1, 2, 1, 1>(50, 512, 3, 0, false);
    random_case<Fm, 4, 2, 1, 4, 2>(70, 1280, 4, 0, false);
    random_case<Fm, 5, 4, 1, 1, 8>(17, 512, 5, 0, false); // 8 pairs over 8 slices, U = 4
    random_case<Fm, 6, 2, 3, 1, 2>(60, 768, 6, 0, false);
    random_case<Fm, 7, 1, 1, 2, 4>(29, 256, 7, 0, false); // slices past the end
    random_case<Fm, 8, 2, 1, 2, 2>(48, 1024, 8, 0, false);
    random_case<Fm, 8, 3, 2, 1, 3>(45, 1280, 9, 0, true);
    // the staged loop: a partial last stage (k = 768: 12 pairs in stages of 8), stages past a short slice, tiles
    one_hot_case<Fm, 3, 4, 1, 1, 1, 2>(16, 512);
    one_hot_case<Fm, 8, 8, 2, 1, 2, 3>(40, 768);
    random_case<Fm, 1, 4, 1, 2, 2, 2>(37, 1280, 12, 0, false);
    random_case<Fm, 4, 8, 1, 1, 1, 2>(16, 768, 13, 0, false);
    random_case<Fm, 6, 4, 2, 1, 3, 3>(45, 1024, 14, 0, true);
    random_case<Fm, 8, 4, 2, 2, 2, 2>(70, 1280, 15, 6, true);
    random_case<Fm, 8, 4, 1, 1, 8, 4>(29, 512, 16, 0, false); // slices past the end
    // rows of x 1e-12 .. 1e12 apart in one launch, with outliers
    random_case<Fm, 4, 2, 1, 2, 2>(32, 1024, 10, 6, true);
    random_case<Fm, 8, 2, 2, 1, 2>(32, 1024, 11, 6, true);
    // stages read two and four pairs at a time (INTERLEAVE), tiles, slices past the end
    one_hot_case<Fm, 8, 8, 1, 1, 2, 2, 4>(23, 1024);
    random_case<Fm, 2, 4, 2, 1, 2, 3, 2>(45, 1280, 19, 0, false);
    random_case<Fm, 8, 8, 1, 2, 4, 2, 4>(37, 768, 20, 6, true);
    random_case<Fm, 5, 4, 1, 1, 8, 2, 2>(29, 512, 21, 0, false);
    // lanes without a token (T = 3, 6) read the last row: an infinite x there touches no other row
    inf_case<Fm, 3, 4, 1, 1, 2, 2, 2>(32, 512);
    inf_case<Fm, 6, 2, 2, 1, 2>(40, 768);
    // blocks of 32 columns 1e-4, 1 and 1e4 in turn within every row (every block its own scale), both B layouts
    random_case<Fm, 3, 2, 1, 2, 2>(32, 1024, 17, 0, false, true, 4);
    random_case<Fm, 8, 4, 2, 1, 2, 2>(40, 1280, 18, 3, true, true, 4);
}

int main()
{
    LanePool lanes;
    pool = &lanes;
    // the scale: max |x| s in [2^14, 2^15) for x over 240 binades (2^126 below 2^-112); 1 for 0, inf and
    // NaN; its inverse exact (s * inverse == 1) at every one
    {
        int bad = 0;
        for (int i = -140; i < 128; i++)
            for (float f : {1.0f, 1.5f, 1.99f}) {
                const float mx = std::ldexp(f, i);
                const unsigned sb = gb_b32tc_scale_bits(mx);
                const float s = gb_as_float(sb);
                const double p = (double)mx * s;
                const bool ok = i >= -112 ? (p >= 16384.0 && p < 32768.0) : s == std::ldexp(1.0f, 126);
                bad += !ok;
                bad += (double)s * gb_b32tc_inverse(sb) != 1.0;
            }
        bad += gb_b32tc_scale_bits(0.0f) != 0x3F800000u || gb_b32tc_inverse(0x3F800000u) != 1.0f;
        bad += gb_b32tc_scale_bits(INFINITY) != 0x3F800000u;
        bad += gb_b32tc_scale_bits(NAN) != 0x3F800000u;
        EXPECT(bad == 0, "%d scales or inverses wrong", bad);
        printf("%s scale: 807 magnitudes and their inverses, 0, inf, NaN\n", bad ? "not ok" : "ok  ");
    }
    all_cases<GbTcQ8_0>();
    all_cases<GbTcQ4_0>();
    // the checks see a wrong fragment layout: with b0 and b1 swapped in the model, rows go wrong
    swap_b = true;
    const int wrong = random_case<GbTcQ8_0, 8, 2, 1, 1, 1>(16, 256, 5, 0, false, false);
    swap_b = false;
    EXPECT(wrong > 0, "a model with b0 and b1 swapped passed the check");
    printf("%s swapped B registers: %d row(s) caught\n", wrong > 0 ? "ok  " : "not ok", wrong);
    printf("gemv_b32_tc_emulate: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
