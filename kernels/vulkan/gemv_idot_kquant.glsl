// gemv_idot_kquant.glsl: the main loop of the k-quant integer GEMV kernels (q4_k, q5_k:
// -DGEMV_IDOT=1; docs/kernels/vulkan-gemv.md, "Integer path" and "q5_k"), included after
// gemv_idot.glsl (with GEMV_IDOT_SUM, GEMV_IDOT_PAIRS and GEMV_IDOT_TOKENS) by a kernel that
// defines first:
//   GEMV_K_SB_UVEC4  uvec4 per super-block (its header, q4_k's layout, is word 0);
//   GEMV_K_HI_SHIFT  the right shift that turns the high codes' dot into sum q xq;
//   void gemv_k_codes(uint sbw, uint c, out uint lo[8], out uint hi[8]): the code words of
//       sub-blocks 2c (lo) and 2c + 1 (hi) of the super-block at uvec4 sbw, byte l of word j
//       element 4j + l of its sub-block, as unsigned bytes.
// Per sub-block s with x scale s_b and integer sums
//   dot = sum q xq,   y += s_b * (d*sc[s] * dot - dmin*m[s] * sum xq)
// which is sum_i (d*sc*q_i - dmin*m) * s_b*xq_i: the whole dequantized weight meets the
// rounded x (the mins through the block's quantized sum, not x's float sum), so the oracle's
// x-rounding term is q8_0's and q4_0's (gemv_bench.x_rounding_term). A chunk is a lane's pair
// of sub-blocks 2c, 2c+1 of one super-block.
#ifndef GEMV_IDOT_KQUANT_GLSL
#define GEMV_IDOT_KQUANT_GLSL

#if !defined(GEMV_K_SB_UVEC4) || !defined(GEMV_K_HI_SHIFT)
#error "gemv_idot_kquant.glsl needs the kernel's GEMV_K_SB_UVEC4 and GEMV_K_HI_SHIFT (and gemv_k_codes)"
#endif
// GEMV_KHALF = 1 (with GEMV_XPRE = 1): a lane's unit is half a chunk, elements 16h .. 16h + 15
// of both sub-blocks (one qs uvec4; the kernel's gemv_k_codes_half), against words 4h .. 4h + 3
// of x's records and the half's sum of xq for the mins: half the code and x registers a unit
// and twice the units, so that a geometry with twice the lanes a row keeps each lane's trips
// and doubles the warps (docs/kernels/vulkan-gemv.md, "Half chunks").
#ifndef GEMV_KHALF
#define GEMV_KHALF 0
#endif
#if GEMV_KHALF && !GEMV_XPRE
#error "GEMV_KHALF=1 reads x's records (GEMV_XPRE=1): in shared memory two halves of a block share a bank"
#endif

// (d*sc, d*sc', dmin*m, dmin*m') of sub-blocks 2c, 2c + 1 of the super-block at uvec4 sbw: exact
// products (fp16 times a 6-bit integer).
vec4 gemv_k_factors(uint sbw, uint c) {
    uvec4 h = W[sbw];
    vec2 dd = unpackHalf2x16(h.x); // d, dmin
    return vec4(dd.xx, dd.yy) * gemv_k4_scales(h, c);
}

// Chunk ch of the GEMV_NR rows at uvec4s base[]: each row's low and high code words and factors.
void gemv_k_chunk(uint base[GEMV_NR], uint ch, out uint lo[GEMV_NR][8], out uint hi[GEMV_NR][8],
                  out vec4 f[GEMV_NR]) {
    uint sb = ch >> 2u, c = ch & 3u;
    [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
        uint sbw = base[r] + sb * uint(GEMV_K_SB_UVEC4);
        f[r] = gemv_k_factors(sbw, c);
        uint l8[8], h8[8];
        gemv_k_codes(sbw, c, l8, h8);
        [[unroll]] for (int j = 0; j < 8; j++) {
            lo[r][j] = l8[j];
            hi[r][j] = h8[j];
        }
    }
}

void gemv_idot_k_main() {
    uint tid = gemv_tid();
    uint nb = P.k >> 5u; // blocks of x (sub-blocks) per row
#if GEMV_XPRE
    // x quantized once per call (gemv_idot_xprep.comp): one slice of every block, no barrier
    const uint T = uint(GEMV_T);
    uint XB = nb;
    bool whole = true;
#else
    const uint T = uint(GEMV_T), XB = uint(GEMV_XB);
    // x of every token fits: quantized once for all the workgroup's tiles (the only case
    // gemv_vulkan.for_device picks). Else each tile quantizes it again, a slice of XB blocks at
    // a time: the path that takes T = 8 at k = 5120 in 48 KiB.
    bool whole = nb <= XB;
#endif
    uint lane = tid % T, group = tid / T;
    uint tiles = gemv_idot_tiles();
    uint row_uvec4 = (nb >> 3u) * uint(GEMV_K_SB_UVEC4);
    GEMV_KPF_CHUNK_AHEAD(whole, nb >> 1u, row_uvec4, gemv_k_chunk) // the first chunk ahead (gemv_idot.glsl)
#if !GEMV_XPRE
    if (whole) gemv_idot_quantize(tid, 0u);
#endif
    for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) {
        uint row0 = tile * uint(GEMV_ROWS) + group * uint(GEMV_NR);
        uint base[GEMV_NR];
        float acc[GEMV_ACC];
        gemv_row_bases(row0, row_uvec4, base);
        [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
        for (uint b0 = 0u; b0 < nb; b0 += XB) {
#if !GEMV_XPRE
            if (!whole) {
                barrier(); // every lane is done with the previous slice
                gemv_idot_quantize(tid, b0);
            }
#endif
            uint c0 = b0 >> 1u, c1 = min(nb, b0 + XB) >> 1u; // the slice's chunks
#if GEMV_KHALF
            for (uint hc = 2u * c0 + lane; hc < 2u * c1; hc += T) {
                uint ch = hc >> 1u, hh = hc & 1u;
                uint sb = ch >> 2u, c = ch & 3u;
                uint lo[GEMV_NR][4], hi[GEMV_NR][4];
                vec4 f[GEMV_NR];
                [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                    uint sbw = base[r] + sb * uint(GEMV_K_SB_UVEC4);
                    f[r] = gemv_k_factors(sbw, c);
                    uint l4[4], h4[4];
                    gemv_k_codes_half(sbw, c, hh, l4, h4);
                    [[unroll]] for (int j = 0; j < 4; j++) {
                        lo[r][j] = l4[j];
                        hi[r][j] = h4[j];
                    }
                }
                [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
                    // Token t's halves of its two blocks: words 4hh .. 4hh + 3 of each plane, the
                    // scale and the half's sum (record layout: gemv_idot.glsl, gemv_xpre_block3).
                    uint oa = 5u * (uint(t) * nb + 2u * ch), ob = oa + 5u;
                    uvec4 xha = floatBitsToUint(X[oa + hh]), xla = floatBitsToUint(X[oa + 2u + hh]);
                    uvec4 xhb = floatBitsToUint(X[ob + hh]), xlb = floatBitsToUint(X[ob + 2u + hh]);
                    vec4 ea = X[oa + 4u], eb = X[ob + 4u];
                    float sa = ea.x, sx = eb.x;
                    float ma = float(floatBitsToInt(hh == 0u ? ea.z : ea.w));
                    float mb = float(floatBitsToInt(hh == 0u ? eb.z : eb.w));
                    [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                        int dha = idot_su(xha.x, lo[r][0], 0) + idot_su(xha.y, lo[r][1], 0) +
                                  idot_su(xha.z, lo[r][2], 0) + idot_su(xha.w, lo[r][3], 0);
                        uint dla = idot_uu(lo[r][0], xla.x, 0) + idot_uu(lo[r][1], xla.y, 0) +
                                   idot_uu(lo[r][2], xla.z, 0) + idot_uu(lo[r][3], xla.w, 0);
                        int dhb = idot_su(xhb.x, hi[r][0], 0) + idot_su(xhb.y, hi[r][1], 0) +
                                  idot_su(xhb.z, hi[r][2], 0) + idot_su(xhb.w, hi[r][3], 0);
                        uint dlb = idot_uu(hi[r][0], xlb.x, 0) + idot_uu(hi[r][1], xlb.y, 0) +
                                   idot_uu(hi[r][2], xlb.z, 0) + idot_uu(hi[r][3], xlb.w, 0);
                        int ia = dha * 256 + int(dla);
                        int ib = (dhb * 256 + int(dlb)) >> GEMV_K_HI_SHIFT; // exact: a multiple of 2^shift
                        acc[GEMV_AT(t, r)] += sa * (f[r].x * float(ia) - f[r].z * ma) +
                                              sx * (f[r].y * float(ib) - f[r].w * mb);
                    }
                }
            }
#else
            for (uint ch = c0 + lane; ch < c1; ch += T) {
                // Each row's chunk: low and high nibble words, and (d*sc, dmin*m) of
                // sub-blocks 2c, 2c+1, used for every token.
                uint lo[GEMV_NR][8], hi[GEMV_NR][8];
                vec4 f[GEMV_NR];
                GEMV_KPF_TAKE(lo, hi, f, plo, phi, pf, gemv_k_chunk(base, ch, lo, hi, f));
#if !GEMV_XPRE
                uint pa = GEMV_IDOT_POS(2u * (ch - c0)), pb = GEMV_IDOT_POS(2u * (ch - c0) + 1u);
#endif
                [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
                    // Token t's two blocks, loaded once for all GEMV_NR rows.
                    uint xha[8], xla[8], xhb[8], xlb[8];
                    float sa, sx, ma, mb;
#if GEMV_XPRE
                    int ia_sum, ib_sum;
                    gemv_xpre_block(uint(t) * nb + 2u * ch, xha, xla, sa, ia_sum);
                    gemv_xpre_block(uint(t) * nb + 2u * ch + 1u, xhb, xlb, sx, ib_sum);
                    ma = float(ia_sum), mb = float(ib_sum);
#else
                    [[unroll]] for (int j = 0; j < 8; j++) {
                        xha[j] = gx_h[gemv_idot_word(uint(j), uint(t), pa)];
                        xla[j] = gx_l[gemv_idot_word(uint(j), uint(t), pa)];
                        xhb[j] = gx_h[gemv_idot_word(uint(j), uint(t), pb)];
                        xlb[j] = gx_l[gemv_idot_word(uint(j), uint(t), pb)];
                    }
                    sa = gx_s[gemv_idot_blk(uint(t), pa)], sx = gx_s[gemv_idot_blk(uint(t), pb)];
                    ma = float(gx_sum[gemv_idot_blk(uint(t), pa)]);
                    mb = float(gx_sum[gemv_idot_blk(uint(t), pb)]);
#endif
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
                        int ib = (dhb * 256 + int(dlb)) >> GEMV_K_HI_SHIFT; // exact: a multiple of 2^shift
                        acc[GEMV_AT(t, r)] += sa * (f[r].x * float(ia) - f[r].z * ma) +
                                              sx * (f[r].y * float(ib) - f[r].w * mb);
                    }
                }
            }
#endif
        }
        gemv_finish(acc, tid, row0);
        barrier(); // the next tile's gemv_finish (and quantizer) reuse shared memory
    }
}

#endif
