// The products of one unit, shared by both Linear routes: the A fragments of
// a warp's RT m16 row tiles and the B fragments of its NJ n8 column tiles
// (columns = rows t of x), KS k-steps each, into the accumulators.
// docs/kernels/cuda-linear.md, "The k mapping" and "Scales after the sum".
#ifndef GPUBENCH_LINEAR_TILE_CUH
#define GPUBENCH_LINEAR_TILE_CUH

#include "linear_formats.cuh"

// The mma fragments of k-step ks from the decoded runs of a lane's two rows
// of one m16 tile (g and g + 8: r0, r1) and of its x run (X):
//   A: a0a1 = row g, slots 2t, 2t+1; a2a3 = row g+8; a4a5, a6a7: slots 2t+8, 2t+9
//   B: b0b1 = slots 2t, 2t+1; b2b3 = slots 2t+8, 2t+9 (column g)
GB_HD void ln_afrag(const gb_u32* r0, const gb_u32* r1, int ks, gb_u32* A)
{
    A[0] = r0[2 * ks], A[1] = r1[2 * ks], A[2] = r0[2 * ks + 1], A[3] = r1[2 * ks + 1];
}

// acc[i][j] += the unit's products of row tile i and column tile j, for
// every i < RT and this j (unrolled loops make j a constant). With
// LN_SCALE_AFTER the mmas of each scale group (KG k-steps) sum from zero and
// are added times the rows' fp32 scales s[i][0][grp] (row g) and
// s[i][1][grp] (row g + 8): one FFMA per accumulator and group, and the
// weights stay exact. The callers loop over j outside, so each B fragment is
// loaded once and used by the RT row tiles.
#pragma nv_exec_check_disable
template <int MODE, int KG, int NG, int RT, int NJ, class Ctx>
GB_HD void ln_col(Ctx& ctx, const gb_u32 (*A)[RT][4][4], const gb_u32 (*B)[4][2], const float (*s)[RT][2][NG],
                  float (*acc)[RT][NJ][4], int j)
{
    enum { NT = Ctx::NT };
#pragma unroll
    for (int i = 0; i < RT; i++) {
        float P[NT][4];
        LN_EACH for (int c = 0; c < 4; c++) P[q][c] = MODE == LN_SCALE_AFTER ? 0.0f : acc[q][i][j][c];
#pragma unroll
        for (int ks = 0; ks < 4; ks++) {
            gb_u32 a[NT][4], b[NT][2];
            LN_EACH
            {
                for (int c = 0; c < 4; c++) a[q][c] = A[q][i][ks][c];
                b[q][0] = B[q][ks][0], b[q][1] = B[q][ks][1];
            }
            ctx.mma(P, a, b);
            if (MODE == LN_SCALE_AFTER && ks % KG == KG - 1) {
                LN_EACH for (int c = 0; c < 4; c++)
                {
                    acc[q][i][j][c] = fmaf(s[q][i][c >> 1][ks / KG], P[q][c], acc[q][i][j][c]);
                    P[q][c] = 0.0f;
                }
            }
        }
        if (MODE != LN_SCALE_AFTER) LN_EACH for (int c = 0; c < 4; c++) acc[q][i][j][c] = P[q][c];
    }
}

// The A fragments and scales of a unit from the raw runs of a lane's 2 RT rows.
#pragma nv_exec_check_disable
template <class F, int RT, class Ctx>
GB_HD void ln_decode_unit(const typename F::Raw (*raw)[RT][2], gb_u32 (*A)[RT][4][4], float (*s)[RT][2][F::NG])
{
    LN_EACH
    {
#pragma unroll
        for (int i = 0; i < RT; i++) {
            gb_u32 d[2][8];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                F::decode(raw[q][i][h], d[h]);
#pragma unroll
                for (int grp = 0; grp < F::NG; grp++) s[q][i][h][grp] = F::scale(raw[q][i][h], grp);
            }
#pragma unroll
            for (int ks = 0; ks < 4; ks++) ln_afrag(d[0], d[1], ks, A[q][i][ks]);
        }
    }
}

// The B fragments of the 4 k-steps from a lane's x run (8 words).
GB_HD void ln_bfrag(const gb_u32* X, gb_u32 (*B)[2])
{
#pragma unroll
    for (int ks = 0; ks < 4; ks++) B[ks][0] = X[2 * ks], B[ks][1] = X[2 * ks + 1];
}

#endif
