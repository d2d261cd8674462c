// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=1,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=0,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=2,LN_BN=128,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=0,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=128,LN_STAGES=3,LN_WPF=4,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=0,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=1,LN_MT=1,LN_BN=64,LN_STAGES=3,LN_WPF=1,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=0,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=1,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=0,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=16,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=4,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=0,LN_STAGGER=0,LN_HALF=0,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=0,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=128,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=16,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=0,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=128,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=8,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=0,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=0,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=4,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=1,LN_TAIL=0,LN_XTILE=1,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=2,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=1,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=3,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=1,LN_TAIL=0,LN_XTILE=0,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=8,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=1,LN_TAIL=1,LN_XTILE=1,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=4,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=1,LN_TAIL=1,LN_XTILE=1,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=2,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=1,LN_TAIL=1,LN_XTILE=1,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=2,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=1,LN_TAIL=0,LN_XTILE=1,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=2,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=1,LN_EPI=0
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=4,LN_WPF=2,LN_WS=0,LN_KSPLIT=4,LN_CLOSE=1,LN_STAGGER=1,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=1,LN_TAIL=0,LN_XTILE=1,LN_EPI=0
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=6,LN_WPF=1,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=3,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=6,LN_WPF=1,LN_WS=0,LN_KSPLIT=2,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=1,LN_TAIL=0,LN_XTILE=3,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=6,LN_WPF=1,LN_WS=0,LN_KSPLIT=8,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=1,LN_TAIL=1,LN_XTILE=3,LN_EPI=1
// gpubench-compile: entry=linear_wgmma_w8 defines=GB_ARCH_SPECIFIC=1,LN_WG=2,LN_MT=1,LN_BN=256,LN_STAGES=6,LN_WPF=1,LN_WS=0,LN_KSPLIT=1,LN_CLOSE=1,LN_STAGGER=0,LN_HALF=1,LN_XCOPY=1,LN_CLUSTER=0,LN_TAIL=0,LN_XTILE=4,LN_EPI=1
// The wgmma Linear route for w8 weights (sm_90a; docs/kernels/cuda-linear.md):
// y[T, N] = x[T, K] . W[N, K]^T, tiles of 64 LN_MT LN_WG rows x LN_BN rows of x.
// Launch: block (128 (LN_WG + LN_WS)), grid (ceil(T / LN_BN), ceil(N / (64 LN_MT LN_WG)), LN_KSPLIT);
// with LN_KSPLIT > 1 the slices' fp32 sums go to part[LN_KSPLIT][T][N], then linear_reduce.cu, or with
// LN_CLUSTER = 1 (LN_KSPLIT <= 8) the slices of a tile, one cluster, add them in shared memory (part unused).
// With LN_HALF = 1 x is linear_half_prep.cu's fp16 copy and ex its exponents (else ex is not read).
// With LN_TAIL = 1 grid.y counts the tiles of W from the last (the launch after one over the first rows).
// With LN_XTILE = 1 (LN_HALF = 1) x is the prepass's tiled copy, each unit's x one bulk copy; with 3 the
// same with k permuted (LN_PREP_PERM = 1), the weights decoded into wgmma's A fragments in registers (4: a
// diagnostic, each unit's products waited for at its end).
#define LN_ROUTE_WGMMA 1
#include "linear_geometry.cuh"
#include "linear_wgmma.cuh"

static_assert(LN_WS == 0 || LN_KSPLIT == 1, "slices of K are the lockstep kernel's (LN_WS = 0)");
static_assert(LN_WS == 0 || LN_STAGGER == 0, "staggered warpgroups are the lockstep kernel's (LN_WS = 0)");
static_assert(LN_WS == 0 || LN_TAIL == 0, "the tiles from the last are the lockstep kernel's (LN_WS = 0)");
static_assert(LN_WS == 0 || LN_XTILE == 0, "x by bulk copies is the lockstep kernel's (LN_WS = 0)");
GB_DYNAMIC_SHARED((lw_shared_bytes_ws<LnW8, LN_WG, LN_MT, LN_BN, LN_STAGES, LN_WS, LN_HALF, LN_XTILE>()))

extern "C" __global__ void LN_CLUSTER_DIMS __launch_bounds__(128 * (LN_WG + LN_WS), 1)
    linear_wgmma_w8(const unsigned char* __restrict__ w, const unsigned short* __restrict__ x,
                    unsigned short* __restrict__ y, unsigned n, unsigned k, unsigned t, float gscale,
                    float* __restrict__ part, const int* __restrict__ ex)
{
    LwDevCtx ctx;
    if constexpr (LN_WS) ln_wgmma_ws<LnW8, LN_WG, LN_MT, LN_BN, LN_STAGES, LN_WPF, LN_CLOSE, LN_HALF, LN_XCOPY>(ctx, w, x, y, n, k, t, gscale, ex);
    else ln_wgmma<LnW8, LN_WG, LN_MT, LN_BN, LN_STAGES, LN_WPF, LN_KSPLIT, LN_CLOSE, LN_STAGGER, LN_HALF, LN_XCOPY, LN_CLUSTER, LN_TAIL, LN_XTILE, LN_EPI>(ctx, w, x, y, n, k, t, gscale, part, ex);
}
