#version 450
// The q4_k (COOP_FMT=3) and q5_k (4) GEMV for T = 1..8 rows of x on int8 cooperative
// matrices (docs/kernels/vulkan-gemv.md, "Tensor cores through int8 cooperative matrices";
// the shared parts: coop_common.glsl). A sub-block of 32 weights is one 16x8x32 product
// pair: its codes q (q4_k 0..15, q5_k 0..31) against 8 tokens' digits give sum(q xq)
// exactly, and
//   sum(w x) ~ s_b (d sc sum(q xq) - dmin m sum(xq))
// per row, token and sub-block (w = d sc q - dmin m, docs/FORMATS.md). The rows are
// 144- and 176-byte super-blocks, 16-byte aligned, so each lane loads its half of a row's
// 32 code bytes of a sub-block pair as one uvec4 (sub-block 2c in the low nibbles, 2c + 1
// in the high), the header (d, dmin, packed scales) as another, and q5_k's its half of qh
// (bit s of qh[l]: the fifth bit of element l of sub-block s) as a third. The subgroup loads a whole
// super-block (5 uvec4 a lane) before staging the pairs one at a time, each with its
// rows' d sc and dmin m.
#extension GL_GOOGLE_include_directive : require
#include "coop_common.glsl"
#include "kquant_scales.glsl"

#if !defined(COOP_FMT) || (COOP_FMT != 3 && COOP_FMT != 4)
#error "COOP_FMT must be 3 (q4_k) or 4 (q5_k) (lib/gpubench/gemv_vulkan.lua)"
#endif
#define Q5 (COOP_FMT == 4)
#define SB_VECS (Q5 ? 11u : 9u) // uvec4s a super-block: 176 and 144 bytes
#define QS_AT (Q5 ? 3u : 1u)    // the codes' first uvec4 (after the header; q5_k: and qh)

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

shared uvec4 stage_[SGS * 2u * COOP_STAGE]; // a sub-block pair per subgroup
shared vec2 scale_[SGS * 2u * 16u];          // the pair's d sc and dmin m per row

void main() {
    uint nb = P.k >> 5u, nsb = P.k >> 8u;
    CoopPlace pl = coop_place(nsb);
    uint r = pl.r, hf = pl.hf, row = pl.row;

    COOP_C pos = coop_positions();
    int n_el = COOP_LEN(pos);
    float acc[EL_MAX];
    for (int e = 0; e < EL_MAX; e++) acc[e] = 0.0;

    uint sbase = pl.sg * 2u * COOP_STAGE, cbase = pl.sg * 32u;
    for (uint i = 0u; i < pl.per; i++) {
        uint sb = pl.lo + i;
        bool have = sb < pl.hi; // uniform over the subgroup
        uvec4 h = uvec4(0u), qh = uvec4(0u), q[4];
        uint at = (row * nsb + sb) * SB_VECS;
        [[unroll]] for (int c = 0; c < 4; c++) q[c] = uvec4(0u);
        if (pl.live && have) {
            h = W[at];
#if Q5
            qh = W[at + 1u + hf];
#endif
            [[unroll]] for (int c = 0; c < 4; c++) q[c] = W[at + QS_AT + 2u * uint(c) + hf];
        }
        vec2 dd = unpackHalf2x16(h.x); // d, dmin (zeros past m)
        [[unroll]] for (int c = 0; c < 4; c++) {
            vec4 sm = gemv_k4_scales(h, uint(c)); // sc[2c], sc[2c+1], m[2c], m[2c+1]
            COOP_WAIT(); // the previous pair's matrix loads are done with the stage
            uvec4 lo = q[c] & 0x0F0F0F0Fu, hi = (q[c] >> 4u) & 0x0F0F0F0Fu;
#if Q5
            lo |= ((qh >> uint(2 * c)) & 0x01010101u) << 4u;
            hi |= ((qh >> uint(2 * c + 1)) & 0x01010101u) << 4u;
#endif
            stage_[sbase + r * COOP_ROW_STRIDE + hf] = lo;
            stage_[sbase + COOP_STAGE + r * COOP_ROW_STRIDE + hf] = hi;
            if (hf == 0u) {
                scale_[cbase + r] = dd * sm.xz;
                scale_[cbase + 16u + r] = dd * sm.yw;
            }
            COOP_SYNC();
            if (!have) continue;
            [[unroll]] for (int j = 0; j < 2; j++) {
                uint b = 8u * sb + 2u * uint(c) + uint(j);
                COOP_C cm;
                COOP_PRODUCT(cm, stage_, sbase + uint(j) * COOP_STAGE, b, nb)
                for (int e = 0; e < min(n_el, EL_MAX); e++) {
                    int p = COOP_AT(pos, e);
                    uvec2 rec = coop_record(uint(p & 7), nb, b);
                    vec2 sc = scale_[cbase + uint(j) * 16u + uint(p >> 3)]; // d sc, dmin m of row p >> 3
                    acc[e] += uintBitsToFloat(rec.x) * (sc.x * float(COOP_AT(cm, e)) - sc.y * float(int(rec.y)));
                }
            }
        }
    }
    coop_store(acc, pos);
}
