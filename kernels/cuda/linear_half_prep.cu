// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=256
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=256
// The first launch of a Linear call on the wgmma route with LN_HALF = 1
// (docs/kernels/cuda-linear.md, "Weights in fp16"; the exponents:
// linear_half_prep.cuh): blocks 0 .. T - 1 each take a row t of x, write
// its exponent g to ex[t] and the row as fp16 times 2^-g to xh[t][K]; the
// blocks after the rows of x take 256 rows n of W each and write f of the
// row's group scales to ex[T + n]. LN_PREP_Q (4, 5, 6, 8) names the format,
// whose planes say where the scales lie. LN_PREP_TILE = BN (LN_XTILE = 1):
// x goes to the tiled copy instead (ln_half_x_at), whose rows are T rounded
// up to BN, those past T and the columns past K zeros; 0: row by row, [T][K].
// Launch: block (256), grid (T + ceil(N / 256)), T rounded up to BN when tiled.
#include "linear_half_prep.cuh"

#if !defined(LN_PREP_Q) || !defined(LN_PREP_TILE)
#error "linear_half_prep takes the format from -DLN_PREP_Q=4|5|6|8 and x's layout from -DLN_PREP_TILE=0|64|128|256 (lib/gpubench/linear_cuda.lua)"
#endif
#if LN_PREP_TILE != 0 && LN_PREP_TILE != 64 && LN_PREP_TILE != 128 && LN_PREP_TILE != 256
#error "LN_PREP_TILE must be 0 (rows) or a tile of x, 64, 128 or 256"
#endif
#if LN_PREP_Q == 4
typedef LnQ4 PrepF;
#elif LN_PREP_Q == 5
typedef LnQ5 PrepF;
#elif LN_PREP_Q == 6
typedef LnQ6 PrepF;
#elif LN_PREP_Q == 8
typedef LnW8 PrepF;
#else
#error "LN_PREP_Q must be 4, 5, 6 or 8"
#endif
// the tile of the tiled copy (a placeholder where LN_PREP_TILE = 0, never used)
#define LN_PREP_BN (LN_PREP_TILE ? LN_PREP_TILE : 64)

extern "C" __global__ void __launch_bounds__(256)
    linear_half_prep(const unsigned short* __restrict__ x, unsigned short* __restrict__ xh, int* __restrict__ ex,
                     const unsigned char* __restrict__ w, unsigned n, unsigned k, unsigned t)
{
    __shared__ gb_u32 part[8];
    const gb_u32 rows = LN_PREP_TILE ? (t + LN_PREP_BN - 1) / LN_PREP_BN * LN_PREP_BN : t, nunits = (k + 63) / 64;
    if (blockIdx.x < t) {
        const unsigned short* xr = x + (gb_u64)blockIdx.x * k;
        gb_u32 m = 0;
        for (gb_u32 i = threadIdx.x; i < k; i += 256) {
            const gb_u32 a = xr[i] & 0x7FFFu;
            m = a > m ? a : m;
        }
        for (int o = 16; o; o >>= 1) {
            const gb_u32 b = __shfl_xor_sync(0xffffffffu, m, o);
            m = b > m ? b : m;
        }
        if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = m;
        __syncthreads();
        m = part[0];
        for (int i = 1; i < 8; i++) m = part[i] > m ? part[i] : m;
        const int g = ln_half_x_exp(m);
        if (threadIdx.x == 0) ex[blockIdx.x] = g;
        const float inv = ln_pow2(-g);
        if (LN_PREP_TILE) {
            for (gb_u32 i = threadIdx.x; i < 64 * nunits; i += 256)
                xh[ln_half_x_at<LN_PREP_BN>(blockIdx.x, i, nunits)] = i < k ? (unsigned short)ln_half_x(xr[i], inv) : 0;
        } else {
            unsigned short* hr = xh + (gb_u64)blockIdx.x * k;
            for (gb_u32 i = threadIdx.x; i < k; i += 256) hr[i] = (unsigned short)ln_half_x(xr[i], inv);
        }
    } else if (blockIdx.x < rows) {
        // a row of the tiled copy's last tile past T: zeros
        for (gb_u32 i = threadIdx.x; i < 64 * nunits; i += 256) xh[ln_half_x_at<LN_PREP_BN>(blockIdx.x, i, nunits)] = 0;
    } else {
        const gb_u32 row = (blockIdx.x - rows) * 256 + threadIdx.x;
        if (row >= n) return;
        ex[t + row] = ln_half_w_row<PrepF>(w, n, k, row);
    }
}
