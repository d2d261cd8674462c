#version 450
// Fused SwiGLU: y[t, n] = bf16(silu(W[n] . x[t]) * (W[N + n] . x[t])) for the packed
// gate/up weight W [2N, K] and x [MT, K], bf16, fp32 accumulation. A workgroup owns
// outputs n0 = 2 * group and n0 + 1: their gate and up rows (swiglu_common.glsl).
// Launch: (W, x, y, u32 N, u32 K), block SW_WG, grid ceil(N / 2).
#extension GL_GOOGLE_include_directive : require
#include "swiglu_common.glsl"

// y [MT, N] bf16 as words; coherent for the half-word atomics of odd N.
layout(set = 0, binding = 2) coherent buffer YBuf { uint Y[]; };

// Sets bf16 element j of Y alone: the other half of its word belongs to another
// workgroup when N is odd.
void store_half(uint j, float v) {
    uint sh = (j & 1u) * 16u;
    atomicAnd(Y[j >> 1], ~(0xFFFFu << sh));
    atomicOr(Y[j >> 1], sw_bf16(v) << sh);
}

void main() {
    uint n0 = gl_WorkGroupID.x * 2u;
    uint n1 = min(n0 + 1u, P.n - 1u); // read (and never stored) when N is odd
    uint words = P.k >> 3u;
    uint row[SW_ROWS] = uint[SW_ROWS](n0 * words, n1 * words, (P.n + n0) * words, (P.n + n1) * words);
    sw_dot_rows(row);
    uint t = gl_LocalInvocationIndex;
    if (t < uint(MT)) {
        float y0 = sw_silu(sw_sum[0 * MT + t]) * sw_sum[2 * MT + t];
        float y1 = sw_silu(sw_sum[1 * MT + t]) * sw_sum[3 * MT + t];
        uint j = t * P.n + n0;
        bool two = n0 + 1u < P.n;
        // A word whose two halves are both this workgroup's is stored whole.
        if (two && (j & 1u) == 0u) {
            Y[j >> 1] = sw_bf16(y0) | (sw_bf16(y1) << 16);
        } else {
            store_half(j, y0);
            if (two) store_half(j + 1u, y1);
        }
    }
}
