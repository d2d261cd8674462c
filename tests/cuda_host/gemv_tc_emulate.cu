// Host emulation of the dense tensor-core GEMVs, bf16 and f16 (kernels/cuda/
// gemv_dense_tc.cuh), against the FP64 reference: the kernel's own warp loop,
// B-column layout, epilogue and store run on the CPU for every lane of every
// warp and k slice, each lane's mma operands recorded and replayed on the CPU
// model of mma.m16n8k16 (tests/cuda_host/emu_mma.cuh, built from the PTX
// ISA's fragment tables, not from the kernel's helpers), the slices summed in
// the kernel's order; the staged loop (STAGES >= 2) on the lane fibers and
// cp.async model of emu_staged.cuh. Checks: random weights and x at every T from 1 to 8,
// ragged m, k not a multiple of 32, several (NW, KS, U); x of very different
// magnitudes (the hi/lo split keeps ~17 bits of each); one-hot x rows, which
// pin every k slot and every token's B column; every load inside its buffer
// and 16-byte aligned; the mma count per warp. A model with two B registers
// swapped must fail: the checks can see a layout that disagrees with the
// hardware's. Run by tests/cli/test_gemv_tc_emulate.sh.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gemv_dense_tc.cuh"
#include "emu_mma.cuh"

extern "C" {
#include "formats.h"
#include "ref_blocks.h"
#include "ref_gemv.h"
}
#include "emu_report.cuh"
#include "emu_rand.cuh"
#include "emu_staged.cuh"


static float dec_bf16(gb_u32 h) { return gb_as_float(h << 16); }

static bool swap_b = false; // the deliberately wrong model: b0 and b1 exchanged

// A lane's context: loads by memcpy, checked to lie in their buffer and be
// aligned; each mma's operands recorded per accumulator, in call order.
struct EmuCx {
    const unsigned char* w;
    const float* x;
    size_t wbytes, xfloats;
    std::vector<Rec>* rec;
    uint4 ld_w(const unsigned char* p)
    {
        uint4 v = make_uint4(0, 0, 0, 0);
        const bool in = p >= w && (size_t)(p - w) + 16 <= wbytes && (size_t)(p - w) % 16 == 0;
        EXPECT(in, "weight load at byte %lld of %zu", (long long)(p - w), wbytes);
        if (in) memcpy(&v, p, 16);
        return v;
    }
    uint4 ld_x(const float* p)
    {
        uint4 v = make_uint4(0, 0, 0, 0);
        const bool in = p >= x && (size_t)(p - x) + 4 <= xfloats && (size_t)(p - x) % 4 == 0;
        EXPECT(in, "x load at float %lld of %zu", (long long)(p - x), xfloats);
        if (in) memcpy(&v, p, 16);
        return v;
    }
    void mma(float (&)[4], int tile, const gb_u32 (&a)[4], const gb_u32 (&b)[2])
    {
        Rec r;
        memcpy(r.a, a, sizeof r.a);
        memcpy(r.b, b, sizeof r.b);
        rec[tile].push_back(r);
    }
};

static LanePool* pool; // the staged loop's 32 lane fibers

// One warp's mmas recorded per lane and accumulator: the direct loop (S = 0)
// lane by lane, or the staged loop (S >= 2) on the lane fibers of
// emu_staged.cuh, into stages poisoned with bf16 NaNs.
template <class D, int T, int U, int TL, int S, int NA>
static void record(std::vector<Rec> (&rec)[32][TL * NA], const std::vector<unsigned char>& W,
                   const std::vector<float>& x, gb_u32 m, gb_u32 k, gb_u32 r0, gb_u32 k0, gb_u32 kl)
{
    if constexpr (S == 0) {
        for (int lane = 0; lane < 32; lane++) {
            EmuCx cx{W.data(), x.data(), W.size(), x.size(), rec[lane]};
            sw_u64 ra[TL], rb[TL];
            for (int j = 0; j < TL; j++) sw_gemv_rows(r0, (sw_u32)j, sw_g(lane), m, k, ra[j], rb[j]);
            float c[TL][NA][4];
            gb_tc_warp_range<D, T, U, TL>(cx, (sw_u32)lane, W.data() + 2ull * k0, x.data() + k0, k, kl, ra, rb, c);
        }
    } else {
        const size_t sbytes = (size_t)SW_STAGE_BYTES(TL, U) * S;
        std::vector<uint4> sbuf(sbytes / 16, make_uint4(~0u, ~0u, ~0u, ~0u));
        static StagedCx cxs[32];
        pool->run([&](int l) {
            StagedCx& cx = cxs[l];
            cx = StagedCx{W.data(), (const unsigned char*)x.data(), W.size(), x.size() * 4,
                          (unsigned char*)sbuf.data(), sbytes, rec[l], &pool->warp};
            GbTcX<D, T> op(x.data() + k0, k, (sw_u32)l);
            float c[TL][NA][4];
            sw_staged_loop<TL, U, S>(cx, (sw_u32)l, GbTcStageRows{r0, m}, op, W.data() + 2ull * k0, k, kl, c,
                                    cx.stage);
            size_t pending = cx.open.size();
            for (const auto& grp : cx.groups) pending += grp.size();
            cx.check(pending == 0, "lane %d ended with %zu copies not landed", l, pending);
            pool->warp.arrive(-1, "a warp's end"); // every lane made the same syncwarps
        });
        for (int l = 0; l < 32; l++) checks += cxs[l].checks;
    }
}

// y (T rows of m) through the kernel's code with NW warps a block of TL row
// tiles each, KS slices and S stages.
template <class D, int T, int U, int NW, int KS, int S = 0, int TL = 1>
static std::vector<float> run(const std::vector<unsigned char>& W, const std::vector<float>& x, gb_u32 m, gb_u32 k)
{
    enum { NA = D::AP * GbTcB<T>::NB };
    std::vector<float> y((size_t)T * m, NAN);
    const gb_u32 blocks = (m + 16 * TL * NW - 1) / (16 * TL * NW);
    for (gb_u32 blk = 0; blk < blocks; blk++)
        for (int rw = 0; rw < NW; rw++) {
            const gb_u32 r0 = (blk * NW + rw) * 16u * TL;
            float v[KS][32][TL][4];
            for (int s = 0; s < KS; s++) {
                sw_u32 k0, kl;
                sw_slice(k, KS, s, k0, kl);
                std::vector<Rec> rec[32][TL * NA];
                float acc[32][TL * NA][4] = {};
                if (r0 < m) {
                    record<D, T, U, TL, S, NA>(rec, W, x, m, k, r0, k0, kl);
                    // replay: every lane must have made the same calls (a converged warp)
                    const size_t expected = S == 0 ? 2 * ((kl / 8 + 3) / 4) : 2 * U * ((kl + 32 * U - 1) / (32 * U));
                    for (int j = 0; j < TL * NA; j++) {
                        EXPECT(rec[0][j].size() == expected, "accumulator %d: %zu mma calls for %u of k, expected %zu", j,
                               rec[0][j].size(), kl, expected);
                        float C[32][4] = {};
                        for (size_t i = 0; i < rec[0][j].size(); i++) {
                            gb_u32 A[32][4], B[32][2];
                            for (int lane = 0; lane < 32; lane++) {
                                EXPECT(rec[lane][j].size() == rec[0][j].size(), "lane %d made %zu mma calls, lane 0 %zu",
                                       lane, rec[lane][j].size(), rec[0][j].size());
                                const Rec r = i < rec[lane][j].size() ? rec[lane][j][i] : Rec{};
                                memcpy(A[lane], r.a, sizeof A[lane]);
                                memcpy(B[lane], r.b, sizeof B[lane]);
                                if (swap_b) std::swap(B[lane][0], B[lane][1]);
                            }
                            mma_model_t<dec_bf16>(C, A, B);
                        }
                        for (int lane = 0; lane < 32; lane++)
                            for (int i = 0; i < 4; i++) acc[lane][j][i] = C[lane][i];
                    }
                }
                for (int lane = 0; lane < 32; lane++)
                    for (int j = 0; j < TL; j++) {
                        float a[NA][4];
                        memcpy(a, acc[lane][j * NA], sizeof a);
                        gb_tc_outputs<D, T>(a, v[s][lane][j]);
                    }
            }
            for (int j = 0; j < TL; j++) {
                if (r0 + 16u * j >= m) continue;
                for (int lane = 0; lane < 32; lane++) {
                    float out[4];
                    for (int i = 0; i < 4; i++) {
                        out[i] = v[0][lane][j][i];
                        for (int s = 1; s < KS; s++) out[i] += v[s][lane][j][i]; // slice order, as the kernel
                    }
                    gb_tc_store<T>((sw_u32)lane, r0 + 16u * j, m, out, y.data());
                }
            }
        }
    return y;
}

struct FBF16 {
    typedef GbTcBF16 D;
    static const char* name() { return "bf16"; }
};
struct FF16 {
    typedef GbTcF16 D;
    static const char* name() { return "f16"; }
};

// Random weights and x; scales: x row t multiplied by 10^(scale * (t % 5 - 2)),
// so rows of very different magnitude share one launch. Returns the rows
// beyond 1e-4 of sum |w x|.
template <class FM, int T, int U, int NW, int KS, int S = 0, int TL = 1>
static int random_case(gb_u32 m, gb_u32 k, int seed, int scale, bool report = true)
{
    const gb_format* f = gb_format_find(FM::name());
    std::vector<unsigned char> W((size_t)m * k * 2);
    gb_err e = {0};
    EXPECT(gb_ref_random_blocks(f, (uint64_t)m * k, seed, W.data(), &e) == 0, "random weights: %s", e.msg ? e.msg : "");
    std::vector<float> x((size_t)T * k);
    for (int t = 0; t < T; t++)
        for (gb_u32 i = 0; i < k; i++)
            x[(size_t)t * k + i] = rnd() * (float)std::pow(10.0, scale * (t % 5 - 2));
    const std::vector<float> y = run<typename FM::D, T, U, NW, KS, S, TL>(W, x, m, k);
    std::vector<double> r(m), a(m);
    double worst = 0;
    int bad = 0;
    for (int t = 0; t < T; t++) {
        EXPECT(gb_ref_gemv(f, W.data(), W.size(), m, k, x.data() + (size_t)t * k, r.data(), a.data(), &e) == 0, "ref");
        for (gb_u32 i = 0; i < m; i++) {
            const double yv = y[(size_t)t * m + i], rel = std::fabs(yv - r[i]) / (a[i] > 0 ? a[i] : 1);
            if (!(rel <= 1e-4)) bad++;
            if (!(rel <= worst)) worst = rel;
        }
    }
    if (report) {
        EXPECT(bad == 0, "%s T=%d U=%d NW=%d KS=%d S=%d TL=%d m=%u k=%u scale=%d: %d row(s) beyond 1e-4 of sum|w x|, worst %g",
               FM::name(), T, U, NW, KS, S, TL, m, k, scale, bad, worst);
        printf("%s %s T=%d U=%d NW=%d KS=%d S=%d TL=%d m=%u k=%u scale=%d: worst %.3g of sum|w x|\n", bad ? "not ok" : "ok  ",
               FM::name(), T, U, NW, KS, S, TL, m, k, scale, worst);
    }
    gb_err_clear(&e);
    return bad;
}

static double weight(const char* fmt, const std::vector<unsigned char>& W, size_t i)
{
    gb_u32 h = W[2 * i] | (W[2 * i + 1] << 8);
    return strcmp(fmt, "bf16") == 0 ? (double)gb_as_float(h << 16) : (double)gb_half_to_float(h);
}

// x rows one-hot at columns (c0 + t) % k: y[t][i] = W[i][(c0 + t) % k] within
// 2^-16 of it (the weight times x's 1, hi = 1 and lo = 0), so a wrong k slot or
// a wrong token column shows.
template <class FM, int T, int U, int NW, int KS, int S = 0, int TL = 1>
static void one_hot_case(gb_u32 m, gb_u32 k)
{
    const gb_format* f = gb_format_find(FM::name());
    std::vector<unsigned char> W((size_t)m * k * 2);
    gb_err e = {0};
    EXPECT(gb_ref_random_blocks(f, (uint64_t)m * k, 77, W.data(), &e) == 0, "random weights");
    int bad = 0;
    for (gb_u32 c0 = 0; c0 < k; c0 += T) {
        std::vector<float> x((size_t)T * k, 0.0f);
        for (int t = 0; t < T; t++) x[(size_t)t * k + (c0 + t) % k] = 1.0f;
        const std::vector<float> y = run<typename FM::D, T, U, NW, KS, S, TL>(W, x, m, k);
        for (int t = 0; t < T; t++)
            for (gb_u32 i = 0; i < m; i++) {
                const double want = weight(FM::name(), W, (size_t)i * k + (c0 + t) % k), got = y[(size_t)t * m + i];
                if (!(std::fabs(got - want) <= std::ldexp(std::fabs(want), -16))) bad++;
            }
    }
    EXPECT(bad == 0, "%s one-hot T=%d U=%d NW=%d KS=%d S=%d TL=%d m=%u k=%u: %d outputs off", FM::name(), T, U, NW, KS,
           S, TL, m, k, bad);
    printf("%s %s one-hot T=%d U=%d NW=%d KS=%d S=%d TL=%d m=%u k=%u: every column of every row\n",
           bad ? "not ok" : "ok  ", FM::name(), T, U, NW, KS, S, TL, m, k);
    gb_err_clear(&e);
}

template <class FM>
static void cases(int seed)
{
    // one-hot: both B layouts (T <= 4, T > 4), a partial last chunk (k = 264), slices
    one_hot_case<FM, 1, 1, 1, 1>(16, 64);
    one_hot_case<FM, 3, 2, 2, 1>(37, 264);
    one_hot_case<FM, 4, 1, 1, 3>(16, 200);
    one_hot_case<FM, 5, 2, 1, 2>(23, 136);
    one_hot_case<FM, 8, 4, 2, 1>(40, 256);
    // random: every T, ragged m, k % 32 != 0, U larger than a slice's chunks
    random_case<FM, 1, 4, 4, 2>(100, 1024, seed + 1, 0);
    random_case<FM, 2, 2, 2, 1>(37, 520, seed + 2, 0);
    random_case<FM, 3, 8, 1, 3>(29, 776, seed + 3, 0);
    random_case<FM, 4, 4, 4, 2>(129, 2048, seed + 4, 0);
    random_case<FM, 5, 1, 2, 4>(70, 264, seed + 5, 0);
    random_case<FM, 6, 4, 1, 1>(16, 5120, seed + 6, 0);
    random_case<FM, 7, 2, 8, 2>(130, 1032, seed + 7, 0);
    random_case<FM, 8, 4, 4, 2>(200, 2048, seed + 8, 0);
    random_case<FM, 8, 8, 2, 8>(33, 4104, seed + 9, 0);
    // rows of x 1e-12 .. 1e12 apart in one launch
    random_case<FM, 4, 4, 2, 2>(48, 1024, seed + 10, 6);
    random_case<FM, 8, 4, 2, 2>(48, 1024, seed + 11, 6);
    // the staged loop: partial last stage (k = 264, 1032), stages past a short slice, every B layout
    one_hot_case<FM, 3, 2, 1, 1, 2>(16, 264);
    one_hot_case<FM, 8, 1, 1, 2, 3>(23, 136);
    random_case<FM, 1, 4, 1, 4, 2>(37, 1032, seed + 12, 0);
    random_case<FM, 4, 2, 2, 3, 3>(40, 776, seed + 13, 0);
    random_case<FM, 5, 4, 1, 2, 2>(16, 5120, seed + 14, 0);
    random_case<FM, 8, 2, 1, 4, 4>(29, 1032, seed + 15, 6);
    // several row tiles per warp (TILES): direct and staged, ragged m inside a warp's tiles
    one_hot_case<FM, 5, 2, 1, 2, 3, 2>(40, 136);
    one_hot_case<FM, 2, 1, 2, 1, 0, 3>(70, 72);
    random_case<FM, 8, 2, 1, 2, 3, 2>(45, 1032, seed + 16, 0);
    random_case<FM, 3, 4, 2, 1, 0, 2>(100, 776, seed + 17, 0);
    random_case<FM, 4, 1, 1, 3, 2, 4>(70, 264, seed + 18, 6);
}

int main()
{
    LanePool lanes;
    pool = &lanes;
    // the split: x - hi - lo within 2^-18 |x| (random values over 60 binades)
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        float v[8];
        for (int j = 0; j < 8; j++) v[j] = rnd() * std::ldexp(1.0f, (int)(rnd() * 30));
        uint4 x0, x1, hi, lo;
        memcpy(&x0, v, 16);
        memcpy(&x1, v + 4, 16);
        gb_tc_split_x(x0, x1, hi, lo);
        const gb_u32 h[4] = {hi.x, hi.y, hi.z, hi.w}, l[4] = {lo.x, lo.y, lo.z, lo.w};
        for (int j = 0; j < 8; j++) {
            const double s = (double)dec_bf16((h[j / 2] >> (16 * (j & 1))) & 0xFFFF) +
                             (double)dec_bf16((l[j / 2] >> (16 * (j & 1))) & 0xFFFF);
            if (!(std::fabs(s - v[j]) <= std::ldexp(std::fabs((double)v[j]), -18))) bad++;
        }
    }
    EXPECT(bad == 0, "%d x values split into hi + lo beyond 2^-18", bad);
    // the f16 weight split is exact, for every f16 that is not inf or NaN
    bad = 0;
    for (gb_u32 h = 0; h < 65536; h += 2) {
        if (((h >> 10) & 31) == 31 || (((h + 1) >> 10) & 31) == 31) continue;
        const gb_u32 w = h | ((h + 1) << 16);
        uint4 p[2];
        GbTcF16::split(make_uint4(w, w, w, w), p);
        for (int j = 0; j < 2; j++) {
            const double want = gb_half_to_float(j ? h + 1 : h);
            const double got = (double)dec_bf16((p[0].x >> (16 * j)) & 0xFFFF) + (double)dec_bf16((p[1].x >> (16 * j)) & 0xFFFF);
            if (got != want) bad++;
        }
    }
    EXPECT(bad == 0, "%d f16 values not split exactly into bf16 hi + lo", bad);
    cases<FBF16>(100);
    cases<FF16>(200);
    // the checks see a wrong fragment layout: with b0 and b1 swapped in the model, rows go wrong
    swap_b = true;
    const int wrong = random_case<FBF16, 8, 4, 2, 1>(32, 256, 5, 0, false);
    swap_b = false;
    EXPECT(wrong > 0, "a model with b0 and b1 swapped passed the check");
    printf("%s swapped B registers: %d row(s) caught\n", wrong > 0 ? "ok  " : "not ok", wrong);
    printf("gemv_tc_emulate: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
