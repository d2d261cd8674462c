// Part of the host emulations of the CUDA kernels (tests/cuda_host/
// linear_wgmma_emulate.cu): a block's threads as coroutines on one OS
// thread, for kernel bodies written per thread (a context of NT = 1) that
// block on each other: __syncthreads, warp shuffles, mbarrier waits, and
// (several blocks run as one, a thread block cluster) the cluster's barrier.
//
// A thread runs until it must wait (a barrier not yet reached by all, an
// mbarrier phase not yet complete) or, with preemption on, until a seeded
// random draw at any of its context's operations says so; the scheduler then
// resumes the next thread whose wait is over, in round-robin order from a
// rotating (or, preempting, random) start; threads marked lagging are
// preempted more often, so that they run behind. Deterministic for a seed. When
// no thread can run and some have not finished, the block is deadlocked: it
// is reported with each thread's wait, and the block abandoned.
// Needs <ucontext.h>, <functional>, <vector>, <cstdio> and gb_u32 / gb_u64.
#ifndef GPUBENCH_EMU_CORO_CUH
#define GPUBENCH_EMU_CORO_CUH

struct CoroBlock {
    int n = 0;
    std::vector<ucontext_t> uc;
    ucontext_t main_uc;
    std::vector<char> done;
    std::vector<std::function<bool()>> until; // a waiting thread's condition (empty: runnable)
    std::vector<const char*> what;            // what it waits for, for the deadlock report
    int cur = -1;
    std::function<void(int)> body;
    // the block's barriers (bar.sync id, count; __syncthreads is id 0 of the
    // whole block), per block of `group` threads (0: all n are one block):
    // arrivals and generation by block and id
    int group = 0;
    std::vector<std::vector<int>> named_arrived;
    std::vector<std::vector<unsigned>> named_gen;
    // a thread block cluster's barrier: all n threads
    int bar_arrived = 0;
    unsigned bar_gen = 0;
    // a warp's exchanges (warp_exchange): arrivals, generation, values, result
    std::vector<int> warp_arrived;
    std::vector<unsigned> warp_gen;
    std::vector<gb_u32> warp_val, warp_result;
    // preemption; lagging threads (cur % lag_mod >= lag_from) are preempted
    // with probability lag instead, so that they fall behind the others
    double preempt = 0, lag = 0;
    int lag_mod = 0, lag_from = 0;
    gb_u64 rng = 1;
    bool deadlocked = false;

    static std::vector<std::vector<char>>& stacks()
    {
        static std::vector<std::vector<char>> s; // kept across blocks: allocated once
        return s;
    }
    static CoroBlock*& active()
    {
        static CoroBlock* b = nullptr;
        return b;
    }
    static void entry()
    {
        CoroBlock* b = active();
        const int t = b->cur;
        b->body(t);
        b->done[t] = 1;
    }
    double draw()
    {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        return (double)(rng >> 11) * 0x1p-53;
    }
    void yield() { swapcontext(&uc[cur], &main_uc); }
    // Blocks the running thread until cond() holds.
    void wait_until(const char* why, std::function<bool()> cond)
    {
        if (cond()) return;
        until[cur] = std::move(cond);
        what[cur] = why;
        yield();
    }
    // A preemption point: with probability `preempt` another thread runs first.
    void point()
    {
        const double p = lag_mod > 0 && cur % lag_mod >= lag_from ? lag : preempt;
        if (p > 0 && draw() < p) yield();
    }
    void barrier() { named_barrier(0, group ? group : n, "__syncthreads"); }
    // bar.sync id, count (id 0 .. 15): `count` threads of the block arrive
    void named_barrier(int id, int count, const char* what = "a named barrier")
    {
        const int gi = group ? cur / group : 0;
        const unsigned gen = named_gen[gi][id];
        if (++named_arrived[gi][id] == count) {
            named_arrived[gi][id] = 0, named_gen[gi][id]++;
            point();
            return;
        }
        wait_until(what, [this, gi, id, gen] { return named_gen[gi][id] != gen; });
    }
    // barrier.cluster.arrive + wait: every thread of every block
    void cluster_barrier()
    {
        const unsigned gen = bar_gen;
        if (++bar_arrived == n) {
            bar_arrived = 0, bar_gen++;
            point();
            return;
        }
        wait_until("a cluster barrier", [this, gen] { return bar_gen != gen; });
    }
    // A warp's exchange: every lane of thread t's warp arrives with its v, and
    // each gets what of(the warp's 32 values) gives.
    template <class Of>
    gb_u32 warp_exchange(int t, gb_u32 v, Of of)
    {
        const int w = t / 32;
        warp_val[t] = v;
        const unsigned gen = warp_gen[w];
        if (++warp_arrived[w] == 32) {
            warp_arrived[w] = 0, warp_result[w] = of(&warp_val[32 * w]), warp_gen[w]++;
        } else {
            wait_until("a warp shuffle", [this, w, gen] { return warp_gen[w] != gen; });
        }
        return warp_result[w];
    }
    // __shfl_sync(full mask, v, 0)
    gb_u32 warp_lane0(int t, gb_u32 v)
    {
        return warp_exchange(t, v, [](const gb_u32* lanes) { return lanes[0]; });
    }
    // The largest v of the warp's lanes (a butterfly of __shfl_xor_sync, full mask).
    gb_u32 warp_max(int t, gb_u32 v)
    {
        return warp_exchange(t, v, [](const gb_u32* lanes) {
            gb_u32 m = 0;
            for (int l = 0; l < 32; l++) m = lanes[l] > m ? lanes[l] : m;
            return m;
        });
    }
    // Runs fn(t) for t = 0 .. threads - 1 to completion, blocks of group_
    // threads (0: one block); false on a deadlock.
    bool run(int threads, std::function<void(int)> fn, double preempt_ = 0, gb_u64 seed = 1, int group_ = 0)
    {
        n = threads, body = std::move(fn), preempt = preempt_, rng = seed | 1, group = group_;
        const size_t blocks = group ? (n + group - 1) / group : 1;
        named_arrived.assign(blocks, std::vector<int>(16, 0)), named_gen.assign(blocks, std::vector<unsigned>(16, 0));
        uc.assign(n, ucontext_t{});
        done.assign(n, 0), until.assign(n, nullptr), what.assign(n, nullptr);
        warp_arrived.assign((n + 31) / 32, 0), warp_gen.assign((n + 31) / 32, 0);
        warp_val.assign(n, 0), warp_result.assign((n + 31) / 32, 0);
        bar_arrived = 0, bar_gen = 0, deadlocked = false;
        auto& st = stacks();
        while ((int)st.size() < n) st.emplace_back(256 * 1024);
        active() = this;
        for (int t = 0; t < n; t++) {
            getcontext(&uc[t]);
            uc[t].uc_stack.ss_sp = st[t].data();
            uc[t].uc_stack.ss_size = st[t].size();
            uc[t].uc_link = &main_uc;
            makecontext(&uc[t], (void (*)())entry, 0);
        }
        int left = n, start = 0;
        while (left > 0) {
            bool progress = false;
            const int first = preempt > 0 ? (int)(draw() * n) : start;
            for (int k = 0; k < n; k++) {
                const int t = (first + k) % n;
                if (done[t] || (until[t] && !until[t]())) continue;
                until[t] = nullptr;
                cur = t;
                swapcontext(&main_uc, &uc[t]);
                progress = true;
                if (done[t]) left--;
            }
            start = (start + 1) % n;
            if (!progress) {
                deadlocked = true;
                int shown = 0;
                for (int t = 0; t < n && shown < 8; t++)
                    if (!done[t]) fprintf(stderr, "  deadlock: thread %d waits for %s\n", t, what[t]), shown++;
                break;
            }
        }
        active() = nullptr;
        return !deadlocked;
    }
};

#endif
