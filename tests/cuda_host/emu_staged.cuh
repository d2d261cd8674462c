// Part of the host emulations of the CUDA kernels (tests/cuda_host/
// swiglu_emulate.cu, gemv_tc_emulate.cu): the model of a warp's staged loop
// (swiglu_common.cuh, sw_staged_loop). Its 32 lanes run as 32 threads, since
// they exchange weights through the warp's shared-memory stages: syncwarp is
// a barrier, and cp.async is queued per commit group and performed only when
// a wait_group requires it, so a read before its group must have landed sees
// the stage's poison or stale data. Rec is one mma's operands as a lane
// passed them. The includer defines `int failures` (the failure count)
// before including this.
#ifndef GPUBENCH_EMU_STAGED_CUH
#define GPUBENCH_EMU_STAGED_CUH
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

struct Rec {
    sw_u32 a[4], b[2];
};

// A reusable barrier of n threads. Every arrival names what it is (tag): a
// lane at another syncwarp, or at a warp's end, means the lanes diverged,
// which on the GPU is a hang or undefined; the run stops with a message, as
// it does if a barrier is not met within a minute. spin: wait by yielding
// (the lanes' syncwarps: about 3x faster than sleeping on a condition
// variable on 2 cores), else sleep (the pool between jobs, not to take the
// main thread's core).
struct Barrier {
    std::mutex m;
    std::condition_variable cv;
    const int n;
    const bool spin;
    int count = 0;
    long tag0 = 0;
    std::atomic<unsigned> gen{0};
    Barrier(int parties, bool spinning) : n(parties), spin(spinning) {}
    [[noreturn]] static void stop(const char* msg, const char* what, long a, long b)
    {
        printf(msg, what, a, b);
        printf("\n");
        fflush(stdout);
        _exit(1);
    }
    void arrive(long tag, const char* what)
    {
        std::unique_lock<std::mutex> l(m);
        if (count == 0) tag0 = tag;
        if (tag != tag0) stop("FAIL: lanes diverged at %s: tag %ld, another lane's %ld", what, tag, tag0);
        const unsigned g = gen.load();
        if (++count == n) {
            count = 0;
            gen.store(g + 1);
            if (!spin) cv.notify_all();
            return;
        }
        const auto limit = std::chrono::seconds(60);
        if (!spin) {
            if (!cv.wait_for(l, limit, [&] { return gen.load() != g; }))
                stop("FAIL: %s barrier not met within 60 s (%ld of %ld there)", what, count, n);
            return;
        }
        l.unlock();
        const auto t0 = std::chrono::steady_clock::now();
        for (unsigned i = 1; gen.load() == g; i++) {
            std::this_thread::yield();
            if (i % 4096 == 0 && std::chrono::steady_clock::now() - t0 > limit)
                stop("FAIL: %s barrier not met within 60 s (%ld of %ld there)", what, count, n);
        }
    }
};

// 32 lane threads, kept for the whole run (a warp is about 30 stages: thread
// creation per warp would cost more than the warp).
struct LanePool {
    Barrier start{33, false}, done{33, false}, warp{32, true};
    std::function<void(int)> job;
    bool quit = false;
    std::vector<std::thread> th;
    LanePool()
    {
        for (int l = 0; l < 32; l++)
            th.emplace_back([this, l] {
                for (;;) {
                    start.arrive(0, "job start");
                    if (quit) return;
                    job(l);
                    done.arrive(0, "job end");
                }
            });
    }
    void run(std::function<void(int)> f)
    {
        job = std::move(f);
        start.arrive(0, "job start");
        done.arrive(0, "job end");
    }
    ~LanePool()
    {
        quit = true;
        start.arrive(0, "job start");
        for (auto& t : th) t.join();
    }
};
static std::mutex expect_mu; // lanes' failures, counted and printed like EXPECT's

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
        std::lock_guard<std::mutex> l(expect_mu);
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
