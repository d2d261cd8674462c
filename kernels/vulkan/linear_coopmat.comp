#version 450
// The tensor-core Linear route (docs/kernels/vulkan-linear.md, "coopmat"): large T on a
// device with VK_NV_cooperative_matrix (fp16 A and B, fp32 accumulators). glslang 12
// compiles GL_NV_cooperative_matrix but not the KHR extension, so this is the NV one.
//
// A workgroup of 8 subgroups (of 32: NVIDIA's) computes a LIN_BN (n) x LIN_BT (t) tile
// of y. Per slab of 32 k it dequantizes the weights to fp16 (lin_w8, exact fp32 values
// rounded once) and converts x from bf16 to fp16 into shared memory; subgroup (wn, wt)
// of the LIN_WN x LIN_WT grid multiplies its (LIN_BN/LIN_WN) x (LIN_BT/LIN_WT) part with
// 16x16x16 cooperative matrices, C[n][t] += W[n][k] x^T[k][t]. The next slab's global
// words are loaded into registers before the current slab's products, so their latency
// hides behind the tensor cores. LIN_STAGES = 2 double-buffers the shared tiles (one
// barrier per slab), 1 uses one buffer (two barriers) for tiles too large for two.
// Workgroup x runs over the t tiles: the workgroups running together share a tile of
// weights, which is then read from DRAM about once, and x (T x K) stays in L2.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "linear_common.glsl"
#include "linear_formats.glsl"

#if !defined(LIN_BN) || !defined(LIN_BT) || !defined(LIN_WN) || !defined(LIN_WT) || !defined(LIN_STAGES)
#error "LIN_BN, LIN_BT, LIN_WN, LIN_WT and LIN_STAGES must be defined"
#endif
#if LIN_WN * LIN_WT != 8
#error "LIN_WN x LIN_WT must be the 8 subgroups of the workgroup"
#endif
#if (LIN_BN % (16 * LIN_WN)) != 0 || (LIN_BT % (16 * LIN_WT)) != 0
#error "each subgroup's part must be whole 16x16 tiles"
#endif
#if LIN_STAGES != 1 && LIN_STAGES != 2
#error "LIN_STAGES must be 1 or 2"
#endif

#define BK 32
#define SK (BK / 8 + 1)   // a shared row: 32 fp16 in 4 uvec4, plus one of padding (bank spread)
#define FM (LIN_BN / LIN_WN / 16)
#define FT (LIN_BT / LIN_WT / 16)
#define NWU ((LIN_BN * 4 + 255) / 256) // 8-weight units per invocation and slab
#define NXU ((LIN_BT * 4 + 255) / 256) // 8-element x units

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

// [stage][row][SK]: weights row n (A, row-major), x row t (B = x^T, column-major), as
// uvec4 of 8 fp16 (one 16-byte store per 8 values); the matrix loads count elements and
// strides in uvec4s. (float16_t arrays, the matrices' own component type, buy nothing:
// docs/kernels/vulkan-linear.md, "Measured on the H200".)
shared uvec4 as_[LIN_STAGES * LIN_BN * SK];
shared uvec4 bs_[LIN_STAGES * LIN_BT * SK];

// The epilogue's 8 x 1 KiB: the larger of the two tiles holds it.
#if LIN_STAGES * LIN_BN * SK >= 512
#define LIN_SCRATCH as_
#elif LIN_STAGES * LIN_BT * SK >= 512
#define LIN_SCRATCH bs_
#else
#error "the shared tiles are too small for the epilogue's 8 KiB"
#endif

#define AMAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define BMAT fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define CMAT fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

uvec4 lin_pack8(vec4 even, vec4 odd) {
    return uvec4(packHalf2x16(vec2(even.x, odd.x)), packHalf2x16(vec2(even.y, odd.y)),
                 packHalf2x16(vec2(even.z, odd.z)), packHalf2x16(vec2(even.w, odd.w)));
}

void main() {
    uint tid = gl_LocalInvocationIndex;
    uint t0 = gl_WorkGroupID.x * uint(LIN_BT), n0 = gl_WorkGroupID.y * uint(LIN_BN);
    uint sgid = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint wn = sgid % uint(LIN_WN), wt = sgid / uint(LIN_WN);
    uint T = P.T, K = P.K;

    CMAT acc[FM][FT];
    [[unroll]] for (int i = 0; i < FM; i++)
        [[unroll]] for (int j = 0; j < FT; j++) acc[i][j] = CMAT(0.0);

    // Unit u of a slab: row u / 4, k = 8 (u % 4). Rows past N load row N-1 (never
    // stored); x rows past T and k past K are zero, and so are bf16 weights past K (its
    // rows are not padded: those words belong to the next row, or lie past the buffer).
    LinRaw8 wr[NWU];
    uvec4 xr[NXU];
    uint nslab = (K + uint(BK) - 1u) / uint(BK);

    // Loads slab sl's words into wr/xr.
#define LOAD_SLAB(sl)                                                                   \
    [[unroll]] for (int i = 0; i < NWU; i++) {                                          \
        uint u = tid + 256u * uint(i);                                                  \
        uint k = (sl) * uint(BK) + 8u * (u & 3u);                                       \
        wr[i].q = uvec4(0u);                                                            \
        wr[i].sw = 0u;                                                                  \
        if (u < uint(LIN_BN * 4) && (LIN_FMT != LIN_BF16 || k < K))                     \
            wr[i] = lin_raw8(min(n0 + (u >> 2u), P.N - 1u), k);                         \
    }                                                                                   \
    [[unroll]] for (int i = 0; i < NXU; i++) {                                          \
        uint u = tid + 256u * uint(i);                                                  \
        uint t = t0 + (u >> 2u), k = (sl) * uint(BK) + 8u * (u & 3u);                   \
        xr[i] = (u < uint(LIN_BT * 4) && t < T) ? lin_x8(t, k) : uvec4(0u);             \
    }
    // Decodes wr/xr (slab sl) into shared stage st.
#define STORE_SLAB(sl, st)                                                              \
    [[unroll]] for (int i = 0; i < NWU; i++) {                                          \
        uint u = tid + 256u * uint(i);                                                  \
        if (u < uint(LIN_BN * 4)) {                                                     \
            uint k = (sl) * uint(BK) + 8u * (u & 3u);                                   \
            vec4 e, o;                                                                  \
            lin_dec8(wr[i], k, e, o);                                                   \
            as_[((st) * uint(LIN_BN) + (u >> 2u)) * uint(SK) + (u & 3u)] = lin_pack8(e, o); \
        }                                                                               \
    }                                                                                   \
    [[unroll]] for (int i = 0; i < NXU; i++) {                                          \
        uint u = tid + 256u * uint(i);                                                  \
        if (u < uint(LIN_BT * 4)) {                                                     \
            vec4 e, o;                                                                  \
            lin_bf16x8(xr[i], e, o);                                                    \
            bs_[((st) * uint(LIN_BT) + (u >> 2u)) * uint(SK) + (u & 3u)] = lin_pack8(e, o); \
        }                                                                               \
    }

    LOAD_SLAB(0u);
    STORE_SLAB(0u, 0u);
    barrier();
    for (uint sl = 0u; sl < nslab; sl++) {
        uint st = LIN_STAGES == 2 ? (sl & 1u) : 0u;
        bool more = sl + 1u < nslab;
        if (more) {
            LOAD_SLAB(sl + 1u);
        }
        [[unroll]] for (uint kk = 0u; kk < uint(BK / 16); kk++) {
            AMAT a[FM];
            BMAT b[FT];
            [[unroll]] for (int i = 0; i < FM; i++)
                coopMatLoadNV(a[i], as_, (st * uint(LIN_BN) + wn * uint(LIN_BN / LIN_WN) + 16u * uint(i)) * uint(SK) + 2u * kk,
                              uint(SK), false);
            [[unroll]] for (int j = 0; j < FT; j++)
                coopMatLoadNV(b[j], bs_, (st * uint(LIN_BT) + wt * uint(LIN_BT / LIN_WT) + 16u * uint(j)) * uint(SK) + 2u * kk,
                              uint(SK), true);
            [[unroll]] for (int i = 0; i < FM; i++)
                [[unroll]] for (int j = 0; j < FT; j++) acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
        }
        if (more) {
#if LIN_STAGES == 1
            barrier(); // every subgroup is done with the one buffer
            STORE_SLAB(sl + 1u, 0u);
#else
            STORE_SLAB(sl + 1u, st ^ 1u);
#endif
        }
        barrier();
    }

    // Epilogue: each subgroup stores one 16x16 fp32 tile at a time into its own 1 KiB of
    // the shared tiles (free after the last barrier), column-major so that element (n, t)
    // is float 16 t + n, and its 32 lanes write the 256 outputs, 16 consecutive n per t.
    uint scratch = sgid * 64u; // 256 floats, in uvec4s
    [[unroll]] for (int i = 0; i < FM; i++) {
        [[unroll]] for (int j = 0; j < FT; j++) {
            coopMatStoreNV(acc[i][j], LIN_SCRATCH, scratch, 4u, true);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            uint nb = n0 + wn * uint(LIN_BN / LIN_WN) + 16u * uint(i);
            uint tb = t0 + wt * uint(LIN_BT / LIN_WT) + 16u * uint(j);
            [[unroll]] for (uint e = lane; e < 256u; e += 32u) {
                uint t = tb + (e >> 4u), n = nb + (e & 15u);
                float v = uintBitsToFloat(LIN_SCRATCH[scratch + (e >> 2u)][e & 3u]);
                if (t < T && n < P.N) lin_store(t, n, v * LIN_OUT_SCALE);
            }
            subgroupBarrier();
        }
    }
}
