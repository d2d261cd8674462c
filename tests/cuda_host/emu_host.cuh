// Part of the host emulations of the CUDA GEMV kernels (tests/cuda_host/
// gemv_emulate.cu and gemv_tokens_emulate.cu, through gemv_emu_common.cuh,
// after the kernels, the reference headers, `failures` and CHECK): the
// emulated hardware and the drivers that run the kernels' own code on it. Guarded buffers that fault on
// any read past their end (emu_guard.cuh); the copy contexts of the scalar path (HostCtx: a
// warp's lanes in sequence, cp.async and bulk copies as memcpy, with what the
// barriers would enforce checked) and of the tensor-core path (HostMmaCtx: a
// whole block at a time, with the CPU model of mma.sync m16n8k16 of
// emu_mma.cuh, f16 inputs); and the
// runners that execute every block, warp and lane of a kernel body into y,
// for T x rows (GEMV_TOKENS; T = 1 is the GEMV): x is T rows of k, y T rows
// of m.
#ifndef GPUBENCH_EMU_HOST_CUH
#define GPUBENCH_EMU_HOST_CUH
#include "emu_guard.cuh"

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
#include "emu_mma.cuh"
// f16 inputs (the GEMV tensor-core path): decoded exactly, subnormals included.
static float emu_f16_elem(gb_u32 h) { return gb_half_to_float(h); }
static void mma_model(float (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2]) { mma_model_t<emu_f16_elem>(C, A, B); }

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

// Runs every block of the tensor-core kernel: y[T * m].
template <class F, int NW, int S, int T = 1>
static void emu_mma(const unsigned char* W, size_t wbuf_bytes, const float* x, gb_u32 m, gb_u32 k, float* y) {
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
        if constexpr (T == 1) gb_mma_block<F, NW, S>(ctx, W, x, y, m, k, blk, *sm);
        else gb_mma_block_tokens<F, NW, S, T>(ctx, W, x, y, m, k, blk, *sm);
    }
}

static size_t buffer_bytes(size_t wbytes) { return (wbytes + 15) / 16 * 16 + 16; } // gemv.buffer_bytes

// The x slots of a warp (gemv_warp.cuh, GbXSlots; each holds the T rows'
// tiles), placed after its unit slots: both share the copy checks'
// destination range.
template <int S, int P, int T = 1>
static constexpr size_t quant_xslot_bytes() { return (size_t)GbXSlots<S, P, T>::N * T * GB_XSLOT; }

// One warp of the quantized kernel body (slice `slice` of its row group),
// every lane: the warp's partial sums of rows row0 .. row0+R-1 of each x row
// t, sums[t * R + r]. Without XSM (x from global memory) the warp gets no x
// slots: the copy checks' destination range ends with its unit slots.
template <class F, int R, int S, int KS, int P, bool XSM, bool B, int T = 1>
static void emu_quant_warp(const unsigned char* W, size_t wbuf_bytes, const float* x, gb_u32 m, gb_u32 k,
                           gb_u32 row0, gb_u32 slice, unsigned char* sp, float* sums) {
    typedef unsigned char SlotRow[GbTile<F>::SLOT];
    const size_t slots_bytes = (size_t)S * (R / P) * GbTile<F>::SLOT, xs_bytes = XSM ? quant_xslot_bytes<S, P, T>() : 0;
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
        // summed in lane order, not gb_warp_sum's butterfly: within the tolerance either way
        for (int r = 0; r < T * R; r++) sums[r] += acc[r];
    }
}

// Runs the quantized kernel body over every block, warp and lane: y[T * m]. A
// block is NW row groups x KS slices (gb_gemv_quant). With KS > 1 the block's
// warps run in sequence, each putting its partials (lane r holds row r's) into
// the block's reduction array through the kernel's gb_ksplit_put; only after
// every warp has (the block barrier), slice 0's lanes read them back through
// gb_ksplit_sum and write y. The array is poisoned with NaN per block, so a
// slice that does not write, or a sum that reads a wrong slot, fails. With
// T x rows, x row t has its own part of the array (as the kernel lays it out).
template <class F, int R, int S, int NW, int KS, int P, bool B, int T = 1>
static void emu_quant(const unsigned char* W, size_t wbuf_bytes, const float* x, gb_u32 m, gb_u32 k, float* y) {
    const size_t slots_bytes = (size_t)S * (R / P) * GbTile<F>::SLOT + quant_xslot_bytes<S, P, T>();
    std::vector<unsigned char> slots_mem(slots_bytes + 64 + 16);
    unsigned char* sp = slots_mem.data();
    while ((uintptr_t)sp & 15) sp++;
    const gb_u32 blocks = (m + R * NW - 1) / (R * NW);
    const size_t part = (size_t)NW * KS * R; // one x row's reduction array
    std::vector<float> red(T * part);
    for (gb_u32 blk = 0; blk < blocks; blk++) {
        std::fill(red.begin(), red.end(), NAN);
        for (gb_u32 warp = 0; warp < NW * KS; warp++) {
            gb_u32 group, slice;
            gb_ksplit_warp<KS>(warp, group, slice);
            const gb_u32 row0 = (blk * NW + group) * R;
            if (row0 >= m) continue; // no rows: the kernel skips the work (and, KS = 1, returns)
            float sums[T * R];
            // x through shared memory exactly when the kernel would (GbQuantSmem)
            emu_quant_warp<F, R, S, KS, P, GbQuantSmem<F, R, S, NW, KS, P, B, T>::XSM, B, T>(W, wbuf_bytes, x, m, k, row0, slice, sp, sums);
            for (int t = 0; t < T; t++) {
                if constexpr (KS == 1) { // the kernel writes straight from the warp
                    for (int r = 0; r < R; r++) if (row0 + r < m) y[(size_t)t * m + row0 + r] = sums[t * R + r];
                } else {
                    for (gb_u32 lane = 0; lane < 32; lane++)
                        gb_ksplit_put<R, KS>(red.data() + t * part, group, slice, lane, lane < (gb_u32)R ? sums[t * R + lane] : NAN);
                }
            }
        }
        if constexpr (KS > 1) {
            // __syncthreads: every slice's partials are in red
            for (gb_u32 warp = 0; warp < NW * KS; warp++) {
                gb_u32 group, slice;
                gb_ksplit_warp<KS>(warp, group, slice);
                const gb_u32 row0 = (blk * NW + group) * R;
                if (row0 >= m || slice != 0) continue;
                for (int t = 0; t < T; t++)
                    for (gb_u32 lane = 0; lane < (gb_u32)R; lane++)
                        if (row0 + lane < m)
                            y[(size_t)t * m + row0 + lane] = gb_ksplit_sum<R, KS>(red.data() + t * part, group, lane);
            }
        }
    }
}

template <class D, int R, int U, int T = 1>
static void emu_dense(const unsigned char* W, const float* x, gb_u32 m, gb_u32 k, float* y) {
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

typedef void (*runner)(const unsigned char*, size_t, const float*, gb_u32, gb_u32, float*);

template <class F, int R, int S, int NW = 1, int KS = 1, int P = 1, bool B = false, int T = 1>
static void run_quant(const unsigned char* W, size_t nb, const float* x, gb_u32 m, gb_u32 k, float* y) { emu_quant<F, R, S, NW, KS, P, B, T>(W, nb, x, m, k, y); }
template <class F, int NW, int S, int T = 1>
static void run_mma(const unsigned char* W, size_t nb, const float* x, gb_u32 m, gb_u32 k, float* y) { emu_mma<F, NW, S, T>(W, nb, x, m, k, y); }
template <class D, int R, int U, int T = 1>
static void run_dense(const unsigned char* W, size_t, const float* x, gb_u32 m, gb_u32 k, float* y) { emu_dense<D, R, U, T>(W, x, m, k, y); }

struct Variant { const char* fmt; const char* label; runner fn; };

#endif
