#version 450
// GEMV for q4_0 weights (docs/FORMATS.md): 18-byte blocks of 32 weights, fp16 d then 16
// bytes qs; element j < 16 is ((qs[j] & 15) - 8) * d, element j + 16 is
// ((qs[j] >> 4) - 8) * d. k is a multiple of 32.
//
// A chunk is one block; lanes take consecutive blocks. Blocks start at even byte
// offsets only (18 bytes) and the shader must not need 8/16-bit storage
// (docs/kernels/vulkan-gemv.md, "Byte alignment"), so W is read as 32-bit words and
// each 4-byte group of qs is funnel-shifted out of two words (gemv_funnel); the shift
// is the same for every field of a block. The last word read may be the 4 bytes past
// the block: the weight buffer carries 16 bytes of slack (gemv.buffer_bytes).
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uint W[]; };

// Dot of the block at byte offset o with x (eight vec4 in xs): sum_j (q_j - 8) x_j * d.
float block_dot(uint o, vec4 xs[8]) {
    float d = GEMV_F16_AT(W, o);
    uint qo = o + 2u; // qs
    uint s = gemv_half_shift(qo), w = qo >> 2u;
    uint u0 = W[w], u1 = W[w + 1u], u2 = W[w + 2u], u3 = W[w + 3u], u4 = W[w + 4u];
    uvec4 q = uvec4(gemv_funnel(u0, u1, s), gemv_funnel(u1, u2, s), gemv_funnel(u2, u3, s),
                    gemv_funnel(u3, u4, s));
    uvec4 lo = q & 0x0F0F0F0Fu, hi = (q >> 4u) & 0x0F0F0F0Fu;
    float sum = dot(gemv_bytes(lo.x, 8.0), xs[0]) + dot(gemv_bytes(lo.y, 8.0), xs[1]) +
                dot(gemv_bytes(lo.z, 8.0), xs[2]) + dot(gemv_bytes(lo.w, 8.0), xs[3]) +
                dot(gemv_bytes(hi.x, 8.0), xs[4]) + dot(gemv_bytes(hi.y, 8.0), xs[5]) +
                dot(gemv_bytes(hi.z, 8.0), xs[6]) + dot(gemv_bytes(hi.w, 8.0), xs[7]);
    return d * sum;
}

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint nb = P.k >> 5u;   // blocks per row
    uint row_bytes = nb * 18u;
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
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) acc[r] += block_dot(base[r] + 18u * b, xs);
    }
    gemv_finish(acc, tid, row0);
}
