// gemv_idot_blocks.glsl: the main loops of the q8_0 and q4_0 integer GEMV kernels
// (-DGEMV_IDOT=1 or 2; docs/kernels/vulkan-gemv.md, "Integer path" and "q8_0 and q4_0 at
// T > 1"), included after gemv_idot.glsl by a kernel that defines first:
//   GEMV_IDOT_BLOCK_BYTES  bytes per block of 32 weights (q8_0 34, q4_0 18);
//   GEMV_IDOT_WORDS        the 32-bit words a block's codes span (q8_0 9, q4_0 5);
//   float idot_block_load(uint o, out uint u[GEMV_IDOT_WORDS], out uint s): the block at
//       byte offset o, its d returned, its code words in u, s the codes' shift in them;
//   int idot_block_dot(uint u[GEMV_IDOT_WORDS], uint s, uint xh[GEMV_XW], uint xl[GEMV_XW],
//       int off): the block's integer dot with one token's x words, less off.
// off is 8 * the block's sum of xq where the kernel stores it (GEMV_IDOT_SUM: q4_0's -8),
// else 0. With GEMV_XPRE=1 (layout 1) x's words come from the first dispatch's records
// (gemv_idot.glsl, gemv_xpre_block) instead of shared memory, in both loops.
#ifndef GEMV_IDOT_BLOCKS_GLSL
#define GEMV_IDOT_BLOCKS_GLSL

#if !defined(GEMV_IDOT_BLOCK_BYTES) || !defined(GEMV_IDOT_WORDS)
#error "gemv_idot_blocks.glsl needs the kernel's GEMV_IDOT_BLOCK_BYTES and GEMV_IDOT_WORDS (and its idot_block_load, idot_block_dot)"
#endif
// Block b of the GEMV_NR rows at byte offsets base[]: each row's code words, their shift and d.
void idot_blocks_load(uint base[GEMV_NR], uint b, out uint u[GEMV_NR][GEMV_IDOT_WORDS], out uint s[GEMV_NR],
                      out float d[GEMV_NR]) {
    [[unroll]] for (int r = 0; r < GEMV_NR; r++)
        d[r] = idot_block_load(base[r] + uint(GEMV_IDOT_BLOCK_BYTES) * b, u[r], s[r]);
}

#if GEMV_KPF
// The first block's loads of the workgroup's first tile (the lane's block `lane`), when x is whole
// (GEMV_KPF: gemv_idot.glsl).
#define IDOT_KPF_ISSUE(whole)                                                                    \
    uint pu[GEMV_NR][GEMV_IDOT_WORDS], ps[GEMV_NR];                                              \
    float pd[GEMV_NR];                                                                           \
    GEMV_KPF_LOAD_AHEAD(whole, nb, row_bytes, idot_blocks_load, pu, ps, pd)
#else
#define IDOT_KPF_ISSUE(whole)
#endif
// The loop's load of block b (the first trip's loaded ahead with GEMV_KPF).
#define IDOT_KPF_TAKE(base, b, u, s, d) GEMV_KPF_TAKE(u, s, d, pu, ps, pd, idot_blocks_load(base, b, u, s, d))

#ifdef GEMV_IDOT_SUM
#define GEMV_IDOT_OFF(blk) (8 * gx_sum[blk])
#define GEMV_IDOT_OFF_OF(sum) (8 * (sum))
#else
#define GEMV_IDOT_OFF(blk) 0
#define GEMV_IDOT_OFF_OF(sum) 0
#endif

#if GEMV_TOKENS == 1
// One token: x whole in shared memory (gemv_vulkan.lua keeps k within GEMV_XB blocks).
void main() {
    uint tid = gemv_tid();
    uint nb = P.k >> 5u;   // blocks per row
    uint row_bytes = nb * uint(GEMV_IDOT_BLOCK_BYTES);
    const uint T = uint(GEMV_T);
    uint lane = tid % T, group = tid / T;
    uint tiles = gemv_idot_tiles();
    IDOT_KPF_ISSUE(true)
#if !GEMV_XPRE
    gemv_idot_quantize(tid);
#endif
    for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) {
        uint row0 = tile * uint(GEMV_ROWS) + group * uint(GEMV_NR);
        uint base[GEMV_NR];
        float acc[GEMV_NR];
        gemv_row_bases(row0, row_bytes, base);
        [[unroll]] for (int r = 0; r < GEMV_NR; r++) acc[r] = 0.0;
        for (uint b = lane; b < nb; b += T) {
            // The block's x words, loaded once for all GEMV_NR rows (q4_0: words 0-3 meet the
            // low nibbles, 4-7 the high ones).
            uint xh[GEMV_XW], xl[GEMV_XW];
            float sx;
            int off;
#if GEMV_XPRE
            int sum;
            gemv_xpre_block(b, xh, xl, sx, sum);
            off = GEMV_IDOT_OFF_OF(sum);
#else
            [[unroll]] for (int i = 0; i < GEMV_XW; i++) {
                xh[i] = gx_h[uint(i) * uint(GEMV_XB) + b];
                xl[i] = gx_l[uint(i) * uint(GEMV_XB) + b];
            }
            sx = gx_s[b];
            off = GEMV_IDOT_OFF(b);
#endif
#if GEMV_KPF
            uint u[GEMV_NR][GEMV_IDOT_WORDS], s[GEMV_NR];
            float d[GEMV_NR];
            IDOT_KPF_TAKE(base, b, u, s, d);
            [[unroll]] for (int r = 0; r < GEMV_NR; r++)
                acc[r] += (d[r] * sx) * float(idot_block_dot(u[r], s[r], xh, xl, off));
#else
            [[unroll]] for (int r = 0; r < GEMV_NR; r++) { // each row's block loaded where it is used
                uint u[GEMV_IDOT_WORDS], s;
                float d = idot_block_load(base[r] + uint(GEMV_IDOT_BLOCK_BYTES) * b, u, s);
                acc[r] += (d * sx) * float(idot_block_dot(u, s, xh, xl, off));
            }
#endif
        }
        gemv_finish(acc, tid, row0);
        barrier(); // the next tile's gemv_finish reuses gemv_red
    }
}
#else
// GEMV_TOKENS rows of x: each row's block is loaded once into registers and dotted with
// every token's x words. x of every token is quantized once for all the workgroup's tiles
// where it fits in GEMV_XB blocks, else per row tile in slices of GEMV_XB blocks
// (gemv_idot.glsl, b0), as the k-quant kernels do.
void main() {
    uint tid = gemv_tid();
    uint nb = P.k >> 5u;   // blocks per row
    uint row_bytes = nb * uint(GEMV_IDOT_BLOCK_BYTES);
#if GEMV_XPRE
    // x quantized once per call (gemv_idot_xprep.comp): one slice of every block, no barrier
    const uint T = uint(GEMV_T);
    uint XB = nb;
    bool whole = true;
#else
    const uint T = uint(GEMV_T), XB = uint(GEMV_XB);
    bool whole = nb <= XB;
#endif
    uint lane = tid % T, group = tid / T;
    uint tiles = gemv_idot_tiles();
    IDOT_KPF_ISSUE(whole)
#if !GEMV_XPRE
    if (whole) gemv_idot_quantize(tid, 0u);
#endif
    for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) {
        uint row0 = tile * uint(GEMV_ROWS) + group * uint(GEMV_NR);
        uint base[GEMV_NR];
        float acc[GEMV_ACC];
        gemv_row_bases(row0, row_bytes, base);
        [[unroll]] for (int i = 0; i < GEMV_ACC; i++) acc[i] = 0.0;
        for (uint b0 = 0u; b0 < nb; b0 += XB) {
#if !GEMV_XPRE
            if (!whole) {
                barrier(); // every lane is done with the previous slice
                gemv_idot_quantize(tid, b0);
            }
#endif
            uint b1 = min(nb, b0 + XB);
            for (uint b = b0 + lane; b < b1; b += T) {
                uint p = b - b0; // the block's place in the slice
                uint u[GEMV_NR][GEMV_IDOT_WORDS], s[GEMV_NR];
                float d[GEMV_NR];
                IDOT_KPF_TAKE(base, b, u, s, d);
                [[unroll]] for (int t = 0; t < GEMV_TOKENS; t++) {
                    // Token t's x words, loaded once for all GEMV_NR rows.
                    uint xh[GEMV_XW], xl[GEMV_XW];
                    float sx;
                    int off;
#if GEMV_XPRE
                    int sum;
                    gemv_xpre_block(uint(t) * nb + b, xh, xl, sx, sum);
                    off = GEMV_IDOT_OFF_OF(sum);
#else
                    [[unroll]] for (int i = 0; i < GEMV_XW; i++) {
                        xh[i] = gx_h[gemv_idot_word(uint(i), uint(t), p)];
                        xl[i] = gx_l[gemv_idot_word(uint(i), uint(t), p)];
                    }
                    sx = gx_s[gemv_idot_blk(uint(t), p)];
                    off = GEMV_IDOT_OFF(gemv_idot_blk(uint(t), p));
#endif
                    [[unroll]] for (int r = 0; r < GEMV_NR; r++)
                        acc[GEMV_AT(t, r)] += (d[r] * sx) * float(idot_block_dot(u[r], s[r], xh, xl, off));
                }
            }
        }
        gemv_finish(acc, tid, row0);
        barrier(); // the next tile's gemv_finish (and quantizer) reuse shared memory
    }
}
#endif

#endif
