#version 450
// The unfused paths' elementwise step: y[t, n] = bf16(silu(g) * u), g = h[t, n],
// u = h[t, N + n], h [M, 2N] bf16 (the GEMV's output), y [M, N] bf16. An invocation
// writes one word of y (outputs 2i, 2i + 1; past M * N the high half is 0).
// Launch: (h, y, u32 N, u32 M), block 256, grid ceil(ceil(M * N / 2) / 256).
#extension GL_GOOGLE_include_directive : require
#include "swiglu_bf16.glsl"

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0) readonly buffer HBuf { uint H[]; };
layout(set = 0, binding = 1) writeonly buffer YBuf { uint Y[]; };
layout(push_constant) uniform Params {
    uint n;
    uint m;
} P;

float h_at(uint j) {
    uint w = H[j >> 1];
    return (j & 1u) != 0u ? sw_hi(w) : sw_lo(w);
}

float out_at(uint e) {
    uint t = e / P.n, c = e % P.n;
    return sw_silu(h_at(t * 2u * P.n + c)) * h_at(t * 2u * P.n + P.n + c);
}

void main() {
    uint i = gl_GlobalInvocationID.x, total = P.n * P.m;
    if (2u * i >= total) return;
    float hi = 2u * i + 1u < total ? out_at(2u * i + 1u) : 0.0;
    Y[i] = sw_bf16(out_at(2u * i)) | (sw_bf16(hi) << 16);
}
