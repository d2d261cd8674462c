// Host emulation of the CUDA Linear kernels (kernels/cuda/linear_*.cu), run by
// tests/cli/test_linear_emulate.sh: compiled with nvcc as host code, it runs
// the kernels' own loads, decodes, tile loops, x staging, reduction and
// stores (the __host__ __device__ templates of linear_gemv.cuh and
// linear_mma.cuh over arrays of a whole block's threads) with a context that
// checks every access and a CPU model of mma.sync m16n8k16 bf16
// (emu_mma.cuh), and compares with the FP64 reference (host/ref/planar.c,
// linear.c) under docs/LINEAR.md's accuracy rule:
//   - one-hot x: y equals the bf16 of the exactly decoded weight, bit for
//     bit, for every weight of the matrix, every format and route;
//   - random weights and x at ragged N, K not a multiple of 128 and T of 1,
//     3, 8, 9, 16 (memory-bound route) and 1, 17, 69, 130 (tensor-core route);
//   - a NaN or infinity in x makes its row of y non-finite;
//   - every output written exactly once and nothing else; every weight load
//     inside the planes, every x load inside a row's first K elements and a
//     row t < T;
//   - the tensor-core route's x stages and the staged memory-bound route's
//     weight stages under two cp.async models: copies land when issued, and
//     copies land only at the wait that covers them (a stage read before its
//     wait reads poison);
//   - every staged memory-bound route (LN_STAGE >= 2) gives y bit-identical
//     to the unstaged route of its geometry, at K not a multiple of 64 and N
//     not a multiple of the block's rows among others.
// What it cannot check (the real mma.sync, cp.async and barrier timing,
// shuffles) is tests/lua/test_linear_cuda.lua's, on a GPU.
//
// Build (from the repository root, as test_linear_emulate.sh does):
//   for c in ref/formats ref/blocks ref/planar ref/linear core/random; do
//     gcc -O2 -c -Ihost/ref -Ihost/core host/$c.c; done
//   nvcc -O2 -Xcompiler -fno-strict-aliasing -std=c++17 -arch=sm_90 -Ihost/ref \
//     -Ihost/core -Ikernels/cuda -Itests/cuda_host tests/cuda_host/linear_emulate.cu *.o
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "linear_gemv.cuh"
#include "linear_mma.cuh"

extern "C" {
#include "random.h"
#include "ref_planar.h"
}

#include "emu_report.cuh"
#include "emu_guard.cuh"
#include "emu_mma.cuh"
#include "linear_emu_ctx.cuh"
#include "linear_emu_checks.cuh"

int main()
{
    printf("one-hot x: y is the bf16 of every decoded weight, bit for bit\n");
    for (const Route& r : routes()) {
        const bool gemv = r.max_t <= 16;
        check_exact(r, 37, 200, gemv ? 3 : 17);
        check_exact(r, 20, 136, gemv ? r.max_t : 40);
    }
    printf("random weights and x against the FP64 reference\n");
    for (const Route& r : routes()) {
        std::vector<gb_u32> ts;
        if (r.max_t <= 8) ts = {1, 3, r.max_t};
        else if (r.max_t <= 16) ts = {9, r.max_t};
        else ts = {1, 17, 69, 130};
        for (gb_u32 t : ts) {
            check_linear(r, 37, 200, t);
            check_linear(r, 100, 4304, t);
            check_linear(r, 1, 8, t);
            check_linear(r, 33, 136, t);
        }
        check_linear(r, 300, 1152, r.max_t <= 16 ? r.max_t : 64 + 5);
    }
    printf("staged memory-bound routes: y bit-identical to the unstaged geometry's\n");
    for (const Route& r : routes())
        if (r.unstaged)
            for (gb_u32 t : {1u, 3u, r.max_t}) {
                check_identical(r, 37, 200, t);   // K % 64 = 8, N % rows != 0
                check_identical(r, 100, 4304, t); // K % 64 = 16
                check_identical(r, 33, 136, t);
                check_identical(r, 1, 8, t);
                check_identical(r, 64, 1024, t);  // whole blocks and units
                check_identical(r, 70, 2568, t);  // a tail round past several full ones
            }
    printf("non-finite x\n");
    for (const Route& r : routes()) check_nonfinite(r, 21, 264, r.max_t <= 16 ? (r.max_t > 8 ? 10 : 2) : 19);
    printf("tensor-core and staged routes, copies landing only at their wait\n");
    land_at_wait = true;
    for (const Route& r : routes())
        if (r.max_t > 16) { check_linear(r, 37, 200, 69); check_linear(r, 20, 4304, 17); }
        else if (r.unstaged) { check_linear(r, 37, 4304, r.max_t); check_identical(r, 70, 2568, 3); }
    land_at_wait = false;
    printf("one-rounding model of the tensor cores' sums\n");
    mma_round_nearest = true;
    for (const Route& r : routes()) check_linear(r, 37, 4304, r.max_t <= 16 ? r.max_t : 69);
    mma_round_nearest = false;
    printf("worst |y - r| / bound: %.3g\n", worst_seen);
    printf("%s: %d failures\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
