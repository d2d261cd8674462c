// Host emulation of the CUDA GEMV kernels (kernels/cuda/gemv_*.cu), run by
// tests/cli/test_gemv_emulate.sh: compiled with nvcc as host code, it runs the
// kernels' own staging, tile loop, prep step and decode code (the __host__
// __device__ templates of gemv_common.cuh, with a context that copies with
// memcpy) for every lane of every warp, and compares with the project's FP64
// reference (host/ref_*.c): bit-exact dequantization with one-hot x, and random
// GEMVs at tolerance 1e-4 over many shapes and geometries. Weight and x
// buffers end at a page boundary followed by an inaccessible page, so any read
// past them faults. What it cannot check (cp.async group accounting, barriers,
// shuffles, cvt.f32.f16) is covered on a GPU by tests/lua/test_gemv_cuda.lua.
//
// Build (from the repository root):
//   for c in formats ref_blocks ref_dequant ref_gemv random; do gcc -O2 -c -Ihost host/$c.c; done
//   nvcc -O2 -std=c++17 -arch=sm_90 -Ihost -Ikernels/cuda tests/cuda_host/gemv_emulate.cu *.o
#include <sys/mman.h>
#include <unistd.h>
#include <cassert>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gemv_q4_0.cu"
#include "gemv_q8_0.cu"
#include "gemv_q4_k.cu"
#include "gemv_q5_k.cu"
#include "gemv_q6_k.cu"
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


// The reference code reports errors through gb_fail_at (host/backend.c, which
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
    const unsigned char *slo, *shi;     // slots array
    int copies = 0;
    void copy16(unsigned char* dst, const unsigned char* src, bool pred) {
        if (!pred) return;
        if (src < wlo || src + 16 > whi) { failures++; fprintf(stderr, "FAIL copy src out of buffer (%td)\n", src - wlo); return; }
        if (dst < slo || dst + 16 > shi) { failures++; fprintf(stderr, "FAIL copy dst out of slots (%td of %td)\n", dst - slo, shi - slo); return; }
        if (((uintptr_t)src & 15) || ((uintptr_t)(dst - slo) & 15)) { failures++; fprintf(stderr, "FAIL misaligned copy\n"); return; }
        memcpy(dst, src, 16); copies++;
    }
    void commit() {}
    template <int N> void wait() {}
    void sync() {}
};

static size_t buffer_bytes(size_t wbytes) { return (wbytes + 15) / 16 * 16 + 16; } // gemv.buffer_bytes

// Runs the quantized kernel body over every warp and lane: y[m].
template <class F, int R, int S>
static void emu_quant(const unsigned char* W, size_t wbuf_bytes, const float* x, gb_u32 m, gb_u32 k, float* y) {
    typedef unsigned char SlotRow[GbTile<F>::SLOT];
    const size_t slots_bytes = (size_t)S * R * GbTile<F>::SLOT;
    std::vector<unsigned char> slots_mem(slots_bytes + 64 + 16);
    unsigned char* sp = slots_mem.data();
    while ((uintptr_t)sp & 15) sp++;
    for (gb_u32 row0 = 0; row0 < m; row0 += R) {
        float sums[R] = {0};
        for (gb_u32 lane = 0; lane < 32; lane++) {
            memset(sp, 0xFF, slots_bytes + 64); // poison: stale bytes must not matter
            HostCtx ctx; ctx.wlo = W; ctx.whi = W + wbuf_bytes; ctx.slo = sp; ctx.shi = sp + slots_bytes;
            float acc[R];
            for (int r = 0; r < R; r++) acc[r] = 0.0f;
            std::vector<float> prep((size_t)R * GbTile<F>::PREP_ROW + 4, NAN); // poisoned
            gb_quant_warp<F, R, S>(ctx, lane, W, x, m, k, row0, (SlotRow(*)[R])sp, prep.data(), acc);
            // summed in lane order, not gb_warp_sum's butterfly: within the tolerance either way
            for (int r = 0; r < R; r++) sums[r] += acc[r];
        }
        for (int r = 0; r < R; r++) if (row0 + r < m) y[row0 + r] = sums[r];
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

template <class F, int R, int S>
static void run_quant(const unsigned char* W, size_t nb, const float* x, gb_u32 m, gb_u32 k, float* y) { emu_quant<F, R, S>(W, nb, x, m, k, y); }
template <class D, int R, int U>
static void run_dense(const unsigned char* W, size_t, const float* x, gb_u32 m, gb_u32 k, float* y) { emu_dense<D, R, U>(W, x, m, k, y); }

struct Variant { const char* fmt; const char* label; runner fn; };

static gb_u64 seed_counter = 1000;

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
    static double worst_seen = 0;
    if (rc.worst_rel > worst_seen) { worst_seen = rc.worst_rel; printf("  (worst relative error so far %.3g: %s %s m=%u k=%u)\n", worst_seen, v.fmt, v.label, m, k); }
}

// One-hot x: y must equal column j of the reference dequantization bit for bit.
static void check_exact(const Variant& v, gb_u32 m, gb_u32 k) {
    const gb_format* f = gb_format_find(v.fmt);
    uint64_t wbytes = 0; gb_err e = {0};
    gb_format_matrix_bytes(f, m, k, &wbytes, &e);
    const size_t nb = buffer_bytes(wbytes);
    Guarded wb(nb), xb(4ull * k);
    gb_ref_random_blocks(f, (uint64_t)m * (k / f->qk), seed_counter++, wb.p, &e);
    memset(wb.p + wbytes, 0xFF, nb - wbytes);
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
#define DV(D, fmt, R, U) Variant{fmt, #D " R=" #R " U=" #U, run_dense<D, R, U>}

int main() {
    const Variant defaults[] = {
        DV(GbF32, "f32", 4, 2), DV(GbF16, "f16", 4, 2), DV(GbBF16, "bf16", 4, 2),
        QV(GbQ4_0, "q4_0", 8, 2), QV(GbQ8_0, "q8_0", 4, 2), QV(GbQ4K, "q4_k", 8, 2),
        QV(GbQ5K, "q5_k", 8, 2), QV(GbQ6K, "q6_k", 4, 2),
    };
    const Variant others[] = {
        DV(GbF32, "f32", 1, 1), DV(GbF16, "f16", 3, 4), DV(GbBF16, "bf16", 2, 3),
        QV(GbQ4_0, "q4_0", 1, 2), QV(GbQ4_0, "q4_0", 3, 3), QV(GbQ8_0, "q8_0", 8, 3), QV(GbQ8_0, "q8_0", 2, 4),
        QV(GbQ4K, "q4_k", 4, 3), QV(GbQ4K, "q4_k", 1, 2), QV(GbQ4K, "q4_k", 10, 2), QV(GbQ5K, "q5_k", 9, 2), QV(GbQ5K, "q5_k", 2, 4), QV(GbQ5K, "q5_k", 5, 2),
        QV(GbQ6K, "q6_k", 8, 2), QV(GbQ6K, "q6_k", 3, 3), QV(GbQ6K, "q6_k", 1, 4),
    };
    printf("decode exactness (one-hot x)\n");
    for (const Variant& v : defaults) {
        const gb_format* f = gb_format_find(v.fmt);
        if (f->qk == 256) { check_exact(v, 3, 256); check_exact(v, 2, 768); }
        else if (f->qk == 32) { check_exact(v, 3, 96); check_exact(v, 5, 64); check_exact(v, 2, 1056); }
        else { check_exact(v, 3, 40); check_exact(v, 2, 264); }
    }
    for (const Variant& v : others) check_exact(v, 5, gb_format_find(v.fmt)->qk == 256 ? 512 : 96);
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
    printf("adversarial: one nonzero q4_0 block per row, worst relative error %.3g (k=4096), %.3g (k=16384)\n",
           sparse_q4_0(run_quant<GbQ4_0, 8, 2>, 64, 4096), sparse_q4_0(run_quant<GbQ4_0, 8, 2>, 16, 16384));
    printf("%s: %d failures\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
