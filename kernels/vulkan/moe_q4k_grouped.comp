#version 450
// Mixture-of-experts Q4_K GEMV grouped by expert: the `grouped` variant of
// experiments/moe_scaling.lua, one dispatch per step. Workgroup (x, y) takes
// the y-th expert present in ids (ascending; workgroups past the last one
// exit), finds that expert's pairs itself (256 ids at a time, into shared
// memory) and computes rows x * MOE_ROWS .. of the expert for MOE_TC of its
// pairs at a time: each chunk of weights is loaded and decoded once per pass
// and dotted with every token of the pass, so an expert's weights are read
// once per MOE_TC of its pairs instead of once per pair. Which pass a pair
// lands in does not change its sums, so the output is deterministic.
//
// MOE_IDOT=1 (with MOE_XB): the integer path of the q4_k GEMV (gemv_idot.glsl,
// gemv_idot_kquant.glsl) per pass: the pass's tokens' x quantized to int16 per
// block of 32 into shared memory, MOE_XB blocks a slice, and each row's codes
// dotted with them by packed 4x8-bit integer dot products. Needs
// shaderIntegerDotProduct and subgroups of 8 or more (moe.launches refuses
// it elsewhere); x is rounded (the check's bound says so: spec.x_rounding).
#extension GL_GOOGLE_include_directive : require

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };
layout(set = 0, binding = 1) readonly buffer XBuf { vec4 X[]; };
layout(set = 0, binding = 2) readonly buffer IBuf { int IDS[]; };
layout(set = 0, binding = 3) writeonly buffer YBuf { float Y[]; };
layout(push_constant) uniform Params {
    uint n, k, experts, nb02, top_k, pairs, outer, inner;
} P;

#ifndef MOE_TC
#error "MOE_TC (tokens per pass) must be defined (defaults: lib/gpubench/moe_vulkan.lua)"
#endif
#ifndef MOE_IDOT
#error "MOE_IDOT (1: the integer-dot path) must be defined (defaults: lib/gpubench/moe_vulkan.lua)"
#endif
#define MOE_NV (MOE_NR * MOE_TC)
#include "moe_common.glsl"

#if MOE_IDOT
#include "idot_ops.glsl"
#if !defined(MOE_XB) || (MOE_XB % 8) != 0 || MOE_XB < 8
#error "MOE_XB (blocks of 32 x values per token in shared memory) must be a positive multiple of 8"
#endif
// A slice's blocks of x per token: the even blocks (sub-blocks 2c) in the first half and the
// odd ones in the second, as gemv_idot.glsl's GEMV_IDOT_PAIRS; word j of token t's block at
// position p at moe_xw(j, t, p), elements 4j .. 4j+3 as bytes: xq = 256 * high + low.
#define MOE_XPOS(sl) (((sl) >> 1u) + ((sl) & 1u) * uint(MOE_XB / 2))
uint moe_xw(uint j, uint t, uint p) { return (j * uint(MOE_TC) + t) * uint(MOE_XB) + p; }
uint moe_xblk(uint t, uint p) { return t * uint(MOE_XB) + p; }
shared uint mx_h[8 * MOE_XB * MOE_TC]; // high bytes of xq, signed
shared uint mx_l[8 * MOE_XB * MOE_TC]; // low bytes, unsigned
shared float mx_s[MOE_XB * MOE_TC];   // s_b = amax_b / 32767
shared int mx_sum[MOE_XB * MOE_TC];   // sum of the block's xq (the mins)

// Blocks b0 .. b0 + MOE_XB - 1 of the activation row at vec4 xrow into token t's slice:
// 8 invocations per block (tid: numbered through the subgroups, so a block's 8 lanes are
// consecutive in one subgroup), one vec4 each; xq = round(x / s_b) in -32767 .. 32767.
void moe_quantize(uint tid, uint xrow, uint b0, uint t) {
    uint nb = min((P.k >> 5u) - b0, uint(MOE_XB));
    uint j = tid & 7u;
    for (uint pass = 0u; pass < nb; pass += uint(MOE_WG / 8)) {
        uint sl = pass + (tid >> 3u);
        bool live = sl < nb;
        vec4 v = live ? X[xrow + 8u * (b0 + sl) + j] : vec4(0.0);
        vec4 a = abs(v);
        float amax = max(max(a.x, a.y), max(a.z, a.w));
        amax = max(amax, subgroupShuffleXor(amax, 1u));
        amax = max(amax, subgroupShuffleXor(amax, 2u));
        amax = max(amax, subgroupShuffleXor(amax, 4u));
        float inv = amax > 0.0 ? min(32767.0 / amax, 3.0e38) : 0.0; // a zero block: q = 0, s_b = 0
        ivec4 q = clamp(ivec4(roundEven(v * inv)), ivec4(-32767), ivec4(32767));
        uvec4 hb = uvec4(q >> 8) & 0xFFu, lb = uvec4(q) & 0xFFu;
        int sum = q.x + q.y + q.z + q.w;
        sum += subgroupShuffleXor(sum, 1u);
        sum += subgroupShuffleXor(sum, 2u);
        sum += subgroupShuffleXor(sum, 4u);
        uint p = MOE_XPOS(sl);
        if (live) {
            mx_h[moe_xw(j, t, p)] = hb.x | (hb.y << 8u) | (hb.z << 16u) | (hb.w << 24u);
            mx_l[moe_xw(j, t, p)] = lb.x | (lb.y << 8u) | (lb.z << 16u) | (lb.w << 24u);
            if (j == 0u) {
                mx_s[moe_xblk(t, p)] = amax * (1.0 / 32767.0);
                mx_sum[moe_xblk(t, p)] = sum;
            }
        }
    }
}
#endif

#define MOE_MAXE 1024u // experts the presence mask holds (gpubench.moe refuses more)
shared uint moe_mask[MOE_MAXE / 32u];
shared uint moe_list[MOE_WG];
shared uint moe_cnt, moe_ex;

void main() {
    uint li = gl_LocalInvocationIndex;
    uint tid = moe_tid();
    uint row0 = moe_row0(tid);
    if (li < MOE_MAXE / 32u) moe_mask[li] = 0u;
    barrier();
    for (uint p = li; p < P.pairs; p += uint(MOE_WG)) {
        uint e = moe_expert(IDS[p], P.experts);
        atomicOr(moe_mask[e >> 5u], 1u << (e & 31u));
    }
    barrier();
    if (li == 0u) { // the y-th set bit of the mask
        uint u = gl_WorkGroupID.y, seen = 0u, ex = 0xFFFFFFFFu;
        for (uint w = 0u; w < MOE_MAXE / 32u && ex == 0xFFFFFFFFu; w++) {
            uint word = moe_mask[w], b = uint(bitCount(word));
            if (u < seen + b) {
                for (uint i = seen; i < u; i++) word &= word - 1u;
                ex = 32u * w + uint(findLSB(word));
            }
            seen += b;
        }
        moe_ex = ex;
    }
    barrier();
    uint ex = moe_ex;
    if (ex == 0xFFFFFFFFu) return; // the same for the whole workgroup
    uint wbase = ex * (P.nb02 >> 4u);
    uint nsb = P.k >> 8u;
    uint base[MOE_NR];
    [[unroll]] for (int r = 0; r < MOE_NR; r++) base[r] = wbase + min(row0 + uint(r), P.n - 1u) * nsb * 9u;
    for (uint w0 = 0u; w0 < P.pairs; w0 += uint(MOE_WG)) {
        if (li == 0u) moe_cnt = 0u;
        barrier();
        uint q = w0 + li;
        if (q < P.pairs && moe_expert(IDS[q], P.experts) == ex) moe_list[atomicAdd(moe_cnt, 1u)] = q;
        barrier();
        uint cnt = moe_cnt;
        for (uint j0 = 0u; j0 < cnt; j0 += uint(MOE_TC)) {
            uint tc = min(uint(MOE_TC), cnt - j0);
            uint xrow[MOE_TC];
            [[unroll]] for (int j = 0; j < MOE_TC; j++) {
                uint p = moe_list[j0 + min(uint(j), tc - 1u)];
                uint t = p / P.top_k, s = p - t * P.top_k;
                xrow[j] = (t * P.outer + s * P.inner) >> 2u;
            }
            float acc[MOE_NV];
            [[unroll]] for (int i = 0; i < MOE_NV; i++) acc[i] = 0.0;
#if MOE_IDOT
            uint nb = P.k >> 5u; // blocks of 32 (sub-blocks) per row
            for (uint b0 = 0u; b0 < nb; b0 += uint(MOE_XB)) {
                barrier(); // every invocation is done with the previous slice (or pass)
                for (uint j = 0u; j < tc; j++) moe_quantize(tid, xrow[j], b0, j);
                barrier();
                // a chunk is a lane's pair of sub-blocks 2c, 2c + 1 of super-block sb
                uint c0 = b0 >> 1u, c1 = min(nb, b0 + uint(MOE_XB)) >> 1u;
                for (uint ch = c0 + tid % uint(MOE_T); ch < c1; ch += uint(MOE_T)) {
                    uint sb = ch >> 2u, c = ch & 3u;
                    // each row's codes (low nibbles: sub-block 2c; high, 16 q in place: 2c + 1) and
                    // (d sc[2c], d sc[2c+1], dmin m[2c], dmin m[2c+1]), exact products
                    uint lo[MOE_NR][8], hi[MOE_NR][8];
                    vec4 f[MOE_NR];
                    [[unroll]] for (int r = 0; r < MOE_NR; r++) {
                        uint sbw = base[r] + sb * 9u;
                        uvec4 h = W[sbw], q0 = W[sbw + 1u + 2u * c], q1 = W[sbw + 2u + 2u * c];
                        vec2 dd = unpackHalf2x16(h.x);
                        f[r] = vec4(dd.xx, dd.yy) * moe_k4_scales(h, c);
                        uint u[8] = uint[8](q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w);
                        [[unroll]] for (int w = 0; w < 8; w++) {
                            lo[r][w] = u[w] & 0x0F0F0F0Fu;
                            hi[r][w] = u[w] & 0xF0F0F0F0u;
                        }
                    }
                    uint pa = MOE_XPOS(2u * (ch - c0)), pb = MOE_XPOS(2u * (ch - c0) + 1u);
                    [[unroll]] for (int j = 0; j < MOE_TC; j++) {
                        if (uint(j) < tc) {
                            // token j's two blocks, loaded once for all MOE_NR rows
                            uint xha[8], xla[8], xhb[8], xlb[8];
                            [[unroll]] for (int w = 0; w < 8; w++) {
                                xha[w] = mx_h[moe_xw(uint(w), uint(j), pa)];
                                xla[w] = mx_l[moe_xw(uint(w), uint(j), pa)];
                                xhb[w] = mx_h[moe_xw(uint(w), uint(j), pb)];
                                xlb[w] = mx_l[moe_xw(uint(w), uint(j), pb)];
                            }
                            float sa = mx_s[moe_xblk(uint(j), pa)], sx = mx_s[moe_xblk(uint(j), pb)];
                            float ma = float(mx_sum[moe_xblk(uint(j), pa)]), mb = float(mx_sum[moe_xblk(uint(j), pb)]);
                            [[unroll]] for (int r = 0; r < MOE_NR; r++) {
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
                                acc[r * MOE_TC + j] += sa * (f[r].x * float(ia) - f[r].z * ma) +
                                                       sx * (f[r].y * float(ib) - f[r].w * mb);
                            }
                        }
                    }
                }
            }
#else
            for (uint ch = tid % uint(MOE_T); ch < nsb * 8u; ch += uint(MOE_T)) {
                uint sb = ch >> 3u, v = ch & 7u;
                // every row's chunk decoded first, then each token's x loaded once for all
                // MOE_NR rows (docs/kernels/moe.md, "The Vulkan grouped shader")
                MoeChunk c[MOE_NR];
                [[unroll]] for (int r = 0; r < MOE_NR; r++) {
                    uint w = base[r] + sb * 9u;
                    c[r] = moe_chunk(W[w], W[w + 1u + v], v >> 1u);
                }
                [[unroll]] for (int j = 0; j < MOE_TC; j++) {
                    if (uint(j) < tc) {
                        MoeX x = moe_x(xrow[j], sb, v);
                        [[unroll]] for (int r = 0; r < MOE_NR; r++) acc[r * MOE_TC + j] += moe_dot(c[r], x);
                    }
                }
            }
#endif
            moe_group_sum(acc, tid);
            if (tid % uint(MOE_T) == 0u) {
                [[unroll]] for (int r = 0; r < MOE_NR; r++) {
                    uint row = row0 + uint(r);
                    [[unroll]] for (int j = 0; j < MOE_TC; j++) {
                        if (uint(j) < tc && row < P.n) Y[moe_list[j0 + uint(j)] * P.n + row] = acc[r * MOE_TC + j];
                    }
                }
            }
        }
        barrier(); // moe_cnt and moe_list are refilled by the next window
    }
}
