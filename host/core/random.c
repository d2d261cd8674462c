#include "random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void gb_rng_seed(gb_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
    r->have_spare = 0;
    r->spare = 0;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t gb_rng_next(gb_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* The state transition of gb_rng_next is linear over GF(2): s' = T s with s
 * the 256 state bits. Advancing k draws applies T^k, by squaring: m holds
 * T^(2^i) as the images of the 256 unit vectors. */
typedef struct { uint64_t col[256][4]; } gb_gf2_256;

static void gf2_apply(const gb_gf2_256 *m, const uint64_t v[4], uint64_t out[4]) {
    uint64_t o[4] = {0, 0, 0, 0};
    for (int w = 0; w < 4; w++)
        for (uint64_t bits = v[w]; bits; bits &= bits - 1) {
            const uint64_t *c = m->col[64 * w + __builtin_ctzll(bits)];
            o[0] ^= c[0], o[1] ^= c[1], o[2] ^= c[2], o[3] ^= c[3];
        }
    memcpy(out, o, sizeof o);
}

void gb_rng_advance(gb_rng *r, uint64_t k) {
    if (k < 512) { /* cheaper to step */
        while (k--) gb_rng_next(r);
        return;
    }
    gb_gf2_256 *m = malloc(2 * sizeof *m);
    if (!m) { /* no memory for the matrices: step (slow, same result) */
        while (k--) gb_rng_next(r);
        return;
    }
    gb_gf2_256 *sq = m + 1;
    for (int j = 0; j < 256; j++) { /* T's columns: one step from each unit vector */
        gb_rng u = {{0, 0, 0, 0}, 0, 0.0};
        u.s[j / 64] = 1ULL << (j % 64);
        gb_rng_next(&u);
        memcpy(m->col[j], u.s, sizeof u.s);
    }
    for (; k; k >>= 1) {
        if (k & 1) gf2_apply(m, r->s, r->s);
        if (k > 1) {
            for (int j = 0; j < 256; j++) gf2_apply(m, m->col[j], sq->col[j]); /* T^(2^(i+1)) */
            memcpy(m, sq, sizeof *m);
        }
    }
    free(m);
}

double gb_rng_uniform(gb_rng *r) { return (double)(gb_rng_next(r) >> 11) * 0x1.0p-53; }

double gb_rng_normal(gb_rng *r) {
    if (r->have_spare) {
        r->have_spare = 0;
        return r->spare;
    }
    /* Box-Muller on (0,1]: 1 - u avoids log(0). */
    double u = 1.0 - gb_rng_uniform(r), v = gb_rng_uniform(r);
    double rad = sqrt(-2.0 * log(u)), th = 6.283185307179586 * v;
    r->spare = rad * sin(th);
    r->have_spare = 1;
    return rad * cos(th);
}

int gb_dtype_from_name(const char *name, gb_dtype *out) {
    static const struct { const char *n; gb_dtype d; } t[] = {
        {"f32", GB_DT_F32}, {"f16", GB_DT_F16}, {"bf16", GB_DT_BF16},
        {"u8", GB_DT_U8},   {"bytes", GB_DT_U8}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(name, t[i].n) == 0) {
            *out = t[i].d;
            return 0;
        }
    return -1;
}

size_t gb_dtype_size(gb_dtype dt) {
    switch (dt) {
    case GB_DT_F32: return 4;
    case GB_DT_F16:
    case GB_DT_BF16: return 2;
    case GB_DT_U8: return 1;
    }
    return 1;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t gb_f32_to_bf16(float f) {
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);                                       /* nearest even */
    return (uint16_t)(u >> 16);
}

float gb_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t gb_f32_to_f16(float f) {
    uint32_t u = f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u); /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to inf */
    if (a < 0x38800000u) {
        /* Subnormal or zero in fp16: scale so the integer part is the result,
         * letting the FPU round to nearest even. */
        float v = bits_f32(a) * 16777216.0f; /* 2^24 */
        return (uint16_t)(sign | (uint32_t)lrintf(v));
    }
    uint32_t mant_odd = (a >> 13) & 1u;
    a += 0xfffu + mant_odd; /* round mantissa to 10 bits, nearest even */
    return (uint16_t)(sign | (((a - 0x38000000u) >> 13) & 0x7fffu));
}

float gb_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ffu;
    if (e == 0) {
        float v = (float)m * 0x1.0p-24f; /* exact: subnormals kept */
        return sign ? -v : v;
    }
    if (e == 31) return bits_f32(sign | 0x7f800000u | (m << 13));
    return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

/* The next representable value below a binary16 or bfloat16 (both sign-
 * magnitude, so a positive value steps down by one code, a negative one up;
 * either zero steps to the smallest negative subnormal). */
static uint16_t half_step_down(uint16_t h) {
    if ((h & 0x7fffu) == 0) return 0x8001u;
    return (h & 0x8000u) ? (uint16_t)(h + 1) : (uint16_t)(h - 1);
}

void gb_random_fill(void *out, size_t n, gb_dtype dt, gb_dist dist, double a, double b,
                    gb_rng *r) {
    unsigned char *p = out;
    /* Uniform draws are in [a, b) in double, but rounding to the element type
     * can land on b itself (1 in ~8000 draws for f16 over [-1, 1)); such a
     * value steps down to the largest representable value below b, unless
     * that falls under a (a range narrower than one step of the type). */
    int half_open = dist == GB_DIST_UNIFORM && b > a;
    for (size_t i = 0; i < n; i++) {
        if (dt == GB_DT_U8) { /* integers a..b (0..255 by default: the top byte) */
            uint64_t x = gb_rng_next(r);
            if (a <= 0 && b >= 255) {
                p[i] = (unsigned char)(x >> 56);
            } else {
                uint64_t span = (uint64_t)(b - a) + 1;
                p[i] = (unsigned char)(a + (double)(((x >> 32) * span) >> 32));
            }
            continue;
        }
        double v = dist == GB_DIST_NORMAL ? a + b * gb_rng_normal(r)
                                          : a + (b - a) * gb_rng_uniform(r);
        if (dt == GB_DT_F32) {
            float f = (float)v;
            if (half_open && (double)f >= b) {
                float below = nextafterf(f, -INFINITY);
                if ((double)below >= a) f = below;
            }
            memcpy(p + 4 * i, &f, 4);
        } else {
            int f16 = dt == GB_DT_F16;
            uint16_t h = f16 ? gb_f32_to_f16((float)v) : gb_f32_to_bf16((float)v);
            if (half_open && (double)(f16 ? gb_f16_to_f32(h) : gb_bf16_to_f32(h)) >= b) {
                uint16_t below = half_step_down(h);
                if ((double)(f16 ? gb_f16_to_f32(below) : gb_bf16_to_f32(below)) >= a) h = below;
            }
            memcpy(p + 2 * i, &h, 2);
        }
    }
}
