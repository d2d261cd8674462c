// Multi-token q4_k GEMV on the int8 tensor cores: y[T, m] = x[T, k] . W^T for
// T = 1..8 rows of x, each weight read once (gemv_q4_k_i8.cu; the design and
// its instruction budget: docs/kernels/cuda-gemv.md, "T = 8 on the H200").
//
// mma.sync m16n8k32 .s8.s8.s32: A = 16 weight rows x 32 columns of one
// sub-block as their 4-bit codes (one mask per 4 codes), B = the same 32
// columns of the T x rows (columns of the mma; zero past T), as 16-bit
// integers split into two int8 digits, x ~ dx (256 h + l): two mmas (h, l),
// whose sum 256 C_h + C_l is exactly sum q * round(x / dx), so x keeps 16 bits
// like the scalar path's integer dot. Per (row, sub-block) the result is
// scaled by d sc dx; the mins subtract dmin m sum(x) with sum(x) exact.
//
// Which column sits in which k slot is free as long as A and B agree: lane
// (g, t) = (lane / 4, lane % 4) takes bytes 8t .. 8t + 7 of a 32-byte run of
// its rows g and g + 8 (low nibbles: sub-block 2c, high: 2c + 1), so its
// k slots 4t .. 4t + 3 hold columns 8t .. 8t + 3 and slots 16 + 4t .. those of
// 8t + 4 .. 8t + 7, and B's lane reads x row g at the same 8 columns: one
// 8-byte load each.
//
// A block is NW warps of 16 rows times KS slices of k; per step of KS
// super-blocks of 256 columns its threads first quantize the T x rows' 8
// sub-blocks of each into shared memory (one thread per (slice, row of x,
// sub-block)), then each warp runs its slice's 8 sub-blocks: two barriers per
// step. More slices put more warps on the same rows (14336 rows are only 896
// warps of 16) while x's quantization stays shared by the block's 16 NW rows. Every per-thread value is an array over Ctx::NT threads:
// NT = 1 on the GPU, a whole block in the host emulation
// (tests/cuda_host/gemv_i8_emulate.cu), where each phase runs for every thread
// before the next, which is what the barriers enforce here.
#ifndef GPUBENCH_GEMV_Q4K_I8_CUH
#define GPUBENCH_GEMV_Q4K_I8_CUH

#include "gemv_decode.cuh" // gb_k_scales: the 6-bit scales and mins, four per word

#define GB_I8_EACH for (int q = 0; q < Ctx::NT; q++)

enum {
    GB_I8_SB = 144,      // bytes of a q4_k super-block: d, dmin, 12 scale bytes, 128 code bytes
    GB_I8_XROW = 256 + 32, // bytes of one x row's digits per super-block: 32 of padding put the
                           // 8 rows of a half-warp's 8-byte B loads on distinct banks
    GB_I8_QMAX = 32639   // |round(x / dx)| <= QMAX keeps both digits in [-128, 127]
};

template <int T>
struct alignas(16) GbI8Smem { // the digit rows are read 8 bytes at a time
    signed char xh[T][GB_I8_XROW], xl[T][GB_I8_XROW]; // the digits of x' = round(x / dx)
    float dx[T][8], sx[T][8];                         // per (row of x, sub-block): dx and sum(x)
};

// The two digits of q in [-QMAX, QMAX]: q = 256 h + l, h and l in [-128, 127].
GB_HD void gb_i8_digits(int q, int& h, int& l)
{
    h = (q + 128) >> 8; // arithmetic shift: floor
    l = q - 256 * h;
}

// round to nearest even, as cvt.rni.s32.f32
GB_HD int gb_i8_round(float v)
{
#ifdef __CUDA_ARCH__
    return __float2int_rn(v);
#else
    return (int)nearbyintf(v);
#endif
}

// QMAX / mx for mx > 0, a little low: the fast reciprocal on the GPU errs by
// a few ulp, and 1 - 2^-20 keeps |x| inv below QMAX + 1/2, so |q| <= QMAX.
GB_HD float gb_i8_scale(float mx)
{
#ifdef __CUDA_ARCH__
    return __fdividef((float)GB_I8_QMAX * (1.0f - 0x1p-20f), mx);
#else
    return (float)GB_I8_QMAX * (1.0f - 0x1p-20f) / mx;
#endif
}

// The digits of four q as two words of four bytes: l = q's low byte (signed,
// q - 256 h), h = byte 1 of q + 128 (gb_i8_digits' h, which fits a byte).
GB_HD void gb_i8_pack(const int* qv, gb_u32& hw, gb_u32& lw)
{
    const gb_u32 l01 = gb_prmt((gb_u32)qv[0], (gb_u32)qv[1], 0x0040u), l23 = gb_prmt((gb_u32)qv[2], (gb_u32)qv[3], 0x0040u);
    const gb_u32 h0 = (gb_u32)(qv[0] + 128), h1 = (gb_u32)(qv[1] + 128), h2 = (gb_u32)(qv[2] + 128),
                 h3 = (gb_u32)(qv[3] + 128);
    const gb_u32 h01 = gb_prmt(h0, h1, 0x0051u), h23 = gb_prmt(h2, h3, 0x0051u);
    lw = gb_prmt(l01, l23, 0x5410u);
    hw = gb_prmt(h01, h23, 0x5410u);
}

// Quantizes (row of x t, sub-block j) of super-block sb into the shared
// digits: 32 values by 8 16-byte loads, their digits stored 4 to a word.
template <int T>
GB_HD void gb_i8_quantize(const float* x, gb_u32 k, gb_u32 sb, gb_u32 t, gb_u32 j, GbI8Smem<T>& sm)
{
    const float4* v4 = reinterpret_cast<const float4*>(x + (gb_u64)t * k + 256u * sb + 32u * j);
    float v[32];
    #pragma unroll
    for (int i = 0; i < 8; i++) {
        const float4 f = v4[i];
        v[4 * i] = f.x, v[4 * i + 1] = f.y, v[4 * i + 2] = f.z, v[4 * i + 3] = f.w;
    }
    float mx = 0.0f, sum = 0.0f;
    #pragma unroll
    for (int i = 0; i < 32; i++) {
        mx = fmaxf(mx, fabsf(v[i]));
        sum += v[i];
    }
    const float inv = mx > 0.0f ? gb_i8_scale(mx) : 0.0f;
    #pragma unroll
    for (int w = 0; w < 8; w++) {
        int qv[4];
        #pragma unroll
        for (int b = 0; b < 4; b++) qv[b] = gb_i8_round(v[4 * w + b] * inv);
        gb_u32 hw, lw;
        gb_i8_pack(qv, hw, lw);
        *reinterpret_cast<gb_u32*>(&sm.xh[t][32 * j + 4 * w]) = hw;
        *reinterpret_cast<gb_u32*>(&sm.xl[t][32 * j + 4 * w]) = lw;
    }
    // dx = 1 / inv (the product's constant folded): q dx = x to within x's step
    sm.dx[t][j] = mx * (1.0f / ((float)GB_I8_QMAX * (1.0f - 0x1p-20f)));
    sm.sx[t][j] = sum;
}

// A block's shared memory: the digits of KS super-blocks (one per k slice),
// and after the last super-block the slices' partial sums in the same bytes.
template <int T, int NW, int KS>
struct alignas(16) GbI8Block {
    union {
        GbI8Smem<T> s[KS];
        float red[KS > 1 ? KS - 1 : 1][NW][32][4];
    };
};

// A lane's loads of one super-block of its rows g and g + 8: the 16-byte
// headers (d, dmin, scales) and 4 code words of 8 bytes each.
struct GbI8Raw {
    uint4 xa, xb;
    uint2 va[4], vb[4];
};

// Super-block sb of the rows starting at ra and rb into r; nothing where sb
// is past the last (nsb), r then keeps what it held.
template <class Ctx>
GB_HD void gb_i8_load(Ctx& ctx, const unsigned char* ra, const unsigned char* rb, gb_u32 sb, gb_u32 nsb, gb_u32 tq,
                      GbI8Raw& r)
{
    if (sb >= nsb) return;
    const unsigned char *a = ra + (gb_u64)sb * GB_I8_SB, *b = rb + (gb_u64)sb * GB_I8_SB;
    r.xa = ctx.ld16(a), r.xb = ctx.ld16(b);
    #pragma unroll
    for (int c = 0; c < 4; c++) r.va[c] = ctx.ld8(a + 16 + 32 * c + 8 * tq), r.vb[c] = ctx.ld8(b + 16 + 32 * c + 8 * tq);
}

// Block blk: NW row warps x KS k slices (warp w: rows of w % NW, slice w / NW).
// Step i takes super-blocks i KS .. i KS + KS - 1, one per slice: the block
// quantizes their x digits, each warp runs its own; the slices' sums meet in
// shared memory at the end. A step's weights are loaded before its
// quantization (PF = 0), or during the previous step's mmas (PF = 1).
template <int NW, int KS, int PF, int T, class Ctx>
GB_HD void gb_i8_q4k_block(Ctx& ctx, const unsigned char* W, const float* x, float* y, gb_u32 m, gb_u32 k,
                           gb_u32 blk, GbI8Block<T, NW, KS>& sm)
{
    static_assert(T >= 1 && T <= 8, "GEMV_TOKENS must be 1..8: the mma has 8 columns");
    enum { NT = Ctx::NT, UNITS = 8 * T * KS, THREADS = 32 * NW * KS };
    const gb_u32 nsb = k / 256, row_bytes = nsb * GB_I8_SB, steps = (nsb + KS - 1) / KS;
    gb_u32 g[NT], tq[NT], r0[NT], sl[NT], rw[NT];
    const unsigned char *pa[NT], *pb[NT]; // rows g and g + 8 (the last row where those are past m)
    float acc[NT][4];
    GbI8Raw cur[NT];
    GB_I8_EACH
    {
        const gb_u32 tid = ctx.tid(q), lane = tid & 31, w = tid >> 5;
        g[q] = lane >> 2, tq[q] = lane & 3, rw[q] = w % NW, sl[q] = w / NW;
        r0[q] = (blk * NW + rw[q]) * 16;
        const gb_u32 ra = r0[q] + g[q], rb = ra + 8;
        pa[q] = W + (gb_u64)(ra < m ? ra : m - 1) * row_bytes;
        pb[q] = W + (gb_u64)(rb < m ? rb : m - 1) * row_bytes;
        #pragma unroll
        for (int i = 0; i < 4; i++) acc[q][i] = 0.0f;
        gb_i8_load(ctx, pa[q], pb[q], sl[q], nsb, tq[q], cur[q]);
    }
    for (gb_u32 st = 0; st < steps; st++) {
        GB_I8_EACH for (gb_u32 u = ctx.tid(q); u < (gb_u32)UNITS; u += THREADS)
        {
            const gb_u32 ss = u / (8 * T), r = u % (8 * T), sbq = st * KS + ss;
            if (sbq < nsb) gb_i8_quantize<T>(x, k, sbq, r >> 3, r & 7, sm.s[ss]);
        }
        ctx.barrier();
        GbI8Raw nxt[NT];
        bool go[NT], any = false; // go: the warp's super-block of this step exists (warp-uniform on the GPU)
        GB_I8_EACH
        {
            if (PF) gb_i8_load(ctx, pa[q], pb[q], (st + 1) * KS + sl[q], nsb, tq[q], nxt[q]);
            go[q] = st * KS + sl[q] < nsb;
            any = any || go[q];
        }
        if (any) {
            // the scales of the lane's two rows and its code words (zero for a warp past m or a missing super-block)
            float da[NT], db[NT], ma[NT], mb[NT];
            gb_u32 sca[NT][2], mna[NT][2], scb[NT][2], mnb[NT][2], wa[NT][4][2], wb[NT][4][2]; // [j / 4]: byte j % 4
            GB_I8_EACH
            {
                const bool live = r0[q] < m && go[q];
                const uint4 xa = cur[q].xa, xb = cur[q].xb;
#pragma unroll
                for (int u = 0; u < 2; u++) {
                    gb_k_scales(xa.y, xa.z, xa.w, u == 1, sca[q][u], mna[q][u]);
                    gb_k_scales(xb.y, xb.z, xb.w, u == 1, scb[q][u], mnb[q][u]);
                }
                da[q] = gb_half_to_float(xa.x & 0xFFFF), ma[q] = gb_half_to_float(xa.x >> 16);
                db[q] = gb_half_to_float(xb.x & 0xFFFF), mb[q] = gb_half_to_float(xb.x >> 16);
                #pragma unroll
                for (int c = 0; c < 4; c++) {
                    wa[q][c][0] = live ? cur[q].va[c].x : 0, wa[q][c][1] = live ? cur[q].va[c].y : 0;
                    wb[q][c][0] = live ? cur[q].vb[c].x : 0, wb[q][c][1] = live ? cur[q].vb[c].y : 0;
                }
            }
            #pragma unroll
            for (int c = 0; c < 4; c++) {
                #pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int j = 2 * c + h;
                    gb_u32 A[NT][4], Bh[NT][2], Bl[NT][2];
                    int Ch[NT][4], Cl[NT][4];
                    GB_I8_EACH
                    {
                        const gb_u32 M = 0x0F0F0F0Fu, s = 4u * h;
                        A[q][0] = (wa[q][c][0] >> s) & M, A[q][1] = (wb[q][c][0] >> s) & M;
                        A[q][2] = (wa[q][c][1] >> s) & M, A[q][3] = (wb[q][c][1] >> s) & M;
                        const bool has = g[q] < (gb_u32)T;
                        const gb_u32 o = 32u * j + 8u * tq[q], r = has ? g[q] : 0;
                        const GbI8Smem<T>& d = sm.s[sl[q]];
                        const uint2 vh = ctx.ld8s(&d.xh[r][o]), vl = ctx.ld8s(&d.xl[r][o]);
                        Bh[q][0] = has ? vh.x : 0, Bh[q][1] = has ? vh.y : 0;
                        Bl[q][0] = has ? vl.x : 0, Bl[q][1] = has ? vl.y : 0;
                    }
                    ctx.mma_s8(Ch, A, Bh);
                    ctx.mma_s8(Cl, A, Bl);
                    GB_I8_EACH
                    {
                        if (!go[q]) continue;
                        const GbI8Smem<T>& d = sm.s[sl[q]];
                        const gb_u32 sh = 8u * (j & 3);
                        const float ka = (float)((sca[q][j >> 2] >> sh) & 0xFF), kma = (float)((mna[q][j >> 2] >> sh) & 0xFF);
                        const float kb = (float)((scb[q][j >> 2] >> sh) & 0xFF), kmb = (float)((mnb[q][j >> 2] >> sh) & 0xFF);
                        #pragma unroll
                        for (int i = 0; i < 4; i++) {
                            const gb_u32 t = 2u * tq[q] + (i & 1);
                            if (t >= (gb_u32)T) continue;
                            const float ds = i < 2 ? da[q] * ka : db[q] * kb;
                            const float dm = i < 2 ? ma[q] * kma : mb[q] * kmb;
                            const float v = (float)(256 * Ch[q][i] + Cl[q][i]);
                            acc[q][i] = fmaf(ds * d.dx[t][j], v, fmaf(-dm, d.sx[t][j], acc[q][i]));
                        }
                    }
                }
            }
        }
        ctx.barrier(); // every warp done with this step's digits before the next overwrite them
        GB_I8_EACH
        {
            if (PF) cur[q] = nxt[q];
            else gb_i8_load(ctx, pa[q], pb[q], (st + 1) * KS + sl[q], nsb, tq[q], cur[q]);
        }
    }
    if (KS > 1) { // the last barrier above freed the digits: slices 1.. leave their sums there
        GB_I8_EACH if (sl[q] > 0)
        {
            const gb_u32 lane = ctx.tid(q) & 31;
            #pragma unroll
            for (int i = 0; i < 4; i++) sm.red[sl[q] - 1][rw[q]][lane][i] = acc[q][i];
        }
        ctx.barrier();
    }
    GB_I8_EACH if (sl[q] == 0)
    {
        const gb_u32 lane = ctx.tid(q) & 31;
        #pragma unroll
        for (int i = 0; i < 4; i++) {
            float v = acc[q][i];
            #pragma unroll
            for (int s = 1; s < KS; s++) v += sm.red[s - 1][rw[q]][lane][i];
            const gb_u32 row = r0[q] + g[q] + 8u * (i >> 1), t = 2u * tq[q] + (i & 1);
            if (row < m && t < (gb_u32)T) y[(gb_u64)t * m + row] = v;
        }
    }
}

#ifdef __CUDA_ARCH__
// The GPU context: the calling thread (NT = 1), its loads, the block barrier
// and the warp's mma.
struct GbI8DevCtx {
    enum { NT = 1 };
    __device__ __forceinline__ gb_u32 tid(int) const { return threadIdx.x; }
    __device__ __forceinline__ void barrier() { __syncthreads(); }
    __device__ __forceinline__ uint4 ld16(const unsigned char* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }
    __device__ __forceinline__ uint2 ld8(const unsigned char* p) { return __ldg(reinterpret_cast<const uint2*>(p)); }
    __device__ __forceinline__ uint2 ld8s(const signed char* p) { return *reinterpret_cast<const uint2*>(p); }
    __device__ __forceinline__ void mma_s8(int (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2])
    {
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%10,%10,%10,%10};"
                     : "=r"(C[0][0]), "=r"(C[0][1]), "=r"(C[0][2]), "=r"(C[0][3])
                     : "r"(A[0][0]), "r"(A[0][1]), "r"(A[0][2]), "r"(A[0][3]), "r"(B[0][0]), "r"(B[0][1]), "r"(0));
    }
};
#endif

#endif
