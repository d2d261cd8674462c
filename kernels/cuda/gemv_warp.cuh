// Part of the CUDA GEMV kernels' shared code (gemv_common.cuh includes the
// parts in order): the scalar path's per-warp pipeline. The format interface
// the decodes implement, the tile and shared-memory geometry, the staging
// ring that copies a warp's rows into shared memory (cp.async or, with BULK,
// Hopper bulk copies), the k-quant prep step, the main loop gb_quant_warp,
// and the split-K helpers. All of it is __host__ __device__ over a copy
// context, so tests/cuda_host/gemv_emulate.cu runs the same loop on the CPU.
// docs/kernels/cuda-gemv.md: "Common structure", "Row parts", "Split-K",
// "Bulk copies".
#ifndef GPUBENCH_GEMV_WARP_CUH
#define GPUBENCH_GEMV_WARP_CUH

#include "gemv_decode.cuh"

// ------------------------------------------------------------ warp reduction

__device__ __forceinline__ float gb_warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o >= 1; o /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

// ------------------------------------------------------------ quantized GEMV
// One warp computes R consecutive rows. The columns are cut into tiles of 1024
// (32 lanes x 32 weights); for each tile the warp copies the tile's bytes of
// its R rows into a shared-memory slot with 16-byte cp.async (coalesced, no
// registers held, L1 bypassed so L1 keeps x), while earlier tiles are decoded
// (S slots, S-1 tiles in flight). Lane l then decodes "granule" l of the tile
// (32 weights: a q4_0/q8_0 block, or 1/8 of a k-quant super-block) for all R
// rows, loading its 32 x values once. Rows past m read row m-1 and are not
// written, so every lane runs the same loop. Why staged: the copies hold no
// registers and are fully coalesced whatever the blocks' alignment, and the
// decode then reads shared memory at the block's byte offset
// (docs/kernels/cuda-gemv.md, "Common structure").
//
// The copies are whole 16-byte words covering each row's tile, so the last
// row's last word may extend up to 15 bytes past the weights: the buffer must
// be at least the weight bytes rounded up to 16 (gemv.buffer_bytes gives that
// plus 16).
//
// A format F provides:
//   QK, BPB         elements and bytes per block
//   struct X        the lane's x values (and their sums) for one tile
//   active(l, n)    granule l has weights when n elements of the tile remain
//   load_x(xt, l, X)
//   dot(slot, delta, l, X, prep) -> the granule's contribution to one row, where
//                   the row's tile starts at byte `delta` (0..15) of the slot
//   PREP            floats that prep() writes per block (0: no prep step)
//   prep(slot, delta, b, out) -> per-block values of one row that all lanes
//                   decoding block b share (the k-quants' scale products): the
//                   warp computes them once per (row, block), lane u doing
//                   pair u, into shared memory, and dot() gets the row's
//                   array (blocks of the tile x PREP floats) as `prep`
//   XQI             0 for the f32 magic decode (the interface above); 1 for
//                   the integer dot (XQ=1), which replaces load_x and dot by
//   x_chunks(l, ca, cb) and make_x(GbXRaw, X&): the 16-byte chunks of an x
//                   tile where the lane's two runs of 16 values start (the
//                   tile is staged in shared memory, gb_stage_x) and their
//                   quantized form;
//   struct Wd, fetch(slot, delta, l, prep_row, Wd&) -> one row's granule bytes
//                   (and scale values), all rows fetched before any is decoded;
//   dot(Wd, X) ->   the granule's contribution to that row

enum { GB_TILE = 1024 };
static_assert(GB_XSLOT == 4 * GB_TILE && GB_XCHUNKS == GB_TILE / 4, "an x slot holds one tile of x");

template <class F>
struct GbTile {
    enum {
        BYTES = GB_TILE / F::QK * F::BPB,   // bytes of one row's tile
        WORDS = (BYTES + 15 + 15) / 16,     // 16-byte words covering it at any alignment
        SLOT = (WORDS + 1) * 16,            // + one word for decoders' over-read
        COPY_ITERS = (WORDS + 31) / 32,     // copies per lane per row
        BLOCKS = GB_TILE / F::QK,           // blocks per row per tile
        PREP_ROW = BLOCKS * (F::PREP > 0 ? F::PREP : 1), // prep floats per row
    };
};

// x slots of an XQ warp with S unit slots of P parts per tile: x tile j is
// staged at the refill of unit (j - 1) P - (S - 1) and read at unit j P, so
// tile j + N, staged at unit (j + N - 1) P - (S - 1), must come after it:
// (N - 1) P > S - 1. With T > 1 x rows the tile's x is read at each of its
// units, the last jP + P - 1, so (N - 2) P >= S - 1; each slot then holds the
// T rows' tiles (T * GB_XSLOT bytes).
template <int S, int P, int T = 1>
struct GbXSlots {
    enum { N = T == 1 ? 2 + (S - 1) / P : 2 + (S - 1 + P - 1) / P };
};

// Static shared memory of a block of gb_gemv_quant (NWARP row groups of KS
// warps): BASE without the x slots; XSM when the x slots (XQ formats) fit
// with it in the 48 KiB, in which case x goes through shared memory. XSHARED=0
// (a define) keeps x in registers anyway: the x slots are most of a one-warp
// block's shared memory and so bound its blocks per SM (docs/kernels/moe.md,
// "x in registers").
#ifndef XSHARED
#define XSHARED 1
#endif
template <class F, int R, int S, int NWARP, int KS, int P, bool BLK, int T = 1>
struct GbQuantSmem {
    enum : unsigned long long {
        BASE = (gb_u64)NWARP * KS * (S * (R / P) * GbTile<F>::SLOT + (F::PREP > 0 ? 4 * (R / P) * GbTile<F>::PREP_ROW : 0)) +
               (KS > 1 ? 4 * NWARP * KS * R * T : 0) + (BLK ? 8 * NWARP * KS * S : 0), // BLK: the mbarriers
        X = (gb_u64)NWARP * KS * GbXSlots<S, P, T>::N * T * GB_XSLOT,
        LIMIT = 48 * 1024,
    };
    static constexpr bool XSM = XSHARED && F::XQI && BASE + X <= LIMIT;
};

// Copies tile t of the R rows into slot[r]: the row's tile bytes start at
// byte off[r] + t*BYTES of Wb (16-byte aligned) and are copied as the 16-byte
// words that cover them, so they land at byte (off[r] + t*BYTES) & 15 of the
// slot row. `tb` is the tile's byte count (BYTES except in a row's last tile).
// Ctx::LANES lanes' share is done by this call: 1 on the GPU (each lane its
// own), 32 in a host emulation (the whole warp's).
#pragma nv_exec_check_disable
template <class F, int R, class Ctx>
GB_HD void gb_stage_tile(Ctx& ctx, const unsigned char* Wb, const gb_u32* off, gb_u32 t, gb_u32 tb,
                         unsigned char (*slot)[GbTile<F>::SLOT])
{
#pragma unroll
    for (int r = 0; r < R; r++) {
        const gb_u32 rs = off[r] + t * (gb_u32)GbTile<F>::BYTES;
        const gb_u32 a16 = rs & ~15u, re = rs + tb;
#pragma unroll
        for (int j = 0; j < Ctx::LANES; j++) {
            // Written so that Wb + 16*lane is loop-invariant and the
            // iterations differ by immediate offsets.
            const gb_u32 lo = 16 * (ctx.lane + j);
            const unsigned char* src = (Wb + lo) + a16;
#pragma unroll
            for (int it = 0; it < GbTile<F>::COPY_ITERS; it++)
                ctx.copy16(&slot[r][lo + 512 * it], src + 512 * it, a16 + lo + 512 * it < re);
        }
    }
}

// BULK=1: the same words of tile t of the R rows, each row's with one bulk
// copy (cp.async.bulk, Hopper) by lane 0, all completing on the unit's
// mbarrier `bar` (ctx.bulk_*): one instruction per row instead of one per
// 16 bytes and lane. The sizes are whole 16-byte words, as above. Used only
// where it pays, q6_k at large k (docs/kernels/cuda-gemv.md, "Bulk copies",
// has the evidence; gemv_cuda.for_shape makes the choice).
#pragma nv_exec_check_disable
template <class F, int R, class Ctx>
GB_HD void gb_stage_tile_bulk(Ctx& ctx, const unsigned char* Wb, const gb_u32* off, gb_u32 t, gb_u32 tb,
                              unsigned char (*slot)[GbTile<F>::SLOT], gb_u32 bar)
{
    if (ctx.lane != 0) return; // (a host emulation's ctx.lane is 0: it copies the warp's share)
    gb_u32 a16[R], bytes[R], total = 0;
#pragma unroll
    for (int r = 0; r < R; r++) {
        const gb_u32 rs = off[r] + t * (gb_u32)GbTile<F>::BYTES;
        a16[r] = rs & ~15u;
        bytes[r] = ((rs + tb + 15) & ~15u) - a16[r];
        total += bytes[r];
    }
    ctx.bulk_expect(bar, total);
#pragma unroll
    for (int r = 0; r < R; r++) ctx.copy_bulk(slot[r], Wb + a16[r], bytes[r], bar);
}

// The prep step of tile t: pair (row r, block b), numbered u = r * BLOCKS + b,
// is done by lane u % 32, for the blocks that hold weights (`left` elements of
// the tile remain). Each lane runs the prep body once per pair it owns (once
// when R * BLOCKS <= 32, the k-quants' ROWS <= 8), with r a run-time value:
// unrolled over r, the warp would execute every row's copy of the body. So the
// row's offset is recomputed here rather than read from the register array off[]
// (docs/kernels/cuda-gemv.md, "Common structure", k-quant prep step, has the
// instruction counts of both).
#pragma nv_exec_check_disable
template <class F, int R, class Ctx>
GB_HD void gb_prep_tile(Ctx& ctx, unsigned char (*slot)[GbTile<F>::SLOT], gb_u32 lead, gb_u32 row0,
                        gb_u32 m, gb_u32 row_bytes, gb_u32 t, gb_u32 left, float* prep)
{
    const gb_u32 BLOCKS = GbTile<F>::BLOCKS;
#pragma unroll
    for (int j = 0; j < Ctx::LANES; j++) {
#pragma unroll
        for (gb_u32 u = ctx.lane + j; u < R * BLOCKS; u += 32) {
            const gb_u32 r = u / BLOCKS, b = u % BLOCKS;
            const gb_u32 off = lead + ((row0 + r < m ? row0 + r : m - 1) - row0) * row_bytes;
            if (b * F::QK < left)
                F::prep(slot[r], (off + t * (gb_u32)GbTile<F>::BYTES) & 15, b,
                        prep + r * GbTile<F>::PREP_ROW + b * F::PREP);
        }
    }
}

// One unit of the T > 1 main loop (gb_quant_warp): the RP rows staged in
// slot, whose tile bytes start at off[r] + tb0 of the row, against the T x
// rows of tile t (from the x slots xsl[0..T-1] with XSM, else from global
// memory); row r of x row tk adds to acc[tk * stride + r].
#pragma nv_exec_check_disable
template <class F, int RP, bool XSM, int T>
GB_HD void gb_quant_unit_tokens(gb_u32 lane, const float* x, gb_u32 k, gb_u32 t, unsigned char (*slot)[GbTile<F>::SLOT],
                                const gb_u32* off, gb_u32 tb0, const float* prep, unsigned char (*xsl)[GB_XSLOT],
                                float* acc, int stride)
{
    const float* xt = x + (gb_u64)t * GB_TILE; // x row 0's tile
    if constexpr (F::XQI) {
        typename F::Wd wd[RP]; // every row's bytes once, for all x rows
#pragma unroll
        for (int r = 0; r < RP; r++)
            F::fetch(slot[r], (off[r] + tb0) & 15, lane, prep + r * GbTile<F>::PREP_ROW, wd[r]);
        gb_u32 ca, cb;
        F::x_chunks(lane, ca, cb);
#pragma unroll
        for (int tk = 0; tk < T; tk++) {
            GbXRaw xr;
            if constexpr (XSM) gb_xq_read(xsl[tk], ca, cb, xr);
            else gb_xq_fetch(xt + (gb_u64)tk * k + 4 * ca, xt + (gb_u64)tk * k + 4 * cb, xr);
            typename F::X xs;
            F::make_x(xr, xs);
#pragma unroll
            for (int r = 0; r < RP; r++) acc[tk * stride + r] += F::dot(wd[r], xs);
        }
    } else {
#pragma unroll
        for (int tk = 0; tk < T; tk++) {
            typename F::X xs;
            F::load_x(xt + (gb_u64)tk * k, lane, xs);
#pragma unroll
            for (int r = 0; r < RP; r++)
                acc[tk * stride + r] += F::dot(slot[r], (off[r] + tb0) & 15, lane, xs, prep + r * GbTile<F>::PREP_ROW);
        }
    }
}

// The per-warp main loop: adds lane `lane`'s partial dot products of rows
// row0 .. row0+R-1 with x row t (at x + t * k) to acc[t * R .. t * R + R-1]
// (the caller reduces them over the warp). T = 1 is the GEMV; with T > 1 a
// unit's bytes are fetched once (XQ: into registers, F::fetch) and each x
// row's runs are read and quantized in turn (one X live at a time) and meet
// every row of the unit; the weight decode inside F::dot is the same pure
// expression of the fetched words for each x row, computed once by the
// compiler (docs/kernels/cuda-gemv.md, "Multi-token kernels").
// With split-K (KS > 1) the warp is slice `slice` of KS and walks only tiles
// slice, slice + KS, slice + 2 KS, ... (KS = 1, slice = 0: every tile). A
// slice with no tile (fewer tiles than slices) adds nothing.
//
// The staging ring works on *units*: part p of tile t is rows p*RP ..
// p*RP+RP-1 of it (RP = R/P rows, P parts per tile), and the warp's units run
// in order (tile 0 parts 0..P-1, tile 1, ...), unit u in slot u % S, with
// S - 1 units in flight while one is decoded. P = 1 is the whole tile per
// slot. Why parts: a slot is free as soon as its part is decoded, so the same
// shared memory keeps more bytes in flight; the first decode starts after one
// part has landed; and the last decode, which no copy overlaps, is 1/P of a
// tile. x is converted once per tile and shared by its P parts.
// docs/kernels/cuda-gemv.md, "Row parts", has the sweeps that chose P.
#pragma nv_exec_check_disable
template <class F, int R, int S, int KS, int P, bool XSM, bool BLK, int T = 1, class Ctx>
GB_HD void gb_quant_warp(Ctx& ctx, gb_u32 lane, const unsigned char* W, const float* x, gb_u32 m,
                         gb_u32 k, gb_u32 row0, gb_u32 slice,
                         unsigned char (*slots)[R / P][GbTile<F>::SLOT], float* prep,
                         unsigned char (*xslots)[GB_XSLOT], float* acc)
{
    static_assert(P >= 1 && R % P == 0, "PARTS must divide ROWS");
    static_assert(!XSM || F::XQI, "x goes through shared memory only for the XQ formats (GbQuantSmem)");
    constexpr int RP = R / P;
    const gb_u32 row_bytes = k / F::QK * F::BPB;
    // Offsets are 32-bit, relative to the 16-byte-aligned start of row0: R
    // rows of any practical k stay far below 4 GiB.
    const gb_u64 first = (gb_u64)row0 * row_bytes;
    const unsigned char* Wb = W + (first & ~(gb_u64)15);
    gb_u32 off[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        off[r] = (gb_u32)(first & 15) + ((row0 + r < m ? row0 + r : m - 1) - row0) * row_bytes;
    const gb_u32 ntiles = (k + GB_TILE - 1) / GB_TILE;
    // This slice's tile count (the whole row without the split).
    const gb_u32 n = KS == 1 ? ntiles : slice < ntiles ? (ntiles - slice + KS - 1) / KS : 0;
    const gb_u32 TB = GbTile<F>::BYTES;
    // XQ formats with XSM (x through shared memory, GbQuantSmem): the slice's
    // x tile j goes to xslots[j % XS] in the copy group of unit (j - 1,
    // part 0) (tile 0: of unit (0, 0)), so it has landed, and been seen by
    // every lane, before unit (j, 0) begins; a slot is refilled only after
    // the unit that read it (GbXSlots). Without XSM (geometries whose x slots
    // would not fit the 48 KiB) each lane loads its runs from global memory
    // a tile ahead, into registers.
    constexpr int XS = GbXSlots<S, P, T>::N;
    auto stage_x = [&](gb_u32 j) {
        if constexpr (XSM) {
            if (j < n) {
                const gb_u32 t = slice + j * KS;
#pragma unroll
                for (int tk = 0; tk < T; tk++) // x row tk's tile into slot tile (j % XS) * T + tk
                    gb_stage_x(ctx, x + (gb_u64)tk * k + (gb_u64)t * GB_TILE, k - t * GB_TILE, xslots[(j % XS) * T + tk]);
            }
        }
    };
    // Starts the copies of part `part` of the slice's tile j (nothing past the
    // slice's last tile) into slot `sidx`, and commits them as one group
    // (empty groups keep the count uniform when there are fewer units; with
    // BLK the weights' bulk copies complete on the slot's mbarrier instead,
    // and the group holds the x copies only).
    auto stage_unit = [&](gb_u32 j, int part, gb_u32 sidx) {
        if (part == 0) stage_x(j + 1);
        if (j < n) {
            const gb_u32 t = slice + j * KS;
            const gb_u32 left = row_bytes - t * TB;
            if constexpr (BLK)
                gb_stage_tile_bulk<F, RP>(ctx, Wb, off + part * RP, t, left < TB ? left : TB, slots[sidx], sidx);
            else
                gb_stage_tile<F, RP>(ctx, Wb, off + part * RP, t, left < TB ? left : TB, slots[sidx]);
        }
        ctx.commit();
    };
    // The lane's x runs of the slice's tile j from global memory (no XSM).
    auto fetch_x = [&](gb_u32 j, GbXRaw& r) {
        if constexpr (F::XQI) {
            const gb_u32 t = slice + j * KS;
            gb_u32 ca, cb;
            F::x_chunks(lane, ca, cb);
            gb_xq_fetch(x + (gb_u64)t * GB_TILE + 4 * ca, x + (gb_u64)t * GB_TILE + 4 * cb, r);
        }
    };

    // Prologue: the slice's units 0 .. S-2 in flight (unit s: part s % P of
    // the slice's tile s / P, both known at compile time).
    stage_x(0); // committed with the first unit
#pragma unroll
    for (int s = 0; s < S - 1; s++) stage_unit((gb_u32)(s / P), s % P, (gb_u32)s);
    GbXRaw xr; // no XSM: x a tile ahead (T > 1: loaded where used)
    if constexpr (F::XQI && !XSM && T == 1)
        if (n > 0 && F::active(lane, k - slice * GB_TILE)) fetch_x(0, xr);
    for (gb_u32 i = 0; i < n; i++) {
        const gb_u32 t = slice + i * KS;
        const gb_u32 left = k - t * GB_TILE;
        const bool active = F::active(lane, left);
        typename F::X xs;
#pragma unroll
        for (int p = 0; p < P; p++) {
            const gb_u32 u = i * P + p, slot = u % S;
            // Refill the slot that the previous unit used (the barrier at the
            // end of that unit guarantees every lane is done reading it) with
            // unit u + S - 1: part (p + S - 1) % P of the slice's tile
            // i + (p + S - 1) / P.
            stage_unit(i + (gb_u32)((p + S - 1) / P), (p + S - 1) % P, (u + S - 1) % S);
            if (T == 1 && p == 0) {
                // x first: it does not need the tile, so its conversion
                // overlaps the copies still in flight (but for tile 0, whose
                // x came with unit 0).
                if constexpr (XSM) {
                    if (i == 0) {
                        ctx.template wait<S - 1>();
                        ctx.sync();
                    }
                    if (active) {
                        gb_u32 ca, cb;
                        F::x_chunks(lane, ca, cb);
                        gb_xq_read(xslots[i % XS], ca, cb, xr);
                        F::make_x(xr, xs);
                    }
                } else if constexpr (F::XQI) {
                    if (active) F::make_x(xr, xs);
                    // ... and the next tile's x is loaded now, to be used a tile later
                    if (i + 1 < n && F::active(lane, k - (t + KS) * GB_TILE)) fetch_x(i + 1, xr);
                } else if (active) {
                    F::load_x(x + (gb_u64)t * GB_TILE, lane, xs);
                }
            }
            ctx.template wait<S - 1>(); // this lane's copies of unit u have landed
            if constexpr (BLK) ctx.bulk_wait(slot, (u / S) & 1); // the bulk copies: slot's (u / S)-th use
            ctx.sync();                 // ... and so have every other lane's
#ifdef GB_STAGING_ONLY
            // Diagnostic build (tools/gemv_diag.lua GB_STAGING_ONLY): the copy pipeline
            // alone, one byte of each row read, the memory side's own ceiling
            // (docs/kernels/cuda-gemv.md, "Integer dot"). The results are not a GEMV.
#pragma unroll
            for (int r = 0; r < RP; r++) acc[p * RP + r] += (float)slots[slot][r][lane];
            ctx.sync();
            continue;
#endif
            if constexpr (F::PREP > 0) {
                // the part's row p*RP is row 0 of the prep step; its lead keeps
                // the byte alignment of the rows (only & 15 is used)
                gb_prep_tile<F, RP>(ctx, slots[slot], (gb_u32)(first & 15) + (gb_u32)(p * RP) * row_bytes,
                                    row0 + p * RP, m, row_bytes, t, left, prep);
                ctx.sync(); // every lane's prep values are written
            }
            if constexpr (T > 1) {
                if (active) gb_quant_unit_tokens<F, RP, XSM, T>(lane, x, k, t, slots[slot], off + p * RP, t * TB, prep,
                                                               XSM ? xslots + (i % XS) * T : nullptr, acc + p * RP, R);
            } else if constexpr (F::XQI) {
                // Every row's bytes first, then the arithmetic: the shared-memory
                // latency is paid once per unit, not once per row.
                if (active) {
                    typename F::Wd wd[RP];
#pragma unroll
                    for (int r = 0; r < RP; r++)
                        F::fetch(slots[slot][r], (off[p * RP + r] + t * TB) & 15, lane,
                                 prep + r * GbTile<F>::PREP_ROW, wd[r]);
#pragma unroll
                    for (int r = 0; r < RP; r++) acc[p * RP + r] += F::dot(wd[r], xs);
                }
            } else if (active) {
#pragma unroll
                for (int r = 0; r < RP; r++)
                    acc[p * RP + r] += F::dot(slots[slot][r], (off[p * RP + r] + t * TB) & 15, lane, xs,
                                              prep + r * GbTile<F>::PREP_ROW);
            }
            ctx.sync(); // the slot (and the prep values) are free for reuse
        }
    }
}

// ------------------------------------------------------------ split-K
// A block of the quantized kernels has NWARP row groups x KS k-slices of
// warps: warp w is slice w % KS of group w / KS (the slices of a group are
// neighbouring warps). Each slice's warp reduces its R partial sums over its
// lanes; lane r < R puts row r's partial into red[(g * KS + s) * R + r]
// (shared memory); after a block barrier, lane r of slice 0 adds the KS
// partials of row r in slice order and writes y. Shared by the kernel and the
// host emulation, which runs the block's warps in sequence and then the sums.
// For shapes with too few rows to fill the GPU; at the large shapes it did
// not pay (docs/kernels/cuda-gemv.md, "Split-K").
template <int KS>
GB_HD void gb_ksplit_warp(gb_u32 warp, gb_u32& group, gb_u32& slice)
{
    group = warp / KS, slice = warp % KS;
}

template <int R, int KS>
GB_HD void gb_ksplit_put(float* red, gb_u32 group, gb_u32 slice, gb_u32 lane, float partial)
{
    if (lane < (gb_u32)R) red[(group * KS + slice) * R + lane] = partial;
}

template <int R, int KS>
GB_HD float gb_ksplit_sum(const float* red, gb_u32 group, gb_u32 lane)
{
    const float* p = red + group * KS * R + lane;
    float v = p[0];
#pragma unroll
    for (int s = 1; s < KS; s++) v += p[s * R];
    return v;
}

#endif
