// swiglu_ystore.glsl: how the fused SwiGLU kernels (swiglu_fused.comp, swiglu_coop.comp with
// SW_CHAIN=0) store two neighbouring outputs of one token into y [MT, N] bf16, two per 32-bit
// word (binding 2, declared here): a word whose two halves are both the workgroup's is stored
// whole; otherwise (odd N: the word straddles two workgroups) each half alone, with atomics.
#ifndef SWIGLU_YSTORE_GLSL
#define SWIGLU_YSTORE_GLSL

#include "swiglu_bf16.glsl"

// coherent for the half-word atomics of odd N
layout(set = 0, binding = 2) coherent buffer YBuf { uint Y[]; };

// Sets bf16 element j of Y alone: the other half of its word may be another workgroup's.
void sw_store_half(uint j, float v) {
    uint sh = (j & 1u) * 16u;
    atomicAnd(Y[j >> 1], ~(0xFFFFu << sh));
    atomicOr(Y[j >> 1], sw_bf16(v) << sh);
}

// y0 into element j, y1 into j + 1 when `two` (j + 1 is still this token's, below N).
void sw_store_pair(uint j, float y0, float y1, bool two) {
    if (two && (j & 1u) == 0u) {
        Y[j >> 1] = sw_bf16(y0) | (sw_bf16(y1) << 16);
    } else {
        sw_store_half(j, y0);
        if (two) sw_store_half(j + 1u, y1);
    }
}

#endif
