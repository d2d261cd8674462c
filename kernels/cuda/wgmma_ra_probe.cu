// gpubench-compile: entry=wgmma_ra_probe defines=GB_ARCH_SPECIFIC=1
// gpubench-compile: entry=wgmma_ra_probe_loop defines=GB_ARCH_SPECIFIC=1
// A probe of wgmma with A from registers (the Linear route's LN_XTILE = 3,
// linear_wgmma.cuh's lw_mma_ra and its fragment layout) against the same
// product with A from shared memory (lw_mma, the form the table's kernels
// use): one warpgroup, D[64 x 256] = A[64 x K] . B[256 x K]^T in fp16 with
// fp32 sums, units of 64 of K as the route's stages hold them (K-major, the
// 128-byte swizzle); the register form's fragments are read from the same A
// tiles by the layout lw_mma_ra states. a: A[64][256], b: B[256][256].
// out[0 .. 128 x 128): each thread's 128 sums from shared A over unit 0,
// out[128 x 128 ..): from register A, in the accumulator order both take
// (lw_mma's comment); out[2 x 128 x 128 ..): each thread's 16 fragment
// words at the end (wgmma_ra_probe).
// mode 0: unit 0, each product waited for before the next; 1: unit 0, the
// four issued back to back, one wait at the end; 2: as 1, the fragments
// inverted in their registers between the issue and the wait (undefined in
// the PTX ISA). wgmma_ra_probe_loop: `units` units (K = 64 units) as
// LN_XTILE = 3's loop runs them: a unit's 16 words computed at its top, then
// per k-step the wait that leaves 3 groups pending, the fragment written,
// the product issued. tests/lua/test_linear_cuda.lua ("wgmma with A from
// registers") checks modes 0, 1 and the loop against the exact product of
// small integers and prints what mode 2 gives.
#include "linear_wgmma.cuh"

#define PROBE_UNITS 4
#define PROBE_BYTES (PROBE_UNITS * (64 + 256) * 128 + 1024)
GB_DYNAMIC_SHARED(PROBE_BYTES)

// word q of k-step kk of unit u of thread (warp w, lane 4 g + t)'s fragment:
// rows 16 w + g (q even) and + 8 (q odd), k 2 t (q < 2) or 2 t + 8 (lw_mma_ra)
__device__ __forceinline__ gb_u32 probe_word(gb_u32 sa, gb_u32 u, int kk, int q, gb_u32 w, gb_u32 g, gb_u32 t)
{
    const gb_u32 row = 16 * w + g + 8 * (q & 1), k = 16 * kk + 2 * t + 8 * (q >> 1);
    gb_u32 v;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(sa + u * 64 * 128 + lw_swz(row, k / 8) + 2 * (k % 8)));
    return v;
}

// The tiles into shared memory (unit u: A's at sa + u * 8 KiB, B's at sb + u * 32 KiB), then
// (SS) the sums of unit 0 with A from shared memory to out[0 ..); returns sa (sb = sa + 32 KiB).
// (The loop kernel without them: with, ptxas serialized its products, C7511.)
template <bool SS = true>
__device__ __forceinline__ gb_u32 probe_start(const unsigned short* a, const unsigned short* b, float* out, gb_u32 tid)
{
    const gb_u32 base = LwDevCtx().shared_base<PROBE_BYTES>(); // 1024-byte aligned, as the route's stages
    const gb_u32 sa = base, sb = base + PROBE_UNITS * 64 * 128;
    for (gb_u32 i = tid; i < PROBE_UNITS * (64 + 256) * 8; i += 128) {
        const gb_u32 u = i / ((64 + 256) * 8), row = i / 8 % (64 + 256), c = i % 8;
        const bool ina = row < 64;
        const gb_u32* src = (const gb_u32*)(ina ? a + row * 256 + 64 * u + 8 * c : b + (row - 64) * 256 + 64 * u + 8 * c);
        const gb_u32 v[4] = { src[0], src[1], src[2], src[3] };
        lw_sts128(ina ? sa + u * 64 * 128 + lw_swz(row, c) : sb + u * 256 * 128 + lw_swz(row - 64, c), v);
    }
    lw_proxy_fence();
    __syncthreads();
    if constexpr (SS) {
        float acc[128];
#pragma unroll
        for (int j = 0; j < 128; j++) acc[j] = 0.0f;
        lw_hold<128>(acc);
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            lw_fence();
            lw_mma<256, true>(acc, lw_desc(sa + 32 * kk), lw_desc(sb + 32 * kk), 1);
            lw_commit();
            lw_wait<0>();
        }
        lw_hold<128>(acc);
#pragma unroll
        for (int j = 0; j < 128; j++) out[tid * 128 + j] = acc[j];
    }
    return sa;
}

// The register form's sums and fragment words to out[128 x 128 ..).
__device__ __forceinline__ void probe_end(float* out, gb_u32 tid, float* acc, gb_u32 (*frag)[4])
{
#pragma unroll
    for (int j = 0; j < 128; j++) out[128 * 128 + tid * 128 + j] = acc[j];
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
#pragma unroll
        for (int q = 0; q < 4; q++) out[2 * 128 * 128 + tid * 16 + 4 * kk + q] = __uint_as_float(frag[kk][q]);
}

// modes 0, 1, 2 (unit 0)
extern "C" __global__ void __launch_bounds__(128) wgmma_ra_probe(const unsigned short* a, const unsigned short* b,
                                                                  float* out, unsigned mode)
{
    const gb_u32 tid = threadIdx.x, w = tid / 32, g = (tid % 32) / 4, t = tid % 4;
    const gb_u32 sa = probe_start(a, b, out, tid), sb = sa + PROBE_UNITS * 64 * 128;
    float acc[128];
#pragma unroll
    for (int j = 0; j < 128; j++) acc[j] = 0.0f;
    gb_u32 frag[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
#pragma unroll
        for (int q = 0; q < 4; q++) frag[kk][q] = probe_word(sa, 0, kk, q, w, g, t);
    lw_hold<128>(acc);
    if (mode == 0) {
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            lw_fence();
            lw_mma_ra<256>(acc, frag[kk], lw_desc(sb + 32 * kk));
            lw_commit();
            lw_wait<0>();
        }
    } else {
        lw_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            lw_mma_ra<256>(acc, frag[kk], lw_desc(sb + 32 * kk));
            lw_commit();
        }
        // mode 2: the SASS has the 16 LOP3s on the pending HGMMAs' A quads before
        // their DEPBAR: right sums say the hardware had read them by then
        if (mode == 2) {
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int q = 0; q < 4; q++) asm volatile("not.b32 %0, %0;\n" : "+r"(frag[kk][q]));
        }
        lw_wait<0>();
    }
    lw_hold<128>(acc);
    probe_end(out, tid, acc, frag);
}

// `units` units in LN_XTILE = 3's order (LwMma::unit_ra): the sums to out[128 x 128 ..)
// only. (ptxas unrolls this loop onto other registers: no pending A register is
// rewritten here, tools/sass_hgmma_a_reuse.py; mode 2 above tests that.)
extern "C" __global__ void __launch_bounds__(128) wgmma_ra_probe_loop(const unsigned short* a, const unsigned short* b,
                                                                       float* out, unsigned units)
{
    const gb_u32 tid = threadIdx.x, w = tid / 32, g = (tid % 32) / 4, t = tid % 4;
    const gb_u32 sa = probe_start<false>(a, b, out, tid), sb = sa + PROBE_UNITS * 64 * 128;
    float acc[128];
#pragma unroll
    for (int j = 0; j < 128; j++) acc[j] = 0.0f;
    gb_u32 frag[4][4];
    lw_hold<128>(acc);
    for (gb_u32 u = 0; u < units; u++) {
        gb_u32 nx[4][4];
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
#pragma unroll
            for (int q = 0; q < 4; q++) nx[kk][q] = probe_word(sa, u, kk, q, w, g, t);
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            lw_wait<3>();
            lw_set_frag(frag[kk], nx[kk][0], nx[kk][1], nx[kk][2], nx[kk][3]);
            lw_fence();
            lw_hold<128>(acc);
            lw_mma_ra<256>(acc, frag[kk], lw_desc(sb + u * 256 * 128 + 32 * kk));
            lw_commit();
            lw_hold<128>(acc);
        }
    }
    lw_wait<0>();
    lw_hold<128>(acc);
#pragma unroll
    for (int j = 0; j < 128; j++) out[128 * 128 + tid * 128 + j] = acc[j];
}
