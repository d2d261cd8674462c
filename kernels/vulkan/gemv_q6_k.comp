#version 450
// GEMV for q6_k weights (docs/FORMATS.md): 210-byte super-blocks of 256 weights: bytes
// 0..127 ql, 128..191 qh, 192..207 16 signed 8-bit scales, 208..209 fp16 d. Weight
// e = 128h + 32k + l (h < 2, k < 4, l < 32): low 4 bits from ql[64h + 32(k&1) + l]
// (low nibble for k < 2, high for k >= 2), high 2 bits (qh[32h + l] >> 2k) & 3,
// q = (low | high << 4) - 32, value (d * scales[e/16]) * q. k is a multiple of 256.
// y[t] = W x[t] for each of the GEMV_TOKENS rows t of x (gemv_common.glsl, "Tokens").
//
// A chunk is 1/8 of a super-block, v = 0..7, h = v/4, j = v%4: the 32 weights with
// l = 8j..8j+7 and k = 0..3. They need 8 bytes of ql at 64h+8j, 8 at 64h+32+8j, 8 of
// qh at 128+32h+8j, the 8 scales at 192+8h and d. A super-block is 210 bytes, so it
// starts at an even byte offset only; W is read as 32-bit words and every field is
// funnel-shifted out of them (one shift per super-block). The last word read may be
// the 4 bytes past the super-block: the weight buffer carries 16 bytes of slack
// (gemv.buffer_bytes). Each row's chunk is decoded once and used for every token.
//
// -DGEMV_IDOT=1 (with GEMV_XB, a multiple of 8) compiles the integer-dot-product kernel
// instead (below; any GEMV_TOKENS; docs/kernels/vulkan-gemv.md, "q6_k"). Without
// GEMV_IDOT, or with 0, the float kernel.
#extension GL_GOOGLE_include_directive : require
#include "gemv_common.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uint W[]; };

#ifndef GEMV_IDOT
#define GEMV_IDOT 0
#endif

// The 8 bytes at byte offset off (even), whose half-word shift is s.
uvec2 load8(uint off, uint s) {
    uint w = off >> 2u;
    uint u0 = W[w], u1 = W[w + 1u], u2 = W[w + 2u];
    return uvec2(gemv_funnel(u0, u1, s), gemv_funnel(u1, u2, s));
}

// Signed byte `b` (0..3) of w as a float.
float sbyte(uint w, uint b) {
    return float(int(w << (24u - 8u * b)) >> 24);
}

#if GEMV_IDOT
#if GEMV_IDOT != 1 && GEMV_IDOT != 2
#error "q6_k's integer kernel is GEMV_IDOT=1 (codes q - 32) or 2 (codes q, the -32 through x's half sums)"
#endif
#if (GEMV_XB % 8) != 0
#error "q6_k's GEMV_XB must be a multiple of 8 (whole super-blocks per slice of x)"
#endif
// The integer path (gemv_idot.glsl, x in shared memory as int16 per 32-block, in slices per
// row tile where it does not fit). A chunk is a lane's pair of x blocks 4h + p and 4h + p + 2
// of one super-block (c = 2h + p, four chunks a super-block): ql bytes 64h + 32p .. + 31 (low
// nibbles: block 4h + p; high: 4h + p + 2), qh bytes 32h .. + 31 (bits 2p and 2p + 4), so word
// j of each holds elements 4j .. 4j+3 of both blocks. Each code q - 32 becomes a signed byte
// (q6_code), and a block's 16-element halves meet x through q8_0's dots:
//   dot = 256 * SDot(c, xh) + SUDot(c, xl),   y += s_b * d * (sc[2B] * dot_0 + sc[2B+1] * dot_1)
// |dot| <= 16 * 32 * 32767 < 2^24 converts to float exactly, d * sc (fp16 times int8) is an
// exact product, so the whole dequantized weight meets the rounded x: the bound is q8_0's
// (gemv_bench.x_rounding_term). No block sum: the -32 is in the codes.
// GEMV_IDOT=2 keeps the codes q (0..63, no per-byte conversion) and takes the -32 out once per
// half and row through the half's sum of xq: dot = 256 * SUDot(xh, q) + UDot(q, xl) - 32 * sum xq,
// the same integer (|256 SUDot + UDot| < 16 * 64 * 32767 < 2^31 before, < 2^24 after). x layout 1.
// GEMV_XPRE=1 (either mode): x quantized once per call by gemv_idot_xprep.comp, read from its
// records (the halves' sums included) in x's place; no x in shared memory, no slices.
#define GEMV_IDOT_TOKENS
#define GEMV_IDOT_LAYOUT 1
#define GEMV_IDOT_XPRE_LOOP
#if GEMV_IDOT == 2
#define GEMV_IDOT_HALF_SUMS
#endif
#include "gemv_idot.glsl"

// The 8 words at byte offset off of a super-block whose half-word shift is s.
void q6_load8(uint off, uint s, out uint q[8]) {
    uint w = off >> 2u;
    uint u[9];
    [[unroll]] for (int i = 0; i < 9; i++) u[i] = W[w + uint(i)];
    [[unroll]] for (int i = 0; i < 8; i++) q[i] = gemv_funnel(u[i], u[i + 1], s);
}

// Four 6-bit codes q (one per byte, 0..63) as signed bytes q - 32: bit 5 clear (q < 32)
// gives 0xE0 | q, set gives q & 0x1F; no byte borrows from its neighbour.
uint q6_code(uint q) {
    return (q & 0x1F1F1F1Fu) | (((~q >> 5u) & 0x01010101u) * 0xE0u);
}

// Signed byte b (0..3) of w as a float.
float q6_sbyte(uint w, uint b) {
    return float(int(w << (24u - 8u * b)) >> 24);
}

// One 16-element half of a block: 256 * SDot(c, xh) + SUDot(c, xl) over words j0 .. j0+3.
int q6_half(uint c[8], uint xh[8], uint xl[8], int j0) {
    int dh = 0, dl = 0;
    [[unroll]] for (int j = j0; j < j0 + 4; j++) {
        dh += idot_ss(c[j], xh[j], 0);
        dl += idot_su(c[j], xl[j], 0);
    }
    return dh * 256 + dl;
}

// The same over unsigned codes q (GEMV_IDOT=2): 256 * SUDot(xh, q) + UDot(q, xl), without the -32.
int q6_half_u(uint c[8], uint xh[8], uint xl[8], int j0) {
    int dh = 0;
    uint dl = 0u;
    [[unroll]] for (int j = j0; j < j0 + 4; j++) {
        dh += idot_su(xh[j], c[j], 0);
        dl += idot_uu(c[j], xl[j], 0);
    }
    return dh * 256 + int(dl);
}

// Chunk ch of the GEMV_NR rows at byte offsets base[]: each row's codes of both blocks (signed
// with GEMV_IDOT=1) and d * sc of their halves.
void q6_chunk(uint base[GEMV_NR], uint ch, out uint lo[GEMV_NR][8], out uint hi[GEMV_NR][8], out vec4 f[GEMV_NR]) {
    uint sb = ch >> 2u, h = (ch >> 1u) & 1u, p = ch & 1u;
    [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
        uint o = base[r] + sb * 210u;
        uint s = gemv_half_shift(o);
        uint ql[8], qh[8];
        q6_load8(o + 64u * h + 32u * p, s, ql);
        q6_load8(o + 128u + 32u * h, s, qh);
        uint so = o + 192u + 8u * h; // sc[8h .. 8h+7]: block 4h + p's at 2p, 4h + p + 2's at 2p + 4
        uint w0 = W[so >> 2u], w1 = W[(so >> 2u) + 1u], w2 = W[(so >> 2u) + 2u];
        uint sa = gemv_funnel(w0, w1, s), sx = gemv_funnel(w1, w2, s);
        float d = GEMV_F16_AT(W, o + 208u);
        f[r] = d * vec4(q6_sbyte(sa, 2u * p), q6_sbyte(sa, 2u * p + 1u),
                        q6_sbyte(sx, 2u * p), q6_sbyte(sx, 2u * p + 1u));
        uint sl = 2u * p, shh = 2u * p + 4u;
        [[unroll]] for (int j = 0; j < 8; j++) {
            lo[r][j] = (ql[j] & 0x0F0F0F0Fu) | (((qh[j] >> sl) & 0x03030303u) << 4u);
            hi[r][j] = ((ql[j] >> 4u) & 0x0F0F0F0Fu) | (((qh[j] >> shh) & 0x03030303u) << 4u);
#if GEMV_IDOT == 1
            lo[r][j] = q6_code(lo[r][j]);
            hi[r][j] = q6_code(hi[r][j]);
#endif
        }
    }
}

void main() {
    uint tid = gemv_tid();
    uint nb = P.k >> 5u; // blocks of x per row
#if GEMV_XPRE
    const uint T = uint(GEMV_T);
    uint XB = nb; // one slice of every block, no barrier
#else
    const uint T = uint(GEMV_T), XB = uint(GEMV_XB);
    bool whole = nb <= XB; // else x is quantized again per tile, a slice of XB blocks at a time
#endif
    uint lane = tid % T, group = tid / T;
    uint tiles = gemv_idot_tiles();
    uint row_bytes = (nb >> 3u) * 210u;
    GEMV_KPF_CHUNK_AHEAD(whole, nb >> 1u, row_bytes, q6_chunk) // the first chunk ahead (gemv_idot.glsl)
#if !GEMV_XPRE
    if (whole) gemv_idot_quantize(tid, 0u);
#endif
    for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) {
        uint row0 = tile * uint(GEMV_ROWS) + group * uint(GEMV_NR);
        uint base[GEMV_NR];
        float acc[GEMV_ACC];
        gemv_row_bases(row0, row_bytes, base);
        [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
        for (uint b0 = 0u; b0 < nb; b0 += XB) {
#if !GEMV_XPRE
            if (!whole) {
                barrier(); // every lane is done with the previous slice
                gemv_idot_quantize(tid, b0);
            }
#endif
            uint c0 = b0 >> 1u, c1 = min(nb, b0 + XB) >> 1u; // the slice's chunks
            for (uint ch = c0 + lane; ch < c1; ch += T) {
                uint sb = ch >> 2u, h = (ch >> 1u) & 1u, p = ch & 1u;
                // Each row's chunk: the signed codes of both blocks and d * sc of their halves,
                // used for every token.
                uint lo[GEMV_NR][8], hi[GEMV_NR][8];
                vec4 f[GEMV_NR];
                GEMV_KPF_TAKE(lo, hi, f, plo, phi, pf, q6_chunk(base, ch, lo, hi, f));
                uint pa = 8u * sb + 4u * h + p - b0, pb = pa + 2u; // the blocks' places in the slice
                [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
                    // Token t's two blocks, loaded once for all GEMV_NR rows.
                    uint xha[8], xla[8], xhb[8], xlb[8];
                    float s_a, s_b;
#if GEMV_XPRE
                    ivec3 sua, sub; // the records' sums: the block's, then its halves'
                    gemv_xpre_block3(uint(t) * nb + pa, xha, xla, s_a, sua);
                    gemv_xpre_block3(uint(t) * nb + pb, xhb, xlb, s_b, sub);
#else
                    [[unroll]] for (int j = 0; j < 8; j++) {
                        xha[j] = gx_h[gemv_idot_word(uint(j), uint(t), pa)];
                        xla[j] = gx_l[gemv_idot_word(uint(j), uint(t), pa)];
                        xhb[j] = gx_h[gemv_idot_word(uint(j), uint(t), pb)];
                        xlb[j] = gx_l[gemv_idot_word(uint(j), uint(t), pb)];
                    }
                    s_a = gx_s[gemv_idot_blk(uint(t), pa)], s_b = gx_s[gemv_idot_blk(uint(t), pb)];
#endif
                    // The -32 of each half: in the codes (GEMV_IDOT=1, no offset) or 32 * the half's sum of xq.
#if GEMV_IDOT == 2 && GEMV_XPRE
                    int oa0 = 32 * sua.y, oa1 = 32 * sua.z, ob0 = 32 * sub.y, ob1 = 32 * sub.z;
#define Q6_HALF q6_half_u
#elif GEMV_IDOT == 2
                    uint ha = 2u * gemv_idot_blk(uint(t), pa), hb = 2u * gemv_idot_blk(uint(t), pb);
                    int oa0 = 32 * gx_hsum[ha], oa1 = 32 * gx_hsum[ha + 1u];
                    int ob0 = 32 * gx_hsum[hb], ob1 = 32 * gx_hsum[hb + 1u];
#define Q6_HALF q6_half_u
#else
                    const int oa0 = 0, oa1 = 0, ob0 = 0, ob1 = 0;
#define Q6_HALF q6_half
#endif
                    [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                        float ya = f[r].x * float(Q6_HALF(lo[r], xha, xla, 0) - oa0) +
                                   f[r].y * float(Q6_HALF(lo[r], xha, xla, 4) - oa1);
                        float yb = f[r].z * float(Q6_HALF(hi[r], xhb, xlb, 0) - ob0) +
                                   f[r].w * float(Q6_HALF(hi[r], xhb, xlb, 4) - ob1);
                        acc[GEMV_AT(t, r)] += s_a * ya + s_b * yb;
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
    uint row_bytes = nsb * 210u;
    uint base[GEMV_NR];
    float acc[GEMV_ACC];
    [[unroll]] for (int r = 0; r < GEMV_NR; r++)
        base[r] = gemv_clamp_row(row0 + uint(r)) * row_bytes;
    [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
    const uint T = uint(GEMV_T);
    for (uint ch = tid % T; ch < nchunks; ch += T) {
        uint sb = ch >> 3u, v = ch & 7u, h = v >> 2u, j = v & 3u;
        uint sbyte0 = j >> 1u; // scale byte of k = 0 inside the 8-byte scale window
        // Each row's chunk decoded: q - 32 as floats (two vec4 per k), the scale of each
        // k, and d.
        vec4 wq[GEMV_NR][8];
        float scl[GEMV_NR][4];
        float d[GEMV_NR];
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
            uint o = base[r] + sb * 210u;
            uint s = gemv_half_shift(o);
            uvec2 ql0 = load8(o + 64u * h + 8u * j, s);        // k = 0, 2
            uvec2 ql1 = load8(o + 64u * h + 32u + 8u * j, s);  // k = 1, 3
            uvec2 qh = load8(o + 128u + 32u * h + 8u * j, s);
            uvec2 sc = load8(o + 192u + 8u * h, s);
            d[r] = GEMV_F16_AT(W, o + 208u);
            [[unroll]] for (int kk = 0; kk < 4; kk++) {
                uvec2 src = (kk & 1) != 0 ? ql1 : ql0;
                uvec2 low = (kk >= 2 ? (src >> 4u) : src) & 0x0F0F0F0Fu;
                uvec2 q = low | (((qh >> (2u * uint(kk))) & 0x03030303u) << 4u);
                wq[r][2 * kk] = gemv_bytes(q.x, 32.0);
                wq[r][2 * kk + 1] = gemv_bytes(q.y, 32.0);
                uint scw = kk >= 2 ? sc.y : sc.x;
                scl[r][kk] = sbyte(scw, 2u * uint(kk & 1) + sbyte0);
            }
        }
        [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
            // x of the chunk: for each k, the 8 weights at 128h + 32k + 8j.
            uint xb = gemv_xrow(t) + sb * 64u + 32u * h + 2u * j;
            vec4 xs[8];
            [[unroll]] for (int kk = 0; kk < 4; kk++) {
                xs[2 * kk] = X[xb + 8u * uint(kk)];
                xs[2 * kk + 1] = X[xb + 8u * uint(kk) + 1u];
            }
            [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                float sum = 0.0;
                [[unroll]] for (int kk = 0; kk < 4; kk++) {
                    float part = dot(wq[r][2 * kk], xs[2 * kk]) +
                                 dot(wq[r][2 * kk + 1], xs[2 * kk + 1]);
                    sum += scl[r][kk] * part;
                }
                acc[GEMV_AT(t, r)] += d[r] * sum;
            }
        }
    }
    gemv_finish(acc, tid, row0);
}
#endif
