#version 450
// Which element each of an invocation's components is, for the fp16 cooperative-matrix
// types coop_frag.glsl fills from registers (16x16 A, 16x8 B) and the 16x8 fp32 result,
// read from index matrices: out[lane * 64 + 0..] = A's length, its 16 slots; B's length, its
// 16 slots; C's length, its 16 slots (docs/kernels/vulkan-gemv.md, "A and B from registers").
// One subgroup of 32; tools/coop_layout_probe.lua prints it.
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint O[]; };
shared float16_t ih_[256];
shared float if_[128];
void main() {
    uint l = gl_LocalInvocationIndex;
    for (uint i = l; i < 256u; i += 32u) ih_[i] = float16_t(i);
    for (uint i = l; i < 128u; i += 32u) if_[i] = float(i);
    barrier();
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a;
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> b;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> c;
    coopMatLoadNV(a, ih_, 0, 16, false);
    coopMatLoadNV(b, ih_, 0, 8, false);
    coopMatLoadNV(c, if_, 0, 8, false);
    uint o = l * 64u;
    O[o] = uint(a.length());
    for (int e = 0; e < min(a.length(), 15); e++) O[o + 1u + uint(e)] = uint(a[e]);
    O[o + 16u] = uint(b.length());
    for (int e = 0; e < min(b.length(), 15); e++) O[o + 17u + uint(e)] = uint(b[e]);
    O[o + 32u] = uint(c.length());
    for (int e = 0; e < min(c.length(), 15); e++) O[o + 33u + uint(e)] = uint(c[e]);
}
