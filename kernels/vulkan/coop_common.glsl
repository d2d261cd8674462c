// coop_common.glsl: what the GEMV kernels on int8 cooperative matrices share
// (gemv_b32_coop.comp: q8_0, q4_0; gemv_q4k_q5k_coop.comp: q4_k, q5_k; docs/kernels/vulkan-gemv.md,
// "Tensor cores through int8 cooperative matrices").
//
// Bindings: 0 W (declared by each kernel: its word type differs), 1 the workspace of
// gemv_idot_xprep.comp with XPREP_COOP=1 (80-byte records, token t's block b of 32 at
// record t * nb + b, 8 tokens, zeros past GEMV_TOKENS), 2 y; push constants {m, k}.
// A workgroup is COOP_WR subgroups of 16 rows times COOP_KS slices of the blocks of 32.
// The result types, the components' (row, token) and the emulation (COOP_EMULATE=1,
// GEMV_COOP=2: products summed from the stage and the workspace directly): coop_core.glsl.
#ifndef COOP_COMMON_GLSL
#define COOP_COMMON_GLSL

#if !defined(COOP_WR) || !defined(COOP_KS) || !defined(GEMV_TOKENS)
#error "COOP_WR, COOP_KS and GEMV_TOKENS must be defined (lib/gpubench/gemv_vulkan.lua)"
#endif
#if COOP_WR * COOP_KS * 32 > 1024 || COOP_WR < 1 || COOP_KS < 1
#error "COOP_WR x COOP_KS subgroups of 32 must make a workgroup of at most 1024"
#endif
#if GEMV_TOKENS < 1 || GEMV_TOKENS > 8
#error "GEMV_TOKENS must be in 1..8"
#endif

#ifndef COOP_RT
#define COOP_RT 1 // row tiles a subgroup (gemv_dense_wide*.comp take more)
#endif
#ifndef COOP_TILE_ROWS
#define COOP_TILE_ROWS 16 // rows of W a tile (gemv_dense_wideb.comp: 8, the columns of B)
#endif
#if COOP_RT < 1 || COOP_RT > 4
#error "COOP_RT must be in 1..4"
#endif

#define SGS (COOP_WR * COOP_KS)
#include "coop_core.glsl"
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

shared float coop_red_[SGS * 128 * COOP_RT];

#if !COOP_EMULATE
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

// Where an invocation works: its subgroup sg, the COOP_TILE_ROWS COOP_RT rows from row0 its subgroup owns, the
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
    c.row0 = (gl_WorkGroupID.x * uint(COOP_WR) + c.sg % uint(COOP_WR)) * uint(COOP_TILE_ROWS * COOP_RT);
    c.r = lane >> 1u;
    c.hf = lane & 1u;
    c.row = c.row0 + c.r;
    c.live = c.row < P.m;
    c.per = (units + uint(COOP_KS) - 1u) / uint(COOP_KS);
    c.lo = min(units, ks * c.per);
    c.hi = min(units, c.lo + c.per);
    return c;
}

// Token t's s_b and sum of xq over block b.
uvec2 coop_record(uint t, uint nb, uint b) {
    return XQ[5u * (t * nb + b) + 4u].xy;
}

#if COOP_TILE_ROWS == 16
// The slices' sums of the workgroup's rows into y: each subgroup's components into shared
// memory (acc[i * EL_MAX + e]: its row tile i's component e), then the first COOP_WR * COOP_RT
// * 128 invocations add the slices and store t < T, row < m.
void coop_store(float acc[EL_MAX * COOP_RT], COOP_C pos) {
    int n_el = COOP_LEN(pos);
    uint sg = COOP_SG;
    for (int i = 0; i < COOP_RT; i++)
        for (int e = 0; e < min(n_el, EL_MAX); e++)
            coop_red_[(sg * uint(COOP_RT) + uint(i)) * 128u + COOP_P(pos, e)] = acc[i * EL_MAX + e];
    barrier();
    uint tiles = uint(COOP_WR * COOP_RT); // a slice's row tiles, in row order
    for (uint i = gl_LocalInvocationIndex; i < tiles * 128u; i += uint(SGS * 32)) {
        uint g = i >> 7u, p = i & 127u, t = p & 7u, row = (gl_WorkGroupID.x * tiles + g) * 16u + (p >> 3u);
        float sum = 0.0;
        for (uint s = 0u; s < uint(COOP_KS); s++) sum += coop_red_[(s * tiles + g) * 128u + p];
        // more components than EL_MAX would leave sums out: NaN, which the oracle check refuses
        if (n_el > EL_MAX) sum = uintBitsToFloat(0x7FC00000u);
        if (t < uint(GEMV_TOKENS) && row < P.m) Y[t * P.m + row] = sum;
    }
}
#else
// The slices' sums of the workgroup's tiles of 8 rows into y (gemv_dense_wideb.comp,
// gemv_b32_wideb.comp): tile i of subgroup sg at coop_red_[(sg * COOP_RT + i) * stride], its
// token t's sum of row n at t * 8 + n, and where stride is 128 a second part at t * 8 + n + 64
// (a result's rows t + 8). The first COOP_WR * COOP_RT * 64 invocations add the slices and store
// t < T, row < m (NaN where `nan`). Every invocation of the workgroup calls it (barrier first).
void coop_store8(uint stride, bool nan) {
    barrier();
    uint tiles = uint(COOP_WR * COOP_RT); // a slice's tiles of 8 rows, in row order
    for (uint i = gl_LocalInvocationIndex; i < tiles * 64u; i += uint(SGS * 32)) {
        uint tile = i >> 6u, t = (i >> 3u) & 7u, n = i & 7u, row = (gl_WorkGroupID.x * tiles + tile) * 8u + n;
        float sum = 0.0;
        for (uint s = 0u; s < uint(COOP_KS); s++) {
            uint at = (s * tiles + tile) * stride + t * 8u + n;
            sum += coop_red_[at] + (stride == 128u ? coop_red_[at + 64u] : 0.0);
        }
        if (nan) sum = uintBitsToFloat(0x7FC00000u);
        if (t < uint(GEMV_TOKENS) && row < P.m) Y[t * P.m + row] = sum;
    }
}
#endif

#endif
