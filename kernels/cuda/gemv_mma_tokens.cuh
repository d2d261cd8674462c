// Tensor-core path (gemv_mma.cuh) for T = GEMV_TOKENS > 1 rows of x: the
// eight B columns of m16n8k16 carry four x rows (x_hi and x_lo of each)
// instead of four units of one x row, so each A fragment (a unit's decoded
// codes, 16 rows x 16 k) is decoded once and meets ceil(T / 4) B fragments.
// The unit's C fragment then holds, in lane (g, t), x row 4 nb + t's sums of
// rows g and g + 8 over that unit alone, scaled right away by the (row, unit)
// scale into the lane's accumulators: one scale per unit and lane instead of
// T = 1's column-pair trick, and no quad sum at the end (a lane owns its x
// rows' whole dot products). The offset and min mmas run per unit with the
// same B. Each x row has its own power-of-two scale (from its own max |x|),
// so rows of very different magnitude keep the f16 hi/lo precision.
// docs/kernels/cuda-gemv.md, "Multi-token kernels". Included by gemv_mma.cuh,
// after gb_mma_block, whose helpers it uses.
#ifndef GPUBENCH_GEMV_MMA_TOKENS_CUH
#define GPUBENCH_GEMV_MMA_TOKENS_CUH

#define GB_EACH for (int q = 0; q < Ctx::NT; q++)

// x' = x * xs and y = acc * ys for an x row whose max |x| has the bits xmax:
// max |x'| in [2^14, 2^15), as gb_mma_block.
GB_HD void gb_mma_row_scales(gb_u32 xmax, float& xs, float& ys)
{
    int s = 14 - ((int)(xmax >> 23) - 127);
    s = s < -100 ? -100 : s > 100 ? 100 : s;
    xs = gb_as_float((gb_u32)(127 + s) << 23);
    ys = gb_as_float((gb_u32)(127 - s) << 23) * (SUBN ? 16777216.0f : 1.0f);
}

// Converts tile tt of the T x rows into xb (GbMmaXT layout; one thread's share
// of the ITEMS B registers of each part).
#pragma nv_exec_check_disable
template <class F, int NW, int T, class Ctx>
GB_HD void gb_mma_convert_tokens(Ctx& ctx, const float* x, gb_u32 k, gb_u32 tt, const gb_u32* xmax, unsigned char* xb)
{
    typedef GbMmaXT<F, T> X;
    GB_EACH
    {
        for (gb_u32 item = ctx.tid(q); item < (gb_u32)X::ITEMS; item += 32 * NW) {
            const gb_u32 row = item / (GB_MT / 2), rest0 = item % (GB_MT / 2);
            const gb_u32 p = rest0 & 1, rest = rest0 >> 1, j = rest % X::J, t = (rest / X::J) & 3,
                         u = rest / X::J >> 2;
            float xs, ys;
            gb_mma_row_scales(xmax[row], xs, ys);
            const gb_u32 c0 = F::kcol(u, j, t, 2 * p), c1 = F::kcol(u, j, t, 2 * p + 1);
            const float f = F::k16(u, 2 * p) ? xs * 0.0625f : xs;
            const float* xr = x + (gb_u64)row * k;
            const gb_u32 col0 = tt * GB_MT + c0, col1 = tt * GB_MT + c1;
            const float v0 = (col0 < k ? xr[col0] : 0.0f) * f, v1 = (col1 < k ? xr[col1] : 0.0f) * f;
            const gb_u32 hi = gb_f16x2(v0, v1);
            const gb_u32 lo = gb_f16x2(v0 - gb_half_to_float(hi & 0xFFFF), v1 - gb_half_to_float(hi >> 16));
            const gb_u32 o = (row * X::UNITS + u) * X::UB + t * X::LB + (j * 2 + p) * 4;
            *reinterpret_cast<gb_u32*>(xb + o) = hi;
            *reinterpret_cast<gb_u32*>(xb + o + 2 * F::U) = lo;
        }
    }
}

#pragma nv_exec_check_disable
template <class F, int NW, int S, int T, class Ctx>
GB_HD void gb_mma_block_tokens(Ctx& ctx, const unsigned char* W, const float* x, float* y, gb_u32 m, gb_u32 k,
                               gb_u32 blk, GbMmaShared<F, NW, S, T>& sm)
{
    typedef GbMmaShared<F, NW, S, T> SM;
    typedef GbMmaXT<F, T> X;
    enum { NT = Ctx::NT, J = X::J, NB = X::NB, ITERS = (16 * SM::WORDS + 31) / 32 };
    const gb_u32 row_bytes = k / F::QK * F::BPB;
    const gb_u32 ntiles = (k + GB_MT - 1) / GB_MT;
    const gb_u32 TB = SM::TB;
    const gb_u32 last0 = (m - 1) / 16 * 16; // first row of the last warp with rows

    // ---- per-thread constants (the weights' as gb_mma_block)
    gb_u32 warp[NT], g[NT], tq[NT], row0[NT], off[NT][2], coff[NT][ITERS], xbase[NT][NB], xstep[NT][NB];
    const unsigned char* Wb[NT];
    bool active[NT];
    GB_EACH
    {
        const gb_u32 tid = ctx.tid(q), lane = tid & 31;
        warp[q] = tid >> 5, g[q] = lane >> 2, tq[q] = lane & 3;
        const gb_u32 r0 = (blk * NW + warp[q]) * 16;
        active[q] = r0 < m;
        row0[q] = active[q] ? r0 : last0;
        const gb_u64 first = (gb_u64)row0[q] * row_bytes;
        Wb[q] = W + (first & ~(gb_u64)15);
        for (int h = 0; h < 2; h++) {
            const gb_u32 r = row0[q] + g[q] + 8 * h;
            off[q][h] = (gb_u32)(first & 15) + ((r < m ? r : m - 1) - row0[q]) * row_bytes;
        }
        for (int it = 0; it < ITERS; it++) {
            const gb_u32 i = lane + 32 * it, r = i / SM::WORDS;
            const gb_u32 rr = row0[q] + (r < 16 ? r : 15);
            coff[q][it] = (gb_u32)(first & 15) + ((rr < m ? rr : m - 1) - row0[q]) * row_bytes;
        }
        // B column g of fragment nb: x row 4 nb + g/2, part g%2 (zeros past the T rows)
        for (int nb = 0; nb < NB; nb++) {
            const gb_u32 row = 4 * nb + (g[q] >> 1);
            xbase[q][nb] = row < (gb_u32)T ? row * X::UNITS * X::UB + (g[q] & 1) * 2 * F::U + tq[q] * X::LB : (gb_u32)X::ZERO;
            xstep[q][nb] = row < (gb_u32)T ? (gb_u32)X::UB : 0u;
        }
    }

    // ---- x scales: one power of two per x row (gb_mma_row_scales)
    GB_EACH
    {
        if (ctx.tid(q) < (gb_u32)T) sm.xmax[ctx.tid(q)] = 0;
        if (ctx.tid(q) < 8) { // the zero chunk of both buffers (never written again)
            const gb_u32 i = ctx.tid(q);
            *reinterpret_cast<gb_u32*>(&sm.xb[i >> 2][X::ZERO + 4 * (i & 3)]) = 0;
        }
    }
    ctx.barrier();
#pragma unroll
    for (int row = 0; row < T; row++) {
        GB_EACH
        {
            gb_u32 mx = 0;
            for (gb_u32 i = 4 * ctx.tid(q); i < k; i += 4 * 32 * NW) {
                float v[4];
                gb_load_x<4>(x + (gb_u64)row * k + i, v);
                for (int e = 0; e < 4; e++) {
                    const gb_u32 b = gb_bits(v[e]) & 0x7FFFFFFFu;
                    mx = mx > b ? mx : b;
                }
            }
            ctx.atomic_max(&sm.xmax[row], mx);
        }
    }
    ctx.barrier();

    // ---- prologue: weight tiles 0 .. S-2 in flight, x tile 0 converted
    for (int st = 0; st < S - 1; st++) {
        if ((gb_u32)st < ntiles) gb_mma_stage<F, NW, S>(ctx, Wb, coff, warp, row_bytes, st, st, sm);
        ctx.commit();
    }
    gb_mma_convert_tokens<F, NW, T>(ctx, x, k, 0, sm.xmax, sm.xb[0]);
    ctx.barrier();

    float acc[NT][NB][2];
    GB_EACH for (int nb = 0; nb < NB; nb++) acc[q][nb][0] = acc[q][nb][1] = 0.0f;

    // A constants of the offset and min mmas, as gb_mma_block
    gb_u32 aoff[NT][4], aone[NT][4];
    GB_EACH
    {
        const gb_u32 lo = gb_acode(F::OFF * (F::k16(0, 0) ? 16 : 1)) * 0x10001u;
        const gb_u32 hi = gb_acode(F::OFF * (F::k16(0, 2) ? 16 : 1)) * 0x10001u;
        aoff[q][0] = aoff[q][1] = lo, aoff[q][2] = aoff[q][3] = hi;
        aone[q][0] = aone[q][1] = aone[q][2] = aone[q][3] = gb_acode(1) * 0x10001u;
    }

    for (gb_u32 tt = 0; tt < ntiles; tt++) {
        const gb_u32 tn = tt + S - 1;
        if (tn < ntiles) gb_mma_stage<F, NW, S>(ctx, Wb, coff, warp, row_bytes, tn, tn % S, sm);
        ctx.commit();
        if (tt + 1 < ntiles) gb_mma_convert_tokens<F, NW, T>(ctx, x, k, tt + 1, sm.xmax, sm.xb[(tt + 1) & 1]);
        ctx.template wait<S - 1>();
        ctx.syncwarp();

        const unsigned char* xb = sm.xb[tt & 1];
        const gb_u32 left = k - tt * GB_MT;
        const unsigned char* srow[NT][2];
        gb_u32 delta[NT][2];
        // prep[.][h][4]: the lane's own (quad position tq, for afrag); [b]: quad
        // position b's, whose scales are unit 4G + b's (F::scale)
        typename F::P prep[NT][2][5];
        GB_EACH for (int h = 0; h < 2; h++)
        {
            srow[q][h] = sm.slots[warp[q]][tt % S][g[q] + 8 * h];
            delta[q][h] = (off[q][h] + tt * TB) & 15;
            F::prep(srow[q][h], delta[q][h], tq[q], prep[q][h][4]);
            for (gb_u32 b = 0; b < 4; b++) F::prep(srow[q][h], delta[q][h], b, prep[q][h][b]);
        }
#pragma unroll
        for (gb_u32 G = 0; G < (gb_u32)(X::UNITS / 4); G++) {
#pragma unroll
            for (gb_u32 b = 0; b < 4; b++) {
                const gb_u32 u = 4 * G + b;
                gb_u32 A[NT][J][4];
                float sc[NT][2], mc[NT][2];
                GB_EACH
                {
                    gb_u32 a0[J][2], a1[J][2];
                    F::afrag(srow[q][0], delta[q][0], u, tq[q], prep[q][0][4], a0);
                    F::afrag(srow[q][1], delta[q][1], u, tq[q], prep[q][1][4], a1);
                    for (int j = 0; j < J; j++)
                        A[q][j][0] = a0[j][0], A[q][j][1] = a1[j][0], A[q][j][2] = a0[j][1], A[q][j][3] = a1[j][1];
                    // A unit past k (a partial last tile) holds stale bytes: its
                    // scales may be anything, so they are replaced by 0 (its sums
                    // are 0: B is 0 there).
                    const bool valid = u * F::U < left;
                    for (int h = 0; h < 2; h++) {
                        mc[q][h] = 0.0f;
                        sc[q][h] = F::scale(srow[q][h], delta[q][h], G, b, prep[q][h][b], mc[q][h]);
                        sc[q][h] = valid ? sc[q][h] : 0.0f;
                        mc[q][h] = valid ? mc[q][h] : 0.0f;
                    }
                }
#pragma unroll
                for (int nb = 0; nb < NB; nb++) {
                    gb_u32 B[NT][2 * J];
                    float C[NT][4], Cm[NT][4];
                    GB_EACH
                    {
                        gb_lds_n<2 * J>(xb + xbase[q][nb] + u * xstep[q][nb], B[q]);
                        for (int i = 0; i < 4; i++) C[q][i] = Cm[q][i] = 0.0f;
                    }
#pragma unroll
                    for (int j = 0; j < J; j++) {
                        gb_u32 Aj[NT][4], Bj[NT][2];
                        GB_EACH for (int i = 0; i < 4; i++) Aj[q][i] = A[q][j][i];
                        GB_EACH Bj[q][0] = B[q][2 * j], Bj[q][1] = B[q][2 * j + 1];
                        ctx.mma(C, Aj, Bj);
                        if constexpr (F::OFF != 0) ctx.mma(C, aoff, Bj);
                        if constexpr (F::MIN) ctx.mma(Cm, aone, Bj);
                    }
                    GB_EACH
                    {
                        acc[q][nb][0] = fmaf(sc[q][0], C[q][0] + C[q][1], acc[q][nb][0]);
                        acc[q][nb][1] = fmaf(sc[q][1], C[q][2] + C[q][3], acc[q][nb][1]);
                        if constexpr (F::MIN) {
                            const float sx = (Cm[q][0] + Cm[q][1]) * (F::k16(u, 0) ? 16.0f : 1.0f);
                            acc[q][nb][0] = fmaf(-mc[q][0], sx, acc[q][nb][0]);
                            acc[q][nb][1] = fmaf(-mc[q][1], sx, acc[q][nb][1]);
                        }
                    }
                }
            }
        }
        ctx.barrier(); // x buffer tt&1 and weight slot tt%S are free; x tile tt+1 is written
    }

    // ---- lane (g, tq) holds x row 4 nb + tq's sums of rows g and g + 8
    GB_EACH
    {
        if (active[q]) {
            const gb_u32 r = row0[q] + g[q];
            for (int nb = 0; nb < NB; nb++) {
                const gb_u32 row = 4 * nb + tq[q];
                if (row >= (gb_u32)T) continue;
                float xs, ys;
                gb_mma_row_scales(sm.xmax[row], xs, ys);
                float* yr = y + (gb_u64)row * m;
                if (r < m) yr[r] = acc[q][nb][0] * ys;
                if (r + 8 < m) yr[r + 8] = acc[q][nb][1] * ys;
            }
        }
    }
}

#undef GB_EACH

#endif
