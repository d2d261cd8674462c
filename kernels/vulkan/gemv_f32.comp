#version 450
// GEMV for f32 weights: y = W x with W row-major [m, k] f32 (k a multiple of 8).
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
    float acc[GEMV_NR];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
        base[r] = gemv_clamp_row(row0 + uint(r)) * n;
        acc[r] = 0.0;
    }
    const uint T = uint(GEMV_T);
    uint c = tid % T;
    // Four chunks per trip keep 4 * GEMV_NR independent 16-byte loads in flight.
    for (; c + 3u * T < n; c += 4u * T) {
        vec4 x0 = X[c], x1 = X[c + T], x2 = X[c + 2u * T], x3 = X[c + 3u * T];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
            uint b = base[r] + c;
            acc[r] += dot(W[b], x0) + dot(W[b + T], x1) + dot(W[b + 2u * T], x2) +
                      dot(W[b + 3u * T], x3);
        }
    }
    for (; c < n; c += T) {
        vec4 x0 = X[c];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) acc[r] += dot(W[base[r] + c], x0);
    }
    gemv_finish(acc, tid, row0);
}
