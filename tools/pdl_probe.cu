// tools/pdl_probe.cu: what programmatic dependent launch (sm_90) does to a
// pure read of a GEMV's size, launched back to back over rotated copies, before
// the host learns to launch with it. Standalone (CUDA runtime), one process, every
// mode timed in A B ... B A order; not part of the build.
//
//   nvcc -O3 -arch=sm_90 -cudart static tools/pdl_probe.cu -o pdl_probe && ./pdl_probe
//
// Modes (the kernel is read.cu's loop; what differs is where it waits):
//   plain    no attribute, no griddepcontrol
//   start    attribute; trigger and wait first thing: only the launch overlaps
//   first    attribute; trigger, the first iteration's loads issued, then wait
//   end      attribute; trigger first, wait only before the (never taken) store:
//            the whole read overlaps the previous call (an upper bound, not a GEMV)
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s failed: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)

__device__ __forceinline__ unsigned fold(uint4 v) { return (v.x ^ v.y) ^ (v.z ^ v.w); }
__device__ __forceinline__ void pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

template <int MODE>
__global__ void rd(const uint4* __restrict__ src, unsigned* __restrict__ out, unsigned n16, unsigned sentinel)
{
    const unsigned long long n = n16, stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    if (MODE != 0) pdl_trigger();
    if (MODE == 1) pdl_wait();
    if (MODE == 2 && i + 3 * stride < n) {
        const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        pdl_wait();
        acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
        i += 4 * stride;
    } else if (MODE == 2) {
        pdl_wait();
    }
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    }
    for (; i < n; i += stride) acc ^= fold(src[i]);
    if (MODE == 3) pdl_wait();
    if (acc == sentinel) out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

static const char* names[] = {"plain", "start", "first", "end"};
typedef void (*kfn)(const uint4*, unsigned*, unsigned, unsigned);
static kfn fns[] = {rd<0>, rd<1>, rd<2>, rd<3>};

static void launch(int mode, cudaStream_t s, int grid, const uint4* src, unsigned* out, unsigned n16)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid); cfg.blockDim = dim3(256); cfg.stream = s;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at; cfg.numAttrs = mode ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, fns[mode], src, out, n16, 0xA5A5A5A5u));
}

// One graph of n launches cycling through the copies.
static cudaGraphExec_t build(int mode, cudaStream_t s, int grid, std::vector<uint4*>& bufs, unsigned* out,
                             unsigned n16, int n)
{
    cudaGraph_t g; cudaGraphExec_t x;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < n; i++) launch(mode, s, grid, bufs[i % bufs.size()], out, n16);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&x, g, 0));
    CK(cudaGraphUpload(x, s));
    CK(cudaGraphDestroy(g));
    return x;
}

static float replay(cudaGraphExec_t x, cudaStream_t s, cudaEvent_t a, cudaEvent_t b)
{
    CK(cudaEventRecord(a, s)); CK(cudaGraphLaunch(x, s)); CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

static float eager(int mode, cudaStream_t s, int grid, std::vector<uint4*>& bufs, unsigned* out, unsigned n16,
                   int n, cudaEvent_t a, cudaEvent_t b)
{
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < n; i++) launch(mode, s, grid, bufs[i % bufs.size()], out, n16);
    CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main(int argc, char** argv)
{
    int dev = 0, sms;
    CK(cudaSetDevice(dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    const int grid = sms * 4;
    unsigned* out; CK(cudaMalloc(&out, (size_t)grid * 256 * 4));
    // The ceiling: one 2 GiB buffer, plain, two-point over graph replays.
    double sizes_mb[] = {10, 20, 41, 80, 160, 2147.483648};
    int modes_order[] = {0, 1, 2, 3, 3, 2, 1, 0};
    printf("sms %d l2 %d grid %d\n", sms, l2, grid);
    printf("%9s %6s %6s %5s %10s %10s %9s\n", "MB", "copies", "submit", "mode", "us", "GB/s", "vs plain");
    for (double mb : sizes_mb) {
        size_t bytes = (size_t)(mb * 1e6) / 16 * 16;
        int copies = bytes >= 4 * (size_t)l2 ? 1 : (int)((4 * (size_t)l2 + bytes - 1) / bytes) + 1;
        std::vector<uint4*> bufs(copies);
        for (auto& p : bufs) { CK(cudaMalloc(&p, bytes)); CK(cudaMemset(p, 0, bytes)); }
        unsigned n16 = (unsigned)(bytes / 16);
        int n = std::max(copies * 10, bytes >= 256e6 ? 16 : 400);
        for (int submit = 0; submit < 2; submit++) {
            std::vector<double> acc[4];
            cudaGraphExec_t g1[4] = {}, g2[4] = {};
            if (submit == 0)
                for (int m = 0; m < 4; m++) { g1[m] = build(m, s, grid, bufs, out, n16, n);
                                              g2[m] = build(m, s, grid, bufs, out, n16, 2 * n); }
            for (int pass = 0; pass < 8; pass++) {
                int m = modes_order[pass];
                std::vector<double> ts;
                for (int rep = 0; rep < 3; rep++) {
                    double t1, t2;
                    if (submit == 0) { replay(g2[m], s, a, b); t1 = replay(g1[m], s, a, b); t2 = replay(g2[m], s, a, b); }
                    else { eager(m, s, grid, bufs, out, n16, 2 * n, a, b);
                           t1 = eager(m, s, grid, bufs, out, n16, n, a, b);
                           t2 = eager(m, s, grid, bufs, out, n16, 2 * n, a, b); }
                    ts.push_back((t2 - t1) / n * 1e3);
                }
                acc[m].push_back(median(ts));
            }
            double plain = median(acc[0]);
            for (int m = 0; m < 4; m++) {
                double us = median(acc[m]);
                double lo = *std::min_element(acc[m].begin(), acc[m].end()), hi = *std::max_element(acc[m].begin(), acc[m].end());
                printf("%9.1f %6d %6s %5s %10.3f %10.1f %9.3f   (passes %.3f..%.3f)\n", mb, copies,
                       submit ? "eager" : "graph", names[m], us, bytes / us / 1e3, plain / us, lo, hi);
            }
            for (int m = 0; m < 4; m++) if (g1[m]) { cudaGraphExecDestroy(g1[m]); cudaGraphExecDestroy(g2[m]); }
        }
        for (auto p : bufs) CK(cudaFree(p));
    }
    CK(cudaGetLastError());
    return 0;
}
