// moe_common.glsl: what the Vulkan mixture-of-experts Q4_K kernels share
// (kernels/vulkan/moe_q4k_*.comp; docs/kernels/moe.md).
//
// Stack layout (ferrum's strides): expert e is the N x K q4_k matrix at byte
// e * nb02 (nb02 = N * nb01, nb01 = K / 256 * 144), so in uvec4 words at
// e * nb02 / 16; pair p = t * top_k + s reads the activation row at float
// t * outer + s * inner and writes Y[p * N ..].
//
// Work split as the GEMV kernels' (docs/kernels/vulkan-gemv.md): a workgroup
// of 256 invocations is cut into lane groups of MOE_T lanes, a lane group owns
// MOE_NR consecutive rows, its lanes stride over the rows' 32-weight chunks.
// The shader declares W/X buffers before including this file, and MOE_NV,
// the number of per-lane sums it reduces (rows x tokens).
//
// These helpers repeat a few lines of gemv_common.glsl (the q4_k scale unpack,
// the byte decode): that file declares the GEMV kernels' own bindings and push
// constants, which a shader with a different parameter list cannot include.
#ifndef MOE_COMMON_GLSL
#define MOE_COMMON_GLSL

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require

#ifndef MOE_T
#error "MOE_T (lanes per row group) must be defined (defaults: lib/gpubench/moe_vulkan.lua)"
#endif
#ifndef MOE_NR
#error "MOE_NR (rows per lane group) must be defined (defaults: lib/gpubench/moe_vulkan.lua)"
#endif
#ifndef MOE_NV
#error "MOE_NV (sums per lane) must be defined by the shader before including moe_common.glsl"
#endif
#if MOE_T < 1 || MOE_T > 256 || (MOE_T & (MOE_T - 1)) != 0
#error "MOE_T must be a power of two in 1..256"
#endif

#define MOE_WG 256
#define MOE_ROWS ((MOE_WG / MOE_T) * MOE_NR)
// Subgroups of fewer lanes than this are refused by gpubench.moe (the
// cross-subgroup scratch below is sized for them).
#define MOE_MIN_SUBGROUP 4

layout(local_size_x = MOE_WG, local_size_y = 1, local_size_z = 1) in;

shared float moe_red[(MOE_WG / MOE_MIN_SUBGROUP) * MOE_NV];

// The invocation's position numbered through its subgroup (gemv_tid's reason:
// the reduction needs every subgroup inside one lane group, or the reverse).
uint moe_tid() {
    return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
}

uint moe_row0(uint tid) {
    return gl_WorkGroupID.x * uint(MOE_ROWS) + (tid / uint(MOE_T)) * uint(MOE_NR);
}

// The expert of an id, clamped into the stack (gpubench.moe refuses bad ids
// before any launch; the clamp keeps a bad one inside the buffer).
uint moe_expert(int id, uint experts) {
    return id < 0 ? 0u : min(uint(id), experts - 1u);
}

// Sums acc[i] over the MOE_T lanes of each lane group; afterwards the group's
// first lane (tid % MOE_T == 0) holds the sums. Every invocation of the
// workgroup must call it (one path has barriers); the branches depend only on
// gl_SubgroupSize, which is uniform.
void moe_group_sum(inout float acc[MOE_NV], uint tid) {
    uint sg = gl_SubgroupSize;
    if (sg >= uint(MOE_T)) {
        if (sg == uint(MOE_T)) {
            [[unroll]] for (int i = 0; i < MOE_NV; i++) acc[i] = subgroupAdd(acc[i]);
        } else {
            [[unroll]] for (uint mask = 1u; mask < uint(MOE_T); mask <<= 1u) {
                [[unroll]] for (int i = 0; i < MOE_NV; i++) acc[i] += subgroupShuffleXor(acc[i], mask);
            }
        }
    } else {
        [[unroll]] for (int i = 0; i < MOE_NV; i++) acc[i] = subgroupAdd(acc[i]);
        if (gl_SubgroupInvocationID == 0u) {
            [[unroll]] for (int i = 0; i < MOE_NV; i++) moe_red[gl_SubgroupID * uint(MOE_NV) + uint(i)] = acc[i];
        }
        barrier();
        if (tid % uint(MOE_T) == 0u) {
            uint per_group = uint(MOE_T) / sg, first = tid / sg;
            [[unroll]] for (int i = 0; i < MOE_NV; i++) {
                float s = 0.0;
                for (uint j = 0u; j < per_group; j++) s += moe_red[(first + j) * uint(MOE_NV) + uint(i)];
                acc[i] = s;
            }
        }
        barrier();
    }
}

// ---------------------------------------------------------------- q4_k decode
// A chunk is one qs uvec4 (v = 0..7) of a super-block: 32 weights, 16 of
// sub-block 2c (low nibbles) and 16 of sub-block 2c+1 (high nibbles), c = v/2;
// the super-block's header uvec4 holds d, dmin and the packed scales
// (docs/FORMATS.md, q4_k; gemv_q4_k.comp).

// The four bytes of w as floats (OR-ing a byte into 2^23's mantissa, one exact
// subtraction).
vec4 moe_bytes(uint w) {
    uvec4 b = (uvec4(w) >> uvec4(0u, 8u, 16u, 24u)) & 0xFFu;
    return uintBitsToFloat(b | 0x4B000000u) - 8388608.0;
}

// (sc[2c], sc[2c+1], m[2c], m[2c+1]) of header h: gemv_k4_scales.
#include "kquant_scales.glsl"

// A row's codes of one chunk, decoded once and dotted with several tokens' x.
struct MoeChunk {
    vec4 ql[4], qh[4]; // low-nibble codes (elements 16h' .. of sub-block 2c), high-nibble codes
    vec4 s;            // d*sc[2c], d*sc[2c+1], dmin*m[2c], dmin*m[2c+1]
};

MoeChunk moe_chunk(uvec4 h, uvec4 q, uint c) {
    MoeChunk ch;
    vec2 dd = unpackHalf2x16(h.x); // d, dmin
    vec4 sm = gemv_k4_scales(h, c);
    ch.s = vec4(dd.x * sm.x, dd.x * sm.y, dd.y * sm.z, dd.y * sm.w);
    uvec4 lo = q & 0x0F0F0F0Fu, hi = (q >> 4u) & 0x0F0F0F0Fu;
    ch.ql[0] = moe_bytes(lo.x), ch.ql[1] = moe_bytes(lo.y), ch.ql[2] = moe_bytes(lo.z), ch.ql[3] = moe_bytes(lo.w);
    ch.qh[0] = moe_bytes(hi.x), ch.qh[1] = moe_bytes(hi.y), ch.qh[2] = moe_bytes(hi.z), ch.qh[3] = moe_bytes(hi.w);
    return ch;
}

// x of chunk v of super-block sb for the activation row starting at vec4 xrow:
// the low-nibble weights are at 64c + 16(v&1) + 0..15, the high ones 32 further.
struct MoeX {
    vec4 l[4], h[4];
    float sl, sh; // their sums (for the mins)
};

MoeX moe_x(uint xrow, uint sb, uint v) {
    MoeX x;
    uint xb = xrow + sb * 64u + 16u * (v >> 1u) + 4u * (v & 1u);
    [[unroll]] for (int i = 0; i < 4; i++) {
        x.l[i] = X[xb + uint(i)];
        x.h[i] = X[xb + 8u + uint(i)];
    }
    vec4 ones = vec4(1.0);
    x.sl = dot(x.l[0] + x.l[1] + x.l[2] + x.l[3], ones);
    x.sh = dot(x.h[0] + x.h[1] + x.h[2] + x.h[3], ones);
    return x;
}

float moe_dot(MoeChunk ch, MoeX x) {
    float ql = dot(ch.ql[0], x.l[0]) + dot(ch.ql[1], x.l[1]) + dot(ch.ql[2], x.l[2]) + dot(ch.ql[3], x.l[3]);
    float qh = dot(ch.qh[0], x.h[0]) + dot(ch.qh[1], x.h[1]) + dot(ch.qh[2], x.h[2]) + dot(ch.qh[3], x.h[3]);
    return ch.s.x * ql + ch.s.y * qh - (ch.s.z * x.sl + ch.s.w * x.sh);
}

#endif
