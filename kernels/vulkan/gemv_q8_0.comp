#version 450
// GEMV for q8_0 weights (docs/FORMATS.md): 34-byte blocks of 32 weights, fp16 d then 32
// signed bytes qs; element j is qs[j] * d. k is a multiple of 32.
//
// A chunk is one block; lanes take consecutive blocks. Blocks start at even byte
// offsets only (34 bytes) and the shader must not need 8/16-bit storage
// (docs/kernels/vulkan-gemv.md, "Byte alignment"), so W is read as 32-bit words and
// each 4-byte group of qs is funnel-shifted out of two words (gemv_funnel). The last
// word read may be the 4 bytes past the block: the weight buffer carries 16 bytes of
// slack (gemv.buffer_bytes).
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uint W[]; };

// Dot of the block at byte offset o with x (eight vec4 in xs): d * sum_j qs_j x_j.
float block_dot(uint o, vec4 xs[8]) {
    float d = GEMV_F16_AT(W, o);
    uint qo = o + 2u; // qs
    uint s = gemv_half_shift(qo), w = qo >> 2u;
    uint u[9];
    [[unroll]] for (int i = 0; i < 9; i++) u[i] = W[w + uint(i)];
    float sum = 0.0;
    [[unroll]] for (int i = 0; i < 8; i++)
        sum += dot(gemv_sbytes(gemv_funnel(u[i], u[i + 1], s)), xs[i]);
    return d * sum;
}

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint nb = P.k >> 5u;   // blocks per row
    uint row_bytes = nb * 34u;
    uint base[GEMV_NR];
    float acc[GEMV_NR];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
        base[r] = gemv_clamp_row(row0 + uint(r)) * row_bytes;
        acc[r] = 0.0;
    }
    const uint T = uint(GEMV_T);
    for (uint b = tid % T; b < nb; b += T) {
        vec4 xs[8];
        [[unroll]] for (int i = 0; i < 8; i++) xs[i] = X[8u * b + uint(i)];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) acc[r] += block_dot(base[r] + 34u * b, xs);
    }
    gemv_finish(acc, tid, row0);
}
