#version 450
// GEMV for bf16 weights: y[t] = W x[t] for GEMV_TOKENS rows t of x, W row-major [m, k]
// bfloat16 (k a multiple of 8).
// A chunk is one uvec4 = 8 weights of a row (16-byte loads), decoded by
// shifting each bf16 into the high half of an f32 (exact); lanes take consecutive chunks.
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

// The 8 bf16 weights of w as two vec4 (elements 0..3, 4..7).
void decode8(uvec4 w, out vec4 wa, out vec4 wb) {
    uvec4 lo = w << 16u, hi = w & 0xFFFF0000u; // even / odd elements
    wa = uintBitsToFloat(uvec4(lo.x, hi.x, lo.y, hi.y));
    wb = uintBitsToFloat(uvec4(lo.z, hi.z, lo.w, hi.w));
}

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint n = P.k >> 3u; // uvec4 chunks per row
    uint base[GEMV_NR];
    float acc[GEMV_ACC];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++) base[r] = gemv_clamp_row(row0 + uint(r)) * n;
    [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
    const uint T = uint(GEMV_T);
    uint c = tid % T;
    // Two chunks per trip: 2 * GEMV_NR weight loads in flight, each decoded once; each
    // token's x chunks are loaded once and used for all GEMV_NR rows.
    for (; c + T < n; c += 2u * T) {
        vec4 w[GEMV_NR][4];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
            uint b = base[r] + c;
            decode8(W[b], w[r][0], w[r][1]);
            decode8(W[b + T], w[r][2], w[r][3]);
        }
        [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
            uint xr = gemv_xrow(t);
            vec4 x0 = X[xr + 2u * c], x1 = X[xr + 2u * c + 1u];
            vec4 x2 = X[xr + 2u * (c + T)], x3 = X[xr + 2u * (c + T) + 1u];
            [[unroll]] for (int r = 0; r < GEMV_NR; r++)
                acc[GEMV_AT(t, r)] += (dot(w[r][0], x0) + dot(w[r][1], x1)) +
                                      (dot(w[r][2], x2) + dot(w[r][3], x3));
        }
    }
    if (c < n) {
        vec4 w[GEMV_NR][2];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) decode8(W[base[r] + c], w[r][0], w[r][1]);
        [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
            uint xc = gemv_xrow(t) + 2u * c;
            vec4 x0 = X[xc], x1 = X[xc + 1u];
            [[unroll]] for (int r = 0; r < GEMV_NR; r++)
                acc[GEMV_AT(t, r)] += dot(w[r][0], x0) + dot(w[r][1], x1);
        }
    }
    gemv_finish(acc, tid, row0);
}
