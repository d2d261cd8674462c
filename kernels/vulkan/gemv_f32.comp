#version 450
// GEMV for f32 weights: y[t] = W x[t] for GEMV_TOKENS rows t of x, W row-major [m, k] f32
// (k a multiple of 8).
// A chunk is one vec4 of a row (16-byte loads); lanes of a lane group take
// consecutive chunks, so a subgroup's load covers one contiguous span of a row.
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { vec4 W[]; };

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint n = P.k >> 2u; // vec4 chunks per row
    uint base[GEMV_NR];
    float acc[GEMV_ACC];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++) base[r] = gemv_clamp_row(row0 + uint(r)) * n;
    [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
    const uint T = uint(GEMV_T);
    uint c = tid % T;
    // Four chunks per trip keep 4 * GEMV_NR independent 16-byte loads in flight; each
    // token's x chunks are loaded once and used for all GEMV_NR rows.
    for (; c + 3u * T < n; c += 4u * T) {
        vec4 w[GEMV_NR][4];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
            uint b = base[r] + c;
            w[r][0] = W[b];
            w[r][1] = W[b + T];
            w[r][2] = W[b + 2u * T];
            w[r][3] = W[b + 3u * T];
        }
        [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
            uint xc = gemv_xrow(t) + c;
            vec4 x0 = X[xc], x1 = X[xc + T], x2 = X[xc + 2u * T], x3 = X[xc + 3u * T];
            [[unroll]] for (int r = 0; r < GEMV_NR; r++)
                acc[GEMV_AT(t, r)] += dot(w[r][0], x0) + dot(w[r][1], x1) + dot(w[r][2], x2) +
                                      dot(w[r][3], x3);
        }
    }
    for (; c < n; c += T) {
        vec4 w[GEMV_NR];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) w[r] = W[base[r] + c];
        [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
            vec4 x0 = X[gemv_xrow(t) + c];
            [[unroll]] for (int r = 0; r < GEMV_NR; r++) acc[GEMV_AT(t, r)] += dot(w[r], x0);
        }
    }
    gemv_finish(acc, tid, row0);
}
