// Host emulation of the multi-token CUDA GEMV kernels (GEMV_TOKENS = T > 1:
// y[T, m] = x[T, k] . W^T), run by tests/cli/test_gemv_tokens_emulate.sh. As
// gemv_emulate.cu (whose contexts and runners, emu_host.cuh, it reuses), the
// kernels' own __host__ __device__ code runs on the CPU for every lane of
// every warp: the scalar path's gb_quant_warp with T x rows (XQ integer dot,
// with x through shared memory and from global memory, split-K, row parts;
// the f32 magic decode), the dense gb_dense_lane, and the tensor-core path's
// gb_mma_block_tokens with the CPU model of mma.sync. Checks, at T = 2, 3, 5
// and 8 (one and two B fragments of four x rows, full and partial):
//   - every x row against the FP64 reference at the 1e-4 row tolerance, the
//     rows' magnitudes 2^-10 .. 2^25 apart (each row keeps its own scale);
//   - one-hot x, a different column per x row: y equals the reference
//     dequantization bit for bit (the rows land in the right places of y);
//   - the scalar and dense paths: x row t's results equal a T = 1 run on x
//     row t bit for bit (the same arithmetic, only shared weight reads).
// Build: as test_gemv_emulate.sh, with this file.
#include <sys/mman.h>
#include <algorithm>
#include <unistd.h>
#include <cassert>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// One valid geometry for the kernels' own entries (never run here); the
// runners below instantiate their own templates with T > 1.
#define MMA 1
#define XQ 0
#define ROWS 16
#define WARPS 1
#define STAGES 2
#define KSPLIT 1
#define PARTS 1
#define GEMV_TOKENS 1
#include "gemv_q4_0.cu"
#include "gemv_q8_0.cu"
#include "gemv_q4_k.cu"
#include "gemv_q5_k.cu"
#include "gemv_q6_k.cu"
#undef ROWS
#undef WARPS
#define ROWS 4
#define WARPS 2
#define UNROLL 2
#include "gemv_f32.cu"
#include "gemv_f16.cu"
#include "gemv_bf16.cu"

extern "C" {
#include "formats.h"
#include "ref_blocks.h"
#include "ref_dequant.h"
#include "ref_gemv.h"
#include "random.h"
}

extern "C" int gb_fail_at(gb_err* e, const char* file, int line, const char* fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ref error: %s [%s:%d]\n", buf, file, line);
    if (e) { free(e->msg); e->msg = NULL; }
    return -1;
}
extern "C" void gb_err_clear(gb_err* e) { if (e) { free(e->msg); e->msg = NULL; } }

static int failures = 0;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#include "emu_host.cuh"

// ------------------------------------------------------------ runners: x is T rows of k, y T rows of m

// One warp of gb_gemv_quant with T x rows: sums[t * R + r].
template <class F, int R, int S, int KS, int P, bool XSM, bool B, int T>
static void emu_quant_warp_t(const unsigned char* W, size_t wbuf_bytes, const float* x, gb_u32 m, gb_u32 k,
                             gb_u32 row0, gb_u32 slice, unsigned char* sp, float* sums)
{
    typedef unsigned char SlotRow[GbTile<F>::SLOT];
    const size_t slots_bytes = (size_t)S * (R / P) * GbTile<F>::SLOT;
    const size_t xs_bytes = XSM ? (size_t)GbXSlots<S, P, T>::N * T * GB_XSLOT : 0;
    for (int r = 0; r < T * R; r++) sums[r] = 0.0f;
    for (gb_u32 lane = 0; lane < 32; lane++) {
        memset(sp, 0xFF, slots_bytes + xs_bytes + 64); // poison: stale bytes must not matter
        HostCtx ctx; ctx.wlo = W; ctx.whi = W + wbuf_bytes; ctx.slo = sp; ctx.shi = sp + slots_bytes + xs_bytes;
        ctx.xlo = reinterpret_cast<const unsigned char*>(x), ctx.xhi = ctx.xlo + 4ull * T * k;
        float acc[T * R];
        for (int r = 0; r < T * R; r++) acc[r] = 0.0f;
        std::vector<float> prep((size_t)(R / P) * GbTile<F>::PREP_ROW + 4, NAN); // poisoned
        gb_quant_warp<F, R, S, KS, P, XSM, B, T>(ctx, lane, W, x, m, k, row0, slice, (SlotRow(*)[R / P])sp, prep.data(),
                                                 XSM ? (unsigned char(*)[GB_XSLOT])(sp + slots_bytes) : nullptr, acc);
        for (int r = 0; r < T * R; r++) sums[r] += acc[r];
    }
}

// Every block of gb_gemv_quant with T x rows, split-K through the kernel's
// gb_ksplit_put / gb_ksplit_sum on x row t's part of the reduction array
// (poisoned with NaN per block), as the kernel lays it out.
template <class F, int R, int S, int NW, int KS, int P, int T, bool B = false>
static void emu_quant_t(const unsigned char* W, size_t wbuf_bytes, const float* x, gb_u32 m, gb_u32 k, float* y)
{
    constexpr bool XSM = GbQuantSmem<F, R, S, NW, KS, P, B, T>::XSM;
    const size_t bytes = (size_t)S * (R / P) * GbTile<F>::SLOT + (size_t)GbXSlots<S, P, T>::N * T * GB_XSLOT;
    std::vector<unsigned char> mem(bytes + 64 + 16);
    unsigned char* sp = mem.data();
    while ((uintptr_t)sp & 15) sp++;
    const gb_u32 blocks = (m + R * NW - 1) / (R * NW);
    std::vector<float> red((size_t)T * NW * KS * R);
    for (gb_u32 blk = 0; blk < blocks; blk++) {
        std::fill(red.begin(), red.end(), NAN);
        for (gb_u32 warp = 0; warp < NW * KS; warp++) {
            gb_u32 group, slice;
            gb_ksplit_warp<KS>(warp, group, slice);
            const gb_u32 row0 = (blk * NW + group) * R;
            if (row0 >= m) continue;
            float sums[T * R];
            emu_quant_warp_t<F, R, S, KS, P, XSM, B, T>(W, wbuf_bytes, x, m, k, row0, slice, sp, sums);
            for (int t = 0; t < T; t++) {
                if constexpr (KS == 1) {
                    for (int r = 0; r < R; r++) if (row0 + r < m) y[(size_t)t * m + row0 + r] = sums[t * R + r];
                } else {
                    for (gb_u32 lane = 0; lane < 32; lane++)
                        gb_ksplit_put<R, KS>(red.data() + (size_t)t * NW * KS * R, group, slice, lane,
                                             lane < (gb_u32)R ? sums[t * R + lane] : NAN);
                }
            }
        }
        if constexpr (KS > 1) {
            for (gb_u32 warp = 0; warp < NW * KS; warp++) {
                gb_u32 group, slice;
                gb_ksplit_warp<KS>(warp, group, slice);
                const gb_u32 row0 = (blk * NW + group) * R;
                if (row0 >= m || slice != 0) continue;
                for (int t = 0; t < T; t++)
                    for (gb_u32 lane = 0; lane < (gb_u32)R; lane++)
                        if (row0 + lane < m)
                            y[(size_t)t * m + row0 + lane] = gb_ksplit_sum<R, KS>(red.data() + (size_t)t * NW * KS * R, group, lane);
            }
        }
    }
}

template <class D, int R, int U, int T>
static void emu_dense_t(const unsigned char* W, size_t, const float* x, gb_u32 m, gb_u32 k, float* y)
{
    for (gb_u32 row0 = 0; row0 < m; row0 += R) {
        float sums[T * R] = {0};
        for (gb_u32 lane = 0; lane < 32; lane++) {
            float acc[T * R];
            for (int r = 0; r < T * R; r++) acc[r] = 0.0f;
            gb_dense_lane<D, R, U, T>(lane, W, x, m, k, row0, acc);
            for (int r = 0; r < T * R; r++) sums[r] += acc[r];
        }
        for (int t = 0; t < T; t++)
            for (int r = 0; r < R; r++) if (row0 + r < m) y[(size_t)t * m + row0 + r] = sums[t * R + r];
    }
}

template <class F, int NW, int S, int T>
static void emu_mma_t(const unsigned char* W, size_t wbuf_bytes, const float* x, gb_u32 m, gb_u32 k, float* y)
{
    typedef GbMmaShared<F, NW, S, T> SM;
    std::vector<unsigned char> mem(sizeof(SM) + 16);
    unsigned char* p = mem.data();
    while ((uintptr_t)p & 15) p++;
    SM* sm = reinterpret_cast<SM*>(p);
    const gb_u32 blocks = (m + 16 * NW - 1) / (16 * NW);
    for (gb_u32 blk = 0; blk < blocks; blk++) {
        memset(p, 0xFF, sizeof(SM)); // poison: stale bytes must not matter
        HostMmaCtx<NW> ctx;
        ctx.wlo = W, ctx.whi = W + wbuf_bytes;
        ctx.slo = &sm->slots[0][0][0][0], ctx.shi = ctx.slo + sizeof sm->slots;
        gb_mma_block_tokens<F, NW, S, T>(ctx, W, x, y, m, k, blk, *sm);
    }
}

// ------------------------------------------------------------ variants

struct TVariant {
    const char* fmt;
    const char* label;
    int T;
    runner fn;  // T x rows
    runner one; // the same kernel at T = 1 (for the bit-for-bit comparison), or null
};

static gb_u64 seed_counter = 5000;
static double worst_seen = 0;

// T rows of normal x, row t scaled by 2^(5t - 10): every row of y against the
// FP64 reference; with `one`, each row also against a T = 1 run bit for bit.
static void check_rows_t(const TVariant& v, gb_u32 m, gb_u32 k)
{
    const gb_format* f = gb_format_find(v.fmt);
    uint64_t wbytes = 0; gb_err e = {0};
    if (gb_format_matrix_bytes(f, m, k, &wbytes, &e)) { CHECK(0, "bad shape"); return; }
    const size_t nb = buffer_bytes(wbytes);
    const int T = v.T;
    Guarded wb(nb), xb(4ull * T * k), x1(4ull * k);
    gb_ref_random_blocks(f, (uint64_t)m * (k / f->qk), seed_counter++, wb.p, &e);
    memset(wb.p + wbytes, 0xFF, nb - wbytes);
    float* x = (float*)xb.p;
    for (int t = 0; t < T; t++) {
        gb_rng rng; gb_rng_seed(&rng, seed_counter++);
        gb_random_fill(x + (size_t)t * k, k, GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, &rng);
        const float sc = ldexpf(1.0f, 5 * t - 10);
        for (gb_u32 i = 0; i < k; i++) x[(size_t)t * k + i] *= sc;
    }
    std::vector<float> y((size_t)T * m, NAN), y1(m);
    v.fn(wb.p, nb, x, m, k, y.data());
    std::vector<double> yref(m), absdot(m);
    for (int t = 0; t < T; t++) {
        gb_ref_gemv(f, wb.p, wbytes, m, k, x + (size_t)t * k, yref.data(), absdot.data(), &e);
        gb_row_check rc;
        const float* yt = y.data() + (size_t)t * m;
        gb_ref_check_rows(yt, yref.data(), absdot.data(), m, 1e-4, &rc);
        CHECK(rc.failures == 0, "%s %s T=%d m=%u k=%u x row %d: %llu rows off, worst row %llu rel %.3g (y=%.9g ref=%.9g)",
              v.fmt, v.label, T, m, k, t, (unsigned long long)rc.failures, (unsigned long long)rc.worst_row, rc.worst_rel,
              yt[rc.worst_row], yref[rc.worst_row]);
        if (rc.worst_rel > worst_seen) worst_seen = rc.worst_rel;
        if (v.one) {
            memcpy(x1.p, x + (size_t)t * k, 4ull * k);
            v.one(wb.p, nb, (const float*)x1.p, m, k, y1.data());
            int bad = 0;
            for (gb_u32 i = 0; i < m; i++) bad += memcmp(&yt[i], &y1[i], 4) != 0;
            CHECK(bad == 0, "%s %s T=%d m=%u k=%u x row %d: %d rows differ from the T=1 run (row 0: %.9g vs %.9g)",
                  v.fmt, v.label, T, m, k, t, bad, yt[0], y1[0]);
        }
    }
}

// One-hot x rows, row t hot at column (j + t * 37) % k, for every j: each row
// of y is a column of the reference dequantization, bit for bit.
static void check_exact_t(const TVariant& v, gb_u32 m, gb_u32 k)
{
    const gb_format* f = gb_format_find(v.fmt);
    uint64_t wbytes = 0; gb_err e = {0};
    gb_format_matrix_bytes(f, m, k, &wbytes, &e);
    const size_t nb = buffer_bytes(wbytes);
    const int T = v.T;
    Guarded wb(nb), xb(4ull * T * k);
    gb_ref_random_blocks(f, (uint64_t)m * (k / f->qk), seed_counter++, wb.p, &e);
    memset(wb.p + wbytes, 0xFF, nb - wbytes);
    std::vector<float> deq((size_t)m * k), y((size_t)T * m);
    for (gb_u32 i = 0; i < m; i++) gb_ref_dequant_row(f, wb.p, m, k, i, &deq[(size_t)i * k], &e);
    float* x = (float*)xb.p;
    int bad = 0;
    for (gb_u32 j = 0; j < k; j++) {
        memset(x, 0, 4ull * T * k);
        for (int t = 0; t < T; t++) x[(size_t)t * k + (j + 37u * t) % k] = 1.0f;
        v.fn(wb.p, nb, x, m, k, y.data());
        for (int t = 0; t < T; t++)
            for (gb_u32 i = 0; i < m; i++) {
                const float want = deq[(size_t)i * k + (j + 37u * t) % k], got = y[(size_t)t * m + i];
                if (!(got == want) && bad++ < 5)
                    fprintf(stderr, "FAIL exact %s %s T=%d m=%u k=%u x row %d row %u col %u: got %.9g want %.9g\n", v.fmt,
                            v.label, T, m, k, t, i, (j + 37u * t) % k, got, want);
            }
    }
    if (bad) failures++;
}

#define QT(F, fmt, R, S, NW, KS, P, T) \
    TVariant{fmt, #F " R=" #R " S=" #S " W=" #NW " KSPLIT=" #KS " PARTS=" #P, T, emu_quant_t<F, R, S, NW, KS, P, T>, emu_quant_t<F, R, S, NW, KS, P, 1>}
#define MT(F, fmt, NW, S, T) TVariant{fmt, #F " NW=" #NW " S=" #S, T, emu_mma_t<F, NW, S, T>, nullptr}
#define DT(D, fmt, R, U, T) TVariant{fmt, #D " R=" #R " U=" #U, T, emu_dense_t<D, R, U, T>, emu_dense_t<D, R, U, 1>}

int main()
{
    const TVariant scalar[] = {
        // the defaults' geometry (x from global memory at T = 3: its slots do not fit)
        QT(GbQ4_0I, "q4_0", 14, 2, 1, 1, 2, 3), QT(GbQ8_0I, "q8_0", 16, 2, 1, 1, 4, 3), QT(GbQ4KI, "q4_k", 14, 2, 1, 1, 2, 3),
        QT(GbQ5KI, "q5_k", 14, 2, 1, 1, 2, 3), QT(GbQ6KI, "q6_k", 14, 2, 1, 1, 2, 3),
        // x through shared memory (slots of T tiles), with parts and deeper rings
        QT(GbQ4_0I, "q4_0", 4, 2, 1, 1, 1, 3), QT(GbQ6KI, "q6_k", 4, 3, 1, 1, 2, 2), QT(GbQ4KI, "q4_k", 4, 2, 1, 1, 2, 2),
        QT(GbQ8_0I, "q8_0", 2, 3, 1, 1, 1, 3),
        // split-K (T partial arrays), the magic decode, T = 8
        QT(GbQ4KI, "q4_k", 8, 1, 1, 3, 1, 3), QT(GbQ8_0I, "q8_0", 4, 2, 2, 2, 2, 3), QT(GbQ5KI, "q5_k", 4, 2, 1, 2, 1, 8),
        QT(GbQ4_0, "q4_0", 8, 2, 1, 1, 2, 3), QT(GbQ6K, "q6_k", 4, 2, 2, 1, 1, 3), QT(GbQ4K, "q4_k", 8, 2, 1, 2, 1, 3),
        QT(GbQ5K, "q5_k", 4, 2, 1, 1, 1, 3), QT(GbQ8_0, "q8_0", 4, 3, 1, 1, 1, 3), QT(GbQ6KI, "q6_k", 14, 2, 1, 1, 2, 8),
        DT(GbF32, "f32", 4, 2, 3), DT(GbF16, "f16", 4, 2, 3), DT(GbBF16, "bf16", 4, 2, 3), DT(GbF16, "f16", 3, 3, 8),
        DT(GbF32, "f32", 1, 4, 2),
    };
    const TVariant mma[] = {
        MT(GbQ4_0M, "q4_0", 1, 2, 3), MT(GbQ8_0M, "q8_0", 2, 2, 3), MT(GbQ4KM, "q4_k", 1, 2, 3),
        MT(GbQ5KM, "q5_k", 1, 3, 3), MT(GbQ6KM, "q6_k", 2, 2, 3),
        MT(GbQ4_0M, "q4_0", 1, 2, 8), MT(GbQ6KM, "q6_k", 1, 3, 5), MT(GbQ4KM, "q4_k", 2, 2, 2), MT(GbQ8_0M, "q8_0", 1, 2, 8),
        MT(GbQ5KM, "q5_k", 1, 2, 8),
    };
    printf("scalar and dense paths: one-hot x rows\n");
    for (const TVariant& v : scalar) {
        const gb_format* f = gb_format_find(v.fmt);
        check_exact_t(v, 5, f->qk == 256 ? 512 : f->qk == 32 ? 96 : 40);
    }
    printf("scalar and dense paths: x rows vs FP64 and vs T=1 runs\n");
    for (const TVariant& v : scalar) {
        const gb_format* f = gb_format_find(v.fmt);
        const gb_u32 ks256[] = {256, 1280, 3072, 5120}, ks32[] = {32, 288, 1056, 3104}, ks1[] = {8, 264, 1000, 2816};
        const gb_u32* ks = f->qk == 256 ? ks256 : f->qk == 32 ? ks32 : ks1;
        for (gb_u32 m : {1u, 7u, 37u}) for (int i = 0; i < 4; i++) check_rows_t(v, m, ks[i]);
    }
    printf("scalar and dense paths: worst relative row error %.3g\n", worst_seen);
    worst_seen = 0;
    printf("tensor-core path (SUBN=%d): one-hot x rows\n", SUBN);
    for (const TVariant& v : mma) check_exact_t(v, 17, gb_format_find(v.fmt)->qk == 256 ? 512 : 96);
    printf("tensor-core path: x rows vs FP64\n");
    for (const TVariant& v : mma) {
        const gb_format* f = gb_format_find(v.fmt);
        const gb_u32 ks256[] = {256, 1280, 4096}, ks32[] = {32, 288, 1056};
        const gb_u32* ks = f->qk == 256 ? ks256 : ks32;
        for (gb_u32 m : {1u, 19u, 37u}) for (int i = 0; i < 3; i++) check_rows_t(v, m, ks[i]);
    }
    printf("tensor-core path: worst relative row error %.3g (round-toward-zero model)\n", worst_seen);
    worst_seen = 0;
    mma_round_nearest = true;
    for (const TVariant& v : mma) check_rows_t(v, 37, 1024);
    mma_round_nearest = false;
    printf("tensor-core path: worst relative row error %.3g (one-rounding model)\n", worst_seen);
    printf("%s: %d failures\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
