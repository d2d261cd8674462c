// coop_frag8.glsl: int8 matrices filled from registers, the int8 counterpart of coop_frag.glsl
// (docs/kernels/vulkan-gemv.md, "q8_0 with W in B"): FRAG8_A is 16 x 32 (rows x k), FRAG8_B
// 32 x 8 (k x columns), both s8, into an int32 COOP_C. A kernel that fills them from words
// assumes NVIDIA's layouts (tools/coop_layout_probe.lua: A is mma.sync m16n8k32's fragment, B
// its B fragment): lane L (g = L / 4, q = L % 4) holds A's rows g (components 0..7) and g + 8
// (8..15) at k 4q..4q + 3 (components 0..3 of each row) and 16 + 4q..19 + 4q (4..7), and B's
// column g at the same k (components 0..3, 4..7). So a lane's A is four words (one per row and
// k run, bytes in k order) and its B two. FRAG8_LAYOUT_OK checks those layouts on the device
// (each type loaded from bytes holding their rows, then their k), so a kernel can make y NaN
// where they differ, never a wrong number.
//
// COOP_EMULATE: the components held in NVIDIA's layout (FRAG_MMA_LAYOUT=1) or another one (0:
// the NaN test); FRAG8_MMA goes through the subgroup's 768 ints of shared memory with the
// workgroup's barriers. Needs coop_core.glsl (int32 results: COOP_FLOAT 0) first.
#ifndef COOP_FRAG8_GLSL
#define COOP_FRAG8_GLSL

#if COOP_FLOAT
#error "coop_frag8.glsl builds int8 operands for int32 results: COOP_FLOAT must be 0"
#endif
#ifndef FRAG_MMA_LAYOUT
#define FRAG_MMA_LAYOUT 0
#endif

// NVIDIA's positions: A's component e of lane l (row, k), B's (k, column)
#define FRAG8_A_ROW(l, e) (((l) >> 2u) + 8u * ((e) >> 3u))
#define FRAG8_K(l, e) (4u * ((l) & 3u) + ((e) & 3u) + 16u * (((e) >> 2u) & 1u))
#define FRAG8_B_COL(l) ((l) >> 2u)

// Byte i (0..3) of word w as a signed value
#define FRAG8_BYTE(w, i) bitfieldExtract(int(w), 8 * (i), 8)

#if !COOP_EMULATE
#define FRAG8_A icoopmatNV<8, gl_ScopeSubgroup, 16, 32>
#define FRAG8_B icoopmatNV<8, gl_ScopeSubgroup, 32, 8>
#define FRAG8_SET(f, e, v) (f)[e] = int8_t(v)
#define FRAG8_MMA(c, a, b) c = coopMatMulAddNV(a, b, c)

shared uint frag8_probe_[128]; // 512 bytes: A (16 rows of 32) or B (32 rows of 8) for the check

// ok = whether A and B hold NVIDIA's layouts in this lane: each loaded from bytes that hold
// the element's row (A) or k (B), then from bytes that hold its k (A) or column (B). Every
// invocation of the workgroup runs it (barriers).
#define FRAG8_PROBE(t, rows, cols, byte_of) { \
    barrier(); \
    for (uint i_ = gl_LocalInvocationIndex; i_ < 128u; i_ += uint(SGS * 32)) { \
        uint w_ = 0u; \
        for (uint c_ = 0u; c_ < 4u; c_++) { uint x_ = 4u * i_ + c_, r_ = x_ / (cols), k_ = x_ % (cols); w_ |= (byte_of) << (8u * c_); } \
        frag8_probe_[i_] = w_; \
    } \
    barrier(); \
    coopMatLoadNV(t, frag8_probe_, 0, (cols) / 4u, false); }
#define FRAG8_LAYOUT_OK(ok) { \
    FRAG8_A pa_; FRAG8_B pb_; \
    ok = pa_.length() == 16 && pb_.length() == 8; \
    FRAG8_PROBE(pa_, 16u, 32u, r_) \
    for (int e_ = 0; e_ < 16; e_++) ok = ok && uint(int(pa_[e_])) == FRAG8_A_ROW(COOP_LANE, uint(e_)); \
    FRAG8_PROBE(pa_, 16u, 32u, k_) \
    for (int e_ = 0; e_ < 16; e_++) ok = ok && uint(int(pa_[e_])) == FRAG8_K(COOP_LANE, uint(e_)); \
    FRAG8_PROBE(pb_, 32u, 8u, r_) \
    for (int e_ = 0; e_ < 8; e_++) ok = ok && uint(int(pb_[e_])) == FRAG8_K(COOP_LANE, uint(e_)); \
    FRAG8_PROBE(pb_, 32u, 8u, k_) \
    for (int e_ = 0; e_ < 8; e_++) ok = ok && uint(int(pb_[e_])) == FRAG8_B_COL(COOP_LANE); }
#else
struct Frag8A {
    int v[16];
};
struct Frag8B {
    int v[8];
};
#define FRAG8_A Frag8A
#define FRAG8_B Frag8B
#define FRAG8_SET(f, e, x) (f).v[e] = (x)

shared int frag8_emu_[SGS * 768];

// Where the emulation keeps component e of lane l: A's element row * 32 + k, B's k * 8 +
// column; NVIDIA's layout, or (FRAG_MMA_LAYOUT=0) rows and columns rotated by one
#if FRAG_MMA_LAYOUT
#define FRAG8_EMU_A(l, e) (FRAG8_A_ROW(l, e) * 32u + FRAG8_K(l, e))
#define FRAG8_EMU_B(l, e) (FRAG8_K(l, e) * 8u + FRAG8_B_COL(l))
#else
#define FRAG8_EMU_A(l, e) (((FRAG8_A_ROW(l, e) + 1u) & 15u) * 32u + FRAG8_K(l, e))
#define FRAG8_EMU_B(l, e) (FRAG8_K(l, e) * 8u + ((FRAG8_B_COL(l) + 1u) & 7u))
#endif
#define FRAG8_LAYOUT_OK(ok) { \
    barrier(); /* as the real one's */ \
    ok = true; \
    for (uint e_ = 0u; e_ < 16u; e_++) \
        ok = ok && FRAG8_EMU_A(COOP_LANE, e_) == FRAG8_A_ROW(COOP_LANE, e_) * 32u + FRAG8_K(COOP_LANE, e_); \
    for (uint e_ = 0u; e_ < 8u; e_++) \
        ok = ok && FRAG8_EMU_B(COOP_LANE, e_) == FRAG8_K(COOP_LANE, e_) * 8u + FRAG8_B_COL(COOP_LANE); }

// c += a b, through the subgroup's shared ints
#define FRAG8_MMA(c, a, b) \
    COOP_EMU_MMA(c, a, b, frag8_emu_, 16u, 8u, 32u, FRAG8_EMU_A(COOP_LANE, e_), FRAG8_EMU_B(COOP_LANE, e_), int)
#endif

// a from four words (row g's k 4q.., row g's k 16 + 4q.., row g + 8's, row g + 8's) and b from
// two (column g's k 4q.., 16 + 4q..), bytes in k order: NVIDIA's layouts
#define FRAG8_FILL_A(a, w) \
    [[unroll]] for (int e_ = 0; e_ < 16; e_++) FRAG8_SET(a, e_, FRAG8_BYTE((w)[e_ >> 2], e_ & 3));
#define FRAG8_FILL_B(b, w0, w1) \
    [[unroll]] for (int e_ = 0; e_ < 4; e_++) { \
        FRAG8_SET(b, e_, FRAG8_BYTE(w0, e_)); \
        FRAG8_SET(b, e_ + 4, FRAG8_BYTE(w1, e_)); \
    }

#endif
