#version 450
// GEMV for q4_k weights (docs/FORMATS.md): 144-byte super-blocks of 256 weights = 9 uvec4:
// [0] fp16 d, fp16 dmin, 12 bytes of packed 6-bit scales/mins; [1..8] 128 bytes qs.
// Weight e: s = e/32, q = nibble of qs[32*(e/64) + e%32] (low if s even), value
// (d*sc[s]) * q - dmin*m[s]. k is a multiple of 256, so rows are 16-byte aligned.
// y[t] = W x[t] for each of the GEMV_TOKENS rows t of x (gemv_common.glsl, "Tokens").
//
// The float kernel: a chunk is one qs uvec4 (v = 0..7) of a super-block: 32 weights, 16
// of sub-block 2c (low nibbles) and 16 of sub-block 2c+1 (high nibbles), c = v/2. A lane
// loads the header uvec4 (shared by the super-block's 8 chunks, so it comes from L1) and
// its qs uvec4: two 16-byte loads per 32 weights. Per sub-block the sum is
// d*sc * sum(q x) - dmin*m * sum(x), with sum(x) computed once per token for all GEMV_NR
// rows. Each row's chunk is decoded once and used for every token.
//
// -DGEMV_IDOT=1 (with GEMV_XB) compiles the integer-dot-product kernel instead (gemv_idot.glsl;
// any GEMV_TOKENS; gemv_vulkan.for_device picks it on devices with shaderIntegerDotProduct).
// Without GEMV_IDOT, or with 0, the float kernel below.
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

#ifndef GEMV_IDOT
#define GEMV_IDOT 0
#endif

#if GEMV_IDOT
#if GEMV_IDOT != 1
#error "q4_k has one integer layout, GEMV_IDOT=1: its rows are 16-byte aligned, nothing to funnel"
#endif
#if (GEMV_XB % 8) != 0
#error "q4_k's GEMV_XB must be a multiple of 8 (whole super-blocks per slice of x)"
#endif
// The integer path (gemv_idot.glsl; docs/kernels/vulkan-gemv.md, "Integer path", q4_k). x blocks
// are q4_k's sub-blocks, so per sub-block s with x scale s_b and integer sums
//   dot = sum q xq (q 0..15),   y += s_b * (d*sc[s] * dot - dmin*m[s] * sum xq)
// which is sum_i (d*sc*q_i - dmin*m) * s_b*xq_i: the whole dequantized weight meets the rounded
// x (the mins through the block's quantized sum, not x's float sum), so the oracle's x-rounding
// term is q8_0's and q4_0's (gemv_bench.x_rounding_term). A chunk is a lane's pair of sub-blocks
// 2c, 2c+1 of one super-block: qs bytes 32c .. 32c+31 (two uvec4), low nibbles against block 2c,
// high nibbles masked in place (16 q, the 16 shifted out of the exact sum) against block 2c+1.
// |dot| <= 32 * 15 * 32767 < 2^24: exact as a float; 256 * |SUDot(xh, 16 q)| < 2^28.
#define GEMV_IDOT_SUM
#define GEMV_IDOT_PAIRS
#define GEMV_IDOT_TOKENS
#include "gemv_idot.glsl"

void main() {
    uint tid = gemv_tid();
    uint nb = P.k >> 5u; // blocks of x (sub-blocks) per row
    const uint T = uint(GEMV_T), XB = uint(GEMV_XB);
    uint lane = tid % T, group = tid / T;
    // x of every token fits: quantized once for all the workgroup's tiles (the only case
    // gemv_vulkan.for_device picks). Else each tile quantizes it again, a slice of XB blocks at
    // a time: the path that takes T = 8 at k = 5120 in 48 KiB.
    bool whole = nb <= XB;
    if (whole) gemv_idot_quantize(tid, 0u);
    uint tiles = gemv_idot_tiles();
    for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) {
        uint row0 = tile * uint(GEMV_ROWS) + group * uint(GEMV_NR);
        uint base[GEMV_NR];
        float acc[GEMV_ACC];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++)
            base[r] = gemv_clamp_row(row0 + uint(r)) * (nb >> 3u) * 9u;
        [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
        for (uint b0 = 0u; b0 < nb; b0 += XB) {
            if (!whole) {
                barrier(); // every lane is done with the previous slice
                gemv_idot_quantize(tid, b0);
            }
            uint c0 = b0 >> 1u, c1 = min(nb, b0 + XB) >> 1u; // the slice's chunks
            for (uint ch = c0 + lane; ch < c1; ch += T) {
                uint sb = ch >> 2u, c = ch & 3u;
                // Each row's chunk: low and high nibble words, and (d*sc, dmin*m) of
                // sub-blocks 2c, 2c+1, used for every token.
                uint lo[GEMV_NR][8], hi[GEMV_NR][8];
                vec4 f[GEMV_NR];
                [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                    uint sbw = base[r] + sb * 9u;
                    uvec4 h = W[sbw], q0 = W[sbw + 1u + 2u * c], q1 = W[sbw + 2u + 2u * c];
                    vec2 dd = unpackHalf2x16(h.x); // d, dmin
                    f[r] = vec4(dd.xx, dd.yy) * gemv_k4_scales(h, c); // exact products
                    uint u[8] = uint[8](q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w);
                    [[unroll]] for (int j = 0; j < 8; j++) {
                        lo[r][j] = u[j] & 0x0F0F0F0Fu;
                        hi[r][j] = u[j] & 0xF0F0F0F0u;
                    }
                }
                uint pa = GEMV_IDOT_POS(2u * (ch - c0)), pb = GEMV_IDOT_POS(2u * (ch - c0) + 1u);
                [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
                    // Token t's two blocks, loaded once for all GEMV_NR rows.
                    uint xha[8], xla[8], xhb[8], xlb[8];
                    [[unroll]] for (int j = 0; j < 8; j++) {
                        xha[j] = gx_h[gemv_idot_word(uint(j), uint(t), pa)];
                        xla[j] = gx_l[gemv_idot_word(uint(j), uint(t), pa)];
                        xhb[j] = gx_h[gemv_idot_word(uint(j), uint(t), pb)];
                        xlb[j] = gx_l[gemv_idot_word(uint(j), uint(t), pb)];
                    }
                    float sa = gx_s[gemv_idot_blk(uint(t), pa)], sx = gx_s[gemv_idot_blk(uint(t), pb)];
                    float ma = float(gx_sum[gemv_idot_blk(uint(t), pa)]);
                    float mb = float(gx_sum[gemv_idot_blk(uint(t), pb)]);
                    [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                        int dha = 0, dhb = 0;
                        uint dla = 0u, dlb = 0u;
                        [[unroll]] for (int j = 0; j < 8; j++) {
                            dha += idot_su(xha[j], lo[r][j], 0);
                            dla += idot_uu(lo[r][j], xla[j], 0);
                            dhb += idot_su(xhb[j], hi[r][j], 0);
                            dlb += idot_uu(hi[r][j], xlb[j], 0);
                        }
                        int ia = dha * 256 + int(dla);
                        int ib = (dhb * 256 + int(dlb)) >> 4; // exact: a multiple of 16
                        acc[GEMV_AT(t, r)] += sa * (f[r].x * float(ia) - f[r].z * ma) +
                                              sx * (f[r].y * float(ib) - f[r].w * mb);
                    }
                }
            }
        }
        gemv_finish(acc, tid, row0);
        barrier(); // the next tile's gemv_finish (and quantizer) reuse shared memory
    }
}
#else

void main() {
    uint tid = gemv_tid();
    uint row0 = gemv_row0(tid);
    uint nsb = P.k >> 8u;  // super-blocks per row
    uint nchunks = nsb * 8u;
    uint base[GEMV_NR];
    float acc[GEMV_ACC];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++)
        base[r] = gemv_clamp_row(row0 + uint(r)) * nsb * 9u;
    [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
    const uint T = uint(GEMV_T);
    for (uint ch = tid % T; ch < nchunks; ch += T) {
        uint sb = ch >> 3u, v = ch & 7u, c = v >> 1u;
        // Each row's chunk decoded: low / high nibbles as floats, d, dmin, scales and mins.
        vec4 wl[GEMV_NR][4], wh[GEMV_NR][4];
        vec2 dd[GEMV_NR];
        vec4 sm[GEMV_NR];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
            uint sbw = base[r] + sb * 9u;
            uvec4 h = W[sbw], q = W[sbw + 1u + v];
            dd[r] = vec2(unpackHalf2x16(h.x)); // d, dmin
            sm[r] = gemv_k4_scales(h, c);
            uvec4 lo = q & 0x0F0F0F0Fu, hi = (q >> 4u) & 0x0F0F0F0Fu;
            wl[r][0] = gemv_bytes(lo.x, 0.0); wl[r][1] = gemv_bytes(lo.y, 0.0);
            wl[r][2] = gemv_bytes(lo.z, 0.0); wl[r][3] = gemv_bytes(lo.w, 0.0);
            wh[r][0] = gemv_bytes(hi.x, 0.0); wh[r][1] = gemv_bytes(hi.y, 0.0);
            wh[r][2] = gemv_bytes(hi.z, 0.0); wh[r][3] = gemv_bytes(hi.w, 0.0);
        }
        [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
            // x of the chunk: low-nibble weights at 64c + 16(v&1) + 0..15, high at +32.
            uint xb = gemv_xrow(t) + sb * 64u + 16u * c + 4u * (v & 1u);
            vec4 xl[4], xh[4];
            [[unroll]] for (int i = 0; i < 4; i++) {
                xl[i] = X[xb + uint(i)];
                xh[i] = X[xb + 8u + uint(i)];
            }
            vec4 ones = vec4(1.0);
            float sxl = dot(xl[0] + xl[1] + xl[2] + xl[3], ones);
            float sxh = dot(xh[0] + xh[1] + xh[2] + xh[3], ones);
            [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                float ql = dot(wl[r][0], xl[0]) + dot(wl[r][1], xl[1]) + dot(wl[r][2], xl[2]) +
                           dot(wl[r][3], xl[3]);
                float qh = dot(wh[r][0], xh[0]) + dot(wh[r][1], xh[1]) + dot(wh[r][2], xh[2]) +
                           dot(wh[r][3], xh[3]);
                acc[GEMV_AT(t, r)] += dd[r].x * (sm[r].x * ql + sm[r].y * qh) -
                                      dd[r].y * (sm[r].z * sxl + sm[r].w * sxh);
            }
        }
    }
    gemv_finish(acc, tid, row0);
}
#endif
