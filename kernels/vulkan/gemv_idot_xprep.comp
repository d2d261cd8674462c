#version 450
// The first dispatch of an integer GEMV call with GEMV_XPRE=1 (gemv_q4_k.comp,
// gemv_q5_k.comp through gemv_idot_kquant.glsl, gemv_q6_k.comp, gemv_q8_0.comp and
// gemv_q4_0.comp through gemv_idot_blocks.glsl): x's GEMV_TOKENS rows quantized once per call
// into a workspace the GEMV kernel then reads in x's place, rather than by every workgroup
// into its shared memory (docs/kernels/vulkan-gemv.md, "x quantized once per call").
// 8 invocations per block of 32 values (idot_quant.glsl, the kernels' own quantizer); block b
// of token t is record t * (k / 32) + b of 20 words: its 8 high-byte words, its 8 low-byte
// words, s_b as float bits, the sum of xq, the sums of xq over its two 16-element halves
// (q6_k's -32 per scale). Launch: (x, workspace, u32 k), block 256,
// grid ceil(GEMV_TOKENS * k / 32 * 8 / 256); k a multiple of 32; subgroups of at least 8.
// XPREP_COOP=1 (gemv_b32_coop.comp): both digits signed (IDOT_BALANCED), s_b = amax / 32639,
// and records for 8 tokens, zeros past GEMV_TOKENS (the matrix B's columns): grid
// ceil(8 * k / 32 * 8 / 256). XPREP_COOP=2 (gemv_b32_wideb.comp): the same, its first 16 words
// in the order of the A fragment of lane 4 t + q (coop_frag8.glsl): uvec4 q of the record is
// (high word q, high word 4 + q, low word q, low word 4 + q).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#ifndef XPREP_COOP
#define XPREP_COOP 0
#endif
#define IDOT_BALANCED XPREP_COOP
#include "idot_quant.glsl"

#ifndef GEMV_TOKENS
#error "gemv_idot_xprep takes GEMV_TOKENS (rows of x, 1..8) as a define (lib/gpubench/gemv_vulkan.lua)"
#endif
#if GEMV_TOKENS < 1 || GEMV_TOKENS > 8
#error "GEMV_TOKENS must be in 1..8"
#endif

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer XBuf { vec4 X[]; };
layout(set = 0, binding = 1) writeonly buffer QBuf { uint Q[]; };
layout(push_constant) uniform Params {
    uint k;
} P;

void main() {
    // Lanes numbered by subgroup, so that a block's 8 invocations share one (gemv_common's gemv_tid)
    uint tid = gl_WorkGroupID.x * 256u + gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    uint nb = P.k >> 5u, rec = tid >> 3u, j = tid & 7u;
#if XPREP_COOP
    bool live = rec < nb * 8u; // tokens past GEMV_TOKENS: zero records
#else
    bool live = rec < nb * uint(GEMV_TOKENS);
#endif
    uint t = live ? rec / nb : 0u, b = live ? rec % nb : 0u;
    vec4 v = live && t < uint(GEMV_TOKENS) ? X[t * (P.k >> 2u) + 8u * b + j] : vec4(0.0);
    IdotQuant q = idot_quant_lane(v); // every invocation: the shuffles need all 8 of a block
    if (live) {
        uint o = 20u * rec;
#if XPREP_COOP == 2
        uint f = 4u * (j & 3u) + (j >> 2u);
        Q[o + f] = q.h;
        Q[o + f + 2u] = q.l;
#else
        Q[o + j] = q.h;
        Q[o + 8u + j] = q.l;
#endif
        if (j == 0u) {
            Q[o + 16u] = floatBitsToUint(q.amax * (1.0 / float(IDOT_QMAX)));
            Q[o + 17u] = uint(q.sum);
        }
        if ((j & 3u) == 0u) Q[o + 18u + (j >> 2u)] = uint(q.half_sum); // lanes 0 and 4: the halves
    }
}
