// Shared code of the CUDA SwiGLU kernels (kernels/cuda/swiglu_fused.cu,
// swiglu_gemv.cu, swiglu_mul.cu: each a thin wrapper). BF16 weights and
// activations, fp32 accumulation, BF16 outputs. Design: docs/kernels/swiglu.md.
//
// W is the packed gate/up weight, row-major [2N, K] bf16 (gate rows 0..N-1, up
// rows N..2N-1); x is [MT, K] bf16, MT = 1..8 rows (tokens). K % 8 == 0.
//
// The dot products run on the tensor cores: one mma.m16n8k16 (bf16 in, fp32
// accumulate) multiplies 16 weight rows by the 8 token columns of x. Because a
// dot product does not care in which order k is visited, the k slots of the
// mma are a permutation of k chosen so that every operand is one 16-byte load:
// lane (g = lane/4, t = lane%4) loads the word at k = 32c + 8t (8 bf16) of its
// two A rows and of x row g; its first 4 values are the mma's k slots
// {2t, 2t+1, 2t+8, 2t+9} of the first k16 step, the last 4 those of the second.
// A and B use the same permutation, so the sum is exactly the dot over the
// 32 k of chunk c.
//
// The index helpers are __host__ __device__ so that
// tests/cuda_host/swiglu_emulate.cu runs them on the CPU against a host model
// of the mma fragment layout (PTX ISA, "Matrix Fragments for mma.m16n8k16").
#ifndef GPUBENCH_SWIGLU_COMMON_CUH
#define GPUBENCH_SWIGLU_COMMON_CUH

#define SW_HD __host__ __device__ __forceinline__

typedef unsigned int sw_u32;
typedef unsigned long long sw_u64;

// ------------------------------------------------------------ bf16

SW_HD float sw_as_float(sw_u32 u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
#endif
}

SW_HD sw_u32 sw_as_u32(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    sw_u32 u;
    __builtin_memcpy(&u, &f, 4);
    return u;
#endif
}

// The low and high bf16 of a 32-bit word (elements 2i and 2i+1), exactly.
SW_HD float sw_lo(sw_u32 w) { return sw_as_float(w << 16); }
SW_HD float sw_hi(sw_u32 w) { return sw_as_float(w & 0xFFFF0000u); }

// f32 -> bf16, round to nearest even; a NaN stays a (quiet) NaN.
SW_HD sw_u32 sw_bf16(float f)
{
    const sw_u32 u = sw_as_u32(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u;
    return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

// silu(v) = v / (1 + e^-v); for v < -88 e^-v is inf and the result -0,
// below anything bf16 keeps of the true value's magnitude times a finite up.
SW_HD float sw_silu(float v) { return v / (1.0f + expf(-v)); }

// ------------------------------------------------------------ fragments

// Lane roles: g = lane / 4 is the A row (and g + 8) and the token column of
// B; t = lane % 4 picks the lane's 16-byte word in a 32-wide k chunk.
SW_HD sw_u32 sw_g(sw_u32 lane) { return lane >> 2; }
SW_HD sw_u32 sw_t(sw_u32 lane) { return lane & 3; }

// Byte offset in a row of the word lane t loads in chunk c.
SW_HD sw_u64 sw_word_off(sw_u32 c, sw_u32 t) { return (32ull * c + 8ull * t) * 2ull; }

// The operands of k16 step `half` (0 or 1) of a chunk, from the lane's words
// wa (A row g), wb (A row g + 8) and xv (x row g): A = {a0a1, a2a3, a4a5,
// a6a7} = {row g k 2t.., row g+8 k 2t.., row g k 2t+8.., row g+8 k 2t+8..},
// B = {b0b1, b2b3} = {k 2t.., k 2t+8..} of column g.
SW_HD void sw_operands(const uint4& wa, const uint4& wb, const uint4& xv, int half, sw_u32 (&a)[4],
                       sw_u32 (&b)[2])
{
    if (half == 0) {
        a[0] = wa.x, a[1] = wb.x, a[2] = wa.y, a[3] = wb.y;
        b[0] = xv.x, b[1] = xv.y;
    } else {
        a[0] = wa.z, a[1] = wb.z, a[2] = wa.w, a[3] = wb.w;
        b[0] = xv.z, b[1] = xv.w;
    }
}

// The accumulator c[i] of a lane holds C[row][col] with row = g + 8 * (i / 2)
// and col (the token) = 2t + i % 2.
SW_HD sw_u32 sw_c_row(sw_u32 lane, int i) { return sw_g(lane) + 8u * (sw_u32)(i >> 1); }
SW_HD sw_u32 sw_c_tok(sw_u32 lane, int i) { return 2u * sw_t(lane) + (sw_u32)(i & 1); }

// Rows past the end are read from the last row (valid memory, no branch in
// the loop) and never stored.
SW_HD sw_u32 sw_clamp(sw_u32 row, sw_u32 rows) { return row < rows ? row : rows - 1; }

// The A rows of fused tile j of the warp whose first output is n0: gate row
// n (A row g) and up row N + n (A row g + 8), n = n0 + 8j + g, as byte offsets.
SW_HD void sw_fused_rows(sw_u32 n0, sw_u32 j, sw_u32 g, sw_u32 n, sw_u32 k, sw_u64& ra, sw_u64& rb)
{
    const sw_u64 row = sw_clamp(n0 + 8u * j + g, n);
    ra = row * k * 2ull;
    rb = ((sw_u64)n + row) * k * 2ull;
}

// The A rows of GEMV tile j (16 consecutive rows from r0 + 16j) over R rows.
SW_HD void sw_gemv_rows(sw_u32 r0, sw_u32 j, sw_u32 g, sw_u32 rows, sw_u32 k, sw_u64& ra, sw_u64& rb)
{
    ra = (sw_u64)sw_clamp(r0 + 16u * j + g, rows) * k * 2ull;
    rb = (sw_u64)sw_clamp(r0 + 16u * j + 8u + g, rows) * k * 2ull;
}

// ------------------------------------------------------------ the warp loop
// Templates over a context cx that does the loads and the mma: on the GPU
// sw_gpu (below); in tests/cuda_host/swiglu_emulate.cu one that loads with
// memcpy and records each lane's operands for a host model of the mma, so the
// loop's indexing runs on the CPU exactly as written here.

// The two k16 steps of one chunk.
template <class Cx>
SW_HD void sw_chunk(Cx& cx, float (&c)[4], int tile, const uint4& wa, const uint4& wb, const uint4& xv)
{
    sw_u32 a[4], b[2];
    sw_operands(wa, wb, xv, 0, a, b);
    cx.mma(c, tile, a, b);
    sw_operands(wa, wb, xv, 1, a, b);
    cx.mma(c, tile, a, b);
}

// The warp's NTILE tiles over all of k: acc[j] += A_j x^T, A_j the 16 rows at
// byte offsets ra[j] (A rows 0..7, one per g) and rb[j] (rows 8..15). U chunks
// of 32 k are loaded before any is used: 2 * NTILE + 1 16-byte loads per chunk
// and lane, U * 2 * NTILE KiB of weights in flight per warp (the memory bound
// needs bytes in flight, docs/kernels/swiglu.md). Lanes whose token g does not
// exist (g >= NT) pass zeros for B and load no x.
// sw_warp_dot_range walks kl of the k columns (W and X already advanced to
// the first, rows still k long): a slice of k for the fused kernel's KSPLIT.
template <int NT, int NTILE, int U, class Cx>
SW_HD void sw_warp_dot_range(Cx& cx, sw_u32 lane, const unsigned char* W, const unsigned char* X, sw_u32 k,
                             sw_u32 kl, const sw_u64 (&ra)[NTILE], const sw_u64 (&rb)[NTILE], float (&acc)[NTILE][4])
{
    const sw_u32 g = sw_g(lane), t = sw_t(lane);
    const bool has_x = g < (sw_u32)NT;
    const unsigned char* xr = X + (sw_u64)(has_x ? g : 0) * k * 2ull;
    const uint4 zero = make_uint4(0, 0, 0, 0);
    const sw_u32 full = kl / 32; // chunks whose four words all exist
    sw_u32 c = 0;
    for (; c + U <= full; c += U) {
        uint4 wa[U][NTILE], wb[U][NTILE], xv[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const sw_u64 off = sw_word_off(c + u, t);
#pragma unroll
            for (int j = 0; j < NTILE; j++) {
                wa[u][j] = cx.ld_w(W + ra[j] + off);
                wb[u][j] = cx.ld_w(W + rb[j] + off);
            }
            xv[u] = has_x ? cx.ld_x(xr + off) : zero;
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
#pragma unroll
            for (int j = 0; j < NTILE; j++) sw_chunk(cx, acc[j], j, wa[u][j], wb[u][j], xv[u]);
        }
    }
    // The last < U chunks, the final one perhaps partial (k % 32 != 0): a
    // lane whose word is past k passes zeros. The loop condition is the same
    // for every lane, so the mma sees a converged warp.
    const sw_u32 words = kl / 8;
    for (; 4 * c < words; c++) {
        const bool in = 4 * c + t < words;
        const sw_u64 off = sw_word_off(c, t);
        const uint4 xv = in && has_x ? cx.ld_x(xr + off) : zero;
#pragma unroll
        for (int j = 0; j < NTILE; j++) {
            const uint4 wa = in ? cx.ld_w(W + ra[j] + off) : zero;
            const uint4 wb = in ? cx.ld_w(W + rb[j] + off) : zero;
            sw_chunk(cx, acc[j], j, wa, wb, xv);
        }
    }
}

template <int NT, int NTILE, int U, class Cx>
SW_HD void sw_warp_dot(Cx& cx, sw_u32 lane, const unsigned char* W, const unsigned char* X, sw_u32 k,
                       const sw_u64 (&ra)[NTILE], const sw_u64 (&rb)[NTILE], float (&acc)[NTILE][4])
{
    sw_warp_dot_range<NT, NTILE, U>(cx, lane, W, X, k, k, ra, rb, acc);
}
// Slice s of ks of k (the fused kernel's KSPLIT): whole chunks of 32 k,
// ceil(ceil(k / 32) / ks) of them per slice; k0 its first column, kl its
// length (0 for a slice past k). k0 is a multiple of 32, so the slice's
// 16-byte loads stay aligned.
SW_HD void sw_slice(sw_u32 k, sw_u32 ks, sw_u32 s, sw_u32& k0, sw_u32& kl)
{
    const sw_u32 per = 32u * (((k + 31u) / 32u + ks - 1u) / ks);
    k0 = per * s < k ? per * s : k;
    kl = (k - k0 < per ? k - k0 : per);
}
// The fused kernel's warp whose first output is n0: A row offsets of its tiles,
// then its stores y[t, n] = bf16(silu(g) u) (c[i] gate, c[i + 2] up of token 2t + i).
template <int NTILE>
SW_HD void sw_fused_setup(sw_u32 lane, sw_u32 n0, sw_u32 n, sw_u32 k, sw_u64 (&ra)[NTILE], sw_u64 (&rb)[NTILE],
                          float (&acc)[NTILE][4])
{
    for (int j = 0; j < NTILE; j++) {
        sw_fused_rows(n0, (sw_u32)j, sw_g(lane), n, k, ra[j], rb[j]);
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    }
}

template <int NT, int NTILE>
SW_HD void sw_fused_store(sw_u32 lane, sw_u32 n0, sw_u32 n, const float (&acc)[NTILE][4], unsigned short* y)
{
    for (int j = 0; j < NTILE; j++) {
        const sw_u32 out = n0 + 8u * (sw_u32)j + sw_g(lane);
        for (int i = 0; i < 2; i++) {
            const sw_u32 tok = sw_c_tok(lane, i);
            if (out < n && tok < (sw_u32)NT)
                y[(sw_u64)tok * n + out] = (unsigned short)sw_bf16(sw_silu(acc[j][i]) * acc[j][i + 2]);
        }
    }
}

// The GEMV's warp whose first row is r0: h[t, r] = bf16(c) for its 16 x NTILE rows.
template <int NTILE>
SW_HD void sw_gemv_setup(sw_u32 lane, sw_u32 r0, sw_u32 rows, sw_u32 k, sw_u64 (&ra)[NTILE], sw_u64 (&rb)[NTILE],
                         float (&acc)[NTILE][4])
{
    for (int j = 0; j < NTILE; j++) {
        sw_gemv_rows(r0, (sw_u32)j, sw_g(lane), rows, k, ra[j], rb[j]);
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    }
}

template <int NT, int NTILE>
SW_HD void sw_gemv_store(sw_u32 lane, sw_u32 r0, sw_u32 rows, const float (&acc)[NTILE][4], unsigned short* h)
{
    for (int j = 0; j < NTILE; j++) {
        for (int i = 0; i < 4; i++) {
            const sw_u32 r = r0 + 16u * (sw_u32)j + sw_c_row(lane, i), tok = sw_c_tok(lane, i);
            if (r < rows && tok < (sw_u32)NT) h[(sw_u64)tok * rows + r] = (unsigned short)sw_bf16(acc[j][i]);
        }
    }
}

// One thread of the elementwise kernel: outputs i, i + stride, ... of
// y[m, n] = bf16(silu(g) u), g = h[t, c], u = h[t, n + c]; 8 at a time
// (16-byte loads and stores) when n % 8 == 0.
SW_HD void sw_mul_thread(sw_u64 i, sw_u64 stride, const unsigned short* h, unsigned short* y, sw_u32 n, sw_u32 m)
{
    const sw_u64 total = (sw_u64)m * n;
    if (n % 8 == 0) {
        for (; 8 * i < total; i += stride) {
            const sw_u64 e = 8 * i, t = e / n, c = e % n;
            const uint4 gv = *reinterpret_cast<const uint4*>(h + t * 2 * n + c);
            const uint4 uv = *reinterpret_cast<const uint4*>(h + t * 2 * n + n + c);
            const sw_u32 gw[4] = {gv.x, gv.y, gv.z, gv.w}, uw[4] = {uv.x, uv.y, uv.z, uv.w};
            sw_u32 out[4];
            for (int q = 0; q < 4; q++) {
                const sw_u32 lo = sw_bf16(sw_silu(sw_lo(gw[q])) * sw_lo(uw[q]));
                const sw_u32 hi = sw_bf16(sw_silu(sw_hi(gw[q])) * sw_hi(uw[q]));
                out[q] = lo | (hi << 16);
            }
            *reinterpret_cast<uint4*>(y + e) = make_uint4(out[0], out[1], out[2], out[3]);
        }
    } else {
        for (; i < total; i += stride) {
            const sw_u64 t = i / n, c = i % n;
            const float gv = sw_as_float((sw_u32)h[t * 2 * n + c] << 16);
            const float uv = sw_as_float((sw_u32)h[t * 2 * n + n + c] << 16);
            y[i] = (unsigned short)sw_bf16(sw_silu(gv) * uv);
        }
    }
}

// ------------------------------------------------------------ the staged loop
// STAGES >= 2 in swiglu_fused.cu: the warp's 16 * NTILE rows go through S
// warp-private shared-memory stages of CH chunks (64 * CH bytes) per row.
// Copy: lane l takes 16-byte pieces q = l + 32 m of the stage, row q / (4 CH),
// piece q % (4 CH) of that row, so one cp.async instruction reads 512
// contiguous bytes of one row (two rows of 256 at CH = 4) and DRAM sees whole
// row runs; pieces past the slice are zero-filled and read nothing. Read:
// lane (g, t) takes the same words as the direct loop (sw_word_off) from the
// stage. Stage row r holds tile r / 16, A row r % 16 (gate rows 0..7, up rows
// 8..15); from CH = 2 (rows of 128 bytes and more) its pieces are XOR-swizzled
// by (r & 1) << 2 so the two rows of a quarter-warp's 16-byte reads fall in
// different bank halves (at CH = 1 two 64-byte rows already do).
// Templates over cx like the direct loop, which adds cp16 (cp.async of 16
// bytes, zero-filled when !valid), commit, wait<N>, syncwarp and lds (a
// 16-byte shared load): tests/cuda_host/swiglu_emulate.cu runs the 32 lanes as
// threads with a queued model of cp.async's groups.
#define SW_STAGE_BYTES(NTILE, CH) (16 * (NTILE) * 64 * (CH))

// The static shared memory of the k-slice sums (float red[KS - 1][NW][4 TL][32])
// that sit beside a block's stages.
SW_HD constexpr unsigned sw_red_bytes(int NW, int KS, int TL) { return KS > 1 ? 4u * (KS - 1) * NW * 4 * TL * 32 : 0u; }

// Byte offset of piece u (16 bytes) of stage row r.
template <int CH>
SW_HD sw_u32 sw_stage_off(sw_u32 r, sw_u32 u)
{
    return r * 64u * CH + 16u * (CH >= 2 ? u ^ ((r & 1u) << 2) : u);
}

// The fused kernel's stage rows: tile j's A row a is gate row n0 + 8j + a
// (a < 8) or up row N + n0 + 8j + a - 8, clamped like sw_fused_rows.
struct sw_fused_stage_rows {
    sw_u32 n0, n;
    SW_HD sw_u64 operator()(sw_u32 j, sw_u32 a) const
    {
        const sw_u32 out = sw_clamp(n0 + 8u * j + (a & 7u), n);
        return a < 8 ? out : (sw_u64)n + out;
    }
};

// Stage i (chunks CH i .. CH i + CH - 1 of the slice) of the warp's rows into
// buf; rows(j, a) is the weight row of tile j's A row a (rows of k bf16).
template <int NTILE, int CH, class Rows, class Cx>
SW_HD void sw_stage_copy(Cx& cx, sw_u32 lane, const Rows& rows, const unsigned char* W, sw_u32 k, sw_u32 kl,
                         sw_u32 i, unsigned char* buf)
{
    enum { PIECES = 4 * CH, PER_LANE = 2 * NTILE * CH }; // 16 NTILE rows of PIECES, over 32 lanes
#pragma unroll
    for (int m = 0; m < PER_LANE; m++) {
        const sw_u32 q = lane + 32u * m, r = q / PIECES, u = q % PIECES;
        const sw_u64 row = rows(r / 16, r % 16);
        const sw_u32 kk = 32u * CH * i + 8u * u; // first k of the piece in the slice
        const bool valid = kk < kl;
        cx.cp16(buf + sw_stage_off<CH>(r, u), valid ? W + row * k * 2ull + 2ull * kk : W, valid);
    }
}

// The staged loop over the slice: S stages of CH chunks each, S - 1 in
// flight while one is read. Op supplies the B side: Op::X the x operand of a
// chunk, op.load_x(cx, kx, valid) the lane's for the chunk whose lane word
// starts at slice column kx (zeros when !valid), op.chunk(cx, acc, j, wa, wb,
// x) the mmas of tile j with A words wa (row g) and wb (row g + 8).
template <int NTILE, int CH, int S, class Rows, class Op, class Acc, class Cx>
SW_HD void sw_staged_loop(Cx& cx, sw_u32 lane, const Rows& rows, Op& op, const unsigned char* W, sw_u32 k,
                          sw_u32 kl, Acc& acc, unsigned char* stages)
{
    enum { BYTES = SW_STAGE_BYTES(NTILE, CH) };
    const sw_u32 g = sw_g(lane), t = sw_t(lane);
    const sw_u32 nst = (kl + 32u * CH - 1) / (32u * CH);
#pragma unroll
    for (int i = 0; i < S - 1; i++) {
        if ((sw_u32)i < nst) sw_stage_copy<NTILE, CH>(cx, lane, rows, W, k, kl, i, stages + i * BYTES);
        cx.commit();
    }
    for (sw_u32 i = 0; i < nst; i++) {
        cx.template wait<S - 2>(); // this lane's pieces of stage i have landed
        cx.syncwarp();             // ... every lane's, and every lane is done with stage i - 1's buffer
        if (i + S - 1 < nst)
            sw_stage_copy<NTILE, CH>(cx, lane, rows, W, k, kl, i + S - 1, stages + ((i + S - 1) % S) * BYTES);
        cx.commit();
        const unsigned char* buf = stages + (i % S) * BYTES;
        // every x word of the stage first, then the operands: no load waits
        // behind an mma. Chunks past the slice multiply zeros (zero-filled
        // weights, no x).
        typename Op::X xv[CH];
#pragma unroll
        for (int c = 0; c < CH; c++) {
            const sw_u32 kx = 32u * (CH * i + c) + 8u * t;
            xv[c] = op.load_x(cx, kx, kx < kl);
        }
#pragma unroll
        for (int c = 0; c < CH; c++) {
            const sw_u32 u = 4u * c + t;
#pragma unroll
            for (int j = 0; j < NTILE; j++) {
                const uint4 wa = cx.lds(buf + sw_stage_off<CH>(16u * j + g, u));
                const uint4 wb = cx.lds(buf + sw_stage_off<CH>(16u * j + 8u + g, u));
                op.chunk(cx, acc, j, wa, wb, xv[c]);
            }
        }
    }
    cx.template wait<0>();
}

// The fused kernel's B side: x row g in bf16, one word per chunk.
template <int NT>
struct sw_bf16_x {
    typedef uint4 X;
    const unsigned char* xr;
    bool has_x;
    template <class Cx>
    SW_HD uint4 load_x(Cx& cx, sw_u32 kx, bool valid)
    {
        return has_x && valid ? cx.ld_x(xr + 2ull * kx) : make_uint4(0, 0, 0, 0);
    }
    template <class Cx, class Acc>
    SW_HD void chunk(Cx& cx, Acc& acc, int j, const uint4& wa, const uint4& wb, const uint4& xv)
    {
        sw_chunk(cx, acc[j], j, wa, wb, xv);
    }
};

template <int NT, int NTILE, int CH, int S, class Cx>
SW_HD void sw_staged_dot(Cx& cx, sw_u32 lane, sw_u32 n0, sw_u32 n, const unsigned char* W, const unsigned char* X,
                         sw_u32 k, sw_u32 kl, float (&acc)[NTILE][4], unsigned char* stages)
{
    const sw_u32 g = sw_g(lane);
    sw_bf16_x<NT> op{X + (sw_u64)(g < (sw_u32)NT ? g : 0) * k * 2ull, g < (sw_u32)NT};
    sw_staged_loop<NTILE, CH, S>(cx, lane, sw_fused_stage_rows{n0, n}, op, W, k, kl, acc, stages);
}

// ------------------------------------------------------------ the GPU context

#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ < 800
#error "the SwiGLU kernels need sm_80 or newer (mma.m16n8k16 with bf16 operands)"
#endif

struct sw_gpu {
    // Weights are read once: no L1 allocation, so L1 keeps x.
    __device__ __forceinline__ uint4 ld_w(const unsigned char* p)
    {
        uint4 v;
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
        return v;
    }
    // x is re-read by every warp: through L1.
    __device__ __forceinline__ uint4 ld_x(const unsigned char* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }
    __device__ __forceinline__ void mma(float (&c)[4], int, const sw_u32 (&a)[4], const sw_u32 (&b)[2])
    {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
            "{%8, %9}, {%0, %1, %2, %3};"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
    // The staged loop's: cp.async.cg (L1 bypassed), src-size 0 zero-fills.
    __device__ __forceinline__ void cp16(unsigned char* dst, const unsigned char* src, bool valid)
    {
        const sw_u32 d = (sw_u32)__cvta_generic_to_shared(dst);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(valid ? 16 : 0));
    }
    __device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;"); }
    template <int N>
    __device__ __forceinline__ void wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }
    __device__ __forceinline__ void syncwarp() { __syncwarp(); }
    __device__ __forceinline__ uint4 lds(const unsigned char* p) { return *reinterpret_cast<const uint4*>(p); }
};
#endif

#endif
