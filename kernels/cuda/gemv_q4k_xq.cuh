// The integer-dot q4_k decode (XQ=1; gemv_decode.cuh quantizes x and holds
// what q4_k shares with q5_k, GbKQI): the default of the q4_k GEMV
// (gemv_q4_k.cu) and the decode of the MoE kernels (moe_q4k.cuh). Run a is
// the low nibbles (sub-block 2c), run b the high nibbles (2c+1).
#ifndef GPUBENCH_GEMV_Q4K_XQ_CUH
#define GPUBENCH_GEMV_Q4K_XQ_CUH

#include "gemv_decode.cuh"

struct GbQ4KI : GbKQI<144> {
    struct Wd { gb_u32 q[4]; float4 s; };
    GB_HD static void fetch(const unsigned char* slot, gb_u32 delta, gb_u32 lane, const float* prep, Wd& wd)
    {
        gb_ld_u32x4(slot + delta + 144 * (lane >> 3) + 16 + 16 * (lane & 7), wd.q); // qs[32c + 16h ..]
        wd.s = gb_kq_scales(prep, lane);
    }
    GB_HD static float dot(const Wd& wd, const X& xs)
    {
        int ia = 0, ib = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            ia = gb_dot4i(wd.q[i] & 0x0F0F0F0Fu, xs.a, i, ia);
            ib = gb_dot4u(wd.q[i] & 0xF0F0F0F0u, xs.b, i, ib); // 16 * sum q c: no shift
        }
        return gb_kq_finish(wd.s, ia, ib >> 4, xs); // exact: ib is a multiple of 16
    }
};

#endif
