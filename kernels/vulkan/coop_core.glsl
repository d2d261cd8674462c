// coop_core.glsl: what every kernel on NV cooperative matrices here shares, whatever its
// bindings: the extensions, the 16 x 8 result type COOP_C (int32, or fp32 with COOP_FLOAT),
// the subgroup's id and lane, its barriers, and which (row, column) each of an invocation's
// components of a result is (coop_positions), read from a matrix of the same type loaded
// from the indices 0..127 (element-wise operations act on the same components of two
// matrices of one type, so the layouts agree). Users: coop_common.glsl (the GEMVs),
// coop_frag.glsl, swiglu_coop.comp.
//
// COOP_EMULATE=1 compiles the same kernels with the matrices emulated: 16 x 8 results held 4
// components an invocation in a scrambled layout, subgroups of 32 counted from the local
// index and their barriers the workgroup's (so every loop of a kernel must run the same trip
// count in every subgroup). It runs on any device (lavapipe in CI); what it cannot check is
// the matrix instructions' own semantics, which the oracle tests on a device that has them do.
// Needs SGS (subgroups of 32 a workgroup) defined first.
#ifndef COOP_CORE_GLSL
#define COOP_CORE_GLSL

#ifndef COOP_EMULATE
#define COOP_EMULATE 0
#endif
#ifndef SGS
#error "coop_core.glsl needs SGS, the subgroups of 32 a workgroup"
#endif

#extension GL_EXT_control_flow_attributes : require
#if !COOP_EMULATE
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_NV_cooperative_matrix : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#endif

#define EL_MAX 8 // components of a 16 x 8 result an invocation may hold (NVIDIA: 4)

// The unroll of a loop over matrix products: emulated, a product is a long loop through shared
// memory, and unrolled many times over it makes lavapipe's compile too slow for the tests
#if COOP_EMULATE
#define COOP_UNROLL [[dont_unroll]]
#else
#define COOP_UNROLL [[unroll]]
#endif

#ifndef COOP_FLOAT
#define COOP_FLOAT 0 // 1: fp32 results of fp16 products
#endif
#if COOP_FLOAT
#define COOP_ELT float
#else
#define COOP_ELT int
#endif

shared COOP_ELT coop_index_[128];

// COOP_C: the type of a 16 x 8 result (int32 or fp32), or its emulation
#if !COOP_EMULATE
#if COOP_FLOAT
#define COOP_C fcoopmatNV<32, gl_ScopeSubgroup, 16, 8>
#else
#define COOP_C icoopmatNV<32, gl_ScopeSubgroup, 16, 8>
#endif
#define COOP_SG gl_SubgroupID
#define COOP_LANE gl_SubgroupInvocationID
#define COOP_LEN(c) (c).length()
#define COOP_AT(c, e) (c)[e]
// before a stage is written again (its matrix loads done); after it is written
#define COOP_WAIT() subgroupBarrier()
#define COOP_SYNC() { subgroupMemoryBarrierShared(); subgroupBarrier(); }

// pos = the matrix whose elements are their own row-major indices 0..n-1 (stride: its
// columns), through the shared array arr of type elt. Every invocation of the workgroup
// runs it (barriers).
#define COOP_LOAD_INDICES(pos, arr, n, stride, elt) { \
    barrier(); \
    for (uint i_ = gl_LocalInvocationIndex; i_ < (n); i_ += uint(SGS * 32)) arr[i_] = elt(i_); \
    barrier(); \
    coopMatLoadNV(pos, arr, 0, stride, false); }

// A function name() returning such a matrix of type t (n elements, stride columns).
#define COOP_INDEX_FN(t, name, arr, n, stride, elt) \
    t name() { t pos; COOP_LOAD_INDICES(pos, arr, n, stride, elt) return pos; }

// Component e of a 16 x 8 result is row pos[e] >> 3, token pos[e] & 7.
COOP_INDEX_FN(COOP_C, coop_positions, coop_index_, 128u, 8, COOP_ELT)

#else
struct CoopEmu {
    COOP_ELT v[4];
};
#define COOP_C CoopEmu
#define COOP_SG (gl_LocalInvocationIndex >> 5u)
#define COOP_LANE (gl_LocalInvocationIndex & 31u)
#define COOP_LEN(c) 4
#define COOP_AT(c, e) (c).v[e]
#define COOP_WAIT() barrier()
#define COOP_SYNC() { memoryBarrierShared(); barrier(); }

// The emulated layout: component e of lane L is element 37 (4 L + e) mod 128, scrambled
// so that a kernel assuming any fixed layout fails; with FRAG_MMA_LAYOUT=1 (the kernels whose
// loads assume NVIDIA's operand layouts) NVIDIA's result layout, row L / 4 + 8 (e / 2),
// column 2 (L % 4) + e % 2 (tools/coop_layout_probe.lua).
int coop_emu_at(uint e) {
#if defined(FRAG_MMA_LAYOUT) && FRAG_MMA_LAYOUT
    return int(((COOP_LANE >> 2u) + 8u * (e >> 1u)) * 8u + 2u * (COOP_LANE & 3u) + (e & 1u));
#else
    return int((37u * (4u * COOP_LANE + e)) & 127u);
#endif
}

// c += a b for operands filled from registers (coop_frag.glsl, coop_frag8.glsl): a's na
// components at A's elements apos (row * kk + k; an expression of the component e_), b's nb at
// bpos (k * 8 + column), into the subgroup's 24 kk elements of the shared array arr, then each
// component of c its dot over kk (elt: the element type).
#define COOP_EMU_MMA(c, a, b, arr, na, nb, kk, apos, bpos, elt) { \
    uint fb_ = COOP_SG * 24u * (kk); \
    barrier(); \
    for (uint e_ = 0u; e_ < (na); e_++) arr[fb_ + (apos)] = (a).v[e_]; \
    for (uint e_ = 0u; e_ < (nb); e_++) arr[fb_ + 16u * (kk) + (bpos)] = (b).v[e_]; \
    barrier(); \
    for (uint e_ = 0u; e_ < 4u; e_++) { \
        uint p_ = uint(coop_emu_at(e_)); \
        elt s_ = elt(0); \
        for (uint k_ = 0u; k_ < (kk); k_++) s_ += arr[fb_ + (p_ >> 3u) * (kk) + k_] * arr[fb_ + 16u * (kk) + k_ * 8u + (p_ & 7u)]; \
        c.v[e_] += s_; \
    } }

COOP_C coop_positions() {
    barrier(); // as the real one's
    COOP_C pos;
    for (uint e = 0u; e < 4u; e++) pos.v[e] = COOP_ELT(coop_emu_at(e));
    return pos;
}

#endif

// Component e's element (row * 8 + column) as uint.
#define COOP_P(pos, e) uint(COOP_AT(pos, e))

#endif
