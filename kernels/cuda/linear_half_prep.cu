// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=0,LN_PREP_HOLD=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=0,LN_PREP_HOLD=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=0,LN_PREP_HOLD=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=0,LN_PREP_HOLD=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=256,LN_PREP_HOLD=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=256,LN_PREP_HOLD=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=256,LN_PREP_HOLD=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=256,LN_PREP_HOLD=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=0,LN_PREP_HOLD=12
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=0,LN_PREP_HOLD=12
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=0,LN_PREP_HOLD=12
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=0,LN_PREP_HOLD=12
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=256,LN_PREP_HOLD=12
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=256,LN_PREP_HOLD=12
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=256,LN_PREP_HOLD=12
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=256,LN_PREP_HOLD=12
// The first launch of a Linear call on the wgmma route with LN_HALF = 1
// (docs/kernels/cuda-linear.md, "Weights in fp16"; the exponents:
// linear_half_prep.cuh): blocks 0 .. T - 1 each take a row t of x, write
// its exponent g to ex[t] and the row as fp16 times 2^-g to xh[t][K]; the
// blocks after the rows of x take 8 rows n of W each, a warp a row, and write
// f of the row's group scales to ex[T + n]. LN_PREP_Q (4, 5, 6, 8) names the
// format, whose planes say where the scales lie. LN_PREP_TILE = BN
// (LN_XTILE = 1): x goes to the tiled copy instead (ln_half_x_at), whose rows
// are T rounded up to BN, those past T and the columns past K zeros; 0: row
// by row, [T][K]. x moves 16 bytes a thread (K is a multiple of 8:
// docs/LINEAR.md; docs/kernels/cuda-linear.md, "The prepass by 16 bytes").
// Launch: block (256), grid (T + ceil(N / 8)), T rounded up to BN when tiled.
#include "linear_half_prep.cuh"

#if !defined(LN_PREP_Q) || !defined(LN_PREP_TILE) || !defined(LN_PREP_HOLD)
#error "linear_half_prep takes the format from -DLN_PREP_Q=4|5|6|8, x's layout from -DLN_PREP_TILE=0|64|128|256 and the chunks a thread holds from -DLN_PREP_HOLD=0|N (lib/gpubench/linear_cuda.lua)"
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
// LN_PREP_HOLD: chunks of 16 bytes a thread holds, so that a row of x of up
// to 256 x 8 LN_PREP_HOLD elements is read once (the long rows' twin, 12);
// 0: every row read twice, once for its largest magnitude, once to convert
// (fewer registers: docs/kernels/cuda-linear.md, "The prepass by 16 bytes")
#define PREP_HOLD (LN_PREP_HOLD > 0 ? LN_PREP_HOLD : 1)
// the tile of the tiled copy (a placeholder where LN_PREP_TILE = 0, never used)
#define LN_PREP_BN (LN_PREP_TILE ? LN_PREP_TILE : 64)

extern "C" __global__ void __launch_bounds__(256)
    linear_half_prep(const unsigned short* __restrict__ x, unsigned short* __restrict__ xh, int* __restrict__ ex,
                     const unsigned char* __restrict__ w, unsigned n, unsigned k, unsigned t)
{
    __shared__ gb_u32 part[8];
    const gb_u32 rows = LN_PREP_TILE ? (t + LN_PREP_BN - 1) / LN_PREP_BN * LN_PREP_BN : t, nunits = (k + 63) / 64;
    // 8-element chunks a row of the copy: the tiled copy's whole units, else K's
    const gb_u32 chunks = LN_PREP_TILE ? 8 * nunits : k / 8;
    if (blockIdx.x < t) {
        const uint4* xv = reinterpret_cast<const uint4*>(x + (gb_u64)blockIdx.x * k);
        const gb_u64 row0 = (gb_u64)blockIdx.x * k; // the row-major copy's row
        auto put = [&](gb_u32 i, uint4 v) {
            *reinterpret_cast<uint4*>(xh + (LN_PREP_TILE ? ln_half_x_at<LN_PREP_BN>(blockIdx.x, 8 * i, nunits) : row0 + 8 * i)) = v;
        };
        // the row read once and held in registers where it fits (its chunks all issued at once), else read twice
        const bool held = LN_PREP_HOLD > 0 && chunks <= 256 * LN_PREP_HOLD;
        uint4 v[PREP_HOLD];
        gb_u32 m = 0;
        if (held) {
#pragma unroll
            for (int j = 0; j < PREP_HOLD; j++) {
                const gb_u32 i = threadIdx.x + 256 * j;
                v[j] = i < k / 8 ? xv[i] : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int j = 0; j < PREP_HOLD; j++) m = ln_half_max8(v[j], m);
        } else {
            for (gb_u32 i = threadIdx.x; i < k / 8; i += 256) m = ln_half_max8(xv[i], m);
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
        if (held) {
#pragma unroll
            for (int j = 0; j < PREP_HOLD; j++) {
                const gb_u32 i = threadIdx.x + 256 * j;
                if (i < chunks) put(i, ln_half_x8(v[j], inv)); // zeros past K (ln_half_x8 of 0 is 0)
            }
        } else {
            for (gb_u32 i = threadIdx.x; i < chunks; i += 256) put(i, i < k / 8 ? ln_half_x8(xv[i], inv) : make_uint4(0, 0, 0, 0));
        }
    } else if (blockIdx.x < rows) {
        // a row of the tiled copy's last tile past T: zeros (its 8-element chunks are 16-byte aligned)
        for (gb_u32 i = threadIdx.x; i < chunks; i += 256)
            *reinterpret_cast<uint4*>(xh + ln_half_x_at<LN_PREP_BN>(blockIdx.x, 8 * i, nunits)) = make_uint4(0, 0, 0, 0);
    } else {
        // a warp a row of W, its lanes over the row's scale words
        const gb_u32 row = (blockIdx.x - rows) * 8 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
        if (row >= n) return;
        gb_u32 m = ln_half_w_max<PrepF>(w, n, k, row, lane, 32);
        for (int o = 16; o; o >>= 1) {
            const gb_u32 b = __shfl_xor_sync(0xffffffffu, m, o);
            m = b > m ? b : m;
        }
        if (lane == 0) ex[t + row] = ln_half_w_exp(m);
    }
}
