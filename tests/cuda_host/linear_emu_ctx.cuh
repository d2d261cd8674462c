// Part of the host emulation of the CUDA Linear kernels (tests/cuda_host/
// linear_emulate.cu, the only file that includes it, after the kernels, the
// reference headers, emu_guard.cuh, emu_mma.cuh, `failures` and CHECK): the
// emulated block and the runners that execute every block of a kernel.
//
// HostLnCtx runs a whole block's threads at once (each phase of the kernel
// body for every thread before the next, which is what its barriers
// guarantee on the GPU) and checks each access against the Linear contract
// (docs/LINEAR.md): weight loads inside the weight bytes and aligned, x
// loads of whole 16-byte words inside row t < T's first K elements, every
// output written once and nothing else, shared-memory accesses inside the
// stages (x of the tensor-core route, weights of the staged memory-bound
// route). cp.async copies land when issued, or (land_at_wait) only at the
// cp.async.wait_group that covers their commit group.
#ifndef GPUBENCH_LINEAR_EMU_CTX_CUH
#define GPUBENCH_LINEAR_EMU_CTX_CUH

static float emu_bf16_elem(gb_u32 h) { return gb_as_float(h << 16); }
static bool land_at_wait = false;

// One kernel call's buffers, and what the context counts.
struct LnCall {
    const unsigned char* w;
    size_t wbytes;
    const unsigned short* x;
    unsigned short* y;
    gb_u32 N, K, T;
    std::vector<int> writes; // per output
    int bad = 0;             // accesses outside the contract (each also reported)
};

#define EMU_BAD(call, ...) do { if ((call)->bad++ < 5) { fprintf(stderr, "FAIL access: "); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

template <int NW>
struct HostLnCtx {
    enum { NT = 32 * NW };
    LnCall* c;
    unsigned char *slo = nullptr, *shi = nullptr; // the stages (128-byte aligned)
    struct Copy { unsigned char* dst; unsigned char data[16]; int n = 16; };
    std::vector<Copy> open;
    std::vector<std::vector<Copy>> groups;
    // called as each copy lands (the wgmma emulation marks the bytes written)
    void (*on_land)(void* user, unsigned char* dst, int n) = nullptr;
    void* land_user = nullptr;
    void land(const Copy& cp)
    {
        memcpy(cp.dst, cp.data, cp.n);
        if (on_land) on_land(land_user, cp.dst, cp.n);
    }

    gb_u32 tid(int q) const { return (gb_u32)q; }
    void w_ok(const unsigned char* p, size_t n) const
    {
        if (p < c->w || p + n > c->w + c->wbytes || ((uintptr_t)(p - c->w) % n))
            EMU_BAD(c, "weight load of %zu bytes at offset %td of %zu", n, p - c->w, c->wbytes);
    }
    void ld_w64(const unsigned char* p, gb_u32* o) const { w_ok(p, 8); memcpy(o, p, 8); }
    void ld_w128(const unsigned char* p, gb_u32* o) const { w_ok(p, 16); memcpy(o, p, 16); }
    gb_u32 ld_c8(const unsigned char* p) const { w_ok(p, 1); return *p; }
    gb_u32 ld_c16(const unsigned char* p) const { w_ok(p, 2); gb_u32 v = 0; memcpy(&v, p, 2); return v; }
    gb_u32 ld_c32(const unsigned char* p) const { w_ok(p, 4); gb_u32 v; memcpy(&v, p, 4); return v; }
    bool x_ok(const unsigned short* p) const
    {
        const ptrdiff_t e = p - c->x;
        if (e < 0 || (size_t)e >= (size_t)c->T * c->K || (e % c->K) % 8 || e % c->K + 8 > c->K) {
            EMU_BAD(c, "x load at element %td (T=%u K=%u)", e, c->T, c->K);
            return false;
        }
        return true;
    }
    void ld_x(const unsigned short* p, gb_u32* o) const { if (x_ok(p)) memcpy(o, p, 16); }
    void st_y(unsigned short* p, gb_u32 v) const
    {
        const ptrdiff_t e = p - c->y;
        if (e < 0 || (size_t)e >= (size_t)c->T * c->N) { EMU_BAD(c, "y store at element %td", e); return; }
        *p = (unsigned short)v;
        c->writes[(size_t)e]++;
    }
    // ---- the tensor-core route's x stages
    void cp_x(unsigned char* dst, const unsigned short* src, bool pred)
    {
        if (dst < slo || dst + 16 > shi || ((uintptr_t)(dst - slo) & 15)) { EMU_BAD(c, "cp.async to shared offset %td", dst - slo); return; }
        Copy cp{dst, {0}};
        if (pred && x_ok(src)) memcpy(cp.data, src, 16);
        if (land_at_wait) open.push_back(cp);
        else land(cp);
    }
    void commit() { groups.push_back(open); open.clear(); }
    template <int N>
    void wait()
    {
        while (groups.size() > (size_t)N) {
            for (const Copy& cp : groups.front()) land(cp);
            groups.erase(groups.begin());
        }
    }
    // ---- the staged memory-bound route's weight stages
    bool s_ok(const unsigned char* p, int n, const char* what) const
    {
        if (p < slo || p + n > shi || ((uintptr_t)(p - slo) % n)) {
            EMU_BAD(c, "%s of %d bytes at shared offset %td", what, n, p - slo);
            return false;
        }
        return true;
    }
    template <int B>
    void cp_w(unsigned char* dst, const unsigned char* src, bool pred)
    {
        static_assert(B == 4 || B == 8 || B == 16, "cp.async copies 4, 8 or 16 bytes");
        if (!s_ok(dst, B, "weight cp.async")) return;
        Copy cp{dst, {0}, B};
        if (pred) { w_ok(src, B); memcpy(cp.data, src, B); }
        if (land_at_wait) open.push_back(cp);
        else land(cp);
    }
    // the code plane read through the stage's swizzle: stage byte offset XOR key
    const unsigned char* swz(const unsigned char* p, gb_u32 key) const { return slo + ((size_t)(p - slo) ^ key); }
    void lds_w64(const unsigned char* p, gb_u32 key, gb_u32* o) const { p = swz(p, key); if (s_ok(p, 8, "weight shared load")) memcpy(o, p, 8); }
    void lds_w128(const unsigned char* p, gb_u32 key, gb_u32* o) const { p = swz(p, key); if (s_ok(p, 16, "weight shared load")) memcpy(o, p, 16); }
    gb_u32 lds_c8(const unsigned char* p) const { return s_ok(p, 1, "shared load") ? *p : 0; }
    gb_u32 lds_c16(const unsigned char* p) const { gb_u32 v = 0; if (s_ok(p, 2, "shared load")) memcpy(&v, p, 2); return v; }
    gb_u32 lds_c32(const unsigned char* p) const { gb_u32 v = 0; if (s_ok(p, 4, "shared load")) memcpy(&v, p, 4); return v; }
    void barrier() {}
    void lds128(const unsigned char* p, gb_u32* o) const
    {
        if (p < slo || p + 16 > shi || ((uintptr_t)(p - slo) & 15)) { EMU_BAD(c, "shared load at offset %td", p - slo); return; }
        memcpy(o, p, 16);
    }
    void mma(float (*C)[4], const gb_u32 (*A)[4], const gb_u32 (*B)[2]) const
    {
        for (int w = 0; w < NW; w++) mma_model_t<emu_bf16_elem>(C + 32 * w, A + 32 * w, B + 32 * w);
    }
};

// Every block of the memory-bound route: grid ceil(N / (16 RT)). Staged
// (STG >= 2): the stages and then the reduction in one 128-byte aligned
// buffer, as the kernel's shared memory.
template <class F, int NW, int RT, int NJ, int U, int KC = 1, int STG = 0>
static void run_gemv(LnCall& c, float gscale)
{
    const gb_u32 blocks = (c.N + 16 * RT - 1) / (16 * RT);
    const size_t rbytes = sizeof(float) * NW * 16 * RT * 8 * NJ;
    size_t sbytes = 0;
    if constexpr (STG != 0) sbytes = (size_t)STG * LnStage<F, NW, RT, U>::BYTES;
    std::vector<unsigned char> mem(std::max(rbytes, sbytes) + 128);
    unsigned char* p = mem.data();
    while ((uintptr_t)p & 127) p++;
    for (gb_u32 blk = 0; blk < blocks; blk++) {
        memset(p, 0xFF, std::max(rbytes, sbytes)); // poison: NaN as f32 (red), as bf16 and as scales
        HostLnCtx<NW> ctx{&c};
        if constexpr (STG != 0) {
            ctx.slo = p, ctx.shi = p + sbytes;
            ln_gemv_block<F, NW, RT, NJ, U, KC, STG>(ctx, c.w, c.x, c.y, c.N, c.K, c.T, gscale, blk, (float*)p, p);
            CHECK(ctx.open.empty() && ctx.groups.empty(), "staged gemv block %u: cp.async copies not waited for", blk);
        } else {
            ln_gemv_block<F, NW, RT, NJ, U, KC>(ctx, c.w, c.x, c.y, c.N, c.K, c.T, gscale, blk, (float*)p);
        }
    }
}

// Every block of the tensor-core route: grid (ceil(N / 32 NW), ceil(T / BN)).
template <class F, int NW, int BN, int S>
static void run_mma(LnCall& c, float gscale)
{
    typedef LnMmaSmem<BN, S> SM;
    std::vector<unsigned char> mem(sizeof(SM) + 16);
    unsigned char* p = mem.data();
    while ((uintptr_t)p & 15) p++;
    SM* sm = reinterpret_cast<SM*>(p);
    for (gb_u32 by = 0; by < (c.T + BN - 1) / BN; by++)
        for (gb_u32 bx = 0; bx < (c.N + 32 * NW - 1) / (32 * NW); bx++) {
            memset(p, 0xFF, sizeof(SM)); // poison: bf16 0xFFFF is a NaN
            HostLnCtx<NW> ctx{&c};
            ctx.slo = p, ctx.shi = p + sizeof(SM);
            ln_mma_block<F, NW, BN, S>(ctx, c.w, c.x, c.y, c.N, c.K, c.T, gscale, bx, by, *sm);
        }
}

typedef void (*runner)(LnCall&, float);

// A route as the emulation runs it: the format (a planar qtype), a label, the
// runner (one template instance of the kernel body) and the largest T the
// route's geometry covers (the memory-bound route: 8 LN_NJ); a staged route
// also names the unstaged runner of its geometry, whose y it must equal.
struct Route {
    const char* qtype;
    const char* label;
    runner fn;
    gb_u32 max_t;
    runner unstaged = nullptr;
};

#endif
