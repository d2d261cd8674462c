// Part of the host emulations of the CUDA kernels (tests/cuda_host/
// swiglu_emulate.cu, gemv_tc_emulate.cu): the model of a warp's staged loop
// (swiglu_common.cuh, sw_staged_loop). Its 32 lanes run as 32 fibers (LanePool),
// since they exchange weights through the warp's shared-memory stages: syncwarp is
// a barrier, and cp.async is queued per commit group and performed only when
// a wait_group requires it, so a read before its group must have landed sees
// the stage's poison or stale data. Rec is one mma's operands as a lane
// passed them. The includer defines `int failures` (the failure count)
// before including this.
#ifndef GPUBENCH_EMU_STAGED_CUH
#define GPUBENCH_EMU_STAGED_CUH
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

struct Rec {
    sw_u32 a[4], b[2];
};

// The 32 lanes are fibers of one thread (ucontext), switched round-robin at
// every barrier: deterministic, one core, and unaffected by other processes
// on the cores, where 32 yielding threads starve (docs/kernels/swiglu.md,
// the staged loop's host emulation). Every arrival names what it is (tag): a lane at
// another syncwarp, at a barrier after others ended, or ending while others
// wait, means the lanes diverged, which on the GPU is a hang or undefined;
// the run stops with a message.
struct LanePool;
struct Barrier {
    LanePool* pool;
    void arrive(long tag, const char* what);
};

struct LanePool {
    static constexpr size_t STACK = 8u << 20; // a thread's default; mapped lazily
    Barrier warp{this};
    std::function<void(int)> job;
    ucontext_t main_cx, cx[32];
    unsigned char* stacks = nullptr;
    size_t page = 0;
    int cur = 0, count = 0, ended = 0;
    long tag0 = 0;
    const char* what0 = "";
    static LanePool* self; // makecontext passes ints only

    template <class... A>
    [[noreturn]] static void stop(const char* fmt, A... a)
    {
        printf(fmt, a...);
        printf("\n");
        fflush(stdout);
        _exit(1);
    }
    LanePool()
    {
        page = (size_t)sysconf(_SC_PAGESIZE);
        const size_t each = STACK + page;
        void* p = mmap(nullptr, 32 * each, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) stop("FAIL: lane stacks: mmap of %zu bytes failed", 32 * each);
        stacks = (unsigned char*)p;
        for (int l = 0; l < 32; l++) mprotect(stacks + l * each, page, PROT_NONE); // an overflow faults
    }
    ~LanePool() { munmap(stacks, 32 * (STACK + page)); }
    LanePool(const LanePool&) = delete;
    LanePool& operator=(const LanePool&) = delete;

    static void entry()
    {
        LanePool* p = self;
        p->job(p->cur);
        p->lane_end();
    }
    // Runs f(l) for the 32 lanes; returns when every lane has ended.
    void run(std::function<void(int)> f)
    {
        job = std::move(f);
        self = this, cur = 0, count = 0, ended = 0;
        for (int l = 0; l < 32; l++) {
            getcontext(&cx[l]);
            cx[l].uc_stack.ss_sp = stacks + l * (STACK + page) + page;
            cx[l].uc_stack.ss_size = STACK;
            cx[l].uc_link = nullptr;
            makecontext(&cx[l], entry, 0);
        }
        swapcontext(&main_cx, &cx[0]);
    }
    void next()
    {
        const int from = cur;
        cur = (cur + 1) % 32;
        swapcontext(&cx[from], &cx[cur]);
    }
    void arrive(long tag, const char* what)
    {
        if (ended) stop("FAIL: lanes diverged: lane %d at %s after %d lanes ended", cur, what, ended);
        if (count == 0) tag0 = tag, what0 = what;
        else if (tag != tag0) stop("FAIL: lanes diverged: tag %ld at %s, another lane's %ld at %s", tag, what, tag0, what0);
        if (++count == 32) count = 0; // met: each lane goes on when its turn comes
        next();
    }
    [[noreturn]] void lane_end()
    {
        if (count) stop("FAIL: lanes diverged: lane %d ended while %d lanes wait at %s", cur, count, what0);
        if (++ended == 32) setcontext(&main_cx);
        cur = (cur + 1) % 32;
        setcontext(&cx[cur]);
        __builtin_unreachable();
    }
};
inline LanePool* LanePool::self = nullptr;
inline void Barrier::arrive(long tag, const char* what) { pool->arrive(tag, what); }

// One lane's context for sw_staged_loop: x loads checked as a direct loop's, the mma recorded,
// cp16 queued into the open group, commit closes it, wait<N> performs the
// oldest groups until N are pending, lds reads the warp's stage buffer. Those
// called from the unrolled loop are out of line: inlined, hundreds of copies
// of them cost more compile time than the run.
struct StagedCx {
    struct Copy {
        unsigned char* dst;
        const unsigned char* src;
        bool valid;
    };
    const unsigned char *w, *x;
    size_t wbytes, xbytes;
    unsigned char* stage; // the warp's STAGES stages
    size_t sbytes;
    std::vector<Rec>* rec;
    Barrier* bar;
    long checks = 0, syncs = 0;
    std::vector<Copy> open;
    std::deque<std::vector<Copy>> groups;

    template <class... A>
    void check(bool cond, const char* fmt, A... a)
    {
        checks++;
        if (cond) return;
        if (failures < 20) {
            printf("FAIL (staged lane): ");
            printf(fmt, a...);
            printf("\n");
        }
        failures++;
    }
    bool in(const unsigned char* p, const unsigned char* base, size_t bytes)
    {
        return p >= base && (size_t)(p - base) + 16 <= bytes && (size_t)(p - base) % 16 == 0;
    }
    // A 16-byte load from [base, base + bytes), checked (zeros when outside).
    uint4 load16(const unsigned char* p, const unsigned char* base, size_t bytes, const char* what)
    {
        uint4 v = make_uint4(0, 0, 0, 0);
        const bool ok = in(p, base, bytes);
        check(ok, "%s at byte %lld of %zu", what, (long long)(p - base), bytes);
        if (ok) memcpy(&v, p, 16);
        return v;
    }
    __noinline__ uint4 ld_x(const unsigned char* p) { return load16(p, x, xbytes, "x load"); }
    __noinline__ uint4 ld_x(const float* p) { return load16((const unsigned char*)p, x, xbytes, "x load"); }
    uint4 ld_w(const unsigned char*)
    {
        check(false, "the staged loop loaded a weight directly");
        return make_uint4(0, 0, 0, 0);
    }
    __noinline__ void mma(float (&)[4], int tile, const sw_u32 (&a)[4], const sw_u32 (&b)[2])
    {
        Rec r;
        memcpy(r.a, a, sizeof r.a);
        memcpy(r.b, b, sizeof r.b);
        rec[tile].push_back(r);
    }
    __noinline__ void cp16(unsigned char* dst, const unsigned char* src, bool valid)
    {
        const bool d = in(dst, stage, sbytes), s = !valid || in(src, w, wbytes);
        check(d, "cp.async to stage byte %lld of %zu", (long long)(dst - stage), sbytes);
        check(s, "cp.async from weight byte %lld of %zu", (long long)(src - w), wbytes);
        if (d && s) open.push_back(Copy{dst, src, valid});
    }
    __noinline__ void commit()
    {
        groups.push_back(std::move(open));
        open.clear();
    }
    template <int N>
    __noinline__ void wait()
    {
        static_assert(N >= 0, "cp.async.wait_group takes N >= 0");
        while (groups.size() > (size_t)N) {
            for (const Copy& c : groups.front())
                if (c.valid) memcpy(c.dst, c.src, 16);
                else memset(c.dst, 0, 16);
            groups.pop_front();
        }
    }
    void syncwarp() { bar->arrive(++syncs, "syncwarp"); }
    __noinline__ uint4 lds(const unsigned char* p) { return load16(p, stage, sbytes, "shared load of the stage"); }
};

#endif
