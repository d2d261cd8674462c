/* Check counting shared by the C tests (tests/c/test_*.c), one copy for all.
 *
 * CHECK(cond, fmt, ...) counts one check; when cond is false it also counts a
 * failure and prints "FAIL file:line: cond: message". check_finish prints the
 * summary line "<test>: N checks, N failed" and gives main's exit status:
 * 0 when nothing failed, 1 otherwise. A test that cannot run here (no device,
 * no NVRTC) returns check_skip(...): 77, which CMakeLists.txt declares as
 * SKIP_RETURN_CODE, or 1 where the requirement is mandatory (in CI). */
#ifndef GPUBENCH_TEST_CHECK_H
#define GPUBENCH_TEST_CHECK_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks, failures;

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        checks++;                                                                                 \
        if (!(cond)) {                                                                            \
            failures++;                                                                           \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                \
            printf(__VA_ARGS__);                                                                  \
            printf("\n");                                                                         \
        }                                                                                         \
    } while (0)

/* "ok - name" or "not ok - name" for a group of checks, given the failure
 * count from before the group. */
static inline void report(const char *name, int failures_before) {
    printf("%s - %s\n", failures == failures_before ? "ok" : "not ok", name);
}

/* The summary line; the return value is main's exit status. */
static inline int check_finish(const char *test) {
    printf("%s: %d checks, %d failed\n", test, checks, failures);
    return failures ? 1 : 0;
}

/* Whether this is a CI run (CI=true or CI=1), where a test must not pass by
 * skipping what CI is known to provide. */
static inline int check_in_ci(void) {
    const char *ci = getenv("CI");
    return ci && (strcmp(ci, "true") == 0 || strcmp(ci, "1") == 0);
}

/* Prints "skipped: <why>" and returns 77, or, when required, "FAIL (CI=...):
 * <why>" and returns 1: the exit status for a test that cannot run here. */
static inline int check_skip(int required, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int check_skip(int required, const char *fmt, ...) {
    if (required)
        printf("FAIL (CI=%s): ", getenv("CI") ? getenv("CI") : "");
    else
        printf("skipped: ");
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    return required ? 1 : 77;
}
#endif
