// Test kernels for launch overlap (kernels/cuda/launch_overlap.cuh,
// tests/c/test_cuda_backend.c): each adds 1 to each of n counters after
// `spin_ns` of waiting. overlap_inc reads a counter only after the wait, so a
// batch of N overlapped launches leaves exactly N; overlap_inc_early reads it
// before the wait (breaking the promise GB_LAUNCH_OVERLAP makes), so when the
// launches really overlap, increments are lost.
#include "../../../kernels/cuda/launch_overlap.cuh"

GB_LAUNCH_OVERLAP

static __device__ void spin(unsigned ns)
{
    for (unsigned t = 0; t < ns; t += 1000) __nanosleep(1000);
}

extern "C" __global__ void overlap_inc(unsigned* __restrict__ counters, unsigned n, unsigned spin_ns)
{
    gb_overlap_release();
    gb_overlap_wait();
    spin(spin_ns);
    const unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        counters[i] += 1;
}

extern "C" __global__ void overlap_inc_early(unsigned* __restrict__ counters, unsigned n, unsigned spin_ns)
{
    gb_overlap_release();
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned v = i < n ? counters[i] : 0u;
    gb_overlap_wait();
    spin(spin_ns);
    if (i < n) counters[i] = v + 1;
}
