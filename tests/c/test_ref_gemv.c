/* The FP64 GEMV oracle against hand computations, and the per-row check. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "formats.h"
#include "ref_gemv.h"
#include "test_util.h"

static int gemv(const char *fmt, const void *w, size_t wbytes, uint64_t m, uint64_t k,
                const float *x, double *y, double *absdot, gb_err *e) {
    return gb_ref_gemv(gb_format_find(fmt), w, wbytes, m, k, x, y, absdot, e);
}

static void test_f32_by_hand(void) {
    /* W = [[1, 2, 3], [-4, 5, -6]], x = [0.5, -1, 2]:
     * y0 = 0.5 - 2 + 6 = 4.5, |.| sum 8.5; y1 = -2 - 5 - 12 = -19, |.| sum 19. */
    const float w[6] = {1, 2, 3, -4, 5, -6}, x[3] = {0.5f, -1, 2};
    double y[2], a[2];
    gb_err e = {0};
    CHECK(gemv("f32", w, sizeof w, 2, 3, x, y, a, &e) == 0, "f32 gemv: %s", e.msg);
    CHECK(y[0] == 4.5 && a[0] == 8.5 && y[1] == -19.0 && a[1] == 19.0,
          "f32 gemv: y = %g %g, absdot = %g %g", y[0], y[1], a[0], a[1]);

    /* Cancellation a plain double sum loses: 2^60 + 1 - 2^60 = 1. */
    const float big[3] = {0x1p60f, 1.0f, -0x1p60f}, ones[3] = {1, 1, 1};
    CHECK(gemv("f32", big, sizeof big, 1, 3, ones, y, a, &e) == 0, "f32 gemv: %s", e.msg);
    CHECK(y[0] == 1.0, "2^60 + 1 - 2^60 gave %.17g, expected 1", y[0]);
    CHECK(a[0] == 0x1p61 + 1.0, "absdot %.17g, expected 2^61 (+1 lost to rounding)", a[0]);
    gb_err_clear(&e);
}

static void test_q4_0_by_hand(void) {
    /* One q4_0 row of 32: d = 0.25, every qs byte 0x9a: elements 0..15 are
     * (10-8)*0.25 = 0.5, elements 16..31 are (9-8)*0.25 = 0.25.
     * x = all ones: y = 16*0.5 + 16*0.25 = 12. x alternating +1/-1: y = 0, absdot 12.
     * Second row: d = -2 (0xc000), qs = 0x08 (low 8 -> 0, high 0 -> -8):
     * elements 16..31 are 16 each; with x = ones y = 256. */
    uint8_t w[2 * 18];
    put16(w, 0x3400);
    memset(w + 2, 0x9a, 16);
    put16(w + 18, 0xc000);
    memset(w + 20, 0x08, 16);
    float ones[32], alt[32];
    for (int j = 0; j < 32; j++) {
        ones[j] = 1.0f;
        alt[j] = (j % 2) ? -1.0f : 1.0f;
    }
    double y[2], a[2];
    gb_err e = {0};
    CHECK(gemv("q4_0", w, sizeof w, 2, 32, ones, y, a, &e) == 0, "q4_0 gemv: %s", e.msg);
    CHECK(y[0] == 12.0 && a[0] == 12.0 && y[1] == 256.0 && a[1] == 256.0,
          "q4_0 x=1: y = %g %g absdot = %g %g", y[0], y[1], a[0], a[1]);
    CHECK(gemv("q4_0", w, sizeof w, 2, 32, alt, y, a, &e) == 0, "q4_0 gemv: %s", e.msg);
    CHECK(y[0] == 0.0 && a[0] == 12.0 && y[1] == 0.0 && a[1] == 256.0,
          "q4_0 x=+-1: y = %g %g absdot = %g %g", y[0], y[1], a[0], a[1]);
    gb_err_clear(&e);
}

static void test_gemv_errors(void) {
    uint8_t w[2 * 18] = {0};
    float x[64] = {0};
    double y[2], a[2];
    gb_err e = {0};
    CHECK(gemv("q4_0", w, 35, 2, 32, x, y, a, &e) == -1 && e.msg &&
              strstr(e.msg, "gemv failed: BAD_SIZE") && strstr(e.msg, "take 36 bytes") &&
              strstr(e.msg, "got 35"),
          "short weights: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    CHECK(gemv("q4_0", w, 36, 1, 36, x, y, a, &e) == -1 && e.msg && strstr(e.msg, "BAD_K") &&
              strstr(e.msg, "k=36") && strstr(e.msg, "qk=32"),
          "k=36: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    CHECK(gemv("q4_0", w, 36, 0, 32, x, y, a, &e) == -1 && e.msg && strstr(e.msg, "BAD_M"),
          "m=0: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
}

static void test_check_rows(void) {
    gb_row_check c;
    /* Row 0 exact; row 1 off by 1e-3 against absdot 1 (fails at 1e-4); row 2 NaN;
     * row 3 off by 5e-5 against absdot 1 (passes); row 4 absdot 0, exact. */
    const float y[5] = {1.0f, 2.0f, NAN, 4.0f, 0.5f};
    const double ref[5] = {1.0, 2.001, 3.0, 4.00005, 0.5};
    const double abs[5] = {10.0, 1.0, 1.0, 1.0, 0.0};
    gb_ref_check_rows(y, ref, abs, 5, 1e-4, &c);
    CHECK(c.failures == 2, "failures %llu, expected 2", (unsigned long long)c.failures);
    CHECK(c.worst_row == 2 && isinf(c.worst_rel), "worst row %llu rel %g, expected the NaN row 2",
          (unsigned long long)c.worst_row, c.worst_rel);

    /* Without the NaN row, the worst is row 1 at 1e-3 relative. */
    gb_ref_check_rows(y, ref, abs, 2, 1e-4, &c);
    CHECK(c.failures == 1 && c.worst_row == 1 && fabs(c.worst_rel - 1e-3) < 1e-9,
          "two rows: failures %llu worst %llu rel %g", (unsigned long long)c.failures,
          (unsigned long long)c.worst_row, c.worst_rel);

    /* absdot 0 uses the absolute error: 1e-3 fails, and so does +Inf. */
    const float y0[2] = {1e-3f, INFINITY};
    const double r0[2] = {0.0, 0.0}, a0[2] = {0.0, 0.0};
    gb_ref_check_rows(y0, r0, a0, 2, 1e-4, &c);
    CHECK(c.failures == 2 && c.worst_row == 1, "absdot 0: failures %llu worst %llu",
          (unsigned long long)c.failures, (unsigned long long)c.worst_row);
    gb_ref_check_rows(y0, r0, a0, 1, 1e-2, &c);
    CHECK(c.failures == 0 && fabs(c.worst_rel - 1e-3) < 1e-9, "absdot 0 within 1e-2: %llu %g",
          (unsigned long long)c.failures, c.worst_rel);

    /* A row exactly at tol passes: only rows above tol fail. */
    const float y1[1] = {1.5f};
    const double r1[1] = {1.0}, a1[1] = {2.0};
    gb_ref_check_rows(y1, r1, a1, 1, 0.25, &c);
    CHECK(c.failures == 0 && c.worst_rel == 0.25, "at tol: failures %llu rel %g",
          (unsigned long long)c.failures, c.worst_rel);
}

int main(void) {
    test_f32_by_hand();
    test_q4_0_by_hand();
    test_gemv_errors();
    test_check_rows();
    return check_finish("test_ref_gemv");
}
