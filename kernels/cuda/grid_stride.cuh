// Grid-stride indexing shared by the bandwidth kernels (copy.cu, read.cu): the
// thread index linearized over all three dimensions of grid and block, so any
// launch geometry covers the whole range. 64-bit, because n16 may reach
// 2^32 - 1 elements (64 GiB), past what a 32-bit index times 16 can address.
#ifndef GPUBENCH_GRID_STRIDE_CUH
#define GPUBENCH_GRID_STRIDE_CUH

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

#endif
