// Device-to-device copy of n16 16-byte elements, for experiments/bandwidth.lua
// (the Vulkan twin, kernels/vulkan/copy.comp, takes the same arguments).
//
// A grid-stride loop, so any grid and block size covers the whole range; the
// thread index is linearized over all three dimensions of both. Indices are
// 64-bit: n16 may reach 2^32 - 1 elements (64 GiB), past what a 32-bit
// index times 16 can address.

static __device__ __forceinline__ unsigned long long linear_thread()
{
    const unsigned long long block =
        ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    const unsigned long long in_block =
        ((unsigned long long)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    return block * ((unsigned long long)blockDim.x * blockDim.y * blockDim.z) + in_block;
}

static __device__ __forceinline__ unsigned long long total_threads()
{
    return (unsigned long long)gridDim.x * gridDim.y * gridDim.z *
           ((unsigned long long)blockDim.x * blockDim.y * blockDim.z);
}

extern "C" __global__ void copy(const uint4* __restrict__ src, uint4* __restrict__ dst, unsigned n16)
{
    const unsigned long long n = n16;
    const unsigned long long stride = total_threads();
    for (unsigned long long i = linear_thread(); i < n; i += stride)
        dst[i] = src[i];
}
