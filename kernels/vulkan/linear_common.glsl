// linear_common.glsl: what every Vulkan Linear kernel shares (kernels/vulkan/linear_*.comp).
//
// y[T, N] = x[T, K] . W[N, K]^T (docs/LINEAR.md): W in one of the planar formats of
// docs/FORMATS.md, x and y bf16 (row-major, row strides K and N), fp32 accumulation, y
// rounded to bf16 once (round to nearest even). Parameters, in the order the backend
// reflects them: bindings 0 (W), 1 (x), 2 (y) of set 0, then the push constants
// {N, K, T, gscale}: (W, x, y, u32 N, u32 K, u32 T, f32 gscale), as on CUDA.
//
// Defines (from lib/gpubench/linear_vulkan.lua, the only copy of them):
//   LIN_FMT  the weight format, one of the LIN_Q4 ... LIN_BF16 numbers below;
//   LIN_Y16  1: y is stored through 16-bit storage (storageBuffer16BitAccess); 0: y is a
//            uint[] and each bf16 is merged into its word with two atomics, so a device
//            without 16-bit storage runs the same kernels.
// W and x are read as 32-bit words or 16-byte vectors whatever the device: every plane
// row is 4-byte aligned and K % 8 == 0, so no kernel needs 8- or 16-bit loads.
//
// Index arithmetic is 32-bit: one binding holds at most 4 GiB, so word indices of W and
// element indices of x (T*K) and y (T*N) stay below 2^31 for any buffer a device binds.
#ifndef LINEAR_COMMON_GLSL
#define LINEAR_COMMON_GLSL

#extension GL_EXT_control_flow_attributes : require
#ifndef LIN_Y16
#error "LIN_Y16 must be defined (1: y through 16-bit storage, 0: through 32-bit atomics)"
#endif
#if LIN_Y16
#extension GL_EXT_shader_16bit_storage : require
#endif

#define LIN_Q4 1
#define LIN_Q5 2
#define LIN_Q6 3
#define LIN_W8 4
#define LIN_NVFP4 5
#define LIN_BF16 6
#ifndef LIN_FMT
#error "LIN_FMT must be defined (1 q4, 2 q5, 3 q6, 4 w8, 5 nvfp4, 6 bf16)"
#endif
#if LIN_FMT < 1 || LIN_FMT > 6
#error "LIN_FMT must be 1..6"
#endif

layout(set = 0, binding = 0) readonly buffer WBuf { uvec4 W[]; };
layout(set = 0, binding = 1) readonly buffer XBuf { uvec4 X[]; };
#if LIN_Y16
layout(set = 0, binding = 2) writeonly buffer YBuf { uint16_t Y[]; };
#else
layout(set = 0, binding = 2) buffer YBuf { uint Y[]; };
#endif
layout(push_constant) uniform Params {
    uint N;
    uint K;
    uint T;
    float gscale;
} P;

// 32-bit word i of the weight buffer.
#define LIN_WORD(i) W[(i) >> 2u][(i) & 3u]

// The 8 bf16 of a 16-byte word as floats (exact): even elements (0, 2, 4, 6) and odd
// elements (1, 3, 5, 7), the order the nibble decoders produce their weights in.
void lin_bf16x8(uvec4 v, out vec4 even, out vec4 odd) {
    even = uintBitsToFloat(v << 16u);
    odd = uintBitsToFloat(v & 0xFFFF0000u);
}

// x[t][k .. k+7] (k % 8 == 0) as a 16-byte word, zero past K: a kernel may read x
// anywhere in its allocation but must use no element past K in a row.
uvec4 lin_x8(uint t, uint k) {
    return k < P.K ? X[(t * P.K + k) >> 3u] : uvec4(0u);
}

// f rounded to bf16, to nearest even; a NaN stays a (quiet) NaN.
uint lin_to_bf16(float f) {
    uint u = floatBitsToUint(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16u) | 0x40u;
    return (u + 0x7FFFu + ((u >> 16u) & 1u)) >> 16u;
}

// y[t][n] = v. Only the T*N outputs are ever written; the atomic path changes only the
// output's own half of its word (the other half's owner does the same), so it needs no
// ordering between the two.
void lin_store(uint t, uint n, float v) {
    uint i = t * P.N + n;
#if LIN_Y16
    Y[i] = uint16_t(lin_to_bf16(v));
#else
    uint sh = (i & 1u) << 4u;
    atomicAnd(Y[i >> 1u], ~(0xFFFFu << sh));
    atomicOr(Y[i >> 1u], lin_to_bf16(v) << sh);
#endif
}

#endif
