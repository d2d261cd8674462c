#version 450
// The q8_0 / q4_0 GEMV for T = 1..8 rows of x on the tensor cores through
// VK_NV_cooperative_matrix's int8 16x8x32 matrices (docs/kernels/vulkan-gemv.md,
// "Tensor cores through int8 cooperative matrices"): the CUDA int8 kernel's scheme
// (gemv_b32_i8.cuh) where Vulkan offers it. lavapipe has no cooperative matrices, so
// gemv_vulkan.variant's GEMV_COOP=1 carries a device requirement and nothing picks it
// by default; the float and integer kernels are the fallback.
//
// x is quantized once per call by gemv_idot_xprep.comp with XPREP_COOP=1: per token
// and block of 32 values xq = round(x / s_b), |xq| <= 32639, split into two signed
// digits xq = 256 h + l (idot_quant.glsl, IDOT_BALANCED), in records of 80 bytes, token
// t's block b at record t * nb + b, written for 8 tokens (zeros past GEMV_TOKENS), so
// that B (32 k x 8 tokens, column-major) loads straight from the workspace: column t
// starts 80 (t nb + b) bytes in, 16-byte aligned.
//
// A subgroup (32 invocations) owns 16 rows and one of COOP_KS slices of the blocks;
// COOP_WR such row groups and COOP_KS slices make a workgroup. Per block the
// subgroup copies its rows' 32 weight codes into shared memory (16-byte aligned rows
// for the matrix load; the ggml blocks are 34 and 18 bytes), then C = A Bh, C = A Bl
// + 256 C: the exact integer dot of every row and token for that block, and adds
// float(C) * d_row * s_b,token (q4_0: (C - 8 sum(xq)) ...) into per-invocation
// float sums. Which row and token an invocation's components of C are is the
// implementation's: the kernel reads it from a matrix of the same type loaded from
// the indices 0..127 (element-wise operations act on the same components of two
// matrices of one type). COOP_U blocks are loaded before any is multiplied.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_NV_cooperative_matrix : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#extension GL_EXT_control_flow_attributes : require

#if !defined(COOP_FMT) || !defined(COOP_WR) || !defined(COOP_KS) || !defined(COOP_U) || !defined(GEMV_TOKENS)
#error "COOP_FMT (1 q8_0, 2 q4_0), COOP_WR, COOP_KS, COOP_U and GEMV_TOKENS must be defined (lib/gpubench/gemv_vulkan.lua)"
#endif
#if COOP_FMT != 1 && COOP_FMT != 2
#error "COOP_FMT must be 1 (q8_0) or 2 (q4_0)"
#endif
#if COOP_WR * COOP_KS * 32 > 1024 || COOP_WR < 1 || COOP_KS < 1
#error "COOP_WR x COOP_KS subgroups of 32 must make a workgroup of at most 1024"
#endif
#if COOP_U < 1 || COOP_U > 8
#error "COOP_U must be in 1..8"
#endif
#if GEMV_TOKENS < 1 || GEMV_TOKENS > 8
#error "GEMV_TOKENS must be in 1..8"
#endif

#define SGS (COOP_WR * COOP_KS)
#define BLOCK_BYTES (COOP_FMT == 1 ? 34u : 18u)
#define ROW_STRIDE 3u // uvec4s per staged row: 32 codes and 16 bytes of padding (bank spread)
#define STAGE (16u * ROW_STRIDE) // uvec4s per staged block of 16 rows
#define EL_MAX 8 // components of C an invocation may hold (NVIDIA: 4 of a 16 x 8 matrix)

layout(local_size_x = SGS * 32, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer WBuf { uint W[]; };
// The workspace as uvec4s (the matrix loads count in them): record rec is XQ[5 rec ..
// 5 rec + 4], its s_b and sum of xq in XQ[5 rec + 4].xy.
layout(set = 0, binding = 1) readonly buffer XQBuf { uvec4 XQ[]; };
layout(set = 0, binding = 2) writeonly buffer YBuf { float Y[]; };
layout(push_constant) uniform Params {
    uint m;
    uint k;
} P;

shared uvec4 stage_[SGS * COOP_U * STAGE];
shared int index_[128];
shared float red_[SGS * 128];

#define CI32 icoopmatNV<32, gl_ScopeSubgroup, 16, 8>

// An fp16 at an even byte offset of W (gemv_common.glsl's GEMV_F16_AT, without its
// bindings).
float f16_at(uint o) {
    return unpackHalf2x16(W[o >> 2u] >> ((o & 2u) << 3u)).x;
}

uint funnel(uint lo, uint hi, uint s) {
    return (lo >> s) | ((hi << 16u) << (16u - s));
}

void main() {
    uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID;
    uint wr = sg % uint(COOP_WR), ks = sg / uint(COOP_WR);
    uint row0 = (gl_WorkGroupID.x * uint(COOP_WR) + wr) * 16u;
    uint nb = P.k >> 5u, row_bytes = nb * BLOCK_BYTES;
    // this invocation's staging share: row r of the 16, half hf of its 32 codes
    uint r = lane >> 1u, hf = lane & 1u, row = row0 + r;
    bool live = row < P.m;

    for (uint i = gl_LocalInvocationIndex; i < 128u; i += uint(SGS * 32)) index_[i] = int(i);
    barrier();
    CI32 pos;
    coopMatLoadNV(pos, index_, 0, 8, false); // component e: row pos[e] >> 3, token pos[e] & 7
    int n_el = pos.length();
    float acc[EL_MAX];
    for (int e = 0; e < EL_MAX; e++) acc[e] = 0.0;

    uint per = (nb + uint(COOP_KS) - 1u) / uint(COOP_KS);
    uint b_lo = min(nb, ks * per), b_hi = min(nb, b_lo + per);
    uint sbase = sg * uint(COOP_U) * STAGE;
    for (uint b0 = b_lo; b0 < b_hi; b0 += uint(COOP_U)) {
        float d[COOP_U];
        uvec4 q[COOP_U];
        [[unroll]] for (int u = 0; u < COOP_U; u++) {
            uint b = b0 + uint(u);
            d[u] = 0.0;
            q[u] = uvec4(0u);
            if (live && b < b_hi) {
                uint o = row * row_bytes + b * BLOCK_BYTES;
                d[u] = f16_at(o);
#if COOP_FMT == 1
                uint qo = o + 2u + 16u * hf; // this half's 16 codes
#else
                uint qo = o + 2u; // all 16 bytes: low nibbles are codes 0..15, high 16..31
#endif
                uint s = (qo & 2u) << 3u, w = qo >> 2u;
                uint u0 = W[w], u1 = W[w + 1u], u2 = W[w + 2u], u3 = W[w + 3u], u4 = W[w + 4u];
                q[u] = uvec4(funnel(u0, u1, s), funnel(u1, u2, s), funnel(u2, u3, s), funnel(u3, u4, s));
#if COOP_FMT == 2
                q[u] = hf == 0u ? (q[u] & 0x0F0F0F0Fu) : ((q[u] >> 4u) & 0x0F0F0F0Fu);
#endif
            }
        }
        subgroupBarrier(); // the previous step's matrix loads are done with the stage
        [[unroll]] for (int u = 0; u < COOP_U; u++) stage_[sbase + uint(u) * STAGE + r * ROW_STRIDE + hf] = q[u];
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        [[unroll]] for (int u = 0; u < COOP_U; u++) {
            uint b = b0 + uint(u);
            if (b >= b_hi) break; // uniform over the subgroup
            icoopmatNV<8, gl_ScopeSubgroup, 16, 32> a;
            icoopmatNV<8, gl_ScopeSubgroup, 32, 8> bh, bl;
            coopMatLoadNV(a, stage_, sbase + uint(u) * STAGE, ROW_STRIDE, false);
            coopMatLoadNV(bh, XQ, 5u * b, 5u * nb, true);
            coopMatLoadNV(bl, XQ, 5u * b + 2u, 5u * nb, true);
            CI32 c = coopMatMulAddNV(a, bh, CI32(0));
            c = coopMatMulAddNV(a, bl, c * 256);
            for (int e = 0; e < min(n_el, EL_MAX); e++) {
                int p = pos[e];
                uvec2 sb = XQ[5u * (uint(p & 7) * nb + b) + 4u].xy;
                float dw = subgroupShuffle(d[u], uint(p >> 3) * 2u);
#if COOP_FMT == 1
                acc[e] += float(c[e]) * (dw * uintBitsToFloat(sb.x));
#else
                acc[e] += float(c[e] - 8 * int(sb.y)) * (dw * uintBitsToFloat(sb.x));
#endif
            }
        }
    }

    for (int e = 0; e < min(n_el, EL_MAX); e++) red_[sg * 128u + uint(pos[e])] = acc[e];
    barrier();
    for (uint i = gl_LocalInvocationIndex; i < uint(COOP_WR) * 128u; i += uint(SGS * 32)) {
        uint g = i >> 7u, p = i & 127u, t = p & 7u, rr = (gl_WorkGroupID.x * uint(COOP_WR) + g) * 16u + (p >> 3u);
        float sum = 0.0;
        for (uint s = 0u; s < uint(COOP_KS); s++) sum += red_[(s * uint(COOP_WR) + g) * 128u + p];
        // more components than EL_MAX would leave sums out: NaN, which the oracle check refuses
        if (n_el > EL_MAX) sum = uintBitsToFloat(0x7FC00000u);
        if (t < uint(GEMV_TOKENS) && rr < P.m) Y[t * P.m + rr] = sum;
    }
}
