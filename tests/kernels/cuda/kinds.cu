// Test kernel: one parameter of every argument kind, each written back as a
// 64-bit word so the host can compare the exact bits it passed
// (tests/c/test_cuda_backend.c).
extern "C" __global__ void kinds(unsigned long long* out, unsigned a, int b, float c,
                                 unsigned long long d, const unsigned* __restrict__ p)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = a;
        out[1] = (unsigned long long)(long long)b; // sign-extended: shows b arrived signed
        out[2] = __float_as_uint(c);
        out[3] = d;
        out[4] = p[0];
    }
}
