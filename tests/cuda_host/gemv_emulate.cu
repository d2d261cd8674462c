// Host emulation of the CUDA GEMV kernels (kernels/cuda/gemv_*.cu), run by
// tests/cli/test_gemv_emulate.sh: compiled with nvcc as host code, it runs the
// kernels' own staging, tile loop, prep step and decode code (the __host__
// __device__ templates of gemv_common.cuh, with a context that copies with
// memcpy) for every lane of every warp, and compares with the project's FP64
// reference (host/ref_*.c): bit-exact dequantization with one-hot x, and random
// GEMVs at tolerance 1e-4 over many shapes and geometries, the scalar path's
// split-K (KSPLIT) included: a block's warps in sequence, then the kernel's
// shared-memory reduction (gb_ksplit_put / gb_ksplit_sum). Weight and x
// buffers end at a page boundary followed by an inaccessible page, so any read
// past them faults. What it cannot check (cp.async group accounting, barriers,
// shuffles, cvt.f32.f16) is covered on a GPU by tests/lua/test_gemv_cuda.lua.
//
// The tensor-core path (gemv_mma.cuh, MMA=1) runs with a CPU model of
// mma.sync m16n8k16 built from the PTX ISA fragment tables (mma_model below),
// a whole block of threads at a time, in two accumulation models.
//
// Build (from the repository root; SUBN=0 builds the HSUB2-decode variant):
//   for c in formats ref_blocks ref_dequant ref_gemv random; do gcc -O2 -c -Ihost host/$c.c; done
//   nvcc -O2 -Xcompiler -fno-strict-aliasing -std=c++17 -arch=sm_90 -DSUBN=1 -Ihost -Ikernels/cuda \
//     tests/cuda_host/gemv_emulate.cu *.o
// (-fno-strict-aliasing: the kernels read shared-memory bytes through wider
// types, which the GPU compiler allows and GCC's optimizer does not.)
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

// The kernels take their geometry from defines (lib/gpubench/gemv_cuda.lua
// holds the defaults). The entries compiled here get one valid geometry; the
// emulation runs its own template instances (QV, MV, DV below). SUBN comes
// from the command line.
#define MMA 1
#define XQ 0
#define ROWS 16
#define WARPS 1
#define STAGES 2
#define KSPLIT 1
#define PARTS 1
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


// The reference code reports errors through gb_fail_at (host/core/backend.c, which
// would pull in the backends): a minimal version that prints.
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

// A buffer of n bytes whose end is a page boundary followed by an inaccessible page.
struct Guarded {
    unsigned char* base = nullptr; size_t maplen = 0; unsigned char* p = nullptr; size_t n = 0;
    explicit Guarded(size_t n_) : n(n_) {
        long pg = sysconf(_SC_PAGESIZE);
        size_t data_pages = (n + pg - 1) / pg + 1;
        maplen = (data_pages + 1) * pg;
        base = (unsigned char*)mmap(nullptr, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert(base != MAP_FAILED);
        unsigned char* guard = base + data_pages * pg;
        mprotect(guard, pg, PROT_NONE);
        mprotect(base, pg, PROT_NONE); // also a guard before
        p = guard - n;
    }
    ~Guarded() { munmap(base, maplen); }
};

struct HostCtx {
    enum { LANES = 32 };
    gb_u32 lane = 0;
    const unsigned char *wlo, *whi;     // readable weight range
    const unsigned char *xlo = nullptr, *xhi = nullptr; // readable x range (x tiles, XQ=1)
    const unsigned char *slo, *shi;     // slots array (and the x slots after it)
    int copies = 0;
    void copy16(unsigned char* dst, const unsigned char* src, bool pred) {
        if (!pred) return;
        const bool in_w = src >= wlo && src + 16 <= whi, in_x = xlo && src >= xlo && src + 16 <= xhi;
        if (!in_w && !in_x) { failures++; fprintf(stderr, "FAIL copy src out of the weight and x buffers (%td)\n", src - wlo); return; }
        if (dst < slo || dst + 16 > shi) { failures++; fprintf(stderr, "FAIL copy dst out of slots (%td of %td)\n", dst - slo, shi - slo); return; }
        if (((uintptr_t)src & 15) || ((uintptr_t)(dst - slo) & 15)) { failures++; fprintf(stderr, "FAIL misaligned copy\n"); return; }
        memcpy(dst, src, 16); copies++;
    }
    void copy16_l1(unsigned char* dst, const unsigned char* src, bool pred) { copy16(dst, src, pred); }
    void commit() {}
    template <int N> void wait() {}
    void sync() {}
    // BULK: a bulk copy lands at once; what the mbarrier would enforce is
    // checked instead: a slot's expected bytes equal the bytes copied to it
    // before each wait, and the waits on a slot alternate parity from 0.
    enum { MAX_SLOTS = 16 };
    gb_u32 expected[MAX_SLOTS] = {}, copied[MAX_SLOTS] = {}, waits[MAX_SLOTS] = {};
    bool bad_slot(gb_u32 slot) {
        if (slot < MAX_SLOTS) return false;
        failures++; fprintf(stderr, "FAIL bulk slot %u\n", slot);
        return true;
    }
    void bulk_expect(gb_u32 slot, gb_u32 bytes) {
        if (bad_slot(slot)) return;
        expected[slot] += bytes;
    }
    void copy_bulk(unsigned char* dst, const unsigned char* src, gb_u32 bytes, gb_u32 slot) {
        if (bad_slot(slot)) return;
        if (src < wlo || src + bytes > whi) { failures++; fprintf(stderr, "FAIL bulk src out of the weights (%td + %u)\n", src - wlo, bytes); return; }
        if (dst < slo || dst + bytes > shi) { failures++; fprintf(stderr, "FAIL bulk dst out of slots (%td + %u of %td)\n", dst - slo, bytes, shi - slo); return; }
        if (((uintptr_t)src & 15) || ((uintptr_t)(dst - slo) & 15) || (bytes & 15) || !bytes) { failures++; fprintf(stderr, "FAIL misaligned bulk copy\n"); return; }
        memcpy(dst, src, bytes); copied[slot] += bytes; copies++;
    }
    void bulk_wait(gb_u32 slot, gb_u32 parity) {
        if (bad_slot(slot)) return;
        if (expected[slot] == 0 || expected[slot] != copied[slot]) { failures++; fprintf(stderr, "FAIL bulk wait on slot %u: %u bytes expected, %u copied\n", slot, expected[slot], copied[slot]); }
        if (parity != (waits[slot] & 1)) { failures++; fprintf(stderr, "FAIL bulk wait on slot %u with parity %u at its use %u\n", slot, parity, waits[slot]); }
        expected[slot] = copied[slot] = 0; waits[slot]++;
    }
};

// ------------------------------------------------------------ tensor-core path
// CPU model of mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 over the 32
// lanes of one warp, from the PTX ISA's "Matrix Fragments for mma.m16n8k16
// with floating point type" (groupID g = lane >> 2, threadID_in_group t = lane % 4):
//   A (16x16, .f16x2 regs a0..a3 holding elements a0..a7, low half first):
//     row = g for a0, a1, a4, a5 and g + 8 for a2, a3, a6, a7;
//     col = 2t + (i & 1) for a0..a3 and 2t + (i & 1) + 8 for a4..a7
//   B (16x8, regs b0, b1 holding b0..b3): row (k) = 2t + (i & 1) for b0, b1,
//     + 8 for b2, b3; col = g
//   C, D (16x8 f32 c0..c3): row = g for c0, c1 and g + 8 for c2, c3; col = 2t + (i & 1)
// f16 inputs are decoded exactly (subnormals included); every product is
// exact. The sum is modelled pessimistically: C plus the 16 products in k order,
// each addition rounded toward zero to f32 (tensor cores truncate; this is at
// least as lossy as one rounding of the exact sum).
static bool mma_round_nearest = false; // the alternative model: exact sum, one rounding
static float rz_add(float a, double p) {
    const double s = (double)a + p;
    float f = (float)s;
    if (std::fabs((double)f) > std::fabs(s)) f = std::nextafter(f, 0.0f);
    return f;
}
static void mma_model(float (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2]) {
    double a[16][16], b[16][8];
    float c[16][8];
    for (int lane = 0; lane < 32; lane++) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 8; i++)
            a[g + 8 * ((i >> 1) & 1)][2 * t + (i & 1) + 8 * (i >> 2)] = gb_half_to_float((A[lane][i >> 1] >> (16 * (i & 1))) & 0xFFFF);
        for (int i = 0; i < 4; i++)
            b[2 * t + (i & 1) + 8 * (i >> 1)][g] = gb_half_to_float((B[lane][i >> 1] >> (16 * (i & 1))) & 0xFFFF);
        for (int i = 0; i < 4; i++) c[g + 8 * (i >> 1)][2 * t + (i & 1)] = C[lane][i];
    }
    for (int r = 0; r < 16; r++)
        for (int n = 0; n < 8; n++) {
            if (mma_round_nearest) {
                double s = c[r][n];
                for (int kk = 0; kk < 16; kk++) s += a[r][kk] * b[kk][n];
                c[r][n] = (float)s;
            } else {
                float s = c[r][n];
                for (int kk = 0; kk < 16; kk++) s = rz_add(s, a[r][kk] * b[kk][n]);
                c[r][n] = s;
            }
        }
    for (int lane = 0; lane < 32; lane++) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 4; i++) C[lane][i] = c[g + 8 * (i >> 1)][2 * t + (i & 1)];
    }
}

// A whole block's threads (NT = 32 * NW) at once: each phase of gb_mma_block
// runs for every thread before the next, which is what the barriers guarantee
// on the GPU; mma and the quad sum combine the lanes of each warp.
template <int NW>
struct HostMmaCtx {
    enum { NT = 32 * NW };
    const unsigned char *wlo, *whi, *slo, *shi;
    gb_u32 tid(int q) const { return (gb_u32)q; }
    void copy16(int, unsigned char* dst, const unsigned char* src, bool pred) {
        if (!pred) return;
        if (src < wlo || src + 16 > whi) { failures++; fprintf(stderr, "FAIL mma copy src out of buffer (%td)\n", src - wlo); return; }
        if (dst < slo || dst + 16 > shi) { failures++; fprintf(stderr, "FAIL mma copy dst out of slots\n"); return; }
        if (((uintptr_t)src & 15) || ((uintptr_t)dst & 15)) { failures++; fprintf(stderr, "FAIL misaligned mma copy\n"); return; }
        memcpy(dst, src, 16);
    }
    void commit() {}
    template <int N> void wait() {}
    void syncwarp() {}
    void barrier() {}
    void atomic_max(gb_u32* p, gb_u32 v) { if (v > *p) *p = v; }
    void mma(float (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2]) {
        for (int w = 0; w < NW; w++) mma_model(C + 32 * w, A + 32 * w, B + 32 * w);
    }
    void quad_sum(float (*acc)[2]) { // the butterfly of __shfl_xor_sync 1 then 2
        for (int o = 1; o <= 2; o *= 2) {
            float old[NT][2];
            memcpy(old, acc, sizeof old);
            for (int q = 0; q < NT; q++) for (int h = 0; h < 2; h++) acc[q][h] = old[q][h] + old[q ^ o][h];
        }
    }
};

// Runs every block of the tensor-core kernel: y[m].
template <class F, int NW, int S>
static void emu_mma(const unsigned char* W, size_t wbuf_bytes, const float* x, gb_u32 m, gb_u32 k, float* y) {
    typedef GbMmaShared<F, NW, S> SM;
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
        gb_mma_block<F, NW, S>(ctx, W, x, y, m, k, blk, *sm);
    }
}

static size_t buffer_bytes(size_t wbytes) { return (wbytes + 15) / 16 * 16 + 16; } // gemv.buffer_bytes

// The x slots of a warp (gemv_common.cuh, GbXSlots), placed after its unit
// slots: both share the copy checks' destination range.
template <int S, int P>
static constexpr size_t quant_xslot_bytes() { return (size_t)GbXSlots<S, P>::N * GB_XSLOT; }

// One warp of the quantized kernel body (slice `slice` of its row group),
// every lane: the warp's partial sums of rows row0 .. row0+R-1.
template <class F, int R, int S, int KS, int P, bool XSM, bool B>
static void emu_quant_warp(const unsigned char* W, size_t wbuf_bytes, const float* x, gb_u32 m, gb_u32 k,
                           gb_u32 row0, gb_u32 slice, unsigned char* sp, float* sums) {
    typedef unsigned char SlotRow[GbTile<F>::SLOT];
    const size_t slots_bytes = (size_t)S * (R / P) * GbTile<F>::SLOT, xs_bytes = quant_xslot_bytes<S, P>();
    for (int r = 0; r < R; r++) sums[r] = 0.0f;
    for (gb_u32 lane = 0; lane < 32; lane++) {
        memset(sp, 0xFF, slots_bytes + xs_bytes + 64); // poison: stale bytes must not matter
        HostCtx ctx; ctx.wlo = W; ctx.whi = W + wbuf_bytes; ctx.slo = sp; ctx.shi = sp + slots_bytes + xs_bytes;
        ctx.xlo = reinterpret_cast<const unsigned char*>(x), ctx.xhi = ctx.xlo + 4 * (size_t)k;
        float acc[R];
        for (int r = 0; r < R; r++) acc[r] = 0.0f;
        std::vector<float> prep((size_t)(R / P) * GbTile<F>::PREP_ROW + 4, NAN); // poisoned
        gb_quant_warp<F, R, S, KS, P, XSM, B>(ctx, lane, W, x, m, k, row0, slice, (SlotRow(*)[R / P])sp, prep.data(),
                                      (unsigned char(*)[GB_XSLOT])(sp + slots_bytes), acc);
        // summed in lane order, not gb_warp_sum's butterfly: within the tolerance either way
        for (int r = 0; r < R; r++) sums[r] += acc[r];
    }
}

// Runs the quantized kernel body over every block, warp and lane: y[m]. A
// block is NW row groups x KS slices (gb_gemv_quant). With KS > 1 the block's
// warps run in sequence, each putting its partials (lane r holds row r's) into
// the block's reduction array through the kernel's gb_ksplit_put; only after
// every warp has (the block barrier), slice 0's lanes read them back through
// gb_ksplit_sum and write y. The array is poisoned with NaN per block, so a
// slice that does not write, or a sum that reads a wrong slot, fails.
template <class F, int R, int S, int NW, int KS, int P, bool B>
static void emu_quant(const unsigned char* W, size_t wbuf_bytes, const float* x, gb_u32 m, gb_u32 k, float* y) {
    const size_t slots_bytes = (size_t)S * (R / P) * GbTile<F>::SLOT + quant_xslot_bytes<S, P>();
    std::vector<unsigned char> slots_mem(slots_bytes + 64 + 16);
    unsigned char* sp = slots_mem.data();
    while ((uintptr_t)sp & 15) sp++;
    const gb_u32 blocks = (m + R * NW - 1) / (R * NW);
    std::vector<float> red((size_t)NW * KS * R);
    for (gb_u32 blk = 0; blk < blocks; blk++) {
        std::fill(red.begin(), red.end(), NAN);
        for (gb_u32 warp = 0; warp < NW * KS; warp++) {
            gb_u32 group, slice;
            gb_ksplit_warp<KS>(warp, group, slice);
            const gb_u32 row0 = (blk * NW + group) * R;
            if (row0 >= m) continue; // no rows: the kernel skips the work (and, KS = 1, returns)
            float sums[R];
            // x through shared memory exactly when the kernel would (GbQuantSmem)
            emu_quant_warp<F, R, S, KS, P, GbQuantSmem<F, R, S, NW, KS, P, B>::XSM, B>(W, wbuf_bytes, x, m, k, row0, slice, sp, sums);
            if constexpr (KS == 1) { // the kernel writes straight from the warp
                for (int r = 0; r < R; r++) if (row0 + r < m) y[row0 + r] = sums[r];
            } else {
                for (gb_u32 lane = 0; lane < 32; lane++)
                    gb_ksplit_put<R, KS>(red.data(), group, slice, lane, lane < (gb_u32)R ? sums[lane] : NAN);
            }
        }
        if constexpr (KS > 1) {
            // __syncthreads: every slice's partials are in red
            for (gb_u32 warp = 0; warp < NW * KS; warp++) {
                gb_u32 group, slice;
                gb_ksplit_warp<KS>(warp, group, slice);
                const gb_u32 row0 = (blk * NW + group) * R;
                if (row0 >= m || slice != 0) continue;
                for (gb_u32 lane = 0; lane < (gb_u32)R; lane++)
                    if (row0 + lane < m) y[row0 + lane] = gb_ksplit_sum<R, KS>(red.data(), group, lane);
            }
        }
    }
}

template <class D, int R, int U>
static void emu_dense(const unsigned char* W, const float* x, gb_u32 m, gb_u32 k, float* y) {
    for (gb_u32 row0 = 0; row0 < m; row0 += R) {
        float sums[R] = {0};
        for (gb_u32 lane = 0; lane < 32; lane++) {
            float acc[R];
            for (int r = 0; r < R; r++) acc[r] = 0.0f;
            gb_dense_lane<D, R, U>(lane, W, x, m, k, row0, acc);
            for (int r = 0; r < R; r++) sums[r] += acc[r];
        }
        for (int r = 0; r < R; r++) if (row0 + r < m) y[row0 + r] = sums[r];
    }
}

typedef void (*runner)(const unsigned char*, size_t, const float*, gb_u32, gb_u32, float*);

template <class F, int R, int S, int NW = 1, int KS = 1, int P = 1, bool B = false>
static void run_quant(const unsigned char* W, size_t nb, const float* x, gb_u32 m, gb_u32 k, float* y) { emu_quant<F, R, S, NW, KS, P, B>(W, nb, x, m, k, y); }
template <class F, int NW, int S>
static void run_mma(const unsigned char* W, size_t nb, const float* x, gb_u32 m, gb_u32 k, float* y) { emu_mma<F, NW, S>(W, nb, x, m, k, y); }
template <class D, int R, int U>
static void run_dense(const unsigned char* W, size_t, const float* x, gb_u32 m, gb_u32 k, float* y) { emu_dense<D, R, U>(W, x, m, k, y); }

struct Variant { const char* fmt; const char* label; runner fn; };

static gb_u64 seed_counter = 1000;
static double worst_seen = 0; // worst relative row error of the current section

// Random weights and x: GEMV vs the FP64 oracle at tol 1e-4.
static void check_gemv(const Variant& v, gb_u32 m, gb_u32 k) {
    const gb_format* f = gb_format_find(v.fmt);
    uint64_t wbytes = 0; gb_err e = {0};
    if (gb_format_matrix_bytes(f, m, k, &wbytes, &e)) { CHECK(0, "bad shape"); return; }
    const size_t nb = buffer_bytes(wbytes);
    Guarded wb(nb), xb(4ull * k);
    gb_ref_random_blocks(f, (uint64_t)m * (k / f->qk), seed_counter++, wb.p, &e);
    memset(wb.p + wbytes, 0xFF, nb - wbytes); // slack: garbage that must not matter
    gb_rng rng; gb_rng_seed(&rng, seed_counter++);
    gb_random_fill(xb.p, k, GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, &rng);
    std::vector<float> y(m, NAN);
    std::vector<double> yref(m), absdot(m);
    v.fn(wb.p, nb, (const float*)xb.p, m, k, y.data());
    gb_ref_gemv(f, wb.p, wbytes, m, k, (const float*)xb.p, yref.data(), absdot.data(), &e);
    gb_row_check rc;
    gb_ref_check_rows(y.data(), yref.data(), absdot.data(), m, 1e-4, &rc);
    CHECK(rc.failures == 0, "%s %s m=%u k=%u: %llu rows off, worst row %llu rel %.3g (y=%.9g ref=%.9g)", v.fmt, v.label, m, k,
          (unsigned long long)rc.failures, (unsigned long long)rc.worst_row, rc.worst_rel, y[rc.worst_row], yref[rc.worst_row]);
    if (rc.worst_rel > worst_seen) { worst_seen = rc.worst_rel; printf("  (worst relative error so far %.3g: %s %s m=%u k=%u)\n", worst_seen, v.fmt, v.label, m, k); }
}

// Random valid weights of an m x k matrix of v's format in a guarded buffer,
// the slack past the weights filled with garbage that must not matter.
struct RandomWeights {
    const gb_format* f;
    uint64_t wbytes = 0;
    size_t nb;
    Guarded wb;
    static size_t bytes_of(const gb_format* f, gb_u32 m, gb_u32 k, uint64_t& wbytes) {
        gb_err e = {0};
        gb_format_matrix_bytes(f, m, k, &wbytes, &e);
        return buffer_bytes(wbytes);
    }
    RandomWeights(const Variant& v, gb_u32 m, gb_u32 k)
        : f(gb_format_find(v.fmt)), nb(bytes_of(f, m, k, wbytes)), wb(nb) {
        gb_err e = {0};
        gb_ref_random_blocks(f, (uint64_t)m * (k / f->qk), seed_counter++, wb.p, &e);
        memset(wb.p + wbytes, 0xFF, nb - wbytes);
    }
};

// One-hot x: y must equal column j of the reference dequantization bit for bit.
static void check_exact(const Variant& v, gb_u32 m, gb_u32 k) {
    RandomWeights rw(v, m, k);
    const gb_format* f = rw.f;
    const size_t nb = rw.nb;
    Guarded& wb = rw.wb;
    Guarded xb(4ull * k);
    gb_err e = {0};
    std::vector<float> deq((size_t)m * k);
    for (gb_u32 i = 0; i < m; i++) gb_ref_dequant_row(f, wb.p, m, k, i, &deq[(size_t)i * k], &e);
    float* x = (float*)xb.p;
    std::vector<float> y(m);
    int bad = 0;
    for (gb_u32 j = 0; j < k; j++) {
        memset(x, 0, 4ull * k);
        x[j] = 1.0f;
        v.fn(wb.p, nb, x, m, k, y.data());
        for (gb_u32 i = 0; i < m; i++) {
            const float want = deq[(size_t)i * k + j];
            if (!(y[i] == want)) { if (bad++ < 5) fprintf(stderr, "FAIL exact %s %s m=%u k=%u row %u col %u: got %.9g want %.9g\n", v.fmt, v.label, m, k, i, j, y[i], want); }
        }
    }
    if (bad) failures++;
}

// A NaN (or an infinity) anywhere in x makes every row's result non-finite,
// as the reference's: a kernel must not scale it away (the XQ path's x
// scale comes from max|x|).
static void check_nonfinite(const Variant& v, gb_u32 m, gb_u32 k) {
    RandomWeights rw(v, m, k);
    const gb_format* f = rw.f;
    const size_t nb = rw.nb;
    Guarded& wb = rw.wb;
    Guarded xb(4ull * k);
    gb_err e = {0};
    float* x = (float*)xb.p;
    std::vector<float> y(m);
    for (int kind = 0; kind < 2; kind++) {
        gb_rng rng; gb_rng_seed(&rng, seed_counter++);
        gb_random_fill(xb.p, k, GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, &rng);
        x[k / 3 + 1] = kind == 0 ? NAN : INFINITY;
        v.fn(wb.p, nb, x, m, k, y.data());
        for (gb_u32 i = 0; i < m; i++)
            CHECK(!std::isfinite(y[i]), "%s %s m=%u k=%u: x holds %s but row %u is %.9g", v.fmt, v.label, m, k,
                  kind == 0 ? "NaN" : "inf", i, y[i]);
    }
}

// Adversarial for the magic decode: q4_0 rows whose blocks are all zero weights
// (every nibble 8) except one block per row, so sum |w x| is small while the
// decode of every zero block still cancels 64 * S against 136 * X.
static double sparse_q4_0(runner fn, gb_u32 m, gb_u32 k) {
    const gb_format* f = gb_format_find("q4_0");
    uint64_t wbytes = 0; gb_err e = {0};
    gb_format_matrix_bytes(f, m, k, &wbytes, &e);
    const size_t nb = buffer_bytes(wbytes);
    Guarded wb(nb), xb(4ull * k);
    gb_ref_random_blocks(f, (uint64_t)m * (k / 32), seed_counter++, wb.p, &e);
    memset(wb.p + wbytes, 0xFF, nb - wbytes);
    gb_rng rng; gb_rng_seed(&rng, seed_counter++);
    for (gb_u32 i = 0; i < m; i++) {
        const gb_u32 keep = (gb_u32)(gb_rng_next(&rng) % (k / 32));
        for (gb_u32 b = 0; b < k / 32; b++)
            if (b != keep) memset(wb.p + ((size_t)i * (k / 32) + b) * 18 + 2, 0x88, 16);
    }
    gb_random_fill(xb.p, k, GB_DT_F32, GB_DIST_NORMAL, 0.0, 1.0, &rng);
    std::vector<float> y(m);
    std::vector<double> yref(m), absdot(m);
    fn(wb.p, nb, (const float*)xb.p, m, k, y.data());
    gb_ref_gemv(f, wb.p, wbytes, m, k, (const float*)xb.p, yref.data(), absdot.data(), &e);
    gb_row_check rc;
    gb_ref_check_rows(y.data(), yref.data(), absdot.data(), m, 1e-4, &rc);
    // A measurement, not a check: the magic decode's error scales with |d| * sum |x|
    // of each block, so all-zero blocks with large d are outside the 1e-4 bound.
    return rc.worst_rel;
}

#define QV(F, fmt, R, S) Variant{fmt, #F " R=" #R " S=" #S, run_quant<F, R, S>}
#define KV(F, fmt, R, S, NW, KS) Variant{fmt, #F " R=" #R " S=" #S " W=" #NW " KSPLIT=" #KS, run_quant<F, R, S, NW, KS>}
#define PV(F, fmt, R, S, NW, KS, P) Variant{fmt, #F " R=" #R " S=" #S " W=" #NW " KSPLIT=" #KS " PARTS=" #P, run_quant<F, R, S, NW, KS, P>}
#define BV(F, fmt, R, S, NW, KS, P) Variant{fmt, #F " BULK R=" #R " S=" #S " W=" #NW " KSPLIT=" #KS " PARTS=" #P, run_quant<F, R, S, NW, KS, P, true>}
#define MV(F, fmt, NW, S) Variant{fmt, #F " NW=" #NW " S=" #S, run_mma<F, NW, S>}
#define DV(D, fmt, R, U) Variant{fmt, #D " R=" #R " U=" #U, run_dense<D, R, U>}

int main() {
    const Variant defaults[] = {
        DV(GbF32, "f32", 4, 2), DV(GbF16, "f16", 4, 2), DV(GbBF16, "bf16", 4, 2),
        QV(GbQ4_0, "q4_0", 8, 2), QV(GbQ8_0, "q8_0", 4, 2), QV(GbQ4K, "q4_k", 8, 2),
        QV(GbQ5K, "q5_k", 8, 2), QV(GbQ6K, "q6_k", 4, 2),
        PV(GbQ4_0I, "q4_0", 14, 2, 1, 1, 2), PV(GbQ8_0I, "q8_0", 16, 2, 1, 1, 4), PV(GbQ4KI, "q4_k", 14, 2, 1, 1, 2),
        PV(GbQ5KI, "q5_k", 14, 2, 1, 1, 2), PV(GbQ6KI, "q6_k", 14, 2, 1, 1, 2),
    };
    const Variant others[] = {
        DV(GbF32, "f32", 1, 1), DV(GbF16, "f16", 3, 4), DV(GbBF16, "bf16", 2, 3),
        QV(GbQ4_0, "q4_0", 1, 2), QV(GbQ4_0, "q4_0", 3, 3), QV(GbQ8_0, "q8_0", 8, 3), QV(GbQ8_0, "q8_0", 2, 4),
        QV(GbQ4K, "q4_k", 4, 3), QV(GbQ4K, "q4_k", 1, 2), QV(GbQ4K, "q4_k", 10, 2), QV(GbQ5K, "q5_k", 9, 2), QV(GbQ5K, "q5_k", 2, 4), QV(GbQ5K, "q5_k", 5, 2),
        QV(GbQ6K, "q6_k", 8, 2), QV(GbQ6K, "q6_k", 3, 3), QV(GbQ6K, "q6_k", 1, 4),
        QV(GbQ4_0I, "q4_0", 1, 2), QV(GbQ4_0I, "q4_0", 5, 3), QV(GbQ8_0I, "q8_0", 3, 4), QV(GbQ8_0I, "q8_0", 16, 2),
        QV(GbQ4KI, "q4_k", 3, 3), QV(GbQ4KI, "q4_k", 8, 2), QV(GbQ5KI, "q5_k", 16, 2), QV(GbQ5KI, "q5_k", 1, 4),
        QV(GbQ6KI, "q6_k", 16, 2), QV(GbQ6KI, "q6_k", 5, 3),
        QV(GbQ4_0I, "q4_0", 16, 2), QV(GbQ8_0I, "q8_0", 8, 2), QV(GbQ4KI, "q4_k", 16, 2), QV(GbQ5KI, "q5_k", 8, 2), QV(GbQ6KI, "q6_k", 8, 2),
        // bulk copies (BULK=1): the default geometries, deeper rings, whole tiles, split-K
        BV(GbQ4_0I, "q4_0", 14, 2, 1, 1, 2), BV(GbQ8_0I, "q8_0", 16, 2, 1, 1, 4), BV(GbQ4KI, "q4_k", 14, 2, 1, 1, 2),
        BV(GbQ5KI, "q5_k", 14, 2, 1, 1, 2), BV(GbQ6KI, "q6_k", 14, 2, 1, 1, 2), BV(GbQ6KI, "q6_k", 8, 3, 1, 1, 1),
        BV(GbQ4KI, "q4_k", 16, 4, 1, 1, 2), BV(GbQ6KI, "q6_k", 16, 1, 1, 2, 4), BV(GbQ4K, "q4_k", 8, 2, 1, 1, 1),
    };
    printf("decode exactness (one-hot x)\n");
    for (const Variant& v : defaults) {
        const gb_format* f = gb_format_find(v.fmt);
        if (f->qk == 256) { check_exact(v, 3, 256); check_exact(v, 2, 768); }
        else if (f->qk == 32) { check_exact(v, 3, 96); check_exact(v, 5, 64); check_exact(v, 2, 1056); }
        else { check_exact(v, 3, 40); check_exact(v, 2, 264); }
    }
    for (const Variant& v : others) check_exact(v, 5, gb_format_find(v.fmt)->qk == 256 ? 512 : 96);
    printf("non-finite x\n");
    for (const Variant& v : defaults) check_nonfinite(v, 5, gb_format_find(v.fmt)->qk == 256 ? 1024 : 1056);
    printf("GEMV vs FP64 oracle\n");
    const gb_u32 ms[] = {1, 2, 7, 37, 70};
    for (const Variant& v : defaults) {
        const gb_format* f = gb_format_find(v.fmt);
        std::vector<gb_u32> ks;
        if (f->qk == 256) ks = {256, 512, 1024, 1280, 2816, 4096, 5120};
        else if (f->qk == 32) ks = {32, 64, 96, 256, 288, 992, 1024, 1056, 2816, 4096, 5120};
        else ks = {8, 16, 120, 128, 256, 264, 1000, 1024, 2816, 4096, 5120};
        for (gb_u32 m : ms) for (gb_u32 k : ks) check_gemv(v, m, k);
        check_gemv(v, 9, 14336);
    }
    for (const Variant& v : others) {
        const gb_format* f = gb_format_find(v.fmt);
        for (gb_u32 m : {1u, 13u, 37u}) for (gb_u32 k : {f->qk == 1 ? 264u : f->qk == 32 ? 288u : 768u, 3072u, 4352u}) check_gemv(v, m, k);
    }
    printf("scalar path: worst relative row error %.3g\n", worst_seen);
    worst_seen = 0;
    // Split-K (KSPLIT = 2, 3, 5 of every format, some with STAGES = 1 and
    // several row groups per block): k of 1 .. 9 tiles, most not a multiple
    // of KSPLIT tiles (slices with fewer tiles, or none), the last tile often
    // partial; m never a multiple of the rows per block.
    printf("scalar path, split-K\n");
    const Variant splitk[] = {
        KV(GbQ4_0, "q4_0", 8, 2, 1, 3), KV(GbQ4_0, "q4_0", 3, 1, 2, 2), KV(GbQ4_0, "q4_0", 8, 2, 1, 5),
        KV(GbQ8_0, "q8_0", 4, 2, 2, 2), KV(GbQ8_0, "q8_0", 4, 1, 1, 5), KV(GbQ8_0, "q8_0", 2, 3, 1, 3),
        KV(GbQ4K, "q4_k", 8, 1, 1, 5), KV(GbQ4K, "q4_k", 8, 2, 2, 2), KV(GbQ4K, "q4_k", 4, 2, 1, 3),
        KV(GbQ5K, "q5_k", 4, 2, 1, 5), KV(GbQ5K, "q5_k", 8, 1, 2, 3), KV(GbQ5K, "q5_k", 8, 2, 1, 2),
        KV(GbQ6K, "q6_k", 4, 2, 2, 2), KV(GbQ6K, "q6_k", 8, 1, 1, 5), KV(GbQ6K, "q6_k", 4, 3, 1, 3),
        KV(GbQ4_0I, "q4_0", 8, 2, 2, 2), KV(GbQ8_0I, "q8_0", 4, 1, 1, 5), KV(GbQ4KI, "q4_k", 8, 1, 1, 5),
        KV(GbQ5KI, "q5_k", 8, 2, 1, 3), KV(GbQ6KI, "q6_k", 8, 2, 2, 2),
    };
    for (const Variant& v : splitk) check_exact(v, 5, gb_format_find(v.fmt)->qk == 256 ? 2304 : 2080);
    for (const Variant& v : splitk) {
        const gb_format* f = gb_format_find(v.fmt);
        std::vector<gb_u32> ks;
        if (f->qk == 256) ks = {256, 768, 1280, 2304, 3072, 4096, 5120, 6144, 9216};
        else ks = {32, 288, 1056, 2080, 3104, 4096, 5120, 5152, 9216};
        for (gb_u32 m : {1u, 7u, 37u, 70u}) for (gb_u32 k : ks) check_gemv(v, m, k);
        check_gemv(v, 9, 14336);
    }
    printf("scalar path, split-K: worst relative row error %.3g\n", worst_seen);
    worst_seen = 0;
    // Row parts (PARTS): tiles staged as parts of ROWS / PARTS rows, a ring of
    // STAGES part slots. Every decode, parts of 1 to 8 rows, rings shorter and
    // longer than a tile's parts (so a refill crosses into the next tile or
    // the one after), with split-K and STAGES = 1; m ragged so that whole
    // parts lie past m.
    printf("scalar path, row parts\n");
    const Variant parts[] = {
        PV(GbQ4_0I, "q4_0", 16, 4, 1, 1, 2), PV(GbQ4_0I, "q4_0", 16, 3, 1, 1, 4), PV(GbQ4_0, "q4_0", 8, 2, 2, 1, 8),
        PV(GbQ8_0I, "q8_0", 16, 3, 1, 1, 2), PV(GbQ8_0I, "q8_0", 12, 5, 1, 1, 3), PV(GbQ8_0, "q8_0", 4, 2, 1, 2, 2),
        PV(GbQ4KI, "q4_k", 16, 4, 1, 1, 2), PV(GbQ4KI, "q4_k", 16, 8, 1, 1, 4), PV(GbQ4K, "q4_k", 8, 3, 1, 1, 2),
        PV(GbQ4KI, "q4_k", 16, 1, 1, 3, 2),
        PV(GbQ5KI, "q5_k", 16, 4, 1, 1, 2), PV(GbQ5K, "q5_k", 6, 2, 2, 1, 3), PV(GbQ5KI, "q5_k", 8, 2, 1, 2, 4),
        PV(GbQ6KI, "q6_k", 16, 4, 1, 1, 2), PV(GbQ6KI, "q6_k", 16, 6, 1, 1, 16), PV(GbQ6K, "q6_k", 4, 3, 1, 1, 2),
        PV(GbQ4_0I, "q4_0", 16, 2, 1, 1, 2), PV(GbQ4KI, "q4_k", 16, 2, 1, 1, 2), PV(GbQ5KI, "q5_k", 16, 2, 1, 1, 2),
        PV(GbQ6KI, "q6_k", 16, 2, 1, 1, 2), PV(GbQ4KI, "q4_k", 14, 3, 1, 1, 7),
    };
    for (const Variant& v : parts) check_exact(v, 5, gb_format_find(v.fmt)->qk == 256 ? 2304 : 2080);
    for (const Variant& v : parts) check_nonfinite(v, 5, gb_format_find(v.fmt)->qk == 256 ? 1024 : 1056);
    for (const Variant& v : parts) {
        const gb_format* f = gb_format_find(v.fmt);
        std::vector<gb_u32> ks;
        if (f->qk == 256) ks = {256, 1024, 1280, 3072, 5120};
        else ks = {32, 288, 1056, 3104, 5120};
        for (gb_u32 m : {1u, 7u, 37u, 70u}) for (gb_u32 k : ks) check_gemv(v, m, k);
        check_gemv(v, 9, 14336);
    }
    printf("scalar path, row parts: worst relative row error %.3g\n", worst_seen);
    worst_seen = 0;
    printf("tensor-core path (SUBN=%d), mma model: each addition rounded toward zero\n", SUBN);
    const Variant mma_defaults[] = {
        MV(GbQ4_0M, "q4_0", 4, 4), MV(GbQ8_0M, "q8_0", 2, 4), MV(GbQ4KM, "q4_k", 4, 4),
        MV(GbQ5KM, "q5_k", 4, 3), MV(GbQ6KM, "q6_k", 2, 4),
    };
    const Variant mma_others[] = {
        MV(GbQ4_0M, "q4_0", 1, 3), MV(GbQ4_0M, "q4_0", 3, 2), MV(GbQ8_0M, "q8_0", 4, 2), MV(GbQ8_0M, "q8_0", 1, 2),
        MV(GbQ4KM, "q4_k", 2, 2), MV(GbQ4KM, "q4_k", 1, 5), MV(GbQ5KM, "q5_k", 2, 4), MV(GbQ5KM, "q5_k", 1, 2),
        MV(GbQ6KM, "q6_k", 4, 2), MV(GbQ6KM, "q6_k", 1, 3),
    };
    for (const Variant& v : mma_defaults) {
        const gb_format* f = gb_format_find(v.fmt);
        if (f->qk == 256) { check_exact(v, 3, 256); check_exact(v, 17, 512); }
        else { check_exact(v, 3, 96); check_exact(v, 5, 64); check_exact(v, 17, 288); }
    }
    for (const Variant& v : mma_others) check_exact(v, 21, gb_format_find(v.fmt)->qk == 256 ? 512 : 96);
    for (const Variant& v : mma_defaults) {
        const gb_format* f = gb_format_find(v.fmt);
        std::vector<gb_u32> ks;
        if (f->qk == 256) ks = {256, 512, 1024, 1280, 2816, 4096, 5120};
        else ks = {32, 64, 96, 224, 256, 288, 992, 1024, 1056, 2816, 5120};
        for (gb_u32 m : ms) for (gb_u32 k : ks) check_gemv(v, m, k);
        check_gemv(v, 9, 14336);
        check_gemv(v, 100, 4096);
    }
    for (const Variant& v : mma_others) {
        const gb_format* f = gb_format_find(v.fmt);
        for (gb_u32 m : {1u, 13u, 37u, 70u}) for (gb_u32 k : {f->qk == 32 ? 288u : 768u, 3072u, 4352u}) check_gemv(v, m, k);
    }
    printf("tensor-core path: worst relative row error %.3g (round-toward-zero model)\n", worst_seen);
    worst_seen = 0;
    mma_round_nearest = true; // the other accumulation model
    for (const Variant& v : mma_defaults) { check_gemv(v, 37, 4096); check_exact(v, 3, 256); }
    mma_round_nearest = false;
    printf("tensor-core path: worst relative row error %.3g (one-rounding model)\n", worst_seen);
    printf("adversarial (tensor-core q4_0): worst relative error %.3g (k=4096)\n",
           sparse_q4_0(run_mma<GbQ4_0M, 4, 4>, 64, 4096));
    printf("adversarial: one nonzero q4_0 block per row, worst relative error %.3g (k=4096), %.3g (k=16384)\n",
           sparse_q4_0(run_quant<GbQ4_0, 8, 2>, 64, 4096), sparse_q4_0(run_quant<GbQ4_0, 8, 2>, 16, 16384));
    printf("adversarial: the same rows, integer dot (XQ=1), worst relative error %.3g (k=4096), %.3g (k=16384)\n",
           sparse_q4_0(run_quant<GbQ4_0I, 14, 2, 1, 1, 2>, 64, 4096), sparse_q4_0(run_quant<GbQ4_0I, 14, 2, 1, 1, 2>, 16, 16384));
    printf("%s: %d failures\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
