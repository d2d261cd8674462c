// gemv_idot.glsl: the integer-dot-product path of the q8_0, q4_0 and q4_k GEMV kernels
// (-DGEMV_IDOT=1 or 2, the two x layouts below; docs/kernels/vulkan-gemv.md, "Integer path").
//
// x is quantized once per workgroup into shared memory, per block of 32 values, to int16:
// s_b = amax_b / 32767, xq_i = round(x_i / s_b). Each xq is split into a signed high byte
// and an unsigned low byte, xq = 256 * xh + xl, stored as two byte planes of 4-byte
// words, so one weight word times one x word is two packed 4x8-bit dots (OpSDot /
// OpSUDot / OpUDot, dp4a on NVIDIA). The workgroup then loops over row tiles of
// GEMV_ROWS rows (grid-stride), so the quantization is paid once per workgroup, not once
// per tile. int8 x would be one dot per word but its rounding (1/254 of a block's amax)
// is far outside the GEMV oracle's bound; int16's is 1/65534.
//
// Shared memory: GEMV_XB blocks of x per token (16 words of bytes, the scale, and for
// q4_0/q4_k the block's sum of xq), on top of gemv_common's reduction array. gemv_vulkan.lua
// sizes GEMV_XB from k; the quantizer also clamps its stores to it. A kernel whose x does
// not fit (k > 32 * GEMV_XB: q4_k and q5_k at any GEMV_TOKENS, q8_0 and q4_0 above one)
// quantizes it in slices of GEMV_XB blocks (gemv_idot_quantize's b0), once per row tile
// and slice.
// Needs subgroups of at least 8 invocations (the amax of a block is a shuffle over the 8
// lanes that load it); gemv_vulkan.lua only selects this path on such devices.
//
// Options a kernel defines before including: GEMV_IDOT_SUM (store each block's sum of xq),
// GEMV_IDOT_HALF_SUMS (the sums of xq over each 16-element half of a block), GEMV_IDOT_SEG
// (layout 2's segment), GEMV_IDOT_LAYOUT (the x layout, 1 or 2; default GEMV_IDOT),
// GEMV_IDOT_TOKENS (its main loop takes GEMV_TOKENS rows of x), GEMV_IDOT_PAIRS (it reads
// blocks in pairs 2i, 2i+1), GEMV_IDOT_XPRE_LOOP (its main loop can read x quantized once per
// call, GEMV_XPRE=1: gemv_idot_kquant.glsl, gemv_idot_blocks.glsl).
#ifndef GEMV_IDOT_GLSL
#define GEMV_IDOT_GLSL

#include "idot_ops.glsl"
#include "idot_quant.glsl"

#ifndef GEMV_XB
#error "GEMV_XB (blocks of 32 x values in shared memory) must be defined with GEMV_IDOT"
#endif
#if GEMV_XB < 1
#error "GEMV_XB must be at least 1"
#endif
#ifndef GEMV_IDOT_LAYOUT
#define GEMV_IDOT_LAYOUT GEMV_IDOT
#endif
#if GEMV_IDOT_LAYOUT == 2 && !defined(GEMV_IDOT_SEG)
#error "GEMV_IDOT=2 needs the kernel's GEMV_IDOT_SEG (x elements per run of weight words)"
#endif
#if GEMV_TOKENS != 1 && !defined(GEMV_IDOT_TOKENS)
#error "the integer path computes one token: GEMV_TOKENS must be 1 with GEMV_IDOT"
#endif
#ifndef GEMV_XPRE
#define GEMV_XPRE 0
#endif
// GEMV_KPF = 1 (x per workgroup; the loops of gemv_idot_kquant.glsl, gemv_idot_blocks.glsl and
// gemv_q6_k.comp): the lane's first unit of the workgroup's first tile is loaded before x's
// quantization, so that those weights are in flight while it runs (every workgroup quantizes at
// once at the start), and the loop's first trip takes them (GEMV_KPF_TAKE); docs/kernels/
// vulkan-gemv.md, "Weights ahead of x's quantization".
#ifndef GEMV_KPF
#define GEMV_KPF 0
#endif
#if GEMV_KPF && GEMV_XPRE
#error "GEMV_KPF=1 overlaps x's quantization per workgroup: with GEMV_XPRE=1 there is none"
#endif
// The loop's load of a unit into a, b, c: the one loaded ahead (pa, pb, pc) on the first trip
// while `pending`, else `load`.
#if GEMV_KPF
#define GEMV_KPF_TAKE(a, b, c, pa, pb, pc, load) \
    if (pending) {                              \
        a = pa;                                 \
        b = pb;                                 \
        c = pc;                                 \
        pending = false;                        \
    } else                                      \
        load
#else
#define GEMV_KPF_TAKE(a, b, c, pa, pb, pc, load) load
#endif

// The offsets of rows row0 .. row0 + GEMV_NR - 1 (clamped to the matrix), `stride` elements of
// the weight array a row: the lane group's bases in each integer loop's tile.
void gemv_row_bases(uint row0, uint stride, out uint base[GEMV_NR]) {
    [[unroll]] for (int r = 0; r < GEMV_NR; r++) base[r] = gemv_clamp_row(row0 + uint(r)) * stride;
}

#if GEMV_KPF
// `pending`: whether the lane loads a unit ahead (x whole, the workgroup has a tile, the lane one
// of the row's `units`); if so, unit `lane` of its lane group's rows in the workgroup's first tile
// (rows `stride` elements apart) into a, b, c by load(base, unit, a, b, c). In a loop's scope of
// `tiles`, `lane` and `group`, after the declarations of a, b, c.
#define GEMV_KPF_LOAD_AHEAD(whole, units, stride, load, a, b, c)                          \
    bool pending = (whole) && gl_WorkGroupID.x < tiles && lane < (units);                 \
    if (pending) {                                                                        \
        uint pbase[GEMV_NR];                                                              \
        gemv_row_bases(gl_WorkGroupID.x * uint(GEMV_ROWS) + group * uint(GEMV_NR), stride, pbase); \
        load(pbase, lane, a, b, c);                                                       \
    }
// The chunk loops (gemv_idot_kquant.glsl, gemv_q6_k.comp): the lane's first chunk into plo, phi,
// pf by load(base, ch, lo, hi, f).
#define GEMV_KPF_CHUNK_AHEAD(whole, units, stride, load)          \
    uint plo[GEMV_NR][8], phi[GEMV_NR][8];                          \
    vec4 pf[GEMV_NR];                                               \
    GEMV_KPF_LOAD_AHEAD(whole, units, stride, load, plo, phi, pf)
#else
#define GEMV_KPF_CHUNK_AHEAD(whole, units, stride, load)
#endif
#if GEMV_XPRE && !defined(GEMV_IDOT_XPRE_LOOP)
#error "GEMV_XPRE=1 (x quantized once per call) is the main loops' of q4_k, q5_k, q6_k, q8_0 and q4_0 (gemv_idot_kquant.glsl, gemv_q6_k.comp, gemv_idot_blocks.glsl)"
#endif
#if defined(GEMV_IDOT_PAIRS) && (GEMV_XB % 2) != 0
#error "GEMV_IDOT_PAIRS needs an even GEMV_XB"
#endif

// Two layouts of a block's x words (GEMV_IDOT):
//   1: word j holds elements 4j .. 4j+3 (8 words); the kernel funnel-shifts each weight
//      word into place (gemv_funnel), as the float kernels do.
//   2: the x words are laid out like the block's raw weight words, so the kernels dot
//      W's words as loaded, with no funnel. A block whose codes start 2 bytes into a word
//      (s = 16) gets x shifted by 2 bytes, with zero bytes where the word holds d or the
//      next block; an aligned block (s = 0) gets its words and a zero word for the word
//      past it. The x bytes are split in segments of GEMV_IDOT_SEG elements that meet
//      one run of GEMV_IDOT_SEG / 4 + 1 weight words: q8_0 one run of 32 (9 words),
//      q4_0 two of 16 (the low and the high nibbles of the same 5 words, 10 words).
//      Needs every block's s to follow from its index b alone: rows a multiple of 4
//      bytes, k a multiple of 64 (an even block count); then even b is s = 16.
#if GEMV_IDOT_LAYOUT == 2
#define GEMV_XW ((32 / GEMV_IDOT_SEG) * (GEMV_IDOT_SEG / 4 + 1))
#else
#define GEMV_XW 8
#endif
// Token t's block at position p of the slice: word j at gemv_idot_word(j, t, p), its scale
// and sum at gemv_idot_blk(t, p). Consecutive positions are consecutive words, so lanes that
// take consecutive blocks hit consecutive banks; with one token word j of block p is at
// j * GEMV_XB + p, which the q8_0/q4_0 kernels index directly.
uint gemv_idot_word(uint j, uint t, uint p) {
    return (j * uint(GEMV_TOKENS) + t) * uint(GEMV_XB) + p;
}
uint gemv_idot_blk(uint t, uint p) {
    return t * uint(GEMV_XB) + p;
}
// The position of the slice's block sl. A kernel that reads blocks in pairs (q4_k: sub-blocks
// 2c and 2c+1 of one chunk) keeps the even blocks in the first half and the odd ones in the
// second, so a lane's two blocks are not two words apart (a 2-way bank conflict between
// lanes i and i + 16 when 32 lanes read).
#ifdef GEMV_IDOT_PAIRS
#define GEMV_IDOT_POS(sl) (((sl) >> 1u) + ((sl) & 1u) * uint(GEMV_XB / 2))
#else
#define GEMV_IDOT_POS(sl) (sl)
#endif
#if GEMV_XPRE
#if GEMV_IDOT_LAYOUT != 1
#error "GEMV_XPRE=1 reads x's words in layout 1 (word j: elements 4j .. 4j+3): it needs GEMV_IDOT=1"
#endif
// x quantized once per call by gemv_idot_xprep.comp: the kernel's x binding is that workspace
// (nothing of x in shared memory). Block b of token t is record t * (k / 32) + b, 5 vec4s: its
// 8 words of high bytes, 8 of low bytes (layout 1), then s_b, the sum of xq and the sums of
// its two 16-element halves as bits (sums: the block's in .x, the halves' in .y, .z).
void gemv_xpre_block3(uint rec, out uint xh[8], out uint xl[8], out float s, out ivec3 sums) {
    uint o = 5u * rec;
    uvec4 h0 = floatBitsToUint(X[o]), h1 = floatBitsToUint(X[o + 1u]);
    uvec4 l0 = floatBitsToUint(X[o + 2u]), l1 = floatBitsToUint(X[o + 3u]);
    vec4 e = X[o + 4u];
    xh = uint[8](h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w);
    xl = uint[8](l0.x, l0.y, l0.z, l0.w, l1.x, l1.y, l1.z, l1.w);
    s = e.x;
    sums = floatBitsToInt(e.yzw);
}
void gemv_xpre_block(uint rec, out uint xh[8], out uint xl[8], out float s, out int sum) {
    ivec3 sums;
    gemv_xpre_block3(rec, xh, xl, s, sums);
    sum = sums.x;
}
#else
shared uint gx_h[GEMV_XW * GEMV_XB * GEMV_TOKENS]; // high bytes of xq, signed
shared uint gx_l[GEMV_XW * GEMV_XB * GEMV_TOKENS]; // low bytes of xq, unsigned
shared float gx_s[GEMV_XB * GEMV_TOKENS];    // s_b
#ifdef GEMV_IDOT_SUM
shared int gx_sum[GEMV_XB * GEMV_TOKENS];    // sum of the block's xq (q4_0's -8 offset, q4_k's mins)
#endif
#ifdef GEMV_IDOT_HALF_SUMS
shared int gx_hsum[2 * GEMV_XB * GEMV_TOKENS]; // sums of xq over each 16-element half (q6_k's -32 per scale)
#endif

// Quantizes blocks b0 .. b0 + GEMV_XB - 1 of token t's row of x (fewer at the row's end;
// b0 even) into the shared planes: 8 invocations per block, one vec4 each, 32 blocks per
// pass of the workgroup. Every invocation runs the same number of passes (the shuffles need
// the 8 lanes of a block active together).
void gemv_idot_quantize_token(uint tid, uint b0, int t) {
    uint nb = min((P.k >> 5u) - b0, uint(GEMV_XB));
    uint j = tid & 7u;
    for (uint pass = 0u; pass < nb; pass += uint(GEMV_WG / 8)) {
        uint sl = pass + (tid >> 3u); // the block's place in the slice
        uint b = b0 + sl;             // and in the row
        bool live = sl < nb;
        vec4 v = live ? X[gemv_xrow(t) + 8u * b + j] : vec4(0.0);
        IdotQuant qz = idot_quant_lane(v);
        uint h = qz.h, l = qz.l;
        float amax = qz.amax;
#if defined(GEMV_IDOT_SUM) || defined(GEMV_IDOT_HALF_SUMS)
        int sum = qz.sum, half_sum = qz.half_sum;
#endif
        uint p = GEMV_IDOT_POS(sl);
#if GEMV_IDOT_LAYOUT == 2
        // Invocation j holds elements 4j .. 4j+3: position c in its segment of
        // GEMV_IDOT_SEG / 4 invocations, the segment's words starting at word0.
        const uint per = uint(GEMV_IDOT_SEG / 4);
        uint c = j % per, word0 = (j / per) * (per + 1u);
        uint src = gl_SubgroupInvocationID - (c > 0u ? 1u : 0u); // the previous invocation
        uint ph = subgroupShuffle(h, src), pl = subgroupShuffle(l, src);
        bool shifted = (b & 1u) == 0u;
        uint h0 = shifted ? (c > 0u ? ph >> 16u : 0u) | (h << 16u) : h;
        uint l0 = shifted ? (c > 0u ? pl >> 16u : 0u) | (l << 16u) : l;
        uint h1 = shifted ? h >> 16u : 0u, l1 = shifted ? l >> 16u : 0u; // the run's last word
        if (live) {
            gx_h[gemv_idot_word(word0 + c, uint(t), p)] = h0;
            gx_l[gemv_idot_word(word0 + c, uint(t), p)] = l0;
            if (c == per - 1u) {
                gx_h[gemv_idot_word(word0 + per, uint(t), p)] = h1;
                gx_l[gemv_idot_word(word0 + per, uint(t), p)] = l1;
            }
#else
        if (live) {
            gx_h[gemv_idot_word(j, uint(t), p)] = h;
            gx_l[gemv_idot_word(j, uint(t), p)] = l;
#endif
#ifdef GEMV_IDOT_HALF_SUMS
            if ((j & 3u) == 0u) gx_hsum[2u * gemv_idot_blk(uint(t), p) + (j >> 2u)] = half_sum;
#endif
            if (j == 0u) {
                gx_s[gemv_idot_blk(uint(t), p)] = amax * (1.0 / 32767.0);
#ifdef GEMV_IDOT_SUM
                gx_sum[gemv_idot_blk(uint(t), p)] = sum;
#endif
            }
        }
    }
}

// The slice at block b0 of every token, then a barrier. Token 0 outside the loop, so that
// with one token the code is the single-token quantizer's.
void gemv_idot_quantize(uint tid, uint b0) {
    gemv_idot_quantize_token(tid, b0, 0);
    for (int t = 1; t < GEMV_TOKENS; t++) gemv_idot_quantize_token(tid, b0, t);
    barrier();
}

// All of x (k values, at most GEMV_XB blocks) of one token: the q8_0/q4_0 kernels' call.
void gemv_idot_quantize(uint tid) {
    gemv_idot_quantize(tid, 0u);
}
#endif // GEMV_XPRE

// Row tiles of GEMV_ROWS rows; workgroup w takes tiles w, w + groups, ... (the grid,
// gemv_vulkan.lua's, is at most one workgroup per tile).
uint gemv_idot_tiles() {
    return (P.m + uint(GEMV_ROWS) - 1u) / uint(GEMV_ROWS);
}

#endif
