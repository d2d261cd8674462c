// moe_idot.glsl: the integer-dot path of the Vulkan MoE Q4_K kernels (-DMOE_IDOT=1 with
// MOE_XB; moe_q4k_grouped.comp per pass, moe_q4k_pairs.comp per pair): the q4_k GEMV's
// integer kernel (gemv_idot.glsl, gemv_idot_kquant.glsl; docs/kernels/moe.md, "The integer
// path") over MOE_XT rows of x. Included after moe_common.glsl by a shader that defines
// MOE_XT (rows of x at a time) and declares W, X and P.k; a shader dotting MOE_IROWS rows of
// other buffers with each x (moe_q4k_fused.comp: gate's and up's) defines MOE_IROWS and
// MOE_WLOAD(r, i), row r's uvec4 i (defaults MOE_NR and W[i]). Needs shaderIntegerDotProduct and
// subgroups of 8 or more (moe.launches refuses it elsewhere); x is rounded (the check's
// bound says so: spec.x_rounding).
#ifndef MOE_IDOT_GLSL
#define MOE_IDOT_GLSL

#include "idot_ops.glsl"
#include "idot_quant.glsl" // the int16 quantization of a block (the GEMV kernels' own)

#ifndef MOE_XT
#error "MOE_XT (rows of x quantized at a time) must be defined before moe_idot.glsl"
#endif
#ifndef MOE_IROWS
#define MOE_IROWS MOE_NR
#define MOE_WLOAD(r, i) W[i]
#endif
#if !defined(MOE_XB) || (MOE_XB % 8) != 0 || MOE_XB < 8
#error "MOE_XB (blocks of 32 x values per row in shared memory) must be a positive multiple of 8"
#endif

// A slice's blocks of x per row: the even blocks (sub-blocks 2c) in the first half and the
// odd ones in the second, as gemv_idot.glsl's GEMV_IDOT_PAIRS; word j of row t's block at
// position p at moe_xw(j, t, p), elements 4j .. 4j+3 as bytes: xq = 256 * high + low.
#define MOE_XPOS(sl) (((sl) >> 1u) + ((sl) & 1u) * uint(MOE_XB / 2))
uint moe_xw(uint j, uint t, uint p) { return (j * uint(MOE_XT) + t) * uint(MOE_XB) + p; }
uint moe_xblk(uint t, uint p) { return t * uint(MOE_XB) + p; }
shared uint mx_h[8 * MOE_XB * MOE_XT]; // high bytes of xq, signed
shared uint mx_l[8 * MOE_XB * MOE_XT]; // low bytes, unsigned
shared float mx_s[MOE_XB * MOE_XT];   // s_b = amax_b / 32767
shared int mx_sum[MOE_XB * MOE_XT];   // sum of the block's xq (the mins)

// Blocks b0 .. b0 + MOE_XB - 1 of the activation row at vec4 xrow into row t of the slice:
// 8 invocations per block (tid: numbered through the subgroups, so a block's 8 lanes are
// consecutive in one subgroup), one vec4 each (idot_quant.glsl); xq = round(x / s_b) in -32767 .. 32767.
void moe_quantize(uint tid, uint xrow, uint b0, uint t) {
    uint nb = min((P.k >> 5u) - b0, uint(MOE_XB));
    uint j = tid & 7u;
    for (uint pass = 0u; pass < nb; pass += uint(MOE_WG / 8)) {
        uint sl = pass + (tid >> 3u);
        bool live = sl < nb;
        vec4 v = live ? X[xrow + 8u * (b0 + sl) + j] : vec4(0.0);
        IdotQuant q = idot_quant_lane(v); // every invocation: the shuffles need all 8 of a block
        uint p = MOE_XPOS(sl);
        if (live) {
            mx_h[moe_xw(j, t, p)] = q.h;
            mx_l[moe_xw(j, t, p)] = q.l;
            if (j == 0u) {
                mx_s[moe_xblk(t, p)] = q.amax * (1.0 / 32767.0);
                mx_sum[moe_xblk(t, p)] = q.sum;
            }
        }
    }
}

// acc[r * MOE_XT + t] += row r . x row t for the MOE_IROWS rows at uvec4 base[r] and the
// first tc rows of x (vec4 starts xrow[t]), over all of k, MOE_XB blocks of x a slice. Every
// invocation of the workgroup calls it with the same tc (it has barriers).
void moe_idot_rows(uint tid, uint base[MOE_IROWS], uint xrow[MOE_XT], uint tc, inout float acc[MOE_NV]) {
    uint nb = P.k >> 5u; // blocks of 32 (sub-blocks) per row
    for (uint b0 = 0u; b0 < nb; b0 += uint(MOE_XB)) {
        barrier(); // every invocation is done with the previous slice (or pass)
        for (uint t = 0u; t < tc; t++) moe_quantize(tid, xrow[t], b0, t);
        barrier();
        // a chunk is a lane's pair of sub-blocks 2c, 2c + 1 of super-block sb
        uint c0 = b0 >> 1u, c1 = min(nb, b0 + uint(MOE_XB)) >> 1u;
        for (uint ch = c0 + tid % uint(MOE_T); ch < c1; ch += uint(MOE_T)) {
            uint sb = ch >> 2u, c = ch & 3u;
            // each row's codes (low nibbles: sub-block 2c; high, 16 q in place: 2c + 1) and
            // (d sc[2c], d sc[2c+1], dmin m[2c], dmin m[2c+1]), exact products
            uint lo[MOE_IROWS][8], hi[MOE_IROWS][8];
            vec4 f[MOE_IROWS];
            [[unroll]] for (int r = 0; r < MOE_IROWS; r++) {
                uint sbw = base[r] + sb * 9u;
                uvec4 h = MOE_WLOAD(r, sbw), q0 = MOE_WLOAD(r, sbw + 1u + 2u * c), q1 = MOE_WLOAD(r, sbw + 2u + 2u * c);
                vec2 dd = unpackHalf2x16(h.x);
                f[r] = vec4(dd.xx, dd.yy) * gemv_k4_scales(h, c);
                uint u[8] = uint[8](q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w);
                [[unroll]] for (int w = 0; w < 8; w++) {
                    lo[r][w] = u[w] & 0x0F0F0F0Fu;
                    hi[r][w] = u[w] & 0xF0F0F0F0u;
                }
            }
            uint pa = MOE_XPOS(2u * (ch - c0)), pb = MOE_XPOS(2u * (ch - c0) + 1u);
            [[unroll]] for (int t = 0; t < MOE_XT; t++) {
                if (uint(t) < tc) {
                    // row t's two blocks, loaded once for all MOE_NR rows
                    uint xha[8], xla[8], xhb[8], xlb[8];
                    [[unroll]] for (int w = 0; w < 8; w++) {
                        xha[w] = mx_h[moe_xw(uint(w), uint(t), pa)];
                        xla[w] = mx_l[moe_xw(uint(w), uint(t), pa)];
                        xhb[w] = mx_h[moe_xw(uint(w), uint(t), pb)];
                        xlb[w] = mx_l[moe_xw(uint(w), uint(t), pb)];
                    }
                    float sa = mx_s[moe_xblk(uint(t), pa)], sx = mx_s[moe_xblk(uint(t), pb)];
                    float ma = float(mx_sum[moe_xblk(uint(t), pa)]), mb = float(mx_sum[moe_xblk(uint(t), pb)]);
                    [[unroll]] for (int r = 0; r < MOE_IROWS; r++) {
                        int dha = 0, dhb = 0;
                        uint dla = 0u, dlb = 0u;
                        [[unroll]] for (int w = 0; w < 8; w++) {
                            dha += idot_su(xha[w], lo[r][w], 0);
                            dla += idot_uu(lo[r][w], xla[w], 0);
                            dhb += idot_su(xhb[w], hi[r][w], 0);
                            dlb += idot_uu(hi[r][w], xlb[w], 0);
                        }
                        // |ia| <= 32 * 15 * 32767 < 2^24; ib: 16 q, the 16 shifted out exactly
                        int ia = dha * 256 + int(dla);
                        int ib = (dhb * 256 + int(dlb)) >> 4;
                        acc[r * MOE_XT + t] += sa * (f[r].x * float(ia) - f[r].z * ma) +
                                               sx * (f[r].y * float(ib) - f[r].w * mb);
                    }
                }
            }
        }
    }
}

#endif
