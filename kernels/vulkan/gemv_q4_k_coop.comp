#version 450
// The q4_k GEMV for T = 1..8 rows of x on int8 cooperative matrices (docs/kernels/
// vulkan-gemv.md, "Tensor cores through int8 cooperative matrices"; the shared parts:
// coop_common.glsl). A sub-block of 32 weights is one 16x8x32 product pair: its codes
// q (0..15) against 8 tokens' digits give sum(q xq) exactly, and
//   sum(w x) ~ s_b (d sc sum(q xq) - dmin m sum(xq))
// per row, token and sub-block (w = d sc q - dmin m, docs/FORMATS.md). q4_k's rows are
// 144-byte super-blocks, 16-byte aligned, so each lane loads its half of a row's 32 code
// bytes of a sub-block pair as one uvec4 (sub-block 2c in the low nibbles, 2c + 1 in the
// high), and the header (d, dmin, packed scales) as another. The subgroup loads a whole
// super-block (5 uvec4 a lane) before staging the pairs one at a time.
#extension GL_GOOGLE_include_directive : require
#include "coop_common.glsl"
#include "kquant_scales.glsl"

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };

shared uvec4 stage_[SGS * 2u * COOP_STAGE]; // a sub-block pair per subgroup

void main() {
    uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID;
    uint wr = sg % uint(COOP_WR), ks = sg / uint(COOP_WR);
    uint row0 = (gl_WorkGroupID.x * uint(COOP_WR) + wr) * 16u;
    uint nb = P.k >> 5u, nsb = P.k >> 8u;
    uint r = lane >> 1u, hf = lane & 1u, row = row0 + r;
    bool live = row < P.m;

    CI32 pos = coop_positions();
    int n_el = pos.length();
    float acc[EL_MAX];
    for (int e = 0; e < EL_MAX; e++) acc[e] = 0.0;

    uint per = (nsb + uint(COOP_KS) - 1u) / uint(COOP_KS);
    uint s_lo = min(nsb, ks * per), s_hi = min(nsb, s_lo + per);
    uint sbase = sg * 2u * COOP_STAGE;
    for (uint sb = s_lo; sb < s_hi; sb++) {
        uvec4 h = uvec4(0u), q[4];
        uint at = (row * nsb + sb) * 9u; // uvec4s: 144 bytes a super-block
        [[unroll]] for (int c = 0; c < 4; c++) q[c] = uvec4(0u);
        if (live) {
            h = W[at];
            [[unroll]] for (int c = 0; c < 4; c++) q[c] = W[at + 1u + 2u * uint(c) + hf];
        }
        vec2 dd = unpackHalf2x16(h.x); // d, dmin (zeros past m)
        [[unroll]] for (int c = 0; c < 4; c++) {
            vec4 sm = gemv_k4_scales(h, uint(c)); // sc[2c], sc[2c+1], m[2c], m[2c+1]
            subgroupBarrier(); // the previous pair's matrix loads are done with the stage
            stage_[sbase + r * COOP_ROW_STRIDE + hf] = q[c] & 0x0F0F0F0Fu;
            stage_[sbase + COOP_STAGE + r * COOP_ROW_STRIDE + hf] = (q[c] >> 4u) & 0x0F0F0F0Fu;
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            [[unroll]] for (int i = 0; i < 2; i++) {
                uint b = 8u * sb + 2u * uint(c) + uint(i);
                float ds = dd.x * (i == 0 ? sm.x : sm.y), dm = dd.y * (i == 0 ? sm.z : sm.w);
                CI32 cm;
                COOP_PRODUCT(cm, stage_, sbase + uint(i) * COOP_STAGE, b, nb)
                for (int e = 0; e < min(n_el, EL_MAX); e++) {
                    int p = pos[e];
                    uvec2 rec = coop_record(uint(p & 7), nb, b);
                    uint src = uint(p >> 3) * 2u; // row p >> 3's scales: lanes 2r and 2r + 1
                    float dsr = subgroupShuffle(ds, src), dmr = subgroupShuffle(dm, src);
                    acc[e] += uintBitsToFloat(rec.x) * (dsr * float(cm[e]) - dmr * float(int(rec.y)));
                }
            }
        }
    }
    coop_store(acc, pos);
}
