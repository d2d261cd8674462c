// The emulations' lane pool (emu_staged.cuh) checked on its own: a warp-wide
// exchange through barriers must give every lane its neighbours' values, in
// any number of rounds and pool runs; lanes that diverge (an extra barrier,
// another barrier's tag, a lane ending early, a barrier after the others
// ended) must stop the run with a message. argv[1] picks the case;
// tests/cli/test_lane_pool.sh runs each.
#include <cstdio>
#include <cstring>
#include <vector>

#include "swiglu_common.cuh"

static int failures = 0; // emu_staged.cuh's lanes add to it
#include "emu_staged.cuh" // after failures

int main(int argc, char** argv)
{
    const char* mode = argc > 1 ? argv[1] : "exchange";
    LanePool pool;
    if (!strcmp(mode, "exchange")) {
        // 3 pool runs of 50 rounds: each lane writes round * 100 + lane, meets the
        // others, reads lane + round (mod 32), meets again before the next write
        long bad = 0, reads = 0;
        int v[32];
        for (int run = 0; run < 3; run++)
            pool.run([&](int l) {
                for (int r = 0; r < 50; r++) {
                    v[l] = r * 100 + l;
                    pool.warp.arrive(2 * r, "write");
                    const int src = (l + r) % 32;
                    bad += v[src] != r * 100 + src;
                    reads++;
                    pool.warp.arrive(2 * r + 1, "read");
                }
            });
        printf("%s exchange: %ld reads, %ld wrong\n", bad || reads != 3 * 50 * 32 ? "not ok" : "ok  ", reads, bad);
        return bad || reads != 3 * 50 * 32;
    }
    pool.run([&](int l) {
        pool.warp.arrive(1, "first");
        if (!strcmp(mode, "extra") && l == 5) pool.warp.arrive(2, "lane 5's extra");
        if (!strcmp(mode, "tag")) pool.warp.arrive(l == 7 ? 3 : 2, l == 7 ? "lane 7's own" : "second");
        if (!strcmp(mode, "early") && l == 9) return;
        pool.warp.arrive(4, "last");
        if (!strcmp(mode, "late") && l == 31) pool.warp.arrive(5, "lane 31's late");
    });
    printf("not ok %s: the pool ran to the end\n", mode);
    return 0;
}
