// Device-to-device copy of n16 16-byte elements, for experiments/bandwidth.lua
// (the Vulkan twin, kernels/vulkan/copy.comp, takes the same arguments).
// A grid-stride loop (grid_stride.cuh), so any grid and block size works.

#include "grid_stride.cuh"

extern "C" __global__ void copy(const uint4* __restrict__ src, uint4* __restrict__ dst, unsigned n16)
{
    const unsigned long long n = n16;
    const unsigned long long stride = total_threads();
    for (unsigned long long i = linear_thread(); i < n; i += stride)
        dst[i] = src[i];
}
