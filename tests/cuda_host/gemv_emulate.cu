// Host emulation of the CUDA GEMV kernels (kernels/cuda/gemv_*.cu), run by
// tests/cli/test_gemv_emulate.sh: compiled with nvcc as host code, it runs the
// kernels' own staging, tile loop, prep step and decode code (the __host__
// __device__ templates of gemv_common.cuh and its parts, with a context that
// copies with memcpy) for every lane of every warp, and compares with the
// project's FP64 reference (host/ref/*.c): bit-exact dequantization with
// one-hot x, and random GEMVs at tolerance 1e-4 over many shapes and
// geometries, the scalar path's split-K (KSPLIT) included: a block's warps in
// sequence, then the kernel's shared-memory reduction (gb_ksplit_put /
// gb_ksplit_sum). Weight and x buffers end at a page boundary followed by an
// inaccessible page, so any read past them faults. What it cannot check
// (cp.async group accounting, barriers, shuffles, cvt.f32.f16) is covered on a
// GPU by tests/lua/test_gemv_cuda.lua.
//
// The tensor-core path (gemv_mma.cuh, MMA=1) runs with a CPU model of
// mma.sync m16n8k16 built from the PTX ISA fragment tables (mma_model in
// emu_host.cuh), a whole block of threads at a time, in two accumulation models.
//
// Three files: this one (the variant lists and main), gemv_emu_common.cuh
// (the kernels compiled as host code, the reference, and through emu_host.cuh
// guarded buffers, the host copy and mma contexts, the runners) and
// emu_checks.cuh (the checks), included in that order;
// docs/kernels/cuda-gemv.md, "How this was verified without a GPU", says what
// the checks cover and which injected bugs they caught.
//
// Build (from the repository root, as test_gemv_emulate.sh does; SUBN=0 builds
// the HSUB2-decode variant):
//   for c in ref/formats ref/blocks ref/dequant ref/gemv core/random; do
//     gcc -O2 -c -Ihost/ref -Ihost/core host/$c.c; done
//   nvcc -O2 -Xcompiler -fno-strict-aliasing -std=c++17 -arch=sm_90 -DSUBN=1 \
//     -Ihost/ref -Ihost/core -Ikernels/cuda tests/cuda_host/gemv_emulate.cu *.o
// (-fno-strict-aliasing: the kernels read shared-memory bytes through wider
// types, which the GPU compiler allows and GCC's optimizer does not.)
#include "gemv_emu_common.cuh"
#include "emu_checks.cuh"

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
