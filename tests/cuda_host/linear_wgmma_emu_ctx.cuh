// Part of the host emulation of the wgmma Linear route (tests/cuda_host/
// linear_wgmma_emulate.cu, the only file that includes it, after
// linear_emu_ctx.cuh and emu_coro.cuh): the emulated block's shared memory,
// wgmma and mbarriers, the per-thread context the kernel bodies of
// kernels/cuda/linear_wgmma.cuh run with, and the runner of a whole grid.
//
// What the model holds the kernel to, each a reported failure:
//   - wgmma (m64nNk16, bf16 or fp16, fp32 accumulators, both operands from
//     shared memory, or A from the warpgroup's registers (LN_XTILE = 3): each
//     thread's fragment put in place as the PTX ISA lays it out, the product
//     computed only once all 128 threads have issued it): the descriptors decoded field by field from the PTX ISA's
//     "Matrix Descriptor Format" (start address, stride byte offset 1024, base
//     offset 0, 128-byte swizzle), each element's address swizzled as the
//     hardware does (address bits 4..6 XOR bits 7..9), never by the kernel's
//     own lw_swz; products complete only at the wgmma.wait_group that covers
//     their commit group, and until then the accumulators hold a signalling
//     NaN that must come back unchanged (not written, not rescaled); every thread of a warpgroup issues the same
//     products in the same order; a wgmma.fence before the first product
//     after a wait; the shared bytes a product reads are never written while
//     it is in flight (from the first thread's issue to the last thread's
//     completion) and were made visible to the async proxy
//     (fence.proxy.async by the thread that wrote them, after the write);
//   - shared memory: every access inside the bytes the launch declares (the
//     dynamic bytes less the 1024 of alignment), aligned; mbarriers
//     initialized before use and never overwritten as data; an arrival
//     completes a phase at the initialized count; a parity wait returns once
//     the phase of that parity has completed;
//   - at a thread's exit no product and no cp.async copy left in flight; a
//     block whose threads all wait is a deadlock;
//   - slices of K: every fp32 sum written exactly once inside part[KS][T][N].
//   - slices in a cluster (LN_CLUSTER = 1, the KS blocks of a tile run as one
//     coroutine set, each with its own shared memory and __syncthreads): a
//     cluster barrier only in a launch with clusters; reads of another
//     block's shared memory by a rank in the cluster, inside its declared
//     bytes, and never after that block's threads have all exited.
// Fresh shared memory is poison (0xFF bytes: NaN as bf16 and as fp32).
#ifndef GPUBENCH_LINEAR_WGMMA_EMU_CTX_CUH
#define GPUBENCH_LINEAR_WGMMA_EMU_CTX_CUH

struct LwBlock;

// What one warpgroup has issued: its k-th product, the threads that issued
// and completed it.
struct LwIssued {
    gb_u64 da, db;
    int n, issued = 0, completed = 0;
    bool h;                      // fp16 operands (LN_HALF), else bf16
    bool ra = false;             // A from registers: am, rows 0..63 by k 0..15, as the threads put it
    std::vector<unsigned short> am;
};

struct LwBlock {
    CoroBlock* coro = nullptr; // shared by the blocks of a cluster
    LnCall* call;
    std::vector<LwBlock*>* cluster = nullptr; // LN_CLUSTER: the cluster's blocks by rank
    int threads = 0, exited = 0;             // the block's threads, and how many have left
    float* part = nullptr; // slices of K: [KS][T][N]
    size_t part_n = 0;
    std::vector<int>* part_writes = nullptr;
    const int* ex = nullptr; // LN_HALF: the prepass's exponents, ex_n of them
    size_t ex_n = 0;
    std::vector<unsigned char> mem;
    unsigned char* smem = nullptr;
    size_t bytes = 0;                  // what the kernel may address
    std::vector<unsigned short> inflight; // products in flight reading each byte
    std::vector<short> unfenced;       // 1 + the thread that wrote it since its last proxy fence, or 0
    std::vector<char> is_bar;          // bytes of an initialized mbarrier
    struct Mbar { gb_u32 count, pending, phase, tx; };
    std::vector<std::pair<gb_u32, Mbar>> bars;
    // LN_XTILE: bulk copies issued, not yet landed (their bytes flagged in
    // bulk_open), and the global bytes they may read (the tiled copy of x)
    struct Bulk { gb_u32 dst, bytes, bar; const unsigned char* src; };
    std::vector<Bulk> bulks;
    std::vector<char> bulk_open;
    bool inits_unfenced = false; // mbarriers initialized since the last fence.mbarrier_init
    const unsigned char *xt_lo = nullptr, *xt_hi = nullptr;
    std::vector<std::vector<LwIssued>> wg; // per warpgroup

    Mbar* bar(gb_u32 a)
    {
        for (auto& b : bars)
            if (b.first == a) return &b.second;
        return nullptr;
    }
    // A phase completes once every arrival expected has come and every byte
    // expected has landed.
    static void settle(Mbar* m)
    {
        if (m->pending == 0 && m->tx == 0) m->pending = m->count, m->phase++;
    }
    // Bulk copy i lands: its bytes from global memory, written by the async
    // proxy (no fence needed before a wgmma reads them), counted on its mbarrier.
    void land(size_t i)
    {
        const Bulk k = bulks[i];
        bulks.erase(bulks.begin() + (long)i);
        memcpy(smem + k.dst, k.src, k.bytes);
        for (gb_u32 j = k.dst; j < k.dst + k.bytes; j++) bulk_open[j] = 0, unfenced[j] = 0;
        Mbar* m = bar(k.bar);
        if (!m) { EMU_BAD(call, "a bulk copy completes on shared %u, not an initialized mbarrier", k.bar); return; }
        if (m->tx < k.bytes) EMU_BAD(call, "a bulk copy of %u bytes lands on an mbarrier expecting %u", k.bytes, m->tx);
        m->tx -= m->tx < k.bytes ? m->tx : k.bytes;
        settle(m);
    }
    bool range_ok(gb_u32 a, gb_u32 n, const char* what)
    {
        if ((size_t)a + n > bytes || a % n) {
            EMU_BAD(call, "%s of %u bytes at shared offset %u (%zu bytes declared)", what, n, a, bytes);
            return false;
        }
        return true;
    }
    // A write by thread t (its unfenced bytes are listed in `mine`).
    void wrote(int t, gb_u32 a, gb_u32 n, std::vector<std::pair<gb_u32, gb_u32>>& mine)
    {
        for (gb_u32 i = a; i < a + n; i++) {
            if (inflight[i])
                EMU_BAD(call, "thread %d writes shared byte %u while a wgmma reading it is in flight", t, i);
            if (bulk_open[i]) EMU_BAD(call, "thread %d writes shared byte %u while a bulk copy into it is in flight", t, i);
            if (is_bar[i]) EMU_BAD(call, "thread %d writes shared byte %u of an mbarrier", t, i);
            unfenced[i] = (short)(t + 1);
        }
        mine.emplace_back(a, n);
    }
    // A tile operand's element addresses: K-major, 128-byte swizzle.
    struct Desc { gb_u32 start; bool ok; };
    Desc decode(gb_u64 d, const char* which)
    {
        const gb_u32 start = (gb_u32)(d & 0x3FFF) << 4, sbo = (gb_u32)((d >> 32) & 0x3FFF) << 4,
                     base_off = (gb_u32)(d >> 49) & 7, swz = (gb_u32)(d >> 62);
        const bool ok = swz == 1 && base_off == 0 && sbo == 1024 && ((start >> 7) & 7) == 0;
        if (!ok)
            EMU_BAD(call, "%s descriptor %016llx: start %u (bits 7..9 must be 0), stride %u (1024), base offset %u (0), swizzle %u (1: 128 B)",
                    which, (unsigned long long)d, start, sbo, base_off, swz);
        return Desc{start, ok};
    }
    static gb_u32 elem(gb_u32 start, gb_u32 row, gb_u32 k)
    {
        const gb_u32 a = start + (row >> 3) * 1024 + (row & 7) * 128 + 2 * k;
        return a ^ (((a >> 7) & 7) << 4);
    }
    // Every byte of rows 0 .. rows - 1, k 0..15 of an operand.
    template <class Fn>
    void each_byte(gb_u32 start, int rows, Fn&& fn)
    {
        for (int r = 0; r < rows; r++)
            for (gb_u32 k = 0; k < 16; k++) {
                const gb_u32 a = elem(start, r, k);
                fn(a), fn(a + 1);
            }
    }
    bool operand_ok(gb_u32 start, int rows, const char* which)
    {
        const gb_u32 last = elem(start, rows - 1, 15) | 0x7F;
        if ((size_t)last >= bytes) {
            EMU_BAD(call, "%s operand at %u (%d rows) reaches past the %zu shared bytes", which, start, rows, bytes);
            return false;
        }
        return true;
    }
};

// One thread's context (kernels/cuda/linear_wgmma.cuh, LwDevCtx's host twin).
struct LwHostCtx {
    LwBlock* b;
    gb_u32 t, bx, by, bz;
    mutable HostLnCtx<1> g; // global loads and stores, and the cp.async model
    std::vector<std::pair<gb_u32, gb_u32>> mine;
    struct Prod { float* d; int n; gb_u32 a, bb; int wgk; bool h; bool ra = false; const gb_u32* ar = nullptr; gb_u32 av[4] = {}; };
    std::vector<Prod> open;
    std::vector<std::vector<Prod>> groups;
    std::vector<std::pair<float*, std::vector<float>>> held; // accumulators in flight: their values before
    int issued = 0;
    bool need_fence = true;
    // What an accumulator holds while its product is in flight: a signalling
    // NaN, which any arithmetic on it quiets (so a rescale before the wait
    // changes its bits and is reported).
    static constexpr gb_u32 HELD = 0x7FA5A5A5u;

    static void landed(void* user, unsigned char* dst, int n)
    {
        LwHostCtx* c = (LwHostCtx*)user;
        c->b->wrote((int)c->t, (gb_u32)(dst - c->b->smem), (gb_u32)n, c->mine);
    }
    gb_u32 ci; // the thread's index among the coroutines (the cluster's threads)
    LwHostCtx(LwBlock* b_, gb_u32 t_, gb_u32 x, gb_u32 y, gb_u32 z, gb_u32 ci_)
        : b(b_), t(t_), bx(x), by(y), bz(z), g{b_->call}, ci(ci_)
    {
        g.slo = b->smem, g.shi = b->smem + b->bytes;
        g.on_land = landed, g.land_user = this;
    }
    gb_u32 thread() const { return t; }
    gb_u32 block(int d) const { return d == 0 ? bx : d == 1 ? by : bz; }
    template <unsigned BYTES>
    gb_u32 shared_base() const
    {
        if (BYTES < b->bytes + 1024) EMU_BAD(b->call, "the kernel asks for %u dynamic shared bytes, addresses %zu + 1024", BYTES, b->bytes);
        return 0;
    }
    // global memory
    void ld_w64(const unsigned char* p, gb_u32* o) const { b->coro->point(); g.ld_w64(p, o); }
    void ld_w128(const unsigned char* p, gb_u32* o) const { b->coro->point(); g.ld_w128(p, o); }
    gb_u32 ld_c8(const unsigned char* p) const { return g.ld_c8(p); }
    gb_u32 ld_c16(const unsigned char* p) const { return g.ld_c16(p); }
    gb_u32 ld_c32(const unsigned char* p) const { return g.ld_c32(p); }
    void st_y(unsigned short* p, gb_u32 v) const { g.st_y(p, v); }
    // 4 bf16 in one 8-byte store: the address must be 8-byte aligned (y's base is)
    void st_y4(unsigned short* p, gb_u32 lo, gb_u32 hi) const
    {
        const ptrdiff_t e = p - g.c->y;
        if (e % 4) { EMU_BAD(b->call, "thread %u: 8-byte y store at element %td, not 8-byte aligned", t, e); return; }
        g.st_y(p, lo & 0xFFFFu), g.st_y(p + 1, lo >> 16), g.st_y(p + 2, hi & 0xFFFFu), g.st_y(p + 3, hi >> 16);
    }
    int ld_ex(const int* p) const
    {
        const ptrdiff_t e = p - b->ex;
        if (!b->ex || e < 0 || (size_t)e >= b->ex_n) { EMU_BAD(b->call, "exponent load at element %td of %zu", e, b->ex_n); return 0; }
        return *p;
    }
    void st_part(float* part, gb_u64 i, float v) const
    {
        float* p = part + i;
        const ptrdiff_t e = p - b->part;
        if (!b->part || e < 0 || (size_t)e >= b->part_n) { EMU_BAD(b->call, "slice sum store at element %td of %zu", e, b->part_n); return; }
        *p = v;
        (*b->part_writes)[(size_t)e]++;
    }
    // shared memory
    void sts128(gb_u32 a, const gb_u32* v)
    {
        b->coro->point();
        if (!b->range_ok(a, 16, "st.shared.v4")) return;
        memcpy(b->smem + a, v, 16);
        b->wrote((int)t, a, 16, mine);
    }
    void sts_f32(gb_u32 a, float v)
    {
        if (!b->range_ok(a, 4, "st.shared.f32")) return;
        memcpy(b->smem + a, &v, 4);
        b->wrote((int)t, a, 4, mine);
    }
    float lds_f32(gb_u32 a) const
    {
        float v = 0;
        if (b->range_ok(a, 4, "ld.shared.f32")) memcpy(&v, b->smem + a, 4);
        return v;
    }
    void lds_v4(gb_u32 a, float* v) const
    {
        b->coro->point();
        for (int i = 0; i < 4; i++) v[i] = 0;
        if (b->range_ok(a, 16, "ld.shared.v4.f32")) memcpy(v, b->smem + a, 16);
    }
    void cp16(gb_u32 a, const void* src, bool pred)
    {
        b->coro->point();
        g.cp_x(b->smem + a, (const unsigned short*)src, pred);
    }
    void commit() { g.commit(); }
    template <int N>
    void wait() { g.template wait<N>(); }
    void barrier() { b->coro->barrier(); }
    void named_barrier(gb_u32 id, gb_u32 count)
    {
        if (id < 1 || id > 15 || count % 32) EMU_BAD(b->call, "thread %u: bar.sync %u, %u (ids 1 .. 15, whole warps)", t, id, count);
        else b->coro->named_barrier((int)id, (int)count);
    }
    void proxy_fence()
    {
        for (auto& r : mine)
            for (gb_u32 i = r.first; i < r.first + r.second; i++)
                if (b->unfenced[i] == (short)(t + 1)) b->unfenced[i] = 0;
        mine.clear();
    }
    // wgmma
    void wg_fence() { need_fence = false; }
    template <int N, bool H = false>
    void wgmma(float* d, gb_u64 da, gb_u64 db)
    {
        b->coro->point();
        const int w = (int)t / 128;
        if (need_fence) EMU_BAD(b->call, "thread %u: a wgmma without a wgmma.fence after the last wait", t);
        LwBlock::Desc A = b->decode(da, "A"), B = b->decode(db, "B");
        auto& log = b->wg[w];
        const int k = issued++;
        if (k == (int)log.size()) {
            log.push_back(LwIssued{da, db, N, 0, 0, H});
            if (A.ok && B.ok && b->operand_ok(A.start, 64, "A") && b->operand_ok(B.start, N, "B")) {
                bool unf = false, open = false;
                auto enter = [&](gb_u32 a) { b->inflight[a]++; unf = unf || b->unfenced[a]; open = open || b->bulk_open[a]; };
                b->each_byte(A.start, 64, enter);
                b->each_byte(B.start, N, enter);
                if (unf) EMU_BAD(b->call, "warpgroup %d product %d reads shared bytes written without fence.proxy.async after the write", w, k);
                if (open) EMU_BAD(b->call, "warpgroup %d product %d reads shared bytes of a bulk copy not waited for", w, k);
            }
        } else if (log[k].da != da || log[k].db != db || log[k].n != N || log[k].h != H) {
            EMU_BAD(b->call, "thread %u: product %d of warpgroup %d differs from its other threads' (descriptors, N or type)", t, k, w);
        }
        log[k].issued++;
        hold_acc(d, N / 2);
        open.push_back(Prod{d, N, A.ok ? A.start : ~0u, B.ok ? B.start : ~0u, k, H});
    }
    // The accumulators d[0 .. n - 1] owned by a product in flight: their values
    // kept aside (once), HELD in their place until the wait that completes it.
    void hold_acc(float* d, int n)
    {
        for (auto& h : held)
            if (h.first == d) return;
        held.emplace_back(d, std::vector<float>(d, d + n));
        for (int i = 0; i < n; i++) memcpy(d + i, &HELD, 4);
    }
    // A from registers (LN_XTILE = 3, fp16): a[0] row g, k 2 t and 2 t + 1,
    // a[1] row g + 8, a[2] row g, k 2 t + 8 and 2 t + 9, a[3] row g + 8, of
    // the warp's 16 rows (lane g * 4 + t); B as wgmma's
    template <int N>
    void wgmma_ra(float* d, const gb_u32* a, gb_u64 db)
    {
        b->coro->point();
        const int w = (int)t / 128;
        if (need_fence) EMU_BAD(b->call, "thread %u: a wgmma without a wgmma.fence after the last wait", t);
        LwBlock::Desc B = b->decode(db, "B");
        auto& log = b->wg[w];
        const int k = issued++;
        if (k == (int)log.size()) {
            LwIssued e{0, db, N, 0, 0, true};
            e.ra = true;
            e.am.assign(64 * 16, 0);
            log.push_back(e);
            if (B.ok && b->operand_ok(B.start, N, "B")) {
                bool unf = false, open_ = false;
                b->each_byte(B.start, N, [&](gb_u32 x) { b->inflight[x]++; unf = unf || b->unfenced[x]; open_ = open_ || b->bulk_open[x]; });
                if (unf) EMU_BAD(b->call, "warpgroup %d product %d reads shared bytes written without fence.proxy.async after the write", w, k);
                if (open_) EMU_BAD(b->call, "warpgroup %d product %d reads shared bytes of a bulk copy not waited for", w, k);
            }
        } else if (!log[k].ra || log[k].db != db || log[k].n != N) {
            EMU_BAD(b->call, "thread %u: product %d of warpgroup %d differs from its other threads' (A from registers, descriptor or N)", t, k, w);
        }
        const int w4 = ((int)t >> 5) & 3, lane = (int)t & 31, gq = lane >> 2, tq = lane & 3;
        for (int r = 0; r < 4; r++) {
            const int row = 16 * w4 + gq + 8 * (r & 1), kk = 2 * tq + 8 * (r >> 1);
            if (log[k].am.size() == 64 * 16) log[k].am[16 * row + kk] = (unsigned short)(a[r] & 0xFFFFu), log[k].am[16 * row + kk + 1] = (unsigned short)(a[r] >> 16);
        }
        log[k].issued++;
        hold_acc(d, N / 2);
        Prod p{d, N, 0, B.ok ? B.start : ~0u, k, true};
        p.ra = true, p.ar = a; // the fragment's registers, read again at completion: the hardware reads them until then
        memcpy(p.av, a, 16);
        open.push_back(p);
    }
    void wg_commit() { groups.push_back(open); open.clear(); }
    // a register-A fragment written (LwDevCtx::set_frag)
    void set_frag(gb_u32* f, gb_u32 a0, gb_u32 a1, gb_u32 a2, gb_u32 a3)
    {
        b->coro->point();
        f[0] = a0, f[1] = a1, f[2] = a2, f[3] = a3;
    }
    template <int N>
    void wg_wait()
    {
        while (groups.size() > (size_t)N) {
            for (const Prod& p : groups.front()) complete(p);
            groups.erase(groups.begin());
        }
        // the accumulators of products completed: back in the registers
        for (size_t i = 0; i < held.size();) {
            bool pending = false;
            for (auto& gr : groups)
                for (auto& p : gr) pending = pending || p.d == held[i].first;
            for (auto& p : open) pending = pending || p.d == held[i].first;
            if (pending) { i++; continue; }
            float* d = held[i].first;
            for (size_t j = 0; j < held[i].second.size(); j++) {
                if (memcmp(d + j, &HELD, 4))
                    EMU_BAD(b->call, "thread %u changed an accumulator while its wgmma was in flight", t);
                d[j] = held[i].second[j];
            }
            held.erase(held.begin() + i);
        }
        need_fence = true;
    }
    // Thread t's fragment of D += A . B^T: d[4 j + c] is row 16 w + g + 8 (c >> 1), column 8 j + 2 t + (c & 1).
    void complete(const Prod& p)
    {
        const int w4 = ((int)t >> 5) & 3, lane = (int)t & 31, gq = lane >> 2, tq = lane & 3, wgi = (int)t / 128;
        std::vector<float>* acc = nullptr;
        for (auto& h : held)
            if (h.first == p.d) acc = &h.second;
        // both operands' elements exactly, fp16 or bf16
        auto el = [&](gb_u32 bits) -> double { return p.h ? (double)gb_half_to_float(bits) : (double)emu_bf16_elem(bits); };
        // A from registers: the product starts once every thread of the warpgroup
        // has put its fragment (the log may grow meanwhile: e taken after)
        if (p.ra) {
            LwBlock* blk = b;
            const int k = p.wgk;
            b->coro->wait_until("a register-A product's other threads", [blk, wgi, k] { return blk->wg[wgi][k].issued == 128; });
        }
        LwIssued& e = b->wg[wgi][p.wgk];
        if (p.ra && memcmp(p.ar, p.av, 16))
            EMU_BAD(b->call, "thread %u changed an A fragment register of warpgroup %d's product %d while it was in flight", t, wgi, p.wgk);
        if (p.a != ~0u && p.bb != ~0u && acc) {
            double a[2][16];
            for (int h = 0; h < 2; h++)
                for (int k = 0; k < 16; k++)
                    a[h][k] = el(p.ra ? e.am[16 * (16 * w4 + gq + 8 * h) + k] : lds16(LwBlock::elem(p.a, 16 * w4 + gq + 8 * h, k)));
            for (int j = 0; j < p.n / 8; j++)
                for (int c = 0; c < 4; c++) {
                    const gb_u32 col = 8 * j + 2 * tq + (c & 1);
                    float& s = (*acc)[4 * j + c];
                    if (mma_round_nearest) {
                        double e = s;
                        for (int k = 0; k < 16; k++) e += a[c >> 1][k] * el(lds16(LwBlock::elem(p.bb, col, k)));
                        s = (float)e;
                    } else {
                        for (int k = 0; k < 16; k++) s = rz_add(s, a[c >> 1][k] * el(lds16(LwBlock::elem(p.bb, col, k))));
                    }
                }
        }
        if (++e.completed == 128 && p.a != ~0u && p.bb != ~0u) {
            auto leave = [&](gb_u32 x) { b->inflight[x]--; };
            if (!p.ra) b->each_byte(p.a, 64, leave);
            b->each_byte(p.bb, p.n, leave);
        }
    }
    gb_u32 lds16(gb_u32 a) const { gb_u32 v = 0; memcpy(&v, b->smem + a, 2); return v; }
    template <int N>
    void hold(float*) const {}
    // mbarriers
    void bar_init(gb_u32 a, gb_u32 count)
    {
        if (!b->range_ok(a, 8, "mbarrier.init")) return;
        for (int i = 0; i < 8; i++) b->is_bar[a + i] = 1;
        if (LwBlock::Mbar* m = b->bar(a)) *m = {count, count, 0, 0};
        else b->bars.push_back({a, {count, count, 0, 0}});
        b->inits_unfenced = true;
    }
    void bar_init_fence() { b->inits_unfenced = false; }
    void bar_arrive(gb_u32 a)
    {
        b->coro->point();
        LwBlock::Mbar* m = b->bar(a);
        if (!m) { EMU_BAD(b->call, "thread %u arrives at shared %u, not an initialized mbarrier", t, a); return; }
        if (m->pending == 0) { EMU_BAD(b->call, "thread %u arrives at shared %u past its count", t, a); return; }
        m->pending--;
        LwBlock::settle(m);
    }
    // mbarrier.arrive.expect_tx: `bytes` more to land before the phase completes, then an arrival
    void bar_expect(gb_u32 a, gb_u32 bytes)
    {
        LwBlock::Mbar* m = b->bar(a);
        if (!m) { EMU_BAD(b->call, "thread %u expects bytes at shared %u, not an initialized mbarrier", t, a); return; }
        m->tx += bytes;
        bar_arrive(a);
    }
    // cp.async.bulk into shared memory, completing on mbarrier `bar`: lands at
    // once, or (land_at_wait) when a thread first waits on that mbarrier
    void bulk(gb_u32 a, const void* src, gb_u32 bytes, gb_u32 bar)
    {
        b->coro->point();
        const unsigned char* s = (const unsigned char*)src;
        if (b->inits_unfenced) EMU_BAD(b->call, "thread %u: a bulk copy before fence.mbarrier_init after the mbarriers' init", t);
        if (bytes % 16 || a % 16 || (uintptr_t)s % 16 || !b->range_ok(a, 16, "cp.async.bulk") || (size_t)a + bytes > b->bytes) {
            EMU_BAD(b->call, "thread %u: a bulk copy of %u bytes to shared %u from %p (16-byte aligned, inside the %zu bytes)", t, bytes, a,
                    src, b->bytes);
            return;
        }
        if (s < b->xt_lo || s + bytes > b->xt_hi) {
            EMU_BAD(b->call, "thread %u: a bulk copy reads %u bytes at %td of the %td bytes of the tiled x", t, bytes, s - b->xt_lo,
                    b->xt_hi - b->xt_lo);
            return;
        }
        for (gb_u32 i = a; i < a + bytes; i++) {
            if (b->inflight[i]) { EMU_BAD(b->call, "thread %u: a bulk copy into shared byte %u while a wgmma reading it is in flight", t, i); break; }
            if (b->is_bar[i]) { EMU_BAD(b->call, "thread %u: a bulk copy over an mbarrier at %u", t, i); break; }
            if (b->bulk_open[i]) { EMU_BAD(b->call, "thread %u: a bulk copy into shared byte %u while another is in flight", t, i); break; }
            b->bulk_open[i] = 1;
        }
        b->bulks.push_back({a, bytes, bar, s});
        if (!land_at_wait) b->land(b->bulks.size() - 1);
    }
    void bar_wait(gb_u32 a, gb_u32 parity)
    {
        LwBlock::Mbar* m = b->bar(a);
        if (!m) { EMU_BAD(b->call, "thread %u waits at shared %u, not an initialized mbarrier", t, a); return; }
        for (size_t i = 0; i < b->bulks.size();)
            if (b->bulks[i].bar == a) b->land(i);
            else i++;
        b->coro->wait_until("an mbarrier phase", [m, parity] { return (m->phase & 1) != (parity & 1); });
    }
    gb_u32 warp_uniform(gb_u32 v) { return b->coro->warp_lane0((int)ci, v); }
    // thread block clusters (LN_CLUSTER): the barrier, and 16 bytes of a block's shared memory by rank
    void cluster_sync()
    {
        if (!b->cluster) EMU_BAD(b->call, "thread %u: a cluster barrier in a launch without clusters", t);
        else b->coro->cluster_barrier();
    }
    void ld_cluster_v4(gb_u32 a, gb_u32 rank, float* v)
    {
        b->coro->point();
        for (int i = 0; i < 4; i++) v[i] = 0;
        if (!b->cluster || rank >= b->cluster->size()) {
            EMU_BAD(b->call, "thread %u reads shared memory of cluster rank %u (%zu blocks)", t, rank, b->cluster ? b->cluster->size() : 0);
            return;
        }
        LwBlock* p = (*b->cluster)[rank];
        if (p->exited == p->threads) EMU_BAD(b->call, "thread %u reads shared memory of cluster rank %u after its block exited", t, rank);
        if (p->range_ok(a, 16, "ld.shared::cluster.v4")) memcpy(v, p->smem + a, 16);
    }
    // at the thread's exit
    void finish()
    {
        size_t copies = g.open.size();
        for (auto& gr : g.groups) copies += gr.size();
        size_t prods = open.size();
        for (auto& gr : groups) prods += gr.size();
        if (copies || prods) EMU_BAD(b->call, "thread %u exits with %zu cp.async copies and %zu wgmma products in flight", t, copies, prods);
        b->exited++;
    }
};

static double wgmma_preempt = 0; // the emulation's preemption probability at each context operation
static double wgmma_lag = 0;     // the last warpgroup's instead (0: as the others'), so that it falls behind
static gb_u64 wgmma_seed = 1;

// The prepass's kernel code (ln_half_prep_block, linear_half_prep.cuh) run
// block by block, its 256 threads as coroutines: what the kernel's launch
// does (grid T + ceil(N / 8), T rounded up to TILE when tiled).
struct PrepHostCtx {
    CoroBlock* coro;
    gb_u32 t_, b_;
    gb_u32 thread() const { return t_; }
    gb_u32 block() const { return b_; }
    void barrier() { coro->barrier(); }
    gb_u32 warp_max(gb_u32 v) { return coro->warp_max((int)t_, v); }
    uint4 ld16(const unsigned short* p, gb_u32 i) { uint4 v; memcpy(&v, p + 8 * (size_t)i, 16); return v; }
    void st16(unsigned short* p, uint4 v) { memcpy(p, &v, 16); }
    void st4(unsigned short* p, gb_u32 v) { memcpy(p, &v, 4); }
};
template <class F, int TILE, int HOLD, int PERM = 0>
static bool emu_prep(const LnCall& c, unsigned short* xh, int* ex)
{
    const gb_u32 bn = TILE ? TILE : 64, rows = TILE ? (c.T + bn - 1) / bn * bn : c.T, blocks = rows + (c.N + 7) / 8;
    for (gb_u32 b = 0; b < blocks; b++) {
        CoroBlock coro;
        gb_u32 part[8];
        const bool ok = coro.run(256, [&](int i) {
            PrepHostCtx ctx{&coro, (gb_u32)i, b};
            ln_half_prep_block<F, TILE, HOLD, PERM>(ctx, c.x, xh, ex, c.w, c.N, c.K, c.T, part);
        }, wgmma_preempt, wgmma_seed++, 256);
        if (!ok) return false;
    }
    return true;
}

// The prepass's reference (the same helpers, no blocks or warps: each row of
// x and of W whole) into xh ([T][K], or with TILE the tiled copy; zeros past
// T and K are the caller's) and ex (T + N): what the wgmma emulation takes as
// the first launch's output. PERM: k permuted inside each unit (ln_ra_k),
// element by element.
template <class F, int TILE, int PERM = 0>
static void prep_reference(const LnCall& c, unsigned short* xh, int* ex)
{
    const gb_u32 nunits = (c.K + 63) / 64;
    auto chunk = [&](gb_u32 tt, gb_u32 i) { uint4 v; memcpy(&v, c.x + (size_t)tt * c.K + 8 * i, 16); return v; };
    for (gb_u32 tt = 0; tt < c.T; tt++) {
        gb_u32 m = 0;
        for (gb_u32 i = 0; i < c.K / 8; i++) m = ln_half_max8(chunk(tt, i), m);
        ex[tt] = ln_half_x_exp(m);
        for (gb_u32 i = 0; i < c.K / 8; i++) {
            const uint4 v = ln_half_x8(chunk(tt, i), ln_pow2(-ex[tt]));
            if (PERM) {
                unsigned short e[8];
                memcpy(e, &v, 16);
                for (gb_u32 j = 0; j < 8; j++) xh[ln_half_x_at<TILE ? TILE : 64>(tt, ln_ra_k<F>(8 * i + j), nunits)] = e[j];
            } else memcpy(TILE ? xh + ln_half_x_at<TILE ? TILE : 64>(tt, 8 * i, nunits) : xh + (size_t)tt * c.K + 8 * i, &v, 16);
        }
    }
    for (gb_u32 n = 0; n < c.N; n++) ex[c.T + n] = ln_half_w_exp(ln_half_w_max<F>(c.w, c.N, c.K, n, 0, 1));
}

// The prepass's kernel code (emu_prep, LN_PREP_HOLD 0 and 12: each row of x
// read twice, and held) against prep_reference, byte for byte, in poisoned
// guarded buffers of exactly the launch's bytes; the number that differ.
template <class F, int TILE, int PERM = 0>
static int prep_against_reference(LnCall& c)
{
    const gb_u32 bn = TILE ? TILE : 64, rows = TILE ? (c.T + bn - 1) / bn * bn : c.T;
    const size_t xh_elems = TILE ? (size_t)rows * 64 * ((c.K + 63) / 64) : (size_t)c.T * c.K;
    std::vector<unsigned short> xh(xh_elems, 0);
    std::vector<int> ex((size_t)c.T + c.N);
    prep_reference<F, TILE, PERM>(c, xh.data(), ex.data());
    int bad = 0;
    for (int hold : {0, 12}) {
        Guarded gx(2 * xh_elems), ge(4 * ex.size());
        memset(gx.p, 0xFF, gx.n), memset(ge.p, 0xFF, ge.n);
        const bool ran = hold ? emu_prep<F, TILE, 12, PERM>(c, (unsigned short*)gx.p, (int*)ge.p)
                              : emu_prep<F, TILE, 0, PERM>(c, (unsigned short*)gx.p, (int*)ge.p);
        const bool same_x = memcmp(gx.p, xh.data(), gx.n) == 0, same_ex = memcmp(ge.p, ex.data(), ge.n) == 0;
        if (!ran || !same_x || !same_ex) {
            EMU_BAD(&c, "the prepass (LN_PREP_TILE=%d LN_PREP_HOLD=%d LN_PREP_PERM=%d) at N=%u K=%u T=%u: %s", TILE, hold, PERM, c.N, c.K, c.T,
                    !ran ? "deadlocked" : !same_ex ? "other exponents" : "another copy of x");
            bad++;
        }
    }
    return bad;
}

// Every block of the wgmma route: grid (ceil(T / BN), ceil(N / (64 MT WG)),
// KS), 128 (WG + WS) threads, the pipeline closed as LN_CLOSE = CL says;
// with KS > 1 the slices' sums into a guarded part[KS][T][N], then the
// reduction's code (linear_reduce.cuh) into y, or with CLU (LN_CLUSTER = 1)
// the KS blocks of a tile run together as a cluster. With H (LN_HALF = 1) first
// the prepass (linear_half_prep.cu's per-element and per-row code, its loops
// here): x in fp16 into a copy the kernel reads as its x, the exponents g[T]
// and f[N] into ex. XC: LN_XCOPY. EPI: LN_EPI. TAIL (LN_TAIL = 1): grid.y counts the tiles
// of W from the last; `rows`, the launch's grid.y when it covers fewer tile
// rows than N has (gpubench.linear's two launches of a tail: run_tail below).
template <class F, int WG, int MT, int BN, int S, int WPF, int WS, int KS, int CL, int STG = 0, int H = 0, int XC = 0, int CLU = 0,
          int TAIL = 0, int XT = 0, int EPI = 1>
static void run_wgmma_rows(LnCall& c, float gscale, gb_u32 rows)
{
    enum { BM = 64 * MT * WG, NTH = 128 * (WG + WS) };
    const size_t declared = lw_shared_bytes_ws<F, WG, MT, BN, S, WS, H, XT>();
    std::vector<int> ex;
    std::vector<unsigned short> xh;
    const unsigned short* x_in = c.x;
    const gb_u32 nunits = (c.K + 63) / 64, trows = (c.T + BN - 1) / BN * BN;
    // XT (LN_XTILE = 1): the prepass's tiled copy, exactly its bytes, guarded
    Guarded xt(XT ? (size_t)2 * trows * 64 * nunits : 16);
    if constexpr (H != 0) {
        ex.resize((size_t)c.T + c.N);
        if (XT) memset(xt.p, 0, xt.n);
        else xh.resize((size_t)c.T * c.K);
        // the prepass's output (its kernel code: prep_against_reference, check_prepass)
        prep_reference<F, XT ? BN : 0, XT >= 3>(c, XT ? (unsigned short*)xt.p : xh.data(), ex.data());
        // the kernel's x (its loads checked against the same T x K bounds), or with XT the tiled copy
        c.x = XT ? (const unsigned short*)xt.p : xh.data();
    }
    const size_t part_n = KS > 1 ? (size_t)KS * c.T * c.N : 0;
    Guarded pg(KS > 1 ? 4 * part_n : 16);
    std::vector<int> part_writes(part_n, 0);
    // a launch's blocks, a cluster of KS at a time with CLU (LN_CLUSTER = 1), else one at a time
    const gb_u32 per = CLU ? (gb_u32)KS : 1, grid_y = rows != ~0u ? rows : (c.N + BM - 1) / BM;
    for (gb_u32 bz0 = 0; bz0 < (gb_u32)KS; bz0 += per)
        for (gb_u32 by = 0; by < grid_y; by++)
            for (gb_u32 bx = 0; bx < (c.T + BN - 1) / BN; bx++) {
                std::vector<LwBlock> blks(per);
                std::vector<LwBlock*> ranks;
                CoroBlock coro;
                if (wgmma_lag > 0) coro.lag = wgmma_lag, coro.lag_mod = NTH, coro.lag_from = NTH - 128;
                for (LwBlock& blk : blks) {
                    blk.coro = &coro;
                    blk.call = &c;
                    blk.threads = NTH;
                    blk.bytes = declared - 1024;
                    blk.mem.assign(blk.bytes + 1024, 0xFF);
                    blk.smem = blk.mem.data();
                    while ((uintptr_t)blk.smem & 1023) blk.smem++;
                    blk.inflight.assign(blk.bytes, 0), blk.unfenced.assign(blk.bytes, 0), blk.is_bar.assign(blk.bytes, 0);
                    blk.bulk_open.assign(blk.bytes, 0);
                    blk.xt_lo = XT ? xt.p : nullptr, blk.xt_hi = XT ? xt.p + xt.n : nullptr;
                    blk.wg.assign(WG + WS, {});
                    blk.part = KS > 1 && !CLU ? (float*)pg.p : nullptr, blk.part_n = part_n, blk.part_writes = &part_writes;
                    blk.ex = H ? ex.data() : nullptr, blk.ex_n = ex.size();
                    ranks.push_back(&blk);
                }
                for (LwBlock& blk : blks) blk.cluster = CLU ? &ranks : nullptr;
                const bool ok = coro.run((int)(per * NTH), [&](int i) {
                    const gb_u32 r = (gb_u32)i / NTH;
                    LwHostCtx ctx(&blks[r], (gb_u32)i % NTH, bx, by, bz0 + r, (gb_u32)i);
                    if constexpr (WS) ln_wgmma_ws<F, WG, MT, BN, S, WPF, CL, H, XC>(ctx, c.w, c.x, c.y, c.N, c.K, c.T, gscale, blks[r].ex);
                    else ln_wgmma<F, WG, MT, BN, S, WPF, KS, CL, STG, H, XC, CLU, TAIL, XT, EPI>(ctx, c.w, c.x, c.y, c.N, c.K, c.T, gscale, blks[r].part, blks[r].ex);
                    ctx.finish();
                }, wgmma_preempt, wgmma_seed++, NTH);
                if (!ok) EMU_BAD(&c, "block (%u, %u, %u) deadlocked", bx, by, bz0);
                for (gb_u32 r = 0; r < per; r++)
                    if (!blks[r].bulks.empty())
                        EMU_BAD(&c, "block (%u, %u, %u) exits with %zu bulk copies in flight", bx, by, bz0 + r, blks[r].bulks.size());
                for (gb_u32 r = 0; r < per; r++)
                    for (size_t w = 0; w < blks[r].wg.size(); w++)
                        for (size_t k = 0; k < blks[r].wg[w].size(); k++)
                            if (blks[r].wg[w][k].issued != 128 || blks[r].wg[w][k].completed != 128) {
                                EMU_BAD(&c, "block (%u, %u, %u) warpgroup %zu product %zu: issued by %d threads, completed by %d", bx, by,
                                        bz0 + r, w, k, blks[r].wg[w][k].issued, blks[r].wg[w][k].completed);
                                break;
                            }
            }
    c.x = x_in;
    if (KS > 1 && !CLU) {
        size_t off = 0;
        for (int v : part_writes) off += v != 1;
        if (off) EMU_BAD(&c, "%zu slice sums not written exactly once", off);
        const gb_u64 total = (gb_u64)c.T * c.N;
        for (gb_u64 i = 0; i < total; i++) {
            ln_reduce_one((const float*)pg.p, c.y, total, i, KS);
            c.writes[(size_t)i]++;
        }
    }
}

// The whole grid.
template <class F, int WG, int MT, int BN, int S, int WPF, int WS, int KS, int CL, int STG = 0, int H = 0, int XC = 0, int CLU = 0,
          int XT = 0, int EPI = 1>
static void run_wgmma(LnCall& c, float gscale)
{
    run_wgmma_rows<F, WG, MT, BN, S, WPF, WS, KS, CL, STG, H, XC, CLU, 0, XT, EPI>(c, gscale, ~0u);
}

// A call whose last tiles run in slices (gpubench.linear's tail,
// docs/kernels/cuda-linear.md, "The last wave in slices"): a first launch of
// whole tiles over the first `head` tile rows of W (half of them, rounded
// down: none at one row), then the KS slices of the rest in clusters, grid.y
// counting from the last tile (LN_TAIL = 1). Every output once, from one of
// the two.
template <class F, int BN, int WPF, int KS, int STG, int H, int XT = 0>
static void run_tail(LnCall& c, float gscale)
{
    const gb_u32 tiles = (c.N + 127) / 128, head = tiles / 2;
    if (head > 0) run_wgmma_rows<F, 2, 1, BN, 4, WPF, 0, 1, 1, STG, H, 1, 0, 0, XT>(c, gscale, head);
    run_wgmma_rows<F, 2, 1, BN, 4, WPF, 0, KS, 1, STG, H, 1, 1, 1, XT>(c, gscale, tiles - head);
}

#endif
