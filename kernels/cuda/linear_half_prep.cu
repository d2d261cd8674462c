// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=0,LN_PREP_HOLD=0,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=0,LN_PREP_HOLD=0,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=0,LN_PREP_HOLD=0,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=0,LN_PREP_HOLD=0,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=256,LN_PREP_HOLD=0,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=256,LN_PREP_HOLD=0,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=256,LN_PREP_HOLD=0,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=256,LN_PREP_HOLD=0,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=0,LN_PREP_HOLD=12,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=0,LN_PREP_HOLD=12,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=0,LN_PREP_HOLD=12,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=0,LN_PREP_HOLD=12,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=256,LN_PREP_HOLD=12,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=256,LN_PREP_HOLD=12,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=256,LN_PREP_HOLD=12,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=256,LN_PREP_HOLD=12,LN_PREP_PERM=0
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=256,LN_PREP_HOLD=0,LN_PREP_PERM=1
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=256,LN_PREP_HOLD=0,LN_PREP_PERM=1
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=256,LN_PREP_HOLD=0,LN_PREP_PERM=1
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=256,LN_PREP_HOLD=0,LN_PREP_PERM=1
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=4,LN_PREP_TILE=256,LN_PREP_HOLD=12,LN_PREP_PERM=1
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=5,LN_PREP_TILE=256,LN_PREP_HOLD=12,LN_PREP_PERM=1
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=6,LN_PREP_TILE=256,LN_PREP_HOLD=12,LN_PREP_PERM=1
// gpubench-compile: entry=linear_half_prep defines=LN_PREP_Q=8,LN_PREP_TILE=256,LN_PREP_HOLD=12,LN_PREP_PERM=1
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
// LN_PREP_HOLD: the chunks of 16 bytes a thread holds, so that a row of up to
// 256 x 8 LN_PREP_HOLD elements is read once (the long rows' twin: 12); 0:
// every row read twice, with half the registers. The block's code:
// ln_half_prep_block (linear_half_prep.cuh), which the host emulation runs.
// LN_PREP_PERM = 1 (tiled only): k permuted inside each unit for the kernel
// that takes its weights from registers (LN_XTILE = 3; ln_ra_k).
// Launch: block (256), grid (T + ceil(N / 8)), T rounded up to BN when tiled.
#include "linear_half_prep.cuh"

#if !defined(LN_PREP_Q) || !defined(LN_PREP_TILE) || !defined(LN_PREP_HOLD) || !defined(LN_PREP_PERM)
#error "linear_half_prep takes the format from -DLN_PREP_Q=4|5|6|8, x's layout from -DLN_PREP_TILE=0|64|128|256 and -DLN_PREP_PERM=0|1, and the chunks a thread holds from -DLN_PREP_HOLD=0|N (lib/gpubench/linear_cuda.lua)"
#endif
#if LN_PREP_PERM != 0 && (LN_PREP_PERM != 1 || LN_PREP_TILE == 0)
#error "LN_PREP_PERM must be 0, or 1 with a tiled copy (LN_PREP_TILE > 0)"
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
// The kernel's context for ln_half_prep_block (linear_half_prep.cuh).
struct LnPrepDev {
    __device__ __forceinline__ gb_u32 thread() const { return threadIdx.x; }
    __device__ __forceinline__ gb_u32 block() const { return blockIdx.x; }
    __device__ __forceinline__ void barrier() const { __syncthreads(); }
    __device__ __forceinline__ gb_u32 warp_max(gb_u32 m) const
    {
        for (int o = 16; o; o >>= 1) {
            const gb_u32 b = __shfl_xor_sync(0xffffffffu, m, o);
            m = b > m ? b : m;
        }
        return m;
    }
    __device__ __forceinline__ uint4 ld16(const unsigned short* p, gb_u32 i) const { return reinterpret_cast<const uint4*>(p)[i]; }
    __device__ __forceinline__ void st16(unsigned short* p, uint4 v) const { *reinterpret_cast<uint4*>(p) = v; }
    __device__ __forceinline__ void st4(unsigned short* p, gb_u32 v) const { *reinterpret_cast<gb_u32*>(p) = v; }
};

extern "C" __global__ void __launch_bounds__(256)
    linear_half_prep(const unsigned short* __restrict__ x, unsigned short* __restrict__ xh, int* __restrict__ ex,
                     const unsigned char* __restrict__ w, unsigned n, unsigned k, unsigned t)
{
    __shared__ gb_u32 part[8];
    LnPrepDev ctx;
    ln_half_prep_block<PrepF, LN_PREP_TILE, LN_PREP_HOLD, LN_PREP_PERM>(ctx, x, xh, ex, w, n, k, t, part);
}
