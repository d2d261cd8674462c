// dense_xsplit.glsl: what the first dispatches of the dense formats' tensor-core GEMVs share
// (gemv_dense_coop_xprep.comp, gemv_dense_wide_xprep.comp, gemv_dense_wideb_xprep.comp): a
// token row's power-of-two scale s_t >= its largest |x|, and x / s_t split into f16 hi + lo
// (x / s_t - hi - lo within 2^-24, 2^-23 where packHalf2x16 truncates; docs/kernels/
// vulkan-gemv.md, "The dense formats on cooperative matrices"). Needs X (vec4, binding 0), P.k
// and a workgroup of 256 declared first.
#ifndef DENSE_XSPLIT_GLSL
#define DENSE_XSPLIT_GLSL

shared float xsplit_part_[256];

// s_t of token t's row of x (1 where !live or the row is zeros): every invocation of the
// workgroup calls it (barriers; it may be called again at once)
float xsplit_scale(uint t, bool live) {
    uint tid = gl_LocalInvocationIndex, k4 = P.k >> 2u;
    float amax = 0.0;
    if (live) {
        for (uint i = tid; i < k4; i += 256u) {
            vec4 a = abs(X[t * k4 + i]);
            amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
        }
    }
    xsplit_part_[tid] = amax;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1u) {
        if (tid < h) xsplit_part_[tid] = max(xsplit_part_[tid], xsplit_part_[tid + h]);
        barrier();
    }
    amax = xsplit_part_[0];
    barrier(); // read by all before a next call writes it
    // s = 2^e >= amax: x / s in [-1, 1], exact
    float s = amax > 0.0 ? exp2(ceil(log2(amax))) : 1.0;
    if (s < amax) s *= 2.0; // log2's rounding
    return s;
}

// Two values of x / s_t as f16 pairs (low half first): .x the hi word, .y the lo word (the rest)
uvec2 xsplit_hilo(vec2 v) {
    uint hi = packHalf2x16(v);
    return uvec2(hi, packHalf2x16(v - unpackHalf2x16(hi)));
}

#endif
