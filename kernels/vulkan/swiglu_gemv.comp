#version 450
// The chain's GEMV: h[t, r] = bf16(W[r] . x[t]) for the rows of W [R, K] (R even: over
// the packed gate/up weight R = 2N, so h [MT, 2N] is [gate | up] per token) and
// x [MT, K], bf16, fp32 accumulation. A workgroup owns rows SW_ROWS * group .. +
// SW_ROWS - 1 (swiglu_common.glsl); push constant n is R.
// Launch: (W, x, h, u32 R, u32 K), block SW_WG, grid ceil(R / SW_ROWS).
#extension GL_GOOGLE_include_directive : require
#include "swiglu_common.glsl"

layout(set = 0, binding = 2) writeonly buffer HBuf { uint H[]; };

void main() {
    uint r0 = gl_WorkGroupID.x * uint(SW_ROWS);
    uint words = P.k >> 3u;
    uint row[SW_ROWS];
    [[unroll]] for (int r = 0; r < SW_ROWS; r++) row[r] = min(r0 + uint(r), P.n - 1u) * words;
    sw_dot_rows(row);
    uint t = gl_LocalInvocationIndex;
    if (t < uint(MT)) {
        // R is even, so rows r, r + 1 (r even) are the two halves of one word.
        [[unroll]] for (int p = 0; p < SW_ROWS / 2; p++) {
            uint r = r0 + 2u * uint(p);
            if (r < P.n)
                H[(t * P.n + r) >> 1] = sw_bf16(sw_sum[(2 * p) * MT + int(t)])
                                      | (sw_bf16(sw_sum[(2 * p + 1) * MT + int(t)]) << 16);
        }
    }
}
