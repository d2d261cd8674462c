// idot_quant.glsl: one invocation's share of the int16 quantization of a block of 32 x
// values for the integer GEMV kernels: the 8 invocations of a block (8 consecutive lanes of
// one subgroup, all active, one vec4 each: invocation j holds elements 4j .. 4j+3) find the
// block's amax and sums by shuffles. s_b = amax / 32767, xq = round(x / s_b) (to nearest
// even, clamped to +-32767), split as xq = 256 * xh + xl: h holds the four signed high bytes,
// l the four unsigned low bytes. IDOT_BALANCED=1 (the cooperative-matrix kernel's,
// whose int8 matrices take signed digits only): |xq| <= IDOT_QMAX = 32639 and xq = 256 h + l
// with both digits signed bytes in [-128, 127]. Used by gemv_idot.glsl (into shared memory) and
// gemv_idot_xprep.comp (into a workspace, once per call); docs/kernels/vulkan-gemv.md,
// "Integer path".
#ifndef IDOT_QUANT_GLSL
#define IDOT_QUANT_GLSL

#extension GL_KHR_shader_subgroup_shuffle : require

#ifndef IDOT_BALANCED
#define IDOT_BALANCED 0
#endif
#if IDOT_BALANCED
#define IDOT_QMAX 32639 // (32639 + 128) / 256 < 128: the high digit stays a signed byte
#else
#define IDOT_QMAX 32767
#endif

struct IdotQuant {
    uint h, l;    // the invocation's 4 high and 4 low bytes
    float amax;   // the block's largest |x| (s_b = amax / IDOT_QMAX)
    int sum;      // the block's sum of xq
    int half_sum; // the sum over its half: lanes 0..3 elements 0..15, lanes 4..7 16..31
};

IdotQuant idot_quant_lane(vec4 v) {
    IdotQuant r;
    vec4 a = abs(v);
    float amax = max(max(a.x, a.y), max(a.z, a.w));
    amax = max(amax, subgroupShuffleXor(amax, 1u));
    amax = max(amax, subgroupShuffleXor(amax, 2u));
    amax = max(amax, subgroupShuffleXor(amax, 4u));
    // amax = 0 (a block of zeros) gives inv = 0, so q = 0 and s_b = 0: no division
    // by zero; the cap keeps inv finite for tiny amax (0 * inv must stay 0).
    float inv = amax > 0.0 ? min(float(IDOT_QMAX) / amax, 3.0e38) : 0.0;
    ivec4 q = clamp(ivec4(roundEven(v * inv)), ivec4(-IDOT_QMAX), ivec4(IDOT_QMAX));
#if IDOT_BALANCED
    ivec4 lo = ((q + 128) & 255) - 128; // q - lo is a multiple of 256
    uvec4 hb = uvec4((q - lo) >> 8) & 0xFFu, lb = uvec4(lo) & 0xFFu;
#else
    uvec4 hb = uvec4(q >> 8) & 0xFFu, lb = uvec4(q) & 0xFFu;
#endif
    r.h = hb.x | (hb.y << 8u) | (hb.z << 16u) | (hb.w << 24u);
    r.l = lb.x | (lb.y << 8u) | (lb.z << 16u) | (lb.w << 24u);
    int sum = q.x + q.y + q.z + q.w;
    sum += subgroupShuffleXor(sum, 1u);
    sum += subgroupShuffleXor(sum, 2u);
    r.half_sum = sum;
    r.sum = sum + subgroupShuffleXor(sum, 4u);
    r.amax = amax;
    return r;
}

#endif
