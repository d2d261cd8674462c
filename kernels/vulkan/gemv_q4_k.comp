#version 450
// GEMV for q4_k weights (docs/FORMATS.md): 144-byte super-blocks of 256 weights = 9 uvec4:
// [0] fp16 d, fp16 dmin, 12 bytes of packed 6-bit scales/mins; [1..8] 128 bytes qs.
// Weight e: s = e/32, q = nibble of qs[32*(e/64) + e%32] (low if s even), value
// (d*sc[s]) * q - dmin*m[s]. k is a multiple of 256, so rows are 16-byte aligned.
//
// A chunk is one qs uvec4 (v = 0..7) of a super-block: 32 weights, 16 of sub-block
// 2c (low nibbles) and 16 of sub-block 2c+1 (high nibbles), c = v/2. A lane loads the
// header uvec4 (shared by the super-block's 8 chunks, so it comes from L1) and its qs
// uvec4: two 16-byte loads per 32 weights. Per sub-block the sum is
// d*sc * sum(q x) - dmin*m * sum(x), with sum(x) computed once for all GEMV_NR rows.
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint nsb = P.k >> 8u;  // super-blocks per row
    uint nchunks = nsb * 8u;
    uint base[GEMV_NR];
    float acc[GEMV_NR];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
        base[r] = gemv_clamp_row(row0 + uint(r)) * nsb * 9u;
        acc[r] = 0.0;
    }
    const uint T = uint(GEMV_T);
    for (uint ch = tid % T; ch < nchunks; ch += T) {
        uint sb = ch >> 3u, v = ch & 7u, c = v >> 1u;
        // x of the chunk: low-nibble weights at 64c + 16(v&1) + 0..15, high at +32.
        uint xb = sb * 64u + 16u * c + 4u * (v & 1u);
        vec4 xl[4], xh[4];
        [[unroll]] for (int i = 0; i < 4; i++) {
            xl[i] = X[xb + uint(i)];
            xh[i] = X[xb + 8u + uint(i)];
        }
        vec4 ones = vec4(1.0);
        float sxl = dot(xl[0] + xl[1] + xl[2] + xl[3], ones);
        float sxh = dot(xh[0] + xh[1] + xh[2] + xh[3], ones);
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
            uint sbw = base[r] + sb * 9u;
            uvec4 h = W[sbw], q = W[sbw + 1u + v];
            vec2 dd = vec2(unpackHalf2x16(h.x)); // d, dmin
            vec4 sm = gemv_k4_scales(h, c);
            uvec4 lo = q & 0x0F0F0F0Fu, hi = (q >> 4u) & 0x0F0F0F0Fu;
            float ql = dot(gemv_bytes(lo.x, 0.0), xl[0]) + dot(gemv_bytes(lo.y, 0.0), xl[1]) +
                       dot(gemv_bytes(lo.z, 0.0), xl[2]) + dot(gemv_bytes(lo.w, 0.0), xl[3]);
            float qh = dot(gemv_bytes(hi.x, 0.0), xh[0]) + dot(gemv_bytes(hi.y, 0.0), xh[1]) +
                       dot(gemv_bytes(hi.z, 0.0), xh[2]) + dot(gemv_bytes(hi.w, 0.0), xh[3]);
            acc[r] += dd.x * (sm.x * ql + sm.y * qh) - dd.y * (sm.z * sxl + sm.w * sxh);
        }
    }
    gemv_finish(acc, tid, row0);
}
