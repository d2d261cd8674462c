// Host emulation of the CUDA SwiGLU kernels (kernels/cuda/swiglu_common.cuh),
// compiled with nvcc as host code by tests/cli/test_swiglu_emulate.sh: the
// kernels' own warp loop, row setup, stores and elementwise thread run on the
// CPU for every lane of every warp, with a host model of mma.m16n8k16 built
// from the PTX ISA's fragment tables (not from the kernels' helpers), and the
// results are held to the FP64 reference with the experiment's bound
// (lib/gpubench/swiglu_check.lua). Every load is checked to fall inside its
// buffer. A model with two A registers swapped must fail: the check can see a
// fragment mapping that disagrees with the hardware's.
// The staged loop (sw_staged_dot) runs on the model of emu_staged.cuh, into
// stages poisoned with bf16 NaNs.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <vector>

#include "swiglu_common.cuh"

static int failures = 0, checks = 0;
#include "emu_staged.cuh" // after failures, which its lanes add to

#define EXPECT(cond, ...)                                   \
    do {                                                    \
        checks++;                                           \
        if (!(cond)) {                                      \
            if (failures < 20) {                            \
                printf("FAIL %s:%d: ", __FILE__, __LINE__); \
                printf(__VA_ARGS__);                        \
                printf("\n");                               \
            }                                               \
            failures++;                                     \
        }                                                   \
    } while (0)

// ------------------------------------------------------------ data

static sw_u64 rng_state = 88172645463325252ull;
static double uniform()
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (rng_state >> 11) * (1.0 / 9007199254740992.0);
}
static unsigned short random_bf16() // about normal(0, 1): a sum of 4 uniforms, scaled
{
    const double v = (uniform() + uniform() + uniform() + uniform() - 2.0) * 1.7320508;
    return (unsigned short)sw_bf16((float)v);
}
static double bf(unsigned short h) { return sw_as_float((sw_u32)h << 16); }

// ------------------------------------------------------------ the mma model

// A 16x16 (row), B 16x8 (col), C/D 16x8 fp32, per the PTX ISA ("Matrix
// Fragments for mma.m16n8k16 with floating point type"): lane (g = lane >> 2,
// t = lane & 3) holds a0..a7 at rows g (a0,a1,a4,a5) and g+8 (a2,a3,a6,a7),
// columns 2t + (i & 1), +8 for a4..a7; b0..b3 at rows 2t + (i & 1), +8 for
// b2,b3, column g; c0..c3 at rows g (c0,c1) and g+8, columns 2t + (i & 1).
// swap: a deliberately wrong model, a2a3 and a4a5 exchanged.
static void mma_model(float c[32][4], const sw_u32 a[32][4], const sw_u32 b[32][2], bool swap)
{
    double A[16][16], B[16][8];
    for (int lane = 0; lane < 32; lane++) {
        const int g = lane >> 2, t = lane & 3;
        const sw_u32 r1 = swap ? a[lane][2] : a[lane][1], r2 = swap ? a[lane][1] : a[lane][2];
        A[g][2 * t] = sw_lo(a[lane][0]), A[g][2 * t + 1] = sw_hi(a[lane][0]);
        A[g + 8][2 * t] = sw_lo(r1), A[g + 8][2 * t + 1] = sw_hi(r1);
        A[g][2 * t + 8] = sw_lo(r2), A[g][2 * t + 9] = sw_hi(r2);
        A[g + 8][2 * t + 8] = sw_lo(a[lane][3]), A[g + 8][2 * t + 9] = sw_hi(a[lane][3]);
        B[2 * t][g] = sw_lo(b[lane][0]), B[2 * t + 1][g] = sw_hi(b[lane][0]);
        B[2 * t + 8][g] = sw_lo(b[lane][1]), B[2 * t + 9][g] = sw_hi(b[lane][1]);
    }
    for (int lane = 0; lane < 32; lane++) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 4; i++) {
            const int row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
            double d = 0;
            for (int k = 0; k < 16; k++) d += A[row][k] * B[k][col];
            c[lane][i] = (float)((double)c[lane][i] + d);
        }
    }
}

// The context a lane's loop runs with: loads by memcpy, checked to lie in
// their buffer; each mma's operands recorded per tile, in call order.
struct EmuCx {
    const unsigned char *w, *x;
    size_t wbytes, xbytes;
    std::vector<Rec>* rec; // one list per tile
    uint4 load(const unsigned char* p, const unsigned char* base, size_t bytes, const char* what)
    {
        uint4 v = make_uint4(0, 0, 0, 0);
        const bool in = p >= base && (size_t)(p - base) + 16 <= bytes && (size_t)(p - base) % 16 == 0;
        EXPECT(in, "%s load at byte %lld of %zu", what, (long long)(p - base), bytes);
        if (in) memcpy(&v, p, 16);
        return v;
    }
    uint4 ld_w(const unsigned char* p) { return load(p, w, wbytes, "weight"); }
    uint4 ld_x(const unsigned char* p) { return load(p, x, xbytes, "x"); }
    void mma(float (&)[4], int tile, const sw_u32 (&a)[4], const sw_u32 (&b)[2])
    {
        Rec r;
        memcpy(r.a, a, sizeof r.a);
        memcpy(r.b, b, sizeof r.b);
        rec[tile].push_back(r);
    }
};

// The recorded mmas of a warp, in call order on the model, into acc (every
// lane must have made the expected calls: the mma needs a converged warp).
template <int NTILE>
static void replay(std::vector<Rec> (&rec)[32][NTILE], size_t expected, float acc[32][NTILE][4], bool swap, sw_u32 k,
                   sw_u32 kl)
{
    for (int j = 0; j < NTILE; j++) {
        const size_t calls = rec[0][j].size();
        EXPECT(calls == expected, "tile %d: %zu mma calls for %u of k = %u, expected %zu", j, calls, kl, k, expected);
        float c[32][4] = {};
        for (size_t i = 0; i < calls; i++) {
            sw_u32 a[32][4], b[32][2];
            for (int lane = 0; lane < 32; lane++) {
                EXPECT(rec[lane][j].size() == calls, "lane %d made %zu mma calls, lane 0 %zu", lane,
                       rec[lane][j].size(), calls);
                const Rec r = i < rec[lane][j].size() ? rec[lane][j][i] : Rec{};
                memcpy(a[lane], r.a, sizeof a[lane]);
                memcpy(b[lane], r.b, sizeof b[lane]);
            }
            mma_model(c, a, b, swap);
        }
        for (int lane = 0; lane < 32; lane++)
            for (int i = 0; i < 4; i++) acc[lane][j][i] = c[lane][i];
    }
}

// One warp: every lane's loop recorded, then the mmas in order on the model.
// k0, kl: the slice of k the warp walks (the fused kernel's KSPLIT; all of k by default).
template <int NT, int NTILE, int U>
static void warp_dot(const std::vector<unsigned short>& W, const std::vector<unsigned short>& X, sw_u32 k,
                     sw_u64 ra[32][NTILE], sw_u64 rb[32][NTILE], float acc[32][NTILE][4], bool swap,
                     sw_u32 k0 = 0, sw_u32 kl = ~0u)
{
    if (kl == ~0u) kl = k;
    std::vector<Rec> rec[32][NTILE];
    for (int lane = 0; lane < 32; lane++) {
        EmuCx cx{(const unsigned char*)W.data(), (const unsigned char*)X.data(), W.size() * 2, X.size() * 2,
                 rec[lane]};
        sw_u64 a[NTILE], b[NTILE];
        float c[NTILE][4];
        for (int j = 0; j < NTILE; j++) a[j] = ra[lane][j], b[j] = rb[lane][j];
        sw_warp_dot_range<NT, NTILE, U>(cx, (sw_u32)lane, cx.w + 2ull * k0, cx.x + 2ull * k0, k, kl, a, b, c);
    }
    replay<NTILE>(rec, 2 * ((kl / 8 + 3) / 4), acc, swap, k, kl);
}

// ------------------------------------------------------------ the staged loop


// Every warp and slice of the staged fused kernel over [2N, K] in one job:
// each lane thread walks the warps (first output 8 NTILE w) and their KS
// slices in order, one stage buffer per warp and slice as the kernel's
// stage[wid]. The mmas are recorded, for the caller to run on the model.
template <int NTILE>
struct StagedWarp {
    std::vector<Rec> rec[32][NTILE];
};
template <int NT, int NTILE, int CH, int KS, int S>
static std::vector<StagedWarp<NTILE>> staged_run(LanePool& pool, const std::vector<unsigned short>& W,
                                                 const std::vector<unsigned short>& X, sw_u32 n, sw_u32 k, sw_u32 warps)
{
    // SW_STAGE_BYTES * STAGES per warp, 16-byte aligned, poisoned with bf16 NaNs
    const size_t sbytes = (size_t)SW_STAGE_BYTES(NTILE, CH) * S;
    std::vector<uint4> sbuf(sbytes / 16 * warps * KS, make_uint4(~0u, ~0u, ~0u, ~0u));
    std::vector<StagedWarp<NTILE>> out(warps * KS);
    static StagedCx cxs[32];
    for (int l = 0; l < 32; l++)
        cxs[l] = StagedCx{(const unsigned char*)W.data(), (const unsigned char*)X.data(), W.size() * 2, X.size() * 2,
                          nullptr, sbytes, nullptr, &pool.warp};
    pool.run([&](int l) {
        StagedCx& cx = cxs[l];
        for (sw_u32 w = 0; w < warps; w++)
            for (int s = 0; s < KS; s++) {
                sw_u32 k0, kl;
                sw_slice(k, KS, (sw_u32)s, k0, kl);
                cx.stage = (unsigned char*)sbuf.data() + (w * KS + s) * sbytes;
                cx.rec = out[w * KS + s].rec[l];
                float acc[NTILE][4] = {}; // the mma is recorded: replay fills the caller's
                sw_staged_dot<NT, NTILE, CH, S>(cx, (sw_u32)l, w * 8 * NTILE, n, cx.w + 2ull * k0, cx.x + 2ull * k0,
                                                k, kl, acc, cx.stage);
                // trailing empty groups may stay pending (harmless); a copy may not
                size_t pending = cx.open.size();
                for (const auto& grp : cx.groups) pending += grp.size();
                cx.check(pending == 0, "lane %d ended with %zu copies not landed", l, pending);
                cx.open.clear(), cx.groups.clear();
                pool.warp.arrive(-1 - (long)(w * KS + s), "a warp's end"); // every lane made the same syncwarps
            }
    });
    for (int l = 0; l < 32; l++) checks += cxs[l].checks;
    return out;
}

// ------------------------------------------------------------ the reference

static double silu(double v) { return v / (1.0 + std::exp(-v)); }

struct Ref {
    std::vector<double> r, s; // [NT, 2N]
};
static Ref reference(const std::vector<unsigned short>& W, const std::vector<unsigned short>& X, sw_u32 n,
                     sw_u32 k, int nt)
{
    Ref R;
    R.r.resize((size_t)nt * 2 * n), R.s.resize((size_t)nt * 2 * n);
    for (int t = 0; t < nt; t++)
        for (sw_u32 row = 0; row < 2 * n; row++) {
            double d = 0, q = 0;
            for (sw_u32 c = 0; c < k; c++) {
                const double p = bf(W[(size_t)row * k + c]) * bf(X[(size_t)t * k + c]);
                d += p, q += p * p;
            }
            R.r[(size_t)t * 2 * n + row] = d, R.s[(size_t)t * 2 * n + row] = std::sqrt(q);
        }
    return R;
}

// The bound of lib/gpubench/swiglu_check.lua on output (t, j).
static bool within(double y, const Ref& R, sw_u32 n, int t, sw_u32 j, bool rounds_h, double* bound)
{
    const double U = std::ldexp(1.0, -8), hu = rounds_h ? U : 0.0;
    const size_t gi = (size_t)t * 2 * n + j, ui = gi + n;
    const double g = R.r[gi], u = R.r[ui];
    const double eg = std::ldexp(1.0, -7) * (1 + hu) * R.s[gi] + hu * std::fabs(g);
    const double eu = std::ldexp(1.0, -7) * (1 + hu) * R.s[ui] + hu * std::fabs(u);
    const double r = silu(g) * u;
    *bound = (U + std::ldexp(1.0, -20)) * std::fabs(r) + 1.1 * std::fabs(u) * eg + std::fabs(silu(g)) * eu +
             1.1 * eg * eu + std::ldexp(1.0, -100) * (1 + std::fabs(u));
    return std::isfinite(y) && std::fabs(y - r) <= *bound;
}

// ------------------------------------------------------------ the cases

// KS: the fused kernel's KSPLIT, slices of k summed in slice order as it does.
// S: its STAGES, 0 the direct loop, >= 2 the staged one (U its CH), on pool.
static LanePool* pool;
template <int NT, int NTILE, int U, int KS = 1, int S = 0>
static int fused_case(sw_u32 n, sw_u32 k, bool swap)
{
    std::vector<unsigned short> W((size_t)2 * n * k), X((size_t)NT * k), Y((size_t)NT * n, 0xFFFF);
    for (auto& v : W) v = random_bf16();
    for (auto& v : X) v = random_bf16();
    const sw_u32 warps = (n + 8 * NTILE - 1) / (8 * NTILE);
    std::vector<StagedWarp<NTILE>> staged;
    if constexpr (S >= 2) staged = staged_run<NT, NTILE, U, KS, S>(*pool, W, X, n, k, warps);
    for (sw_u32 w = 0; w < warps; w++) {
        const sw_u32 n0 = w * 8 * NTILE;
        static sw_u64 ra[32][NTILE], rb[32][NTILE];
        static float acc[32][NTILE][4];
        static float part[32][NTILE][4];
        sw_u32 covered = 0;
        for (int s = 0; s < KS; s++) {
            sw_u32 k0, kl;
            sw_slice(k, KS, (sw_u32)s, k0, kl);
            EXPECT(k0 == covered || kl == 0, "slice %d of %d starts at %u, the one before ended at %u (k = %u)", s, KS, k0,
                   covered, k);
            EXPECT((kl == 0 || k0 % 32 == 0) && kl % 8 == 0, "slice %d of %d: k0 = %u, kl = %u", s, KS, k0, kl);
            covered = k0 + kl;
            for (int lane = 0; lane < 32; lane++)
                sw_fused_setup<NTILE>(lane, n0, n, k, ra[lane], rb[lane], s == 0 ? acc[lane] : part[lane]);
            if (S >= 2) // an empty slice too: the kernel runs it (no stage, wait_group 0)
                replay<NTILE>(staged[w * KS + s].rec, 2 * U * ((kl + 32 * U - 1) / (32 * U)), s == 0 ? acc : part,
                              swap, k, kl);
            else if (kl > 0)
                warp_dot<NT, NTILE, U>(W, X, k, ra, rb, s == 0 ? acc : part, swap, k0, kl);
            if (s > 0)
                for (int lane = 0; lane < 32; lane++)
                    for (int j = 0; j < NTILE; j++)
                        for (int i = 0; i < 4; i++) acc[lane][j][i] += part[lane][j][i];
        }
        EXPECT(covered == k, "KS=%d slices cover %u of k = %u", KS, covered, k);
        for (int lane = 0; lane < 32; lane++) sw_fused_store<NT, NTILE>(lane, n0, n, acc[lane], Y.data());
    }
    const Ref R = reference(W, X, n, k, NT);
    int bad = 0;
    for (int t = 0; t < NT; t++)
        for (sw_u32 j = 0; j < n; j++) {
            double bound;
            const double y = bf(Y[(size_t)t * n + j]);
            if (!within(y, R, n, t, j, false, &bound)) {
                if (!swap)
                    EXPECT(false, "fused NT=%d TILES=%d U=%d KS=%d S=%d n=%u k=%u: y[%d, %u] = %g, ref %g (bound %g)",
                           NT, NTILE, U, KS, S, n, k, t, j, y,
                           silu(R.r[(size_t)t * 2 * n + j]) * R.r[(size_t)t * 2 * n + n + j], bound);
                bad++;
            }
        }
    return bad;
}

// The chain: the GEMV over [2N, K] into h, then the elementwise threads
// (grid from lib/gpubench/swiglu_cuda.lua, and a 1-block grid that loops).
template <int NT, int NTILE, int U>
static void chain_case(sw_u32 n, sw_u32 k)
{
    std::vector<unsigned short> W((size_t)2 * n * k), X((size_t)NT * k);
    // 16-byte aligned, as device buffers are: the vector path loads uint4
    std::vector<uint4> hbuf(((size_t)NT * 2 * n * 2 + 15) / 16 + 1), ybuf(((size_t)NT * n * 2 + 15) / 16 + 1);
    unsigned short* H = (unsigned short*)hbuf.data();
    for (auto& v : W) v = random_bf16();
    for (auto& v : X) v = random_bf16();
    for (size_t i = 0; i < (size_t)NT * 2 * n; i++) H[i] = 0xFFFF;
    const sw_u32 rows = 2 * n, warps = (rows + 16 * NTILE - 1) / (16 * NTILE);
    for (sw_u32 w = 0; w < warps; w++) {
        const sw_u32 r0 = w * 16 * NTILE;
        static sw_u64 ra[32][NTILE], rb[32][NTILE];
        static float acc[32][NTILE][4];
        for (int lane = 0; lane < 32; lane++) sw_gemv_setup<NTILE>(lane, r0, rows, k, ra[lane], rb[lane], acc[lane]);
        warp_dot<NT, NTILE, U>(W, X, k, ra, rb, acc, false);
        for (int lane = 0; lane < 32; lane++) sw_gemv_store<NT, NTILE>(lane, r0, rows, acc[lane], H);
    }
    const Ref R = reference(W, X, n, k, NT);
    for (int t = 0; t < NT; t++)
        for (sw_u32 r = 0; r < rows; r++) {
            const double h = bf(H[(size_t)t * rows + r]), d = R.r[(size_t)t * rows + r];
            const double bound = std::ldexp(1.0, -8) * std::fabs(d) + std::ldexp(1.0, -7) * R.s[(size_t)t * rows + r];
            EXPECT(std::isfinite(h) && std::fabs(h - d) <= bound, "gemv NT=%d TILES=%d U=%d n=%u k=%u: h[%d, %u] = %g, ref %g",
                   NT, NTILE, U, n, k, t, r, h, d);
        }
    const sw_u64 total = (sw_u64)NT * n, per = n % 8 == 0 ? 8 : 1;
    const sw_u64 grids[2] = {(total + per * 256 - 1) / (per * 256), 1};
    for (sw_u64 grid : grids) {
        unsigned short* Y = (unsigned short*)ybuf.data();
        for (size_t i = 0; i < total; i++) Y[i] = 0xFFFF;
        for (sw_u64 i = 0; i < grid * 256; i++) sw_mul_thread(i, grid * 256, H, Y, n, NT);
        for (int t = 0; t < NT; t++)
            for (sw_u32 j = 0; j < n; j++) {
                double bound;
                const double y = bf(Y[(size_t)t * n + j]);
                EXPECT(within(y, R, n, t, j, true, &bound), "chain NT=%d n=%u k=%u grid %llu: y[%d, %u] = %g (bound %g)",
                       NT, n, k, (unsigned long long)grid, t, j, y, bound);
            }
    }
}

template <int NT, int NTILE, int U>
static void shapes()
{
    const sw_u32 ns[] = {1, 5, 8, 37, 130};
    const sw_u32 ks[] = {8, 40, 136, 1000, 1024};
    for (sw_u32 n : ns)
        for (sw_u32 k : ks) {
            fused_case<NT, NTILE, U>(n, k, false);
            chain_case<NT, NTILE, U>(n, k);
        }
}

// The staged loop (TILES, UNROLL = its CH, KSPLIT, STAGES) at one token count.
template <int NT, int NTILE, int CH, int KS, int S>
static void staged_shapes()
{
    for (sw_u32 n : {1u, 5u, 37u, 130u})
        for (sw_u32 k : {8u, 40u, 136u, 1000u, 1024u}) fused_case<NT, NTILE, CH, KS, S>(n, k, false);
}
template <int NT>
static void staged_geometries()
{
    staged_shapes<NT, 1, 4, 4, 2>(), staged_shapes<NT, 1, 2, 4, 3>(), staged_shapes<NT, 1, 2, 8, 2>();
    staged_shapes<NT, 1, 1, 1, 8>(), staged_shapes<NT, 2, 2, 3, 2>(), staged_shapes<NT, 1, 4, 2, 4>();
}

int main()
{
    LanePool lanes;
    pool = &lanes;
    // the staged loop, its lanes as fibers: the shape rules' three
    // geometries, UNROLL = 1 (unswizzled 64-byte rows), 2 tiles, deep pipelines
    staged_geometries<1>(), staged_geometries<3>(), staged_geometries<8>();
    // the other token counts, one geometry each (each instantiation costs
    // the host compiler about 0.6 s, more than its run)
    staged_shapes<2, 1, 4, 4, 2>(), staged_shapes<4, 1, 2, 4, 3>(), staged_shapes<5, 1, 2, 8, 2>();
    staged_shapes<6, 2, 2, 3, 2>(), staged_shapes<7, 1, 1, 1, 8>();
    const int sbad = fused_case<8, 1, 2, 4, 3>(37, 1024, true);
    EXPECT(sbad > 37 * 8 / 2, "staged: the swapped model left only %d of %d outputs outside the bound", sbad, 37 * 8);

    // the default geometry (TILES 1, UNROLL 8) at every token count
    shapes<1, 1, 8>(), shapes<2, 1, 8>(), shapes<3, 1, 8>(), shapes<4, 1, 8>();
    shapes<5, 1, 8>(), shapes<6, 1, 8>(), shapes<7, 1, 8>(), shapes<8, 1, 8>();
    // other tiles and unrolls
    shapes<8, 2, 4>(), shapes<3, 3, 3>(), shapes<1, 1, 1>(), shapes<6, 4, 2>();
    // k slices (KSPLIT): ragged k, k shorter than the slices (empty ones), one chunk each
    for (sw_u32 n : {5u, 37u})
        for (sw_u32 k : {8u, 40u, 136u, 1000u, 1024u, 5120u}) {
            fused_case<8, 1, 8, 2>(n, k, false);
            fused_case<1, 1, 8, 4>(n, k, false);
            fused_case<3, 2, 4, 3>(n, k, false);
            fused_case<8, 1, 8, 8>(n, k, false);
        }
    // a wrong fragment model must show: many outputs outside the bound
    const int bad = fused_case<8, 1, 8>(37, 1024, true);
    EXPECT(bad > 37 * 8 / 2, "the swapped model left only %d of %d outputs outside the bound", bad, 37 * 8);
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
