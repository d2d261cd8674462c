// Part of the host emulations of the CUDA kernels (tests/cuda_host/
// gemv_emulate.cu through emu_host.cuh, linear_emulate.cu): a guarded buffer.
// Needs <sys/mman.h>, <unistd.h> and <cassert> before it.
#ifndef GPUBENCH_EMU_GUARD_CUH
#define GPUBENCH_EMU_GUARD_CUH
// A buffer of n bytes whose end is a page boundary followed by an inaccessible page.
struct Guarded {
    unsigned char* base = nullptr; size_t maplen = 0; unsigned char* p = nullptr; size_t n = 0;
    explicit Guarded(size_t n_) : n(n_) {
        long pg = sysconf(_SC_PAGESIZE);
        size_t data_pages = (n + pg - 1) / pg + 1;
        maplen = (data_pages + 1) * pg;
        base = (unsigned char*)mmap(nullptr, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert(base != MAP_FAILED);
        unsigned char* guard = base + data_pages * pg;
        mprotect(guard, pg, PROT_NONE);
        mprotect(base, pg, PROT_NONE); // also a guard before
        p = guard - n;
    }
    ~Guarded() { munmap(base, maplen); }
};

#endif
