// Host emulation of the int8 tensor-core GEMVs, q4_k and q5_k (kernels/cuda/
// gemv_q4k_q5k_i8.cuh), q6_k (gemv_q6k_i8.cuh), q8_0 and q4_0 (gemv_b32_i8.cuh), against the FP64
// reference: the kernel's own block code
// runs on the CPU for every thread of every block (a phase for all threads
// before the next, as the barriers enforce), with a CPU model of
// mma.sync.m16n8k32.row.col.s32.s8.s8.s32 from the PTX ISA's fragment tables
// (groupID g = lane >> 2, threadID_in_group t = lane % 4):
//   A (16 x 32, four .b32 of four s8): reg 0 row g, reg 1 row g + 8, cols 4t + i;
//     reg 2 row g, reg 3 row g + 8, cols 16 + 4t + i (i = byte 0..3)
//   B (32 x 8, two .b32 of four s8): reg 0 rows (k) 4t + i, reg 1 rows 16 + 4t + i; col g
//   C (16 x 8 s32): c0, c1 row g, cols 2t, 2t + 1; c2, c3 row g + 8 (the same
//   layout for the C input of mma_s8c, q4_0's offset)
// and of m16n8k16 (q6_k): A two .b32, reg 0 row g, reg 1 row g + 8, cols 4t + i;
//   B one .b32, rows 4t + i, col g; C as above.
// Checks: random weights and x, every T from 1 to 8, ragged m, several
// block sizes, against ref.gemv per row of x (|y - r| <= 1e-4 sum |w x|);
// one-hot x rows, which pin every column's k slot and every row of x's mma
// column; every load inside the weights and aligned; the digits of every x'
// in range. Every format at every T from 1 to 8.
// Run by tests/cli/test_gemv_i8_emulate.sh.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gemv_q4k_q5k_i8.cuh"
#include "gemv_b32_i8.cuh"
#include "gemv_q6k_i8.cuh"

extern "C" {
#include "formats.h"
#include "ref_blocks.h"
#include "ref_dequant.h"
#include "ref_gemv.h"
}
#include "emu_report.cuh"
#include "emu_rand.cuh"


static int s8(gb_u32 w, int i) { return (int)(signed char)((w >> (8 * i)) & 0xFF); }

// One warp's mma: C = A B + C0 (C0 zero: mma_s8)
static void mma_s8_model(int (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2], const int (*C0)[4] = nullptr)
{
    int a[16][32], b[32][8];
    for (int lane = 0; lane < 32; lane++) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 4; i++) {
            a[g][4 * t + i] = s8(A[lane][0], i);
            a[g + 8][4 * t + i] = s8(A[lane][1], i);
            a[g][16 + 4 * t + i] = s8(A[lane][2], i);
            a[g + 8][16 + 4 * t + i] = s8(A[lane][3], i);
            b[4 * t + i][g] = s8(B[lane][0], i);
            b[16 + 4 * t + i][g] = s8(B[lane][1], i);
        }
    }
    for (int lane = 0; lane < 32; lane++) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 4; i++) {
            const int r = g + 8 * (i >> 1), n = 2 * t + (i & 1);
            long long s = C0 ? C0[lane][i] : 0;
            for (int kk = 0; kk < 32; kk++) s += (long long)a[r][kk] * b[kk][n];
            C[lane][i] = (int)s;
        }
    }
}

template <int NWARPS>
struct HostI8Ctx {
    enum { NT = 32 * NWARPS };
    const unsigned char *wlo, *whi;
    const signed char *slo, *shi; // the block's shared memory
    const signed char *xlo, *xhi; // the prepass's digits (XP = 1), else empty
    gb_u32 tid(int q) const { return (gb_u32)q; }
    void barrier() {}
    void wait_inputs() {}
    // a load of a V at p, which must lie inside [lo, hi) and be aligned to its size from lo
    template <class V>
    static V checked(const unsigned char* p, const unsigned char* lo, const unsigned char* hi, const char* what)
    {
        EXPECT(p >= lo && p + sizeof(V) <= hi && ((uintptr_t)(p - lo) % sizeof(V)) == 0, "%s of %zu bytes at %td", what,
               sizeof(V), p - lo);
        V v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    void in_w(const unsigned char* p, int n)
    {
        EXPECT(p >= wlo && p + n <= whi && ((uintptr_t)(p - wlo) % n) == 0, "weight load of %d bytes at %td", n, p - wlo);
    }
    uint4 ld16(const unsigned char* p) { return checked<uint4>(p, wlo, whi, "weight load"); }
    uint2 ld8(const unsigned char* p) { return checked<uint2>(p, wlo, whi, "weight load"); }
    gb_u32 ld4(const unsigned char* p) { return checked<gb_u32>(p, wlo, whi, "weight load"); }
    gb_u32 ld2(const unsigned char* p)
    {
        in_w(p, 2);
        return (gb_u32)p[0] | (gb_u32)p[1] << 8;
    }
    uint2 ld8s(const signed char* p)
    {
        const bool in_s = p >= slo && p + 8 <= shi, in_x = p >= xlo && p + 8 <= xhi;
        EXPECT((in_s || in_x) && ((uintptr_t)p % 8) == 0, "digit load at %td past shared memory and the digits",
               p - slo);
        uint2 v;
        memcpy(&v, p, 8);
        return v;
    }
    // the staged weights (STG > 0): copies land at once (each phase runs for every thread before the next)
    const unsigned char *rlo = nullptr, *rhi = nullptr; // the block's rings
    void cp16(int, unsigned char* dst, const unsigned char* src, bool pred)
    {
        if (!pred) return;
        in_w(src, 16);
        EXPECT(dst >= rlo && dst + 16 <= rhi && ((uintptr_t)(dst - rlo) % 16) == 0, "stage copy at %td past the ring",
               dst - rlo);
        memcpy(dst, src, 16);
    }
    void commit(int) {}
    template <int N>
    void cp_wait()
    {
    }
    void warp_sync() {}
    uint4 lds16(const unsigned char* p) { return checked<uint4>(p, rlo, rhi, "stage load"); }
    uint2 lds8(const unsigned char* p) { return checked<uint2>(p, rlo, rhi, "stage load"); }
    gb_u32 lds4(const unsigned char* p) { return checked<gb_u32>(p, rlo, rhi, "stage load"); }
    uint4 ldx16(const uint4* q) // the prepass's fragment order (XP = 2)
    {
        const signed char* p = reinterpret_cast<const signed char*>(q);
        EXPECT(p >= xlo && p + 16 <= xhi && ((uintptr_t)p % 16) == 0, "fragment load at %td past the workspace", p - xlo);
        uint4 v;
        memcpy(&v, p, 16);
        return v;
    }
    void mma_s8(int (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2])
    {
        for (int w = 0; w < NWARPS; w++) mma_s8_model(C + 32 * w, A + 32 * w, B + 32 * w);
    }
    // m16n8k16 is the k32 model with k slots 16 .. 31 zero (A registers 2, 3 and B register 1)
    void mma_s8k16(int (*C)[4], const gb_u32 (*A)[2], const gb_u32* B)
    {
        gb_u32 A4[32][4], B2[32][2];
        for (int w = 0; w < NWARPS; w++) {
            for (int lane = 0; lane < 32; lane++) {
                A4[lane][0] = A[32 * w + lane][0], A4[lane][1] = A[32 * w + lane][1], A4[lane][2] = A4[lane][3] = 0;
                B2[lane][0] = B[32 * w + lane], B2[lane][1] = 0;
            }
            mma_s8_model(C + 32 * w, A4, B2);
        }
    }
    void mma_s8c(int (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2], const int (*C0)[4])
    {
        for (int w = 0; w < NWARPS; w++) mma_s8_model(C + 32 * w, A + 32 * w, B + 32 * w, C0 + 32 * w);
    }
};

// The formats: the kernel's block code (F) and the reference's name.
struct FQ4K {
    typedef GbI8Q4K F;
    static const char* name() { return "q4_k"; }
};
struct FQ5K {
    typedef GbI8Q5K F;
    static const char* name() { return "q5_k"; }
};
struct FQ6K {
    typedef GbI8Q6K F;
    static const char* name() { return "q6_k"; }
};
struct FQ8_0 {
    typedef GbI8B32<GbI8Q8_0> F;
    static const char* name() { return "q8_0"; }
};
struct FQ4_0 {
    typedef GbI8B32<GbI8Q4_0> F;
    static const char* name() { return "q4_0"; }
};

// y (T rows of m) for x (T rows of k) through the kernel's block code, with
// KS slices of k and prefetch PF; XP = 1: x quantized first by the prepass's
// code (gemv_i8_xprep.cu) into a workspace of gb_i8_xq_chunks chunks whose
// pad is left stale, then read by the blocks from there.
template <class FM, int NW, int T, int KS = 1, int PF = 0, int XP = 0, int STG = 0>
static std::vector<float> run(const std::vector<unsigned char>& W, const std::vector<float>& x, gb_u32 m, gb_u32 k)
{
    typedef typename FM::F F;
    typedef typename GbI8XSource<XP, T, typename F::S>::type D; // the workspace's chunks (XP = 1, 2)
    std::vector<float> y((size_t)T * m, NAN);
    const gb_u32 blocks = (m + 16 * NW - 1) / (16 * NW);
    auto* sm = new GbI8Block<T, NW, KS, typename F::S, XP>;
    HostI8Ctx<NW * KS> ctx;
    ctx.wlo = W.data(), ctx.whi = W.data() + W.size();
    ctx.slo = reinterpret_cast<const signed char*>(sm), ctx.shi = ctx.slo + sizeof *sm;
    ctx.xlo = ctx.xhi = nullptr;
    std::vector<D> xq;
    const void* xin = x.data();
    if (XP) {
        xq.resize(gb_i8_xq_chunks(k, KS));
        memset((void*)xq.data(), 0x5A, xq.size() * sizeof(D)); // the pad is never written
        if constexpr (XP == 2)
            for (gb_u32 u = 0; u < k / 256 * 32 * T; u++) gb_i8_xfrag_unit<T, F::SX, F::PERM>(x.data(), k, u, xq.data());
        else
            for (gb_u32 u = 0; u < k / 256 * 8 * T; u++) gb_i8_xprep_unit<T, F::SX, F::PERM>(x.data(), k, u, xq.data());
        ctx.xlo = reinterpret_cast<const signed char*>(xq.data()), ctx.xhi = ctx.xlo + xq.size() * sizeof(D);
        xin = xq.data();
    }
    auto* ring = new GbI8Ring<F, NW * KS, STG>;
    ctx.rlo = reinterpret_cast<const unsigned char*>(ring), ctx.rhi = ctx.rlo + sizeof *ring;
    for (gb_u32 b = 0; b < blocks; b++) {
        memset((void*)sm, 0x5A, sizeof *sm); // stale shared memory
        memset((void*)ring, 0x5A, sizeof *ring);
        if constexpr (STG > 0)
            gb_i8_block<F, NW, KS, PF, T, HostI8Ctx<NW * KS>, XP, STG>(ctx, W.data(), xin, y.data(), m, k, b, *sm, ring);
        else
            gb_i8_block<F, NW, KS, PF, T, HostI8Ctx<NW * KS>, XP>(ctx, W.data(), xin, y.data(), m, k, b, *sm); // what every entry runs
    }
    delete ring;
    delete sm;
    return y;
}

template <class FM, int NW, int T, int KS = 1, int PF = 0, int XP = 0, int STG = 0>
static void random_case(gb_u32 m, gb_u32 k, int seed, bool outliers)
{
    const gb_format* f = gb_format_find(FM::name());
    const uint64_t nb = (uint64_t)m * k / f->qk;
    std::vector<unsigned char> W(nb * f->block_bytes);
    gb_err e = {0};
    EXPECT(gb_ref_random_blocks(f, nb, seed, W.data(), &e) == 0, "random blocks: %s", e.msg ? e.msg : "");
    std::vector<float> x((size_t)T * k);
    for (auto& v : x) v = rnd();
    if (outliers)
        for (size_t i = 0; i < x.size(); i += 97) x[i] *= 20.0f; // a large value in most sub-blocks
    const std::vector<float> y = run<FM, NW, T, KS, PF, XP, STG>(W, x, m, k);
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
    EXPECT(bad == 0, "%s NW=%d KS=%d PF=%d XP=%d STG=%d T=%d m=%u k=%u%s: %d row(s) beyond 1e-4 of sum|w x|, worst %g",
           FM::name(), NW, KS, PF, XP, STG, T, m, k, outliers ? " (outliers)" : "", bad, worst);
    printf("%s %s NW=%d KS=%d PF=%d XP=%d STG=%d T=%d m=%u k=%u%s: worst %.3g of sum|w x|\n", bad ? "not ok" : "ok  ",
           FM::name(), NW, KS, PF, XP, STG, T, m, k, outliers ? " outliers" : "", worst);
    gb_err_clear(&e);
}

// x rows one-hot at columns c_t (value 1): y[t][i] = W[i][c_t] dequantized, to
// 2e-6 of the row's largest value, so a wrong k slot or a wrong x row in an
// mma column shows.
template <class FM, int NW, int T, int KS = 1, int PF = 0, int XP = 0, int STG = 0>
static void one_hot_case(gb_u32 m, gb_u32 k)
{
    const gb_format* f = gb_format_find(FM::name());
    const uint64_t nb = (uint64_t)m * k / f->qk;
    std::vector<unsigned char> W(nb * f->block_bytes);
    gb_err e = {0};
    EXPECT(gb_ref_random_blocks(f, nb, 77, W.data(), &e) == 0, "random blocks");
    std::vector<float> deq((size_t)m * k);
    EXPECT(gb_ref_dequantize(f, W.data(), W.size(), deq.data(), &e) == 0, "dequantize: %s",
           e.msg ? e.msg : "");
    // the scale of each row's values: d sc q and dmin m cancel where an
    // output is near zero, so its rounding is relative to them, not to it
    std::vector<double> rowmax(m, 0.0);
    for (gb_u32 i = 0; i < m; i++)
        for (gb_u32 j = 0; j < k; j++) rowmax[i] = std::fmax(rowmax[i], std::fabs(deq[(size_t)i * k + j]));
    int bad = 0;
    for (gb_u32 c0 = 0; c0 < k; c0 += T) {
        std::vector<float> x((size_t)T * k, 0.0f);
        for (int t = 0; t < T; t++) x[(size_t)t * k + (c0 + t) % k] = 1.0f;
        const std::vector<float> y = run<FM, NW, T, KS, PF, XP, STG>(W, x, m, k);
        for (int t = 0; t < T; t++)
            for (gb_u32 i = 0; i < m; i++) {
                const double want = deq[(size_t)i * k + (c0 + t) % k], got = y[(size_t)t * m + i];
                if (!(std::fabs(got - want) <= 2e-6 * (std::fabs(want) + rowmax[i]))) bad++;
            }
    }
    EXPECT(bad == 0, "%s one-hot NW=%d KS=%d PF=%d XP=%d STG=%d T=%d m=%u k=%u: %d outputs off", FM::name(), NW, KS, PF,
           XP, STG, T, m, k, bad);
    printf("%s %s one-hot NW=%d KS=%d PF=%d XP=%d STG=%d T=%d m=%u k=%u: every column of every row\n",
           bad ? "not ok" : "ok  ", FM::name(), NW, KS, PF, XP, STG, T, m, k);
    gb_err_clear(&e);
}

// q8_0 and q4_0: one-hot x at several T and geometries; random x at every T
// from 1 to 8 (ragged m, k slices with missing chunks, prefetch on and off),
// and with outliers.
template <class FM>
static void b32_cases(int seed)
{
    one_hot_case<FM, 1, 1>(16, 256);
    one_hot_case<FM, 2, 8>(40, 512);
    one_hot_case<FM, 4, 3>(23, 256);
    one_hot_case<FM, 2, 8, 4, 1>(40, 1280);
    one_hot_case<FM, 1, 5, 3, 0>(23, 512);
    random_case<FM, 1, 1>(16, 256, seed + 1, false);
    random_case<FM, 4, 1, 2, 0>(100, 1024, seed + 2, false);
    random_case<FM, 2, 2>(37, 512, seed + 3, false);
    random_case<FM, 4, 2, 2, 1>(70, 1280, seed + 4, true);
    random_case<FM, 4, 3>(64, 768, seed + 5, false);
    random_case<FM, 1, 4>(5, 256, seed + 6, false);
    random_case<FM, 4, 4, 2, 0>(129, 2560, seed + 7, false);
    random_case<FM, 4, 5>(130, 512, seed + 8, false);
    random_case<FM, 8, 6>(129, 256, seed + 9, false);
    random_case<FM, 2, 7, 8, 1>(33, 768, seed + 10, false);
    random_case<FM, 2, 7>(48, 1280, seed + 11, false);
    random_case<FM, 4, 8>(200, 2048, seed + 12, false);
    random_case<FM, 4, 8, 2, 0>(96, 1024, seed + 13, true);
    random_case<FM, 4, 8, 4, 1>(200, 2048, seed + 14, false);
    random_case<FM, 1, 8, 3, 0>(19, 1280, seed + 15, true);
}

// q4_k and q5_k: one-hot x at several T and geometries; random x at every T
// from 1 to 8 (ragged m, k slices with missing super-blocks, prefetch on and
// off), and with outliers.
template <class FM>
static void kquant_cases(int seed)
{
    one_hot_case<FM, 1, 1>(16, 256);
    one_hot_case<FM, 2, 8>(40, 512);
    one_hot_case<FM, 4, 3>(23, 256);
    random_case<FM, 1, 1>(16, 256, seed + 1, false);
    random_case<FM, 4, 1>(100, 1024, seed + 2, false);
    random_case<FM, 2, 2>(37, 512, seed + 3, false);
    random_case<FM, 4, 3>(64, 768, seed + 4, false);
    random_case<FM, 1, 4>(5, 256, seed + 5, false);
    random_case<FM, 4, 5>(130, 512, seed + 6, false);
    random_case<FM, 8, 6>(129, 256, seed + 7, false);
    random_case<FM, 2, 7>(48, 1280, seed + 8, false);
    random_case<FM, 4, 8>(200, 2048, seed + 9, false);
    random_case<FM, 4, 8>(96, 1024, seed + 10, true);
    // k slices: steps with missing super-blocks (k / 256 not a multiple of KS), prefetch on and off
    one_hot_case<FM, 2, 8, 4, 1>(40, 1280);
    one_hot_case<FM, 1, 3, 3, 0>(23, 512);
    random_case<FM, 4, 8, 4, 1>(200, 2048, seed + 11, false);
    random_case<FM, 4, 8, 4, 0>(70, 1280, seed + 12, true);
    random_case<FM, 2, 5, 8, 1>(33, 768, seed + 13, false);
    random_case<FM, 1, 1, 2, 1>(16, 256, seed + 14, false);
    random_case<FM, 4, 2, 3, 0>(129, 2560, seed + 15, false);
}

// XP = 1, 2 (x quantized once per call by the prepass, read from global
// memory in the shared layout or the fragment order): one-hot x, and random x
// with slices whose last step misses chunks (the pad read by warps without a
// chunk), prefetch on and off, outliers, every T.
template <class FM, int XP>
static void xprep_cases(int seed)
{
    one_hot_case<FM, 2, 8, 1, 0, XP>(40, 512);
    one_hot_case<FM, 1, 3, 3, 1, XP>(23, 1280);
    random_case<FM, 1, 1, 1, 0, XP>(16, 256, seed + 1, false);
    random_case<FM, 4, 2, 3, 0, XP>(129, 2560, seed + 2, false);
    random_case<FM, 2, 3, 2, 1, XP>(37, 768, seed + 3, true);
    random_case<FM, 8, 4, 1, 0, XP>(130, 512, seed + 4, false);
    random_case<FM, 4, 5, 4, 1, XP>(70, 1280, seed + 5, false);
    random_case<FM, 1, 6, 8, 0, XP>(19, 768, seed + 6, true);
    random_case<FM, 2, 7, 2, 0, XP>(48, 1280, seed + 7, false);
    random_case<FM, 4, 8, 2, 0, XP>(200, 2048, seed + 8, false);
    random_case<FM, 4, 8, 4, 1, XP>(96, 1280, seed + 9, true);
    random_case<FM, 7, 8, 4, 0, XP>(130, 1280, seed + 10, false); // 7 row warps: 112 rows a block
}

// STG > 0 (the weights staged through a ring per warp, XP = 2; q4_k, q5_k, q8_0, q4_0):
// one-hot x, random x with ragged m, slices whose last step misses chunks,
// fewer steps than stages, every T
template <class FM>
static void staged_cases(int seed)
{
    one_hot_case<FM, 2, 8, 1, 0, 2, 2>(40, 512);
    one_hot_case<FM, 1, 3, 3, 0, 2, 3>(23, 1280);
    random_case<FM, 1, 1, 1, 0, 2, 2>(16, 256, seed + 1, false);
    random_case<FM, 4, 2, 3, 0, 2, 2>(129, 2560, seed + 2, false);
    random_case<FM, 2, 3, 2, 0, 2, 4>(37, 768, seed + 3, true);
    random_case<FM, 2, 4, 4, 0, 2, 3>(70, 1280, seed + 4, false);
    random_case<FM, 1, 5, 8, 0, 2, 2>(19, 768, seed + 5, true);
    random_case<FM, 2, 6, 2, 0, 2, 3>(48, 1280, seed + 6, false);
    random_case<FM, 4, 7, 2, 0, 2, 2>(200, 2048, seed + 7, false);
    random_case<FM, 2, 8, 2, 0, 2, 4>(96, 5120, seed + 8, true);
}

int main()
{
    // digits: q = 256 h + l with both in [-128, 127] over the whole range
    int bad = 0;
    for (int q = -GB_I8_QMAX; q <= GB_I8_QMAX; q++) {
        int h, l;
        gb_i8_digits(q, h, l);
        if (256 * h + l != q || h < -128 || h > 127 || l < -128 || l > 127) bad++;
    }
    EXPECT(bad == 0, "%d values of q have digits out of range", bad);
    // the packed digits are gb_i8_digits' (four q at a time, mixed signs)
    bad = 0;
    for (int q = -GB_I8_QMAX; q <= GB_I8_QMAX; q += 7) {
        const int qv[4] = { q, -q, q / 3, GB_I8_QMAX - (q & 1023) };
        gb_u32 hw, lw;
        gb_i8_pack(qv, hw, lw);
        for (int b = 0; b < 4; b++) {
            int h, l;
            gb_i8_digits(qv[b], h, l);
            if (s8(hw, b) != h || s8(lw, b) != l) bad++;
        }
    }
    EXPECT(bad == 0, "%d packed digits differ from gb_i8_digits", bad);
    kquant_cases<FQ4K>(0);
    kquant_cases<FQ5K>(50);
    kquant_cases<FQ6K>(300); // k = 1280 and 768: 5 and 3 super-blocks a row, rows starting at 2 mod 4
    b32_cases<FQ8_0>(100);
    b32_cases<FQ4_0>(200);
    xprep_cases<FQ4K, 1>(400);
    xprep_cases<FQ4K, 2>(425);
    xprep_cases<FQ5K, 1>(450);
    xprep_cases<FQ5K, 2>(475);
    xprep_cases<FQ6K, 1>(500);
    xprep_cases<FQ6K, 2>(525);
    xprep_cases<FQ8_0, 1>(550);
    xprep_cases<FQ8_0, 2>(575);
    xprep_cases<FQ4_0, 1>(600);
    xprep_cases<FQ4_0, 2>(625);
    staged_cases<FQ4K>(700);
    staged_cases<FQ5K>(750);
    staged_cases<FQ8_0>(800);
    staged_cases<FQ4_0>(850);
    printf("gemv_i8_emulate: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
