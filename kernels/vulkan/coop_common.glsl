// coop_common.glsl: what the GEMV kernels on int8 cooperative matrices share
// (gemv_b32_coop.comp: q8_0, q4_0; gemv_q4k_q5k_coop.comp: q4_k, q5_k; docs/kernels/vulkan-gemv.md,
// "Tensor cores through int8 cooperative matrices").
//
// Bindings: 0 W (declared by each kernel: its word type differs), 1 the workspace of
// gemv_idot_xprep.comp with XPREP_COOP=1 (80-byte records, token t's block b of 32 at
// record t * nb + b, 8 tokens, zeros past GEMV_TOKENS), 2 y; push constants {m, k}.
// A workgroup is COOP_WR subgroups of 16 rows times COOP_KS slices of the blocks of 32.
// Which row and token an invocation's components of a 16 x 8 result are is the
// implementation's: coop_positions reads it from a matrix of the same type loaded from
// the indices 0..127 (element-wise operations act on the same components of two
// matrices of one type, so the layouts agree).
//
// COOP_EMULATE=1 (GEMV_COOP=2: the tests' path on devices without the matrices, lavapipe
// in CI) compiles the same kernels with the matrices emulated: 16 x 8 results held 4
// components an invocation in a scrambled layout, products summed from the stage and the
// workspace directly, subgroups of 32 counted from the local index and their barriers
// the workgroup's (every loop of the kernels runs the same trip count in every subgroup
// for that). What it cannot check is the matrix instructions' own semantics (layouts,
// strides): the oracle test on a device that has them does.
#ifndef COOP_COMMON_GLSL
#define COOP_COMMON_GLSL

#ifndef COOP_EMULATE
#define COOP_EMULATE 0
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

#if !defined(COOP_WR) || !defined(COOP_KS) || !defined(GEMV_TOKENS)
#error "COOP_WR, COOP_KS and GEMV_TOKENS must be defined (lib/gpubench/gemv_vulkan.lua)"
#endif
#if COOP_WR * COOP_KS * 32 > 1024 || COOP_WR < 1 || COOP_KS < 1
#error "COOP_WR x COOP_KS subgroups of 32 must make a workgroup of at most 1024"
#endif
#if GEMV_TOKENS < 1 || GEMV_TOKENS > 8
#error "GEMV_TOKENS must be in 1..8"
#endif

#define SGS (COOP_WR * COOP_KS)
#define EL_MAX 8 // components of a 16 x 8 result an invocation may hold (NVIDIA: 4)
#define COOP_ROW_STRIDE 3u // uvec4s per staged row of 32 codes: 16 bytes of padding (bank spread)
#define COOP_STAGE (16u * COOP_ROW_STRIDE) // uvec4s per staged block of 16 rows

layout(local_size_x = SGS * 32, local_size_y = 1, local_size_z = 1) in;

// The workspace as uvec4s (the matrix loads count in them): record rec is XQ[5 rec ..
// 5 rec + 4]: 32 high digits, 32 low digits, then s_b and the sum of xq in .xy.
layout(set = 0, binding = 1) readonly buffer XQBuf { uvec4 XQ[]; };
layout(set = 0, binding = 2) writeonly buffer YBuf { float Y[]; };
layout(push_constant) uniform Params {
    uint m;
    uint k;
} P;

#ifndef COOP_FLOAT
#define COOP_FLOAT 0 // 1: fp32 results of fp16 products (gemv_dense_coop.comp)
#endif
#if COOP_FLOAT
#define COOP_ELT float
#else
#define COOP_ELT int
#endif

shared COOP_ELT coop_index_[128];
shared float coop_red_[SGS * 128];

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

// Component e of a 16 x 8 result is row pos[e] >> 3, token pos[e] & 7. Every invocation
// of the workgroup calls it (a barrier).
COOP_C coop_positions() {
    for (uint i = gl_LocalInvocationIndex; i < 128u; i += uint(SGS * 32)) coop_index_[i] = COOP_ELT(i);
    barrier();
    COOP_C pos;
    coopMatLoadNV(pos, coop_index_, 0, 8, false);
    return pos;
}

// The exact integer dot of block b's 32 codes (16 rows staged at stage[at], row-major)
// with 8 tokens' xq: C = A Bh, then A Bl + 256 C. |C| <= 32 * 128 * 32639 < 2^27.
// (gemv_dense_coop.comp has its own fp16 product.)
#define COOP_PRODUCT(c, stage, at, b, nb) { \
    icoopmatNV<8, gl_ScopeSubgroup, 16, 32> a_; \
    icoopmatNV<8, gl_ScopeSubgroup, 32, 8> bh_, bl_; \
    coopMatLoadNV(a_, stage, at, COOP_ROW_STRIDE, false); \
    coopMatLoadNV(bh_, XQ, 5u * (b), 5u * (nb), true); \
    coopMatLoadNV(bl_, XQ, 5u * (b) + 2u, 5u * (nb), true); \
    c = coopMatMulAddNV(a_, bh_, COOP_C(0)); \
    c = coopMatMulAddNV(a_, bl_, c * 256); }
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
// so that a kernel assuming any fixed layout fails.
int coop_emu_at(uint e) {
    return int((37u * (4u * COOP_LANE + e)) & 127u);
}

COOP_C coop_positions() {
    barrier(); // as the real one's
    COOP_C pos;
    for (uint e = 0u; e < 4u; e++) pos.v[e] = COOP_ELT(coop_emu_at(e));
    return pos;
}

// Signed byte i (0..15) of a uvec4.
int coop_byte(uvec4 v, uint i) {
    return bitfieldExtract(int(v[i >> 2u]), int((i & 3u) * 8u), 8);
}

#define COOP_PRODUCT(c, stage, at, b, nb) { \
    for (uint e_ = 0u; e_ < 4u; e_++) { \
        uint p_ = uint(coop_emu_at(e_)), a0_ = (at) + (p_ >> 3u) * COOP_ROW_STRIDE, r_ = 5u * ((p_ & 7u) * (nb) + (b)); \
        int s_ = 0; \
        for (uint k_ = 0u; k_ < 32u; k_++) { \
            uint w_ = k_ >> 4u, i_ = k_ & 15u; \
            s_ += coop_byte(stage[a0_ + w_], i_) * (256 * coop_byte(XQ[r_ + w_], i_) + coop_byte(XQ[r_ + 2u + w_], i_)); \
        } \
        c.v[e_] = s_; \
    } }
#endif

// Where an invocation works: its subgroup sg, the 16 rows from row0 its subgroup owns, the
// row r of them and the half hf of a row's 32 codes (or 16 weights) it stages, row = row0 + r
// (live: row < m), and its subgroup's slice [lo, hi) of the `units` (blocks, super-blocks or
// steps of k): every slice runs `per` iterations, the longest slice's (the emulation's
// barriers are the workgroup's).
struct CoopPlace {
    uint sg, row0, r, hf, row, lo, hi, per;
    bool live;
};

CoopPlace coop_place(uint units) {
    CoopPlace c;
    c.sg = COOP_SG;
    uint lane = COOP_LANE, ks = c.sg / uint(COOP_WR);
    c.row0 = (gl_WorkGroupID.x * uint(COOP_WR) + c.sg % uint(COOP_WR)) * 16u;
    c.r = lane >> 1u;
    c.hf = lane & 1u;
    c.row = c.row0 + c.r;
    c.live = c.row < P.m;
    c.per = (units + uint(COOP_KS) - 1u) / uint(COOP_KS);
    c.lo = min(units, ks * c.per);
    c.hi = min(units, c.lo + c.per);
    return c;
}

// Component e's element (row * 8 + token) as uint.
#define COOP_P(pos, e) uint(COOP_AT(pos, e))

// Token t's s_b and sum of xq over block b.
uvec2 coop_record(uint t, uint nb, uint b) {
    return XQ[5u * (t * nb + b) + 4u].xy;
}

// The slices' sums of the workgroup's rows into y: each subgroup's components into shared
// memory, then the first COOP_WR * 128 invocations add the slices and store t < T, row < m.
void coop_store(float acc[EL_MAX], COOP_C pos) {
    int n_el = COOP_LEN(pos);
    uint sg = COOP_SG;
    for (int e = 0; e < min(n_el, EL_MAX); e++) coop_red_[sg * 128u + COOP_P(pos, e)] = acc[e];
    barrier();
    for (uint i = gl_LocalInvocationIndex; i < uint(COOP_WR) * 128u; i += uint(SGS * 32)) {
        uint g = i >> 7u, p = i & 127u, t = p & 7u, row = (gl_WorkGroupID.x * uint(COOP_WR) + g) * 16u + (p >> 3u);
        float sum = 0.0;
        for (uint s = 0u; s < uint(COOP_KS); s++) sum += coop_red_[(s * uint(COOP_WR) + g) * 128u + p];
        // more components than EL_MAX would leave sums out: NaN, which the oracle check refuses
        if (n_el > EL_MAX) sum = uintBitsToFloat(0x7FC00000u);
        if (t < uint(GEMV_TOKENS) && row < P.m) Y[t * P.m + row] = sum;
    }
}

#endif
