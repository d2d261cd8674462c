#version 450
// GEMV for f16 weights: y = W x with W row-major [m, k] IEEE binary16 (k a multiple of 8).
// A chunk is one uvec4 = 8 weights of a row (16-byte loads), decoded with
// unpackHalf2x16 (exact, subnormals kept); lanes take consecutive chunks.
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

// Dot of 8 f16 weights with x[2c .. 2c+1] (two vec4).
float dot8(uvec4 w, vec4 xa, vec4 xb) {
    vec4 wa = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
    vec4 wb = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
    return dot(wa, xa) + dot(wb, xb);
}

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint n = P.k >> 3u; // uvec4 chunks per row
    uint base[GEMV_NR];
    float acc[GEMV_NR];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
        base[r] = gemv_clamp_row(row0 + uint(r)) * n;
        acc[r] = 0.0;
    }
    const uint T = uint(GEMV_T);
    uint c = tid % T;
    // Two chunks per trip: 2 * GEMV_NR weight loads in flight, x reused GEMV_NR times.
    for (; c + T < n; c += 2u * T) {
        vec4 x0 = X[2u * c], x1 = X[2u * c + 1u];
        vec4 x2 = X[2u * (c + T)], x3 = X[2u * (c + T) + 1u];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
            uint b = base[r] + c;
            acc[r] += dot8(W[b], x0, x1) + dot8(W[b + T], x2, x3);
        }
    }
    if (c < n) {
        vec4 x0 = X[2u * c], x1 = X[2u * c + 1u];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) acc[r] += dot8(W[base[r] + c], x0, x1);
    }
    gemv_finish(acc, tid, row0);
}
