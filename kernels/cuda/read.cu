// Pure-read probe: streams n16 16-byte elements from src and writes nothing,
// for the measured read ceiling of experiments/bandwidth.lua (the Vulkan twin,
// kernels/vulkan/read.comp, takes the same arguments).
//
// Each thread folds what it loads into an accumulator and stores it to
// out[thread] only when it equals `sentinel`. The caller picks a sentinel its
// data can never produce (for data filled with one repeated 32-bit pattern
// every accumulator is 0, so any nonzero sentinel works); the store is then
// never executed, yet the compiler cannot drop the loads that feed it. out
// needs one unsigned per launched thread only if the sentinel can match.
//
// Four independent loads per thread per iteration keep enough bytes in
// flight to saturate HBM; the access pattern stays coalesced (consecutive
// threads read consecutive 16-byte elements in each of the four loads). Any
// grid and block size works (grid_stride.cuh).
//
// Launch overlap (launch_overlap.cuh): it waits before its first load, as a
// GEMV waits before it reads x, so that tools/read_at_size.lua OVERLAP=1 times
// the same overlap as an overlapped GEMV of that size.

#include "grid_stride.cuh"
#include "launch_overlap.cuh"

GB_LAUNCH_OVERLAP

static __device__ __forceinline__ unsigned fold(uint4 v)
{
    return (v.x ^ v.y) ^ (v.z ^ v.w);
}

extern "C" __global__ void read(const uint4* __restrict__ src, unsigned* __restrict__ out,
                                unsigned n16, unsigned sentinel)
{
    gb_overlap_start();
    const unsigned long long n = n16;
    const unsigned long long stride = total_threads();
    const unsigned long long tid = linear_thread();
    unsigned long long i = tid;
    unsigned acc = 0;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 a = src[i];
        const uint4 b = src[i + stride];
        const uint4 c = src[i + 2 * stride];
        const uint4 d = src[i + 3 * stride];
        acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    }
    for (; i < n; i += stride)
        acc ^= fold(src[i]);
    if (acc == sentinel)
        out[tid] = acc;
}
