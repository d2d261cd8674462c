#version 450
// Which element each of an invocation's components is, for the fp16 cooperative-matrix
// types coop_frag.glsl fills from registers (16x16 A, 16x8 B) and the 16x8 fp32 result,
// read from index matrices: out[lane * 160 + 0..] = A's length, its 15 slots; B's length, its
// 15 slots; C's length, its 15 slots (docs/kernels/vulkan-gemv.md, "A and B from registers").
// Then the int8 types of the GEMV's int8 kernels (16x32 s8 A, 32x8 s8 B, 16x8 s32 C) at
// out[lane * 160 + 48..]: an s8 element cannot hold its index (512 of them), so each is
// loaded twice, from bytes holding its row and from bytes holding its column: A's length,
// 16 rows, 16 columns; B's length, 16 rows (k), 16 columns; C's length, 15 slots.
// One subgroup of 32; tools/coop_layout_probe.lua prints it.
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint O[]; };
shared float16_t ih_[256];
shared float if_[128];
shared int ii_[128];
// bytes: A 16x32 row-major (rows of 2 uvec4) holding its row, then its column; B 32x8
// column-major (columns of 2 uvec4) holding its k, then its column
shared uvec4 ar_[32], ac_[32], br_[16], bc_[16];
// four bytes (each < 128) as one little-endian word
uint bytes4(uint v0, uint v1, uint v2, uint v3) { return v0 | (v1 << 8) | (v2 << 16) | (v3 << 24); }
void main() {
    uint l = gl_LocalInvocationIndex;
    for (uint i = l; i < 256u; i += 32u) ih_[i] = float16_t(i);
    for (uint i = l; i < 128u; i += 32u) {
        if_[i] = float(i);
        ii_[i] = int(i);
    }
    // word w of A's 128 (4 bytes: elements 4w .. 4w + 3, row-major 16 x 32), of B's 64
    // (column-major 32 x 8: element (k, n) at 32 n + k)
    for (uint w = l; w < 128u; w += 32u) {
        uint e = 4u * w;
        ar_[w >> 2u][w & 3u] = bytes4(e >> 5u, (e + 1u) >> 5u, (e + 2u) >> 5u, (e + 3u) >> 5u);
        ac_[w >> 2u][w & 3u] = bytes4(e & 31u, (e + 1u) & 31u, (e + 2u) & 31u, (e + 3u) & 31u);
    }
    for (uint w = l; w < 64u; w += 32u) {
        uint e = 4u * w;
        br_[w >> 2u][w & 3u] = bytes4(e & 31u, (e + 1u) & 31u, (e + 2u) & 31u, (e + 3u) & 31u);
        bc_[w >> 2u][w & 3u] = bytes4(e >> 5u, (e + 1u) >> 5u, (e + 2u) >> 5u, (e + 3u) >> 5u);
    }
    barrier();
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a;
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> b;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> c;
    coopMatLoadNV(a, ih_, 0, 16, false);
    coopMatLoadNV(b, ih_, 0, 8, false);
    coopMatLoadNV(c, if_, 0, 8, false);
    uint o = l * 160u;
    O[o] = uint(a.length());
    for (int e = 0; e < min(a.length(), 15); e++) O[o + 1u + uint(e)] = uint(a[e]);
    O[o + 16u] = uint(b.length());
    for (int e = 0; e < min(b.length(), 15); e++) O[o + 17u + uint(e)] = uint(b[e]);
    O[o + 32u] = uint(c.length());
    for (int e = 0; e < min(c.length(), 15); e++) O[o + 33u + uint(e)] = uint(c[e]);

    icoopmatNV<8, gl_ScopeSubgroup, 16, 32> a8r, a8c;
    icoopmatNV<8, gl_ScopeSubgroup, 32, 8> b8r, b8c;
    icoopmatNV<32, gl_ScopeSubgroup, 16, 8> c32;
    coopMatLoadNV(a8r, ar_, 0, 2, false);
    coopMatLoadNV(a8c, ac_, 0, 2, false);
    coopMatLoadNV(b8r, br_, 0, 2, true);
    coopMatLoadNV(b8c, bc_, 0, 2, true);
    coopMatLoadNV(c32, ii_, 0, 8, false);
    o += 48u;
    O[o] = uint(a8r.length());
    for (int e = 0; e < min(a8r.length(), 16); e++) {
        O[o + 1u + uint(e)] = uint(int(a8r[e]));
        O[o + 17u + uint(e)] = uint(int(a8c[e]));
    }
    O[o + 33u] = uint(b8r.length());
    for (int e = 0; e < min(b8r.length(), 16); e++) {
        O[o + 34u + uint(e)] = uint(int(b8r[e]));
        O[o + 50u + uint(e)] = uint(int(b8c[e]));
    }
    O[o + 66u] = uint(c32.length());
    for (int e = 0; e < min(c32.length(), 15); e++) O[o + 67u + uint(e)] = uint(c32[e]);
}
