// Test kernel: adds 1 to each of n counters. A batch of N launches must leave
// N in every counter, which shows that every launch ran and that consecutive
// launches saw each other's writes (tests/c/test_cuda_backend.c).
extern "C" __global__ void inc(unsigned* __restrict__ counters, unsigned n)
{
    const unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        counters[i] += 1;
}
