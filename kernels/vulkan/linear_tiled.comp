#version 450
// The tiled Linear route (docs/kernels/vulkan-linear.md, "tiled"): large T on any device,
// lavapipe included. A workgroup of 256 computes a 64 (n) x 64 (t) tile of y: per slab
// of 32 k it decodes the 64 x 32 weights (each invocation one run of 8, lin_w8) and
// converts the 64 x 32 x to fp32 into shared memory, then every invocation accumulates
// a 4 x 4 register tile from them. 16 KiB of shared memory, within every device's
// minimum. Workgroup x runs over the t tiles, so the workgroups that run together share
// one tile of weights while x (T x K, small) stays in cache.
#extension GL_GOOGLE_include_directive : require
#include "linear_common.glsl"
#include "linear_formats.glsl"

#define BN 64
#define BT 64
#define BK 32

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

// [k][n / 4] and [k][t / 4]: each invocation reads 4 consecutive n (t) as one vec4.
shared vec4 ws[BK][BN / 4];
shared vec4 xs[BK][BT / 4];

void main() {
    uint tid = gl_LocalInvocationIndex;
    uint t0 = gl_WorkGroupID.x * uint(BT), n0 = gl_WorkGroupID.y * uint(BN);
    uint T = P.T, K = P.K;
    // Loading: invocation tid decodes weights (n0 + tid/4, 8 (tid%4) ...) and converts x
    // (t0 + tid/4, same k). Rows past N load row N-1 (never stored); rows past T load 0.
    uint ln = tid >> 2u, lk = (tid & 3u) * 8u;
    uint wrow = min(n0 + ln, P.N - 1u);
    uint xrow = t0 + ln;
    // Computing: a 4 x 4 tile, n = n0 + 4 (tid % 16) + i, t = t0 + 4 (tid / 16) + j.
    uint cn = tid & 15u, ct = tid >> 4u;
    vec4 acc[4]; // acc[j][i]: t = 4 ct + j, n = 4 cn + i
    [[unroll]] for (int j = 0; j < 4; j++) acc[j] = vec4(0.0);

    uint nslab = (K + uint(BK) - 1u) / uint(BK);
    for (uint sl = 0u; sl < nslab; sl++) {
        uint k = sl * uint(BK) + lk;
        vec4 we, wo, xe = vec4(0.0), xo = vec4(0.0);
        lin_w8(wrow, k, we, wo);
        if (xrow < T) lin_bf16x8(lin_x8(xrow, k), xe, xo);
        barrier(); // the previous slab's reads are done
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            ws[lk + 2u * i][ln >> 2u][ln & 3u] = we[i];
            ws[lk + 2u * i + 1u][ln >> 2u][ln & 3u] = wo[i];
            xs[lk + 2u * i][ln >> 2u][ln & 3u] = xe[i];
            xs[lk + 2u * i + 1u][ln >> 2u][ln & 3u] = xo[i];
        }
        barrier();
        [[unroll]] for (uint kk = 0u; kk < uint(BK); kk++) {
            vec4 a = ws[kk][cn], b = xs[kk][ct];
            [[unroll]] for (int j = 0; j < 4; j++) acc[j] += a * b[j];
        }
    }
    [[unroll]] for (uint j = 0u; j < 4u; j++) {
        uint t = t0 + 4u * ct + j;
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            uint n = n0 + 4u * cn + i;
            if (t < T && n < P.N) lin_store(t, n, acc[j][i] * LIN_OUT_SCALE);
        }
    }
}
