// gpubench-compile: entry=wgmma_ra_probe defines=GB_ARCH_SPECIFIC=1
// A probe of wgmma with A from registers (the Linear route's LN_XTILE = 3,
// linear_wgmma.cuh's lw_mma_ra and its fragment layout) against the same
// product with A from shared memory (lw_mma, the form the table's kernels
// use): one warpgroup, D[64 x 256] = A[64 x 64] . B[256 x 64]^T in fp16 with
// fp32 sums, four k-steps. The tiles go to shared memory as the route's
// stages hold them (K-major, the 128-byte swizzle); the register form's
// fragments are read from the same A tile by the layout lw_mma_ra states.
// out[0 .. 128 x 128): each thread's 128 sums from shared A, out[128 x 128 ..):
// from register A, in the accumulator order both take (lw_mma's comment).
// mode 0: each product waited for before the next; 1: the four issued back to
// back, one wait at the end; 2: as 1, the fragments inverted in their
// registers between the issue and the wait. out[2 x 128 x 128 ..): each
// thread's 16 fragment words after the wait (modes 1 and 2).
// tests/lua/test_linear_cuda.lua ("wgmma with A from registers") checks both
// against each other and against the exact product of small integers.
#include "linear_wgmma.cuh"

extern "C" __global__ void __launch_bounds__(128) wgmma_ra_probe(const unsigned short* a, const unsigned short* b,
                                                                  float* out, unsigned mode)
{
    __shared__ __align__(1024) unsigned char tiles[64 * 128 + 256 * 128];
    const gb_u32 tid = threadIdx.x, base = (gb_u32)__cvta_generic_to_shared(tiles);
    const gb_u32 sa = base, sb = base + 64 * 128;
    for (gb_u32 i = tid; i < (64 + 256) * 8; i += 128) {
        const gb_u32 row = i / 8, c = i % 8;
        const gb_u32* src = row < 64 ? (const gb_u32*)(a + row * 64 + 8 * c) : (const gb_u32*)(b + (row - 64) * 64 + 8 * c);
        const gb_u32 v[4] = { src[0], src[1], src[2], src[3] };
        lw_sts128(row < 64 ? sa + lw_swz(row, c) : sb + lw_swz(row - 64, c), v);
    }
    lw_proxy_fence();
    __syncthreads();
    float ss[128];
#pragma unroll
    for (int j = 0; j < 128; j++) ss[j] = 0.0f;
    const gb_u32 w = tid / 32, g = (tid % 32) / 4, t = tid % 4;
    gb_u32 frag[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
        for (int q = 0; q < 4; q++) {
            const gb_u32 row = 16 * w + g + 8 * (q & 1), k = 16 * kk + 2 * t + 8 * (q >> 1);
            const gb_u32 at = sa + lw_swz(row, k / 8) + 2 * (k % 8);
            asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(frag[kk][q]) : "r"(at));
        }
    lw_hold<128>(ss);
#pragma unroll
    for (int kk = 0; kk < 4; kk++) {
        lw_fence();
        lw_mma<256, true>(ss, lw_desc(sa + 32 * kk), lw_desc(sb + 32 * kk), 1);
        lw_commit();
        lw_wait<0>();
    }
    lw_hold<128>(ss);
    // the shared form's sums out, the same registers for the register form's
    float* ra = ss;
#pragma unroll
    for (int j = 0; j < 128; j++) {
        out[tid * 128 + j] = ss[j];
        ss[j] = 0.0f;
    }
    lw_hold<128>(ra);
    if (mode == 0) {
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            lw_fence();
            lw_mma_ra<256>(ra, frag[kk], lw_desc(sb + 32 * kk));
            lw_commit();
            lw_wait<0>();
        }
    } else {
        lw_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            lw_mma_ra<256>(ra, frag[kk], lw_desc(sb + 32 * kk));
            lw_commit();
        }
        // mode 2: the fragments' registers rewritten (inverted in place) before the
        // wait, undefined in the PTX ISA: right sums say the hardware has read them
        // by issue, as ptxas's register reuse assumes (the SASS: LOP3 on the
        // HGMMAs' A registers before their DEPBAR)
        if (mode == 2) {
#pragma unroll
            for (int kk = 0; kk < 4; kk++)
#pragma unroll
                for (int q = 0; q < 4; q++) asm volatile("not.b32 %0, %0;\n" : "+r"(frag[kk][q]));
        }
        lw_wait<0>();
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
#pragma unroll
            for (int q = 0; q < 4; q++) out[2 * 128 * 128 + tid * 16 + 4 * kk + q] = __uint_as_float(frag[kk][q]);
    }
    lw_hold<128>(ra);
#pragma unroll
    for (int j = 0; j < 128; j++) out[128 * 128 + tid * 128 + j] = ra[j];
}
