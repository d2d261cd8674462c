// Test kernel: writes through a null pointer offset, an illegal address, so
// the next wait reports the fault (tests/cli/test_cuda_fault.sh).
extern "C" __global__ void fault(unsigned* out, unsigned long long bad)
{
    unsigned* p = reinterpret_cast<unsigned*>(bad);
    p[threadIdx.x] = out[0];
}
