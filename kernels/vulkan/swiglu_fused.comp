#version 450
// Fused SwiGLU: y[t, n] = bf16(silu(W[n] . x[t]) * (W[N + n] . x[t])) for the packed
// gate/up weight W [2N, K] and x [MT, K], bf16, fp32 accumulation. A workgroup owns
// outputs n0 = SW_OUT * group .. n0 + SW_OUT - 1: their gate rows (sw_sum rows 0 ..
// SW_OUT - 1) and up rows (SW_OUT ..) (swiglu_common.glsl).
// Launch: (W, x, y, u32 N, u32 K), block SW_WG, grid ceil(N / SW_OUT).
#extension GL_GOOGLE_include_directive : require
#include "swiglu_common.glsl"

#include "swiglu_ystore.glsl"

void main() {
    uint n0 = gl_WorkGroupID.x * uint(SW_OUT);
    uint words = P.k >> 3u;
    uint row[SW_ROWS];
    [[unroll]] for (int i = 0; i < SW_OUT; i++) {
        uint n = min(n0 + uint(i), P.n - 1u); // past N: read (the last output's rows), never stored
        row[i] = n * words;
        row[SW_OUT + i] = (P.n + n) * words;
    }
    sw_dot_rows(row);
    uint t = gl_LocalInvocationIndex;
    if (t < uint(MT)) {
        [[unroll]] for (int i = 0; i < SW_OUT; i += 2) {
            uint na = n0 + uint(i);
            if (na >= P.n) break;
            float y0 = sw_silu(sw_sum[i * MT + int(t)]) * sw_sum[(SW_OUT + i) * MT + int(t)];
            float y1 = sw_silu(sw_sum[(i + 1) * MT + int(t)]) * sw_sum[(SW_OUT + i + 1) * MT + int(t)];
            sw_store_pair(t * P.n + na, y0, y1, na + 1u < P.n);
        }
    }
}
