// Part of the host emulations of the CUDA kernels (tests/cuda_host/
// gemv_emulate.cu through emu_host.cuh, linear_emulate.cu): the CPU model of
// mma.sync m16n8k16, for any 16-bit input type. Needs <cmath> and gb_u32.
#ifndef GPUBENCH_EMU_MMA_CUH
#define GPUBENCH_EMU_MMA_CUH
// CPU model of mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
// over the 32 lanes of one warp (Dec decodes one 16-bit element exactly),
// from the PTX ISA's "Matrix Fragments for mma.m16n8k16 with floating point
// type" (groupID g = lane >> 2, threadID_in_group t = lane % 4):
//   A (16x16, .f16x2 regs a0..a3 holding elements a0..a7, low half first):
//     row = g for a0, a1, a4, a5 and g + 8 for a2, a3, a6, a7;
//     col = 2t + (i & 1) for a0..a3 and 2t + (i & 1) + 8 for a4..a7
//   B (16x8, regs b0, b1 holding b0..b3): row (k) = 2t + (i & 1) for b0, b1,
//     + 8 for b2, b3; col = g
//   C, D (16x8 f32 c0..c3): row = g for c0, c1 and g + 8 for c2, c3; col = 2t + (i & 1)
// Inputs are decoded exactly (f16 and bf16 subnormals included); every
// product is exact. The sum is modelled pessimistically: C plus the 16 products in k order,
// each addition rounded toward zero to f32 (tensor cores truncate; this is at
// least as lossy as one rounding of the exact sum).
static bool mma_round_nearest = false; // the alternative model: exact sum, one rounding
static float rz_add(float a, double p) {
    const double s = (double)a + p;
    float f = (float)s;
    if (std::fabs((double)f) > std::fabs(s)) f = std::nextafter(f, 0.0f);
    return f;
}
template <float (*Dec)(gb_u32)>
static void mma_model_t(float (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2]) {
    double a[16][16], b[16][8];
    float c[16][8];
    for (int lane = 0; lane < 32; lane++) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 8; i++)
            a[g + 8 * ((i >> 1) & 1)][2 * t + (i & 1) + 8 * (i >> 2)] = Dec((A[lane][i >> 1] >> (16 * (i & 1))) & 0xFFFF);
        for (int i = 0; i < 4; i++)
            b[2 * t + (i & 1) + 8 * (i >> 1)][g] = Dec((B[lane][i >> 1] >> (16 * (i & 1))) & 0xFFFF);
        for (int i = 0; i < 4; i++) c[g + 8 * (i >> 1)][2 * t + (i & 1)] = C[lane][i];
    }
    for (int r = 0; r < 16; r++)
        for (int n = 0; n < 8; n++) {
            if (mma_round_nearest) {
                double s = c[r][n];
                for (int kk = 0; kk < 16; kk++) s += a[r][kk] * b[kk][n];
                c[r][n] = (float)s;
            } else {
                float s = c[r][n];
                for (int kk = 0; kk < 16; kk++) s = rz_add(s, a[r][kk] * b[kk][n]);
                c[r][n] = s;
            }
        }
    for (int lane = 0; lane < 32; lane++) {
        const int g = lane >> 2, t = lane & 3;
        for (int i = 0; i < 4; i++) C[lane][i] = c[g + 8 * (i >> 1)][2 * t + (i & 1)];
    }
}

#endif
