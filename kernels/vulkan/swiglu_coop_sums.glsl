// swiglu_coop_sums.glsl: the slices' sums of the Vulkan SwiGLU kernels on cooperative matrices
// (swiglu_coop.comp, swiglu_wideb.comp). Needs SGS, SW_WR, SW_KS and coop_core.glsl first.
#ifndef SWIGLU_COOP_SUMS_GLSL
#define SWIGLU_COOP_SUMS_GLSL

shared float sw_red_[SGS * 128];
shared float sw_sum_[SW_WR * 128];

// Each subgroup's 16 x 8 result c times 2^-8 (the weights' scale) into shared memory by its
// components' positions, then per tile gi (SW_WR a workgroup) the sum of its SW_KS slices into
// sw_sum_[gi * 128 + p], p = row * 8 + column of the result. NaN for every component where
// `bad` or past EL_MAX, which the check refuses. Every invocation calls it (barriers).
void sw_slice_sums(COOP_C c, bool bad) {
    COOP_C pos = coop_positions();
    int n_el = COOP_LEN(pos);
    for (int e = 0; e < min(n_el, EL_MAX); e++) {
        float v = float(COOP_AT(c, e)) * (1.0 / 256.0);
        if (n_el > EL_MAX || bad) v = uintBitsToFloat(0x7FC00000u);
        sw_red_[COOP_SG * 128u + COOP_P(pos, e)] = v;
    }
    barrier();
    for (uint i = gl_LocalInvocationIndex; i < uint(SW_WR) * 128u; i += uint(SGS * 32)) {
        uint gi = i >> 7u, p = i & 127u;
        float s = 0.0;
        for (uint q = 0u; q < uint(SW_KS); q++) s += sw_red_[(q * uint(SW_WR) + gi) * 128u + p];
        sw_sum_[i] = s;
    }
    barrier();
}

#endif
