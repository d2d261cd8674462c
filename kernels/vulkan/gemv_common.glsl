// gemv_common.glsl: what every Vulkan GEMV kernel shares (kernels/vulkan/gemv_*.comp).
//
// y[t,m] = x[t,k] . W[m,k]^T for GEMV_TOKENS token rows t of x (x[t*k + i], y[t*m + r]).
// Bindings 0 (W, declared by each kernel because its word type differs), 1 (x, f32) and
// 2 (y, f32) of set 0, then the push constants {m, k}: the Vulkan backend reflects
// exactly that order as the kernel's parameters.
//
// Work split (docs/kernels/vulkan-gemv.md): a workgroup of GEMV_WG invocations is cut
// into lane groups of GEMV_T lanes; a lane group owns GEMV_NR consecutive rows and its
// lanes stride over the row's chunks, so each chunk of x is loaded once and used for
// GEMV_NR rows. Rows per workgroup: GEMV_ROWS = (GEMV_WG / GEMV_T) * GEMV_NR, which
// lib/gpubench/gemv_vulkan.lua repeats as rows_per_group.
//
// Tokens: a lane decodes each weight chunk of its GEMV_NR rows once, then loads each
// token's x chunk once and multiplies it into that token's GEMV_NR accumulators, so
// the weights are read once for all tokens. With GEMV_TOKENS = 1 the dataflow (loads,
// arithmetic, work split) is the single-vector kernel's.
//
// Required defines (from gemv_vulkan.lua, so the Lua table and the shader cannot
// disagree): GEMV_T (a power of two, 1..256), GEMV_NR (1..8) and GEMV_TOKENS (1..8).
#ifndef GEMV_COMMON_GLSL
#define GEMV_COMMON_GLSL

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require

#ifndef GEMV_T
#error "GEMV_T (lanes per row group) must be defined, e.g. -DGEMV_T=32"
#endif
#ifndef GEMV_NR
#error "GEMV_NR (rows per lane group) must be defined, e.g. -DGEMV_NR=2"
#endif
#ifndef GEMV_TOKENS
#error "GEMV_TOKENS (token rows of x and y) must be defined, e.g. -DGEMV_TOKENS=1"
#endif
#if GEMV_T < 1 || GEMV_T > 256 || (GEMV_T & (GEMV_T - 1)) != 0
#error "GEMV_T must be a power of two in 1..256"
#endif
#if GEMV_NR < 1 || GEMV_NR > 8
#error "GEMV_NR must be in 1..8"
#endif
#if GEMV_TOKENS < 1 || GEMV_TOKENS > 8
#error "GEMV_TOKENS must be in 1..8"
#endif

// Invocations per workgroup: 256 unless a variant sets it (gemv_vulkan.variant's GEMV_WG).
#ifndef GEMV_WG
#define GEMV_WG 256
#endif
#if GEMV_WG < 32 || GEMV_WG > 1024 || (GEMV_WG & (GEMV_WG - 1)) != 0 || GEMV_T > GEMV_WG
#error "GEMV_WG must be a power of two in 32..1024 and at least GEMV_T"
#endif
#define GEMV_GROUPS (GEMV_WG / GEMV_T)
#define GEMV_ROWS (GEMV_GROUPS * GEMV_NR)
// Accumulators per lane, token-major: acc[GEMV_AT(t, r)] is token t's sum for row r.
#define GEMV_ACC (GEMV_NR * GEMV_TOKENS)
#define GEMV_AT(t, r) ((t) * GEMV_NR + (r))

layout(local_size_x = GEMV_WG, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 1) readonly buffer XBuf { vec4 X[]; };
layout(set = 0, binding = 2) writeonly buffer YBuf { float Y[]; };
layout(push_constant) uniform Params {
    uint m;
    uint k;
} P;

// One partial sum per subgroup and row for the cross-subgroup step. Sized for the
// smallest possible subgroup (1), so any subgroup size the device reports fits.
shared float gemv_red[GEMV_WG * GEMV_NR];

// The invocation's position, numbered through its subgroup rather than
// gl_LocalInvocationIndex: Vulkan does not promise that a subgroup is a contiguous run
// of local indices, and the reduction needs every subgroup to sit inside one lane group
// (or every lane group inside one subgroup). On drivers where the two numberings agree
// (NVIDIA, AMD, Intel, lavapipe) this is the same thread order, so loads stay coalesced
// (docs/kernels/vulkan-gemv.md, "Reduction").
uint gemv_tid() {
    return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
}

// First row of the invocation's lane group.
uint gemv_row0(uint tid) {
    return gl_WorkGroupID.x * uint(GEMV_ROWS) + (tid / uint(GEMV_T)) * uint(GEMV_NR);
}

// First vec4 of token t's row of x (k floats, k a multiple of 4 for every format).
uint gemv_xrow(int t) {
    return uint(t) * (P.k >> 2u);
}

// Rows past the end are clamped onto the last row: their lanes then load valid memory
// with no branch in the inner loop, and gemv_finish never stores their sums.
uint gemv_clamp_row(uint row) {
    return min(row, P.m - 1u);
}

// The shared-memory step of gemv_finish for token t: part[r] is the subgroup's sum
// for row r; one invocation per row adds the GEMV_T / sg subgroups of its lane group.
// wg_row0 is the first row of the workgroup's GEMV_ROWS (gl_WorkGroupID.x * GEMV_ROWS,
// or the current tile's in a kernel that loops over row tiles).
void gemv_red_token(float part[GEMV_NR], uint tid, uint per_group, uint t, uint wg_row0) {
    if (gl_SubgroupInvocationID == 0u) {
        [[unroll]] for (int r = 0; r < GEMV_NR; r++)
            gemv_red[gl_SubgroupID * uint(GEMV_NR) + uint(r)] = part[r];
    }
    barrier();
    if (tid < uint(GEMV_ROWS)) {
        uint g = tid / uint(GEMV_NR), r = tid % uint(GEMV_NR);
        float s = 0.0;
        for (uint j = 0u; j < per_group; j++)
            s += gemv_red[(g * per_group + j) * uint(GEMV_NR) + r];
        uint row = wg_row0 + tid;
        if (row < P.m) Y[t * P.m + row] = s;
    }
}

// Token t's sums through gemv_red_token. Spelled out per token below rather than as a
// loop: the loop's inner dynamic loop keeps the compiler from unrolling it, and acc
// would then be indexed dynamically (spilled to memory). The barrier before a later
// token lets every invocation finish reading the previous token's sums.
#define GEMV_RED_TOKEN(t) { \
        float part[GEMV_NR]; \
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) part[r] = acc[GEMV_AT(t, r)]; \
        if ((t) > 0) barrier(); \
        gemv_red_token(part, tid, per_group, uint(t), wg_row0); \
    }

// Sums every accumulator over the GEMV_T lanes of each lane group and stores
// Y[t * m + row0 + r] for the rows that exist. Every invocation of the workgroup must
// call it (it holds barriers on one path); the branches below depend only on
// gl_SubgroupSize, which is uniform. A kernel that calls it again for another row tile
// must put a barrier between the calls (gemv_red is reused).
void gemv_finish(float acc[GEMV_ACC], uint tid, uint row0) {
    uint sg = gl_SubgroupSize;
    if (sg >= uint(GEMV_T)) {
        // A subgroup holds whole lane groups. Equal sizes: one subgroupAdd per sum.
        // Larger subgroups (AMD wave64 with GEMV_T = 32, ...): a butterfly over the
        // lane group's own lanes, since a subgroupAdd would mix lane groups.
        if (sg == uint(GEMV_T)) {
            [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = subgroupAdd(acc[i]);
        } else {
            [[unroll]] for (uint mask = 1u; mask < uint(GEMV_T); mask <<= 1u) {
                [[unroll]] for (int i = 0; i < GEMV_ACC; i++)
                    acc[i] += subgroupShuffleXor(acc[i], mask);
            }
        }
        if (tid % uint(GEMV_T) == 0u) {
            [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
                [[unroll]] for (int r = 0; r < GEMV_NR; r++) {
                    uint row = row0 + uint(r);
                    if (row < P.m) Y[uint(t) * P.m + row] = acc[GEMV_AT(t, r)];
                }
            }
        }
    } else {
        // A lane group spans GEMV_T / sg subgroups: reduce inside each subgroup, then
        // add the subgroups' sums from shared memory, one token at a time so the shared
        // array stays the single-token size.
        [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = subgroupAdd(acc[i]);
        uint per_group = uint(GEMV_T) / sg; // subgroups per lane group
        uint wg_row0 = row0 - (tid / uint(GEMV_T)) * uint(GEMV_NR); // see gemv_row0
        GEMV_RED_TOKEN(0)
#if GEMV_TOKENS > 1
        GEMV_RED_TOKEN(1)
#endif
#if GEMV_TOKENS > 2
        GEMV_RED_TOKEN(2)
#endif
#if GEMV_TOKENS > 3
        GEMV_RED_TOKEN(3)
#endif
#if GEMV_TOKENS > 4
        GEMV_RED_TOKEN(4)
#endif
#if GEMV_TOKENS > 5
        GEMV_RED_TOKEN(5)
#endif
#if GEMV_TOKENS > 6
        GEMV_RED_TOKEN(6)
#endif
#if GEMV_TOKENS > 7
        GEMV_RED_TOKEN(7)
#endif
    }
}

// ---------------------------------------------------------------- decode helpers

// The four bytes of w (little-endian order) as floats, minus `bias`. Exact: OR-ing a
// byte into the mantissa of 2^23 gives 2^23 + b, and subtracting 2^23 + bias is one
// exact float subtraction, cheaper than four int-to-float conversions
// (docs/kernels/vulkan-gemv.md, "Decoding").
vec4 gemv_bytes(uint w, float bias) {
    uvec4 b = (uvec4(w) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu;
    return uintBitsToFloat(b | 0x4B000000u) - (8388608.0 + bias);
}

// The four bytes of w as signed bytes (two's complement), as floats: flipping the sign
// bit maps -128..127 onto 0..255 in order.
vec4 gemv_sbytes(uint w) {
    return gemv_bytes(w ^ 0x80808080u, 128.0);
}

#include "byte_words.glsl"
#include "kquant_scales.glsl"

#endif
