// gpubench-compile: entry=dyn_shared defines=BYTES=102400
// gpubench-compile: entry=dyn_shared defines=BYTES=300000
// Fills BYTES of dynamic shared memory (GB_DYNAMIC_SHARED) with a pattern of
// each word's index and the block, then writes them back reversed: a launch
// that did not get all its bytes traps or leaves wrong words
// (tests/c/test_cuda_backend.c). out: gridDim.x * BYTES / 4 words.
#include "../../../kernels/cuda/dynamic_shared.cuh"

#ifndef BYTES
#define BYTES 102400
#endif

GB_DYNAMIC_SHARED(BYTES)

extern "C" __global__ void dyn_shared(unsigned* out, unsigned salt)
{
    enum { WORDS = BYTES / 4 };
    unsigned* s = reinterpret_cast<unsigned*>(gb_dynamic_shared(BYTES));
    for (unsigned i = threadIdx.x; i < WORDS; i += blockDim.x) s[i] = (i * 2654435761u) ^ (blockIdx.x + salt);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < WORDS; i += blockDim.x)
        out[(unsigned long long)blockIdx.x * WORDS + i] = s[WORDS - 1 - i];
}
