// Part of the CUDA GEMV kernels' shared code (gemv_common.cuh includes the
// parts in order): the dense GEMV (f32, f16, bf16), whose rows are read with
// direct 16-byte loads instead of through shared memory.
// docs/kernels/cuda-gemv.md, "Common structure".
#ifndef GPUBENCH_GEMV_DENSE_CUH
#define GPUBENCH_GEMV_DENSE_CUH

#include "gemv_warp.cuh"

// ------------------------------------------------------------ dense GEMV
// f32, f16, bf16: rows are 16-byte aligned (k is a multiple of 8), so lanes
// read 16-byte words of R rows directly (a warp reads 512 contiguous bytes per
// row per step), each with the matching x words loaded once for the R rows.
// U steps are issued before any is used, to keep U*R 16-byte loads in flight.
//
// A dense format D provides EPW (elements per 16-byte word) and
// expand(word, out) -> EPW floats.

// Weights are read once: no L1 allocation, so L1 keeps x.
__device__ __forceinline__ uint4 gb_ld_stream(const uint4* p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

GB_HD void gb_ld_w16(const unsigned char* p, gb_u32* out) // p 16-byte aligned, global memory
{
#ifdef __CUDA_ARCH__
    const uint4 v = gb_ld_stream(reinterpret_cast<const uint4*>(p));
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
#else
    gb_ld_u32x4(p, out);
#endif
}

// One lane's partial dot products of rows row0 .. row0+R-1 with the T rows of
// x (acc[t * R + r], added to). T = 1 is the GEMV; for T > 1 each weight word
// is loaded and expanded once and meets the T x words in turn (x row t at
// x + t * k), the x words loaded where they are used rather than all U steps
// ahead, so the registers held grow by the T * R accumulators only.
template <class D, int R, int U, int T = 1>
GB_HD void gb_dense_lane(gb_u32 lane, const unsigned char* W, const float* x, gb_u32 m, gb_u32 k,
                         gb_u32 row0, float* acc)
{
    const gb_u32 words = k / D::EPW; // 16-byte words per row
    gb_u64 base[R];                  // byte offset of each row
#pragma unroll
    for (int r = 0; r < R; r++) base[r] = (gb_u64)(row0 + r < m ? row0 + r : m - 1) * words * 16;
    gb_u32 i = lane;
    if constexpr (T == 1) {
        for (; i + 32 * (U - 1) < words; i += 32 * U) {
            gb_u32 w[U][R][4];
            float xv[U][D::EPW];
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int r = 0; r < R; r++) gb_ld_w16(W + base[r] + 16ull * (i + 32 * u), w[u][r]);
                gb_load_x<D::EPW>(x + (gb_u64)(i + 32 * u) * D::EPW, xv[u]);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
#pragma unroll
                for (int r = 0; r < R; r++) {
                    float v[D::EPW];
                    D::expand(w[u][r], v);
#pragma unroll
                    for (int e = 0; e < D::EPW; e++) acc[r] = fmaf(v[e], xv[u][e], acc[r]);
                }
            }
        }
        for (; i < words; i += 32) { // the last < U steps
            float xv[D::EPW];
            gb_load_x<D::EPW>(x + (gb_u64)i * D::EPW, xv);
#pragma unroll
            for (int r = 0; r < R; r++) {
                gb_u32 w[4];
                gb_ld_w16(W + base[r] + 16ull * i, w);
                float v[D::EPW];
                D::expand(w, v);
#pragma unroll
                for (int e = 0; e < D::EPW; e++) acc[r] = fmaf(v[e], xv[e], acc[r]);
            }
        }
    } else {
        for (; i + 32 * (U - 1) < words; i += 32 * U) {
            gb_u32 w[U][R][4];
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int r = 0; r < R; r++) gb_ld_w16(W + base[r] + 16ull * (i + 32 * u), w[u][r]);
#pragma unroll
            for (int u = 0; u < U; u++) {
                float v[R][D::EPW];
#pragma unroll
                for (int r = 0; r < R; r++) D::expand(w[u][r], v[r]);
#pragma unroll
                for (int t = 0; t < T; t++) {
                    float xv[D::EPW];
                    gb_load_x<D::EPW>(x + (gb_u64)t * k + (gb_u64)(i + 32 * u) * D::EPW, xv);
#pragma unroll
                    for (int r = 0; r < R; r++)
#pragma unroll
                        for (int e = 0; e < D::EPW; e++) acc[t * R + r] = fmaf(v[r][e], xv[e], acc[t * R + r]);
                }
            }
        }
        for (; i < words; i += 32) { // the last < U steps
            float v[R][D::EPW];
#pragma unroll
            for (int r = 0; r < R; r++) {
                gb_u32 w[4];
                gb_ld_w16(W + base[r] + 16ull * i, w);
                D::expand(w, v[r]);
            }
#pragma unroll
            for (int t = 0; t < T; t++) {
                float xv[D::EPW];
                gb_load_x<D::EPW>(x + (gb_u64)t * k + (gb_u64)i * D::EPW, xv);
#pragma unroll
                for (int r = 0; r < R; r++)
#pragma unroll
                    for (int e = 0; e < D::EPW; e++) acc[t * R + r] = fmaf(v[r][e], xv[e], acc[t * R + r]);
            }
        }
    }
}

// Lane r of a warp holds row r of x row t after the reduction: one store per
// lane and x row.
template <class D, int R, int U, int NWARP, int T = 1>
__device__ __forceinline__ void gb_gemv_dense(const unsigned char* W, const float* x, float* y,
                                              gb_u32 m, gb_u32 k)
{
    const gb_u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const gb_u32 row0 = (blockIdx.x * NWARP + warp) * R;
    if (row0 >= m) return;
    if constexpr (T == 1) {
        float acc[R];
#pragma unroll
        for (int r = 0; r < R; r++) acc[r] = 0.0f;
        gb_dense_lane<D, R, U>(lane, W, x, m, k, row0, acc);
#pragma unroll
        for (int r = 0; r < R; r++) acc[r] = gb_warp_sum(acc[r]);
        float mine = acc[0];
#pragma unroll
        for (int r = 1; r < R; r++) mine = lane == (gb_u32)r ? acc[r] : mine;
        if (lane < (gb_u32)R && row0 + lane < m) y[row0 + lane] = mine;
    } else {
        float acc[T * R];
#pragma unroll
        for (int r = 0; r < T * R; r++) acc[r] = 0.0f;
        gb_dense_lane<D, R, U, T>(lane, W, x, m, k, row0, acc);
#pragma unroll
        for (int r = 0; r < T * R; r++) acc[r] = gb_warp_sum(acc[r]);
#pragma unroll
        for (int t = 0; t < T; t++) {
            float mine = acc[t * R];
#pragma unroll
            for (int r = 1; r < R; r++) mine = lane == (gb_u32)r ? acc[t * R + r] : mine;
            if (lane < (gb_u32)R && row0 + lane < m) (y + (gb_u64)t * m)[row0 + lane] = mine;
        }
    }
}

#endif
