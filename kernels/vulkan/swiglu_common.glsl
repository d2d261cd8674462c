// swiglu_common.glsl: the dot-product part of the Vulkan SwiGLU kernels
// (swiglu_fused.comp, swiglu_gemv.comp): SW_ROWS = 2 SW_OUT weight rows of W [rows, K]
// times the MT token rows of x [MT, K], bf16 in, fp32 accumulation; docs/kernels/swiglu.md.
//
// A workgroup of SW_WG invocations owns the SW_ROWS rows (the fused kernel: SW_OUT
// outputs' gate and up rows); its invocations stride over the rows' 16-byte words (8
// bf16), each x word loaded once for the SW_ROWS rows (more rows a workgroup: fewer x
// loads a weight). The partial sums are reduced over the workgroup (a subgroupAdd, then
// shared memory across the subgroups, so any subgroup size works) into sw_sum[r * MT + t].
//
// Bindings 0 (W) and 1 (x) are declared here, binding 2 (the output) by each kernel;
// then the push constants {n, k}: the backend reflects exactly that order.
// Required defines: MT (tokens, 1..8), SW_WG (a power of two, 32..1024) and SW_OUT (2 or 4).
#ifndef SWIGLU_COMMON_GLSL
#define SWIGLU_COMMON_GLSL

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require

#include "swiglu_bf16.glsl"

#if !defined(MT) || !defined(SW_WG) || !defined(SW_OUT)
#error "the SwiGLU kernels take MT (tokens, 1..8), SW_WG (invocations per workgroup) and SW_OUT (outputs per workgroup) as defines (lib/gpubench/swiglu_vulkan.lua)"
#endif
#if SW_OUT != 2 && SW_OUT != 4
#error "SW_OUT must be 2 or 4 (outputs per workgroup, in pairs of a bf16 word)"
#endif
#if MT < 1 || MT > 8
#error "MT must be 1..8"
#endif
#if SW_WG < 32 || SW_WG > 1024 || (SW_WG & (SW_WG - 1)) != 0
#error "SW_WG must be a power of two in 32..1024"
#endif

#define SW_ROWS (2 * SW_OUT)
#define SW_NACC (SW_ROWS * MT)

layout(local_size_x = SW_WG, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };
layout(set = 0, binding = 1) readonly buffer XBuf { uvec4 X[]; };
// n: outputs of the fused kernel, rows of the GEMV; k: the inner dimension.
layout(push_constant) uniform Params {
    uint n;
    uint k;
} P;

// One partial sum per subgroup and accumulator (sized for subgroups of one).
shared float sw_red[SW_WG * SW_NACC];
shared float sw_sum[SW_NACC];

// sw_sum[r * MT + t] = W[row[r]] . x[t] for the workgroup's SW_ROWS rows (word offsets of
// each row's start in W). Every invocation must call it: it holds barriers.
void sw_dot_rows(uint row[SW_ROWS]) {
    uint words = P.k >> 3u;
    float acc[SW_NACC];
    [[unroll]] for (int j = 0; j < SW_NACC; j++) acc[j] = 0.0;
    for (uint c = gl_LocalInvocationIndex; c < words; c += uint(SW_WG)) {
        uvec4 xv[MT];
        [[unroll]] for (int t = 0; t < MT; t++) xv[t] = X[uint(t) * words + c];
        [[unroll]] for (int r = 0; r < SW_ROWS; r++) {
            uvec4 w = W[row[r] + c];
            [[unroll]] for (int t = 0; t < MT; t++) acc[r * MT + t] += sw_dot8(w, xv[t]);
        }
    }
    [[unroll]] for (int j = 0; j < SW_NACC; j++) acc[j] = subgroupAdd(acc[j]);
    if (subgroupElect()) {
        [[unroll]] for (int j = 0; j < SW_NACC; j++) sw_red[gl_SubgroupID * uint(SW_NACC) + uint(j)] = acc[j];
    }
    barrier();
    // SW_NACC may pass the workgroup (SW_OUT = 4, MT = 8: 64 sums, 32 invocations)
    for (uint a = gl_LocalInvocationIndex; a < uint(SW_NACC); a += uint(SW_WG)) {
        float s = 0.0;
        for (uint i = 0u; i < gl_NumSubgroups; i++) s += sw_red[i * uint(SW_NACC) + a];
        sw_sum[a] = s;
    }
    barrier();
}

#endif
