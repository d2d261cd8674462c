// swiglu_bf16.glsl: bf16 helpers of the Vulkan SwiGLU kernels (kernels/vulkan/swiglu_*.comp).
// bf16 values travel in 32-bit words (two per word, element 2i in the low half), so the
// kernels need no 16-bit storage feature; docs/kernels/swiglu.md.
#ifndef SWIGLU_BF16_GLSL
#define SWIGLU_BF16_GLSL

// The low and high bf16 of a word, exactly (a bf16 is the top half of an f32).
float sw_lo(uint w) { return uintBitsToFloat(w << 16); }
float sw_hi(uint w) { return uintBitsToFloat(w & 0xFFFF0000u); }

// f32 -> bf16, round to nearest even; a NaN stays a (quiet) NaN.
uint sw_bf16(float f) {
    uint u = floatBitsToUint(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u;
    return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

// silu(v) = v / (1 + e^-v); -0 once e^-v overflows (v < -88).
float sw_silu(float v) { return v / (1.0 + exp(-v)); }

// The dot of 8 bf16 weights with 8 bf16 activations, each a uvec4 of 4 words.
float sw_dot8(uvec4 w, uvec4 x) {
    return dot(uintBitsToFloat(w << 16), uintBitsToFloat(x << 16))
         + dot(uintBitsToFloat(w & 0xFFFF0000u), uintBitsToFloat(x & 0xFFFF0000u));
}

#endif
