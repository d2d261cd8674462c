// coop_frag.glsl: fp16 matrices filled from registers (docs/kernels/vulkan-gemv.md, "A and B
// from registers"). A matrix load from shared memory is what the H200's driver makes slow
// (docs/kernels/vulkan-linear.md, "Measured on the H200"), so the operands are built
// component by component instead: FRAG_A is 16 x 16 (rows x k), FRAG_B 16 x 8 (k x columns),
// both f16, into a COOP_C (COOP_FLOAT: fp32) result. Which element each of an invocation's
// components is comes from an index matrix of the same type (frag_*_positions: A's element
// row * 16 + k, B's k * 8 + column). The kernels load A two components at once from one 32-bit
// word of two consecutive k where its components 2j and 2j + 1 are (row, k) and (row, k + 1),
// k even (FRAG_A_PAIRS_OK, FRAG_FILL_A), and one component a word otherwise; B one component a word,
// whatever its layout.
//
// COOP_EMULATE: 8 (A) and 4 (B) components an invocation in scrambled orders (A's in pairs), or
// NVIDIA's (FRAG_MMA_LAYOUT=1);
// FRAG_MMA goes through the subgroup's 384 floats of shared memory (frag_emu_), with the
// workgroup's barriers. Needs coop_core.glsl (COOP_FLOAT 1) first.
#ifndef COOP_FRAG_GLSL
#define COOP_FRAG_GLSL

#if !COOP_FLOAT
#error "coop_frag.glsl builds fp16 operands for fp32 results: define COOP_FLOAT 1 before coop_core.glsl"
#endif

#define FRAG_A_MAX 8 // components an invocation may hold (NVIDIA: 8 of A, 4 of B)
#define FRAG_B_MAX 4

// NVIDIA's layouts (tools/coop_layout_probe.lua; docs/kernels/vulkan-gemv.md, "A and B from
// registers"; A is mma.sync m16n8k16's fragment): lane L's component e of A is row L / 4 + 8 ((e >> 2) & 1), k 2 (L % 4) + (e & 1)
// + 8 ((e >> 1) & 1); of B (16 x 8, kept like a result) k L / 4 + 8 (e >> 1), column
// 2 (L % 4) + (e & 1). As element indices (A's row * 16 + k, B's k * 8 + column):
#define FRAG_MMA_A_AT(l, e) ((((l) >> 2u) + 8u * (((e) >> 2u) & 1u)) * 16u + 2u * ((l) & 3u) + ((e) & 1u) + 8u * (((e) >> 1u) & 1u))
#define FRAG_MMA_B_AT(l, e) ((((l) >> 2u) + 8u * ((e) >> 1u)) * 8u + 2u * ((l) & 3u) + ((e) & 1u))
#ifndef FRAG_MMA_LAYOUT
#define FRAG_MMA_LAYOUT 0 // 1: the emulation holds A and B in those layouts (a kernel whose loads assume them)
#endif
// ok = whether A's and B's positions (apos, bpos) are those layouts for this lane: the check
// of a kernel whose loads assume them (it makes y NaN where not, never a wrong number)
#define FRAG_MMA_LAYOUT_OK(apos, bpos, ok) { \
    ok = FRAG_LEN(apos) == 8 && FRAG_LEN(bpos) == 4; \
    [[unroll]] for (int e_ = 0; e_ < 8; e_++) \
        if (e_ < FRAG_LEN(apos)) ok = ok && FRAG_AT(apos, e_) == FRAG_MMA_A_AT(COOP_LANE, uint(e_)); \
    [[unroll]] for (int e_ = 0; e_ < 4; e_++) \
        if (e_ < FRAG_LEN(bpos)) ok = ok && FRAG_AT(bpos, e_) == FRAG_MMA_B_AT(COOP_LANE, uint(e_)); }

#if !COOP_EMULATE
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define FRAG_A fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, 16, 8>
#define FRAG_LEN(f) (f).length()
#define FRAG_AT(f, e) uint((f)[e])
#define FRAG_SET(f, e, v) (f)[e] = float16_t(v)
#define FRAG_MMA(c, a, b, apos, bpos) c = coopMatMulAddNV(a, b, c)
// a word's two f16 as they are (no trip through f32)
#define FRAG_HALVES(w) unpackFloat2x16(w)
#define FRAG_HALF2 f16vec2

shared float16_t frag_index_[256];

// Every invocation of the workgroup calls these (barriers).
COOP_INDEX_FN(FRAG_A, frag_a_positions, frag_index_, 256u, 16, float16_t)
COOP_INDEX_FN(FRAG_B, frag_b_positions, frag_index_, 128u, 8, float16_t)
#else
struct FragA {
    float v[8];
};
struct FragB {
    float v[4];
};
#define FRAG_A FragA
#define FRAG_B FragB
#define FRAG_LEN(f) (f).v.length()
#define FRAG_AT(f, e) uint((f).v[e])
#define FRAG_SET(f, e, x) (f).v[e] = (x)
#define FRAG_HALVES(w) unpackHalf2x16(w)
#define FRAG_HALF2 vec2

shared float frag_emu_[SGS * 384];

// Pair j of lane L: A's element pair 37 (4 L + j) mod 128 (elements 2p, 2p + 1 of one row),
// as components 2j, 2j + 1 in even lanes, j and j + 4 in odd ones (which the kernels' pair
// path then does not take);
// B's component e: element 37 (4 L + e) + 5 mod 128, unpaired (a driver may keep B in an
// accumulator's layout: docs/kernels/vulkan-gemv.md, "A and B from registers").
#if FRAG_MMA_LAYOUT
FRAG_A frag_a_positions() {
    barrier();
    FRAG_A pos;
    for (uint e = 0u; e < 8u; e++) pos.v[e] = float(FRAG_MMA_A_AT(COOP_LANE, e));
    return pos;
}
FRAG_B frag_b_positions() {
    barrier();
    FRAG_B pos;
    for (uint e = 0u; e < 4u; e++) pos.v[e] = float(FRAG_MMA_B_AT(COOP_LANE, e));
    return pos;
}
#else
FRAG_A frag_a_positions() {
    barrier();
    FRAG_A pos;
    for (uint e = 0u; e < 8u; e++) {
        // even lanes: component e is half e & 1 of pair e >> 1; odd lanes: half e >> 2 of pair e & 3
        uint j = (COOP_LANE & 1u) == 0u ? e >> 1u : e & 3u, h = (COOP_LANE & 1u) == 0u ? e & 1u : e >> 2u;
        pos.v[e] = float(2u * ((37u * (4u * COOP_LANE + j)) & 127u) + h);
    }
    return pos;
}
FRAG_B frag_b_positions() {
    barrier();
    FRAG_B pos;
    for (uint e = 0u; e < 4u; e++) pos.v[e] = float((37u * (4u * COOP_LANE + e) + 5u) & 127u);
    return pos;
}
#endif

// c += a b (apos, bpos: their positions), through the subgroup's shared floats
#define FRAG_MMA(c, a, b, apos, bpos) \
    COOP_EMU_MMA(c, a, b, frag_emu_, 8u, 4u, 16u, FRAG_AT(apos, e_), FRAG_AT(bpos, e_), float)
#endif

#ifndef FRAG_W_BF16
#define FRAG_W_BF16 0
#endif
// A word of two weights (k, k + 1) as two f16 values: f16 as they are; bf16 (FRAG_W_BF16)
// times 2^8, which the kernel divides out of y (exact for 2^-22 <= |w| < 256)
FRAG_HALF2 frag_w_pair(uint w) {
#if FRAG_W_BF16
    return FRAG_HALF2(vec2(uintBitsToFloat(w << 16u), uintBitsToFloat(w & 0xFFFF0000u)) * 256.0);
#else
    return FRAG_HALVES(w);
#endif
}

// ok = whether A's components 2j, 2j + 1 are one row's k and k + 1, k even, for every j
// (apos: A's positions).
#define FRAG_A_PAIRS_OK(apos, ok) { \
    int n_ = FRAG_LEN(apos); \
    ok = n_ <= FRAG_A_MAX && (n_ & 1) == 0; \
    for (int j_ = 0; j_ + 1 < n_ && j_ + 1 < FRAG_A_MAX; j_ += 2) \
        ok = ok && (FRAG_AT(apos, j_) & 1u) == 0u && FRAG_AT(apos, j_ + 1) == FRAG_AT(apos, j_) + 1u; }

// a from its words w[]: where a_ok, w[2j] holds components 2j and 2j + 1 (low half first),
// else w[e] holds component e's half in its low 16 bits; pair(word) gives a word's two
// values (.x the low half). a_len: A's components an invocation holds.
#define FRAG_FILL_A(a, w, a_ok, a_len, pair) \
    if (a_ok) { \
        [[unroll]] for (int j_ = 0; j_ < FRAG_A_MAX / 2; j_++) if (2 * j_ < (a_len)) { \
            FRAG_SET(a, 2 * j_, pair(w[2 * j_]).x); \
            FRAG_SET(a, 2 * j_ + 1, pair(w[2 * j_]).y); \
        } \
    } else { \
        [[unroll]] for (int e_ = 0; e_ < FRAG_A_MAX; e_++) if (e_ < (a_len)) FRAG_SET(a, e_, pair(w[e_]).x); \
    }

#endif
