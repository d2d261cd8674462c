/* Reference dequantization on hand-built blocks that pin every field of every
 * format in docs/FORMATS.md. Expected values come from literals worked out by hand
 * or from element-level formulas written here; blocks are built by packing
 * chosen element codes with the layout's inverse, never by calling the
 * decoder under test. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "formats.h"
#include "ref_dequant.h"
#include "test_util.h"

/* Bit-exact comparison, +0 and -0 equal, NaN equal to NaN: one check for
 * the whole array, which reports the first few mismatches. */
static void expect_floats(const char *what, const float *got, const float *want, int n) {
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int same = got[i] == want[i] || (isnan(got[i]) && isnan(want[i]));
        if (!same && bad++ < 4) {
            printf("FAIL %s: element %d is %a (%.9g), expected %a (%.9g)\n", what, i, got[i],
                   got[i], want[i], want[i]);
        }
    }
    if (bad > 4) printf("FAIL %s: %d mismatching elements in all\n", what, bad);
    checks++;
    if (bad) failures++;
}

static void dequant(const char *fmt, const uint8_t *src, size_t nbytes, float *out) {
    gb_err e = {0};
    const gb_format *f = gb_format_find(fmt);
    CHECK(f != NULL, "format %s missing", fmt);
    if (!f) return;
    int rc = gb_ref_dequantize(f, src, nbytes, out, &e);
    CHECK(rc == 0, "dequantize %s failed: %s", fmt, e.msg ? e.msg : "?");
    gb_err_clear(&e);
}

/* ------------------------------------------------------------------ f32/f16/bf16 */

static void test_plain(void) {
    /* f32 passes bits through, including -0, the largest finite and the smallest subnormal. */
    const uint32_t f32_bits[] = {0x3f800000u, 0x80000000u, 0x7f7fffffu, 0x00000001u, 0xc0490fdbu};
    uint8_t buf[4 * 5];
    float out[5];
    memcpy(buf, f32_bits, sizeof f32_bits);
    dequant("f32", buf, sizeof buf, out);
    CHECK(memcmp(out, f32_bits, sizeof f32_bits) == 0, "f32 dequantization changed bits");

    /* fp16: normal, negative, subnormals (kept exactly), largest finite, -0, 1/3 rounded,
     * infinities. */
    const uint16_t h[] = {0x3c00, 0xc000, 0x0001, 0x03ff, 0x7bff,
                          0x8000, 0x3555, 0x7c00, 0xfc00, 0x0400};
    const float hv[] = {1.0f,  -2.0f,           0x1p-24f, 0x1.ff8p-15f, 65504.0f,
                        -0.0f, 0.333251953125f, INFINITY, -INFINITY,    0x1p-14f};
    uint8_t hb[2 * 10];
    float ho[10];
    for (int i = 0; i < 10; i++) put16(hb + 2 * i, h[i]);
    dequant("f16", hb, sizeof hb, ho);
    expect_floats("f16", ho, hv, 10);
    CHECK(signbit(ho[5]), "f16 0x8000 must decode to -0");

    /* bf16: the top half of an fp32. */
    const uint16_t b[] = {0x3f80, 0x4049, 0xbf00, 0x0001, 0x8000, 0x7f7f, 0x3eab};
    const float bv[] = {1.0f, 3.140625f, -0.5f, 0x1p-133f, -0.0f, 0x1.fep127f, 0.333984375f};
    uint8_t bb[2 * 7];
    float bo[7];
    for (int i = 0; i < 7; i++) put16(bb + 2 * i, b[i]);
    dequant("bf16", bb, sizeof bb, bo);
    expect_floats("bf16", bo, bv, 7);
}

/* ------------------------------------------------------------------ q4_0, q8_0 */

static void test_q4_0(void) {
    /* Block 0: d = 0.5, qs[j] = j | (15-j) << 4, so element j < 16 is (j-8)*d and
     * element 16+j is (7-j)*d. Block 1: d = -0.25 (negative scale). */
    uint8_t blk[2 * 18];
    put16(blk, 0x3800);
    put16(blk + 18, 0xb400);
    for (int j = 0; j < 16; j++) {
        blk[2 + j] = (uint8_t)(j | ((15 - j) << 4));
        blk[18 + 2 + j] = (uint8_t)(j | ((15 - j) << 4));
    }
    float want[64], got[64];
    for (int j = 0; j < 16; j++) {
        want[j] = (float)(j - 8) * 0.5f;
        want[16 + j] = (float)(7 - j) * 0.5f;
        want[32 + j] = (float)(j - 8) * -0.25f;
        want[48 + j] = (float)(7 - j) * -0.25f;
    }
    dequant("q4_0", blk, sizeof blk, got);
    expect_floats("q4_0", got, want, 64);
    /* Spot values by hand: element 0 = -8*0.5, element 16 = 7*0.5, element 31 = -8*0.5. */
    CHECK(got[0] == -4.0f && got[16] == 3.5f && got[31] == -4.0f && got[15] == 3.5f,
          "q4_0 spot values %g %g %g %g", got[0], got[16], got[31], got[15]);
    CHECK(got[32] == 2.0f && got[47] == -1.75f, "q4_0 negative d spot values %g %g", got[32],
          got[47]);
}

static void test_q8_0(void) {
    /* Block 0: d = -1.5, signed bytes covering -128 and 127. Block 1: d = 2^-24
     * (the smallest fp16 subnormal). Block 2: d = 0x03ff (largest subnormal). */
    uint8_t blk[3 * 34];
    put16(blk, 0xbe00);
    put16(blk + 34, 0x0001);
    put16(blk + 68, 0x03ff);
    int8_t q[32];
    for (int j = 0; j < 32; j++) q[j] = (int8_t)(j * 8 - 128); /* -128, -120, ..., 120 */
    q[31] = 127;
    for (int b = 0; b < 3; b++) memcpy(blk + 34 * b + 2, q, 32);
    float want[96], got[96];
    for (int j = 0; j < 32; j++) {
        want[j] = (float)q[j] * -1.5f;
        want[32 + j] = (float)ldexp(q[j], -24);
        want[64 + j] = (float)ldexp(q[j] * 1023.0, -24);
    }
    dequant("q8_0", blk, sizeof blk, got);
    expect_floats("q8_0", got, want, 96);
    CHECK(got[0] == 192.0f && got[31] == -190.5f && got[16] == 0.0f, "q8_0 spot values %g %g %g",
          got[0], got[31], got[16]);
    CHECK(got[32] == -0x1p-17f, "q8_0 subnormal d: element 0 is %a, expected -2^-17", got[32]);
}

/* ------------------------------------------------------------------ q4_k, q5_k */

/* Sub-block scales and mins, and their 12 packed bytes worked out by hand:
 * S[0..3] = sc[0..3] | (sc[4..7] >> 4) << 6, S[4..7] = m[0..3] | (m[4..7] >> 4) << 6,
 * S[8..11] = (sc[4..7] & 15) | (m[4..7] & 15) << 4. The high bits differ between
 * S[s-4] and S[s] for every s >= 4, so reading the wrong byte shows. */
static const int KSC[8] = {1, 62, 33, 7, 45, 18, 63, 50};
static const int KM[8] = {5, 40, 63, 0, 59, 22, 36, 17};
static const uint8_t KS[12] = {0x81, 0x7e, 0xe1, 0xc7, 0xc5, 0x68,
                               0xbf, 0x40, 0xbd, 0x62, 0x4f, 0x12};

/* Element codes for the k-quant blocks. A multiplier modulo the prime 251 keeps
 * them aperiodic: a code pattern that repeats every 32 or 64 elements would
 * hide a decoder that reads the wrong sub-block's bytes. */
static int code(int e, int mask) { return ((e * 97 + 13) % 251) & mask; }

static void check_aperiodic(const int *q, const char *what) {
    for (int period = 16; period < 256; period *= 2) {
        int differs = 0;
        for (int e = 0; e + period < 256; e++) differs |= q[e] != q[e + period];
        CHECK(differs, "%s test data repeats every %d elements", what, period);
    }
}

/* Packs 4-bit codes into qs by the layout: element e sits in byte
 * 32*(e/64) + e%32, low nibble for even sub-blocks, high for odd. */
static void pack_k_nibbles(const int *q, uint8_t *qs) {
    memset(qs, 0, 128);
    for (int e = 0; e < 256; e++) {
        int s = e / 32;
        qs[32 * (e / 64) + e % 32] |= (uint8_t)((q[e] & 15) << (4 * (s & 1)));
    }
}

static void k_expected(const float dval, const float dminval, const int *q, float *want) {
    for (int e = 0; e < 256; e++) {
        int s = e / 32;
        /* Exact in double, then one rounding to float: docs/FORMATS.md's one rounding. */
        want[e] = (float)((double)dval * KSC[s] * q[e] - (double)dminval * KM[s]);
    }
}

static void test_q4_k(void) {
    int q[256];
    for (int e = 0; e < 256; e++) q[e] = code(e, 15);
    check_aperiodic(q, "q4_k");
    /* Block 0: d = 1, dmin = 0.5 (values checked by hand below). Block 1:
     * d = -0.333251953125 (0xb555), dmin = 1659 * 2^-19 (0x1a7b): d*sc*q and dmin*m
     * lie 20+ binades apart, so their difference needs rounding to fp32. */
    uint8_t blk[2 * 144];
    put16(blk, 0x3c00);
    put16(blk + 2, 0x3800);
    put16(blk + 144, 0xb555);
    put16(blk + 144 + 2, 0x1a7b);
    for (int b = 0; b < 2; b++) {
        memcpy(blk + 144 * b + 4, KS, 12);
        pack_k_nibbles(q, blk + 144 * b + 16);
    }
    float want[512], got[512];
    k_expected(1.0f, 0.5f, q, want);
    k_expected(-0.333251953125f, (float)ldexp(1659, -19), q, want + 256);
    dequant("q4_k", blk, sizeof blk, got);
    expect_floats("q4_k", got, want, 512);
    /* By hand (block 0): e=0 s=0 q=13: 1*13-2.5; e=33 s=1 q=10: 62*10-20;
     * e=128 s=4 q=2: 45*2-29.5; e=200 s=6 q=6: 63*6-18; e=255 s=7 q=6: 50*6-8.5. */
    CHECK(got[0] == 10.5f && got[33] == 600.0f && got[128] == 60.5f && got[200] == 360.0f &&
              got[255] == 291.5f,
          "q4_k hand values %g %g %g %g %g", got[0], got[33], got[128], got[200], got[255]);
    /* The rounding block must not be exact in fp32 everywhere, or it pins nothing. */
    int rounded = 0;
    for (int e = 0; e < 256; e++)
        if ((double)want[256 + e] !=
            -0.333251953125 * KSC[e / 32] * q[e] - ldexp(1659, -19) * KM[e / 32])
            rounded++;
    CHECK(rounded > 0, "q4_k test block never rounds");
}

static void test_q5_k(void) {
    int q[256];
    for (int e = 0; e < 256; e++) q[e] = code(e, 31);
    check_aperiodic(q, "q5_k");
    /* Both values of the fifth bit occur in every sub-block. */
    for (int s = 0; s < 8; s++) {
        int ones = 0;
        for (int l = 0; l < 32; l++) ones += q[32 * s + l] >> 4;
        CHECK(ones > 0 && ones < 32, "q5_k test data: sub-block %d has %d fifth bits set", s, ones);
    }
    uint8_t blk[2 * 176];
    memset(blk, 0, sizeof blk);
    put16(blk, 0x3c00);
    put16(blk + 2, 0x3800);
    put16(blk + 176, 0xb555);
    put16(blk + 176 + 2, 0x1a7b);
    for (int b = 0; b < 2; b++) {
        uint8_t *p = blk + 176 * b;
        memcpy(p + 4, KS, 12);
        /* Fifth bit of element e: bit e/32 of qh[e%32]. */
        for (int e = 0; e < 256; e++) p[16 + e % 32] |= (uint8_t)(((q[e] >> 4) & 1) << (e / 32));
        pack_k_nibbles(q, p + 48);
    }
    float want[512], got[512];
    k_expected(1.0f, 0.5f, q, want);
    k_expected(-0.333251953125f, (float)ldexp(1659, -19), q, want + 256);
    dequant("q5_k", blk, sizeof blk, got);
    expect_floats("q5_k", got, want, 512);
    /* By hand (block 0): e=3: q=21 -> 1*21-2.5; e=40: q=0 -> 62*0-20;
     * e=77: q=11 -> 33*11-31.5; e=130: q=9 -> 45*9-29.5; e=161: q=4 -> 18*4-11;
     * e=200: q=22 -> 63*22-18; e=255: q=22 -> 50*22-8.5. */
    CHECK(got[3] == 18.5f && got[40] == -20.0f && got[77] == 331.5f && got[130] == 375.5f &&
              got[161] == 61.0f && got[200] == 1368.0f && got[255] == 1091.5f,
          "q5_k hand values %g %g %g %g %g %g %g", got[3], got[40], got[77], got[130], got[161],
          got[200], got[255]);
}

/* ------------------------------------------------------------------ q6_k */

static const int8_t Q6SC[16] = {-128, 127,  -1, 1,   -77, 64,  3,  -3,
                                100,  -100, 17, -17, 2,   -64, 55, -9};

/* Packs codes u = q + 32 (0..63) by the layout: element e = 128h + 32k + l has
 * its low four bits in ql[64h + 32(k&1) + l] (low nibble for k < 2, high for
 * k >= 2) and its high two bits at bit 2k of qh[32h + l]. */
static void pack_q6(const int *q, uint8_t *blk, uint16_t d) {
    memset(blk, 0, 210);
    for (int e = 0; e < 256; e++) {
        int h = e / 128, r = e % 128, k = r / 32, l = r % 32, u = q[e] + 32;
        blk[64 * h + 32 * (k & 1) + l] |= (uint8_t)((u & 15) << (k < 2 ? 0 : 4));
        blk[128 + 32 * h + l] |= (uint8_t)((u >> 4) << (2 * k));
    }
    memcpy(blk + 192, Q6SC, 16);
    put16(blk + 208, d);
}

static void test_q6_k(void) {
    int q[256];
    for (int e = 0; e < 256; e++) q[e] = code(e, 63) - 32;
    check_aperiodic(q, "q6_k");
    /* Every (h, k) sees all four values of the high two bits. */
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < 4; k++) {
            int seen = 0;
            for (int l = 0; l < 32; l++) seen |= 1 << ((q[128 * h + 32 * k + l] + 32) >> 4);
            CHECK(seen == 15, "q6_k test data: h=%d k=%d high bits seen mask %x", h, k, seen);
        }
    /* Block 0: d = 1 (hand values). Block 1: d = -(1+543/1024) * 2^-8 (0x9e1f). */
    uint8_t blk[2 * 210];
    pack_q6(q, blk, 0x3c00);
    pack_q6(q, blk + 210, 0x9e1f);
    const double d1 = -(1.0 + 543.0 / 1024.0) / 256.0;
    float want[512], got[512];
    for (int e = 0; e < 256; e++) {
        want[e] = (float)(Q6SC[e / 16] * q[e]);
        want[256 + e] = (float)(d1 * Q6SC[e / 16] * q[e]);
    }
    dequant("q6_k", blk, sizeof blk, got);
    expect_floats("q6_k", got, want, 512);
    /* By hand (block 0): e=0: q=-19, sc=-128; e=37: q=-8, sc=-1; e=70: q=-6, sc=-77;
     * e=100: q=15, sc=3; e=131: q=10, sc=100; e=200: q=-10, sc=2; e=255: q=-10, sc=-9. */
    CHECK(got[0] == 2432.0f && got[37] == 8.0f && got[70] == 462.0f && got[100] == 45.0f &&
              got[131] == 1000.0f && got[200] == -20.0f && got[255] == 90.0f,
          "q6_k hand values %g %g %g %g %g %g %g", got[0], got[37], got[70], got[100], got[131],
          got[200], got[255]);
    /* d is read from bytes 208-209: setting them to 2 (0x4000) in the d = 1 block
     * must double every value. */
    uint8_t two[210];
    memcpy(two, blk, 210);
    put16(two + 208, 0x4000);
    float got2[256];
    dequant("q6_k", two, 210, got2);
    int doubled = 1;
    for (int e = 0; e < 256; e++) doubled &= got2[e] == 2.0f * got[e];
    CHECK(doubled, "q6_k: d at bytes 208-209 = 2 must double every value of the d = 1 block");
}

/* ------------------------------------------------------------------ errors, rows */

static void test_errors_and_rows(void) {
    gb_err e = {0};
    uint8_t buf[64] = {0};
    float out[64];
    const gb_format *q40 = gb_format_find("q4_0");
    int rc = gb_ref_dequantize(q40, buf, 19, out, &e);
    CHECK(rc == -1 && e.msg && strstr(e.msg, "dequantize failed: BAD_SIZE") &&
              strstr(e.msg, "19 bytes") && strstr(e.msg, "18-byte"),
          "partial block error: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);

    /* Row 1 of a 2 x 64 q4_0 matrix starts at byte 36: give each block its own d. */
    uint8_t m[4 * 18];
    const uint16_t ds[4] = {0x3c00, 0x4000, 0x4200, 0x4400}; /* 1, 2, 3, 4 */
    for (int b = 0; b < 4; b++) {
        put16(m + 18 * b, ds[b]);
        memset(m + 18 * b + 2, 0x9a, 16); /* low nibble 10 -> +2, high nibble 9 -> +1 */
    }
    float row[64];
    rc = gb_ref_dequant_row(q40, m, 2, 64, 1, row, &e);
    CHECK(rc == 0, "dequant_row failed: %s", e.msg ? e.msg : "?");
    gb_err_clear(&e);
    CHECK(row[0] == 6.0f && row[16] == 3.0f && row[32] == 8.0f && row[63] == 4.0f,
          "dequant_row row 1: %g %g %g %g, expected 6 3 8 4", row[0], row[16], row[32], row[63]);
    rc = gb_ref_dequant_row(q40, m, 2, 64, 2, row, &e);
    CHECK(rc == -1 && e.msg && strstr(e.msg, "BAD_ROW"), "row 2 of 2: %s",
          e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    rc = gb_ref_dequant_row(q40, m, 2, 48, 0, row, &e);
    CHECK(rc == -1 && e.msg && strstr(e.msg, "BAD_K") && strstr(e.msg, "k=48"), "k=48: %s",
          e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
}

int main(void) {
    test_plain();
    test_q4_0();
    test_q8_0();
    test_q4_k();
    test_q5_k();
    test_q6_k();
    test_errors_and_rows();
    return check_finish("test_ref_dequant");
}
