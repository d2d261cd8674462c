#version 450
// The q6_k GEMV for T = 1..8 rows of x on int8 cooperative matrices (docs/kernels/
// vulkan-gemv.md, "Tensor cores through int8 cooperative matrices"; the shared parts:
// coop_common.glsl). q6_k's codes q = (low | high << 4) - 32 are signed bytes, but each
// 16 of a 32-element sub-block has its own int8 scale (docs/FORMATS.md), so a sub-block
// is staged twice: its first 16 codes with the last 16 zeroed, and the other way round.
// The two products per token digit give sum(q xq) over each half exactly, and
//   sum(w x) ~ s_b d (sc[2j] C_first + sc[2j+1] C_second)
// per row, token and sub-block j. The rows' 210-byte super-blocks start at even bytes
// only, so each lane funnel-shifts its 16-byte chunks out of five words (its halves of
// the four ql quarters and the two qh halves, and the 16 scales), a super-block at a
// time before its sub-blocks are staged one by one.
#extension GL_GOOGLE_include_directive : require
#include "coop_common.glsl"
#include "byte_words.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uint W[]; };

shared uvec4 stage_[SGS * 2u * COOP_STAGE]; // a sub-block's two halves per subgroup
shared vec2 scale_[SGS * 16u];              // d sc[2j], d sc[2j+1] per row

void main() {
    uint nb = P.k >> 5u, nsb = P.k >> 8u;
    CoopPlace pl = coop_place(nsb);
    uint r = pl.r, hf = pl.hf, row = pl.row;

    COOP_C pos = coop_positions();
    int n_el = COOP_LEN(pos);
    float acc[EL_MAX];
    for (int e = 0; e < EL_MAX; e++) acc[e] = 0.0;

    uint sbase = pl.sg * 2u * COOP_STAGE, cbase = pl.sg * 16u;
    for (uint i = 0u; i < pl.per; i++) {
        uint sb = pl.lo + i;
        bool have = sb < pl.hi; // uniform over the subgroup
        uvec4 ql[4], qh[2], sc = uvec4(0u);
        float d = 0.0;
        [[unroll]] for (int c = 0; c < 4; c++) ql[c] = uvec4(0u);
        qh[0] = uvec4(0u);
        qh[1] = uvec4(0u);
        if (pl.live && have) {
            uint o = (row * nsb + sb) * 210u;
            // ql quarter c = 2h + p: bytes 64h + 32p .. of the sub-blocks 4h + p and 4h + p + 2
            [[unroll]] for (int c = 0; c < 4; c++) ql[c] = GEMV_LOAD16(W, o + 32u * uint(c) + 16u * hf);
            qh[0] = GEMV_LOAD16(W, o + 128u + 16u * hf);
            qh[1] = GEMV_LOAD16(W, o + 160u + 16u * hf);
            sc = GEMV_LOAD16(W, o + 192u);
            d = GEMV_F16_AT(W, o + 208u);
        }
        [[unroll]] for (int j = 0; j < 8; j++) {
            uint h = uint(j) >> 2u, kq = uint(j) & 3u; // element 128 h + 32 kq + l
            uvec4 b = ql[2u * h + (kq & 1u)];
            b = (kq < 2u ? b : b >> 4u) & 0x0F0F0F0Fu;
            b |= ((qh[h] >> (2u * kq)) & 0x03030303u) << 4u; // 0..63
            // b - 32 as signed bytes: b < 32 gives b + 224 = (b ^ 32) | 192, else b ^ 32
            uvec4 low = ~b & 0x20202020u;
            uvec4 q = (b ^ 0x20202020u) | (low << 1u) | (low << 2u);
            COOP_WAIT(); // the previous sub-block's matrix loads are done with the stage
            stage_[sbase + r * COOP_ROW_STRIDE + hf] = hf == 0u ? q : uvec4(0u);
            stage_[sbase + COOP_STAGE + r * COOP_ROW_STRIDE + hf] = hf == 1u ? q : uvec4(0u);
            if (hf == 0u) {
                uint w = sc[uint(j) >> 1u], at = (uint(j) & 1u) * 16u; // scales 2j, 2j + 1
                scale_[cbase + r] = d * vec2(float(bitfieldExtract(int(w), int(at), 8)),
                                             float(bitfieldExtract(int(w), int(at) + 8, 8)));
            }
            COOP_SYNC();
            if (!have) continue;
            uint blk = 8u * sb + uint(j);
            COOP_C c0, c1;
            COOP_PRODUCT(c0, stage_, sbase, blk, nb)
            COOP_PRODUCT(c1, stage_, sbase + COOP_STAGE, blk, nb)
            for (int e = 0; e < min(n_el, EL_MAX); e++) {
                int p = COOP_AT(pos, e);
                uvec2 rec = coop_record(uint(p & 7), nb, blk);
                vec2 s2 = scale_[cbase + uint(p >> 3)]; // row p >> 3's d sc of both halves
                acc[e] += uintBitsToFloat(rec.x) * (s2.x * float(COOP_AT(c0, e)) + s2.y * float(COOP_AT(c1, e)));
            }
        }
    }
    coop_store(acc, pos);
}
