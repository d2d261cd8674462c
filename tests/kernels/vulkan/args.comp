#version 450
// Test kernel: three storage buffers and a push block of every scalar kind.
// Declared out of binding order on purpose: arguments follow binding order.
// HAVE_U64 adds the uint64_t member (needs shaderInt64 on the device).
#ifdef HAVE_U64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 2) writeonly buffer Out { uint outv[]; };
layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { int b[]; };
layout(push_constant) uniform Params {
    uint n;
    int k;
    float f;
#ifdef HAVE_U64
    uint64_t w;
#endif
};

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < n)
        outv[i] = a[i] + uint(b[i] * k) + uint(f * float(i));
#ifdef HAVE_U64
    if (i == 0) {
        outv[n] = uint(w);
        outv[n + 1] = uint(w >> 32);
    }
#endif
}
