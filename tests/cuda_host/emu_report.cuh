// Part of the host emulations of the CUDA kernels (tests/cuda_host/*.cu,
// included after the reference headers, which declare gb_err): how they
// report. The reference code reports errors through gb_fail_at
// (host/core/backend.c, which would pull in the backends), so a minimal
// version that prints; and the failure count with CHECK, which the
// emulations' checks and copy contexts add to and main returns.
#ifndef GPUBENCH_EMU_REPORT_CUH
#define GPUBENCH_EMU_REPORT_CUH
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

extern "C" int gb_fail_at(gb_err* e, const char* file, int line, const char* fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ref error: %s [%s:%d]\n", buf, file, line);
    if (e) { free(e->msg); e->msg = NULL; }
    return -1;
}
extern "C" void gb_err_clear(gb_err* e) { if (e) { free(e->msg); e->msg = NULL; } }

static int failures = 0;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
// CHECK counted, for the emulations that report how many checks they made.
static int checks = 0;
#define EXPECT(cond, ...)         \
    do {                          \
        checks++;                 \
        CHECK(cond, __VA_ARGS__); \
    } while (0)

#endif
