/* require "gpubench.ref": the weight formats' geometry, random valid blocks,
 * reference dequantization and the FP64 GEMV oracle (host/ref: formats.c,
 * blocks.c, dequant.c, gemv.c; the planar formats and the Linear reference in
 * planar.c, linear.c; the formats themselves are defined in docs/FORMATS.md).
 * Every bulk loop runs here in C: Lua passes whole strings
 * (little-endian f32 or block bytes) and gets whole strings or tables back.
 *
 * Scratch arrays live in userdata, not malloc, so an error raised halfway
 * (a bad table entry, a failing C call) leaks nothing. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "formats.h"
#include "lbind.h"
#include "random_fill.h"
#include "lgpu.h"
#include "random.h"
#include "ref_blocks.h"
#include "ref_dequant.h"
#include "ref_gemv.h"
#include "ref_moe.h"
#include "ref_planar.h"

/* Raises a printf-formatted message (lua_pushfstring knows no %zu or %llu). */
static int ref_error(lua_State *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ref_error(lua_State *L, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lua_pushstring(L, msg);
    return lua_error(L);
}

/* A byte-string argument: strings only, since Lua would silently turn a
 * number into its decimal text. */
static const char *check_bytes(lua_State *L, int i, size_t *len, const char *fn, const char *what) {
    if (lua_type(L, i) != LUA_TSTRING)
        ref_error(L, "ref.%s: %s must be a string of bytes, got %s", fn, what, luaL_typename(L, i));
    return lua_tolstring(L, i, len);
}

/* The name of a format argument: a string, or the name field of one of the
 * format tables (kind: "format" or "planar format", for the message). */
static const char *format_name(lua_State *L, int i, const char *fn, const char *kind) {
    const char *name = NULL;
    if (lua_type(L, i) == LUA_TSTRING) {
        name = lua_tostring(L, i);
    } else if (lua_type(L, i) == LUA_TTABLE) {
        lua_getfield(L, i, "name"); /* left on the stack: name stays valid */
        name = lua_tostring(L, -1);
    }
    if (!name)
        ref_error(L, "ref.%s: fmt must be a %s name (a string), got %s", fn, kind, luaL_typename(L, i));
    return name;
}

/* A format argument: its name, or one of the ref.formats tables. */
static const gb_format *check_format(lua_State *L, int i, const char *fn) {
    const char *name = format_name(L, i, fn, "format");
    const gb_format *f;
    gb_err e = {0};
    if (gb_format_lookup(name, &f, &e) != 0) lb_raise(L, &e);
    return f;
}

/* A positive integer argument (floats with an integral value are accepted). */
static uint64_t check_positive(lua_State *L, int i, const char *fn, const char *what) {
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, i, &ok);
    if (!ok || v < 1)
        ref_error(L, "ref.%s: %s must be a positive integer, got %s", fn, what,
                  lua_type(L, i) == LUA_TNUMBER || lua_type(L, i) == LUA_TSTRING
                      ? lua_tostring(L, i)
                      : luaL_typename(L, i));
    return (uint64_t)v;
}

static uint64_t check_seed(lua_State *L, int i, const char *fn) {
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, i, &ok);
    if (!ok) ref_error(L, "ref.%s: seed must be an integer, got %s", fn, luaL_typename(L, i));
    return (uint64_t)v;
}

/* Scratch memory owned by a userdata pushed on the stack. */
static void *scratch(lua_State *L, uint64_t count, size_t elem, const char *fn, const char *what) {
    if (count > (SIZE_MAX / 2) / elem)
        ref_error(L, "ref.%s: %s of %llu elements is too large", fn, what,
                  (unsigned long long)count);
    return lua_newuserdatauv(L, (size_t)(count ? count : 1) * elem, 0);
}

/* Reads exactly n numbers from the list at index i into out. */
static void read_doubles(lua_State *L, int i, uint64_t n, double *out, const char *fn,
                         const char *what) {
    if (lua_type(L, i) != LUA_TTABLE)
        ref_error(L, "ref.%s: %s must be a table of numbers, got %s", fn, what,
                  luaL_typename(L, i));
    lua_Unsigned len = lua_rawlen(L, i);
    if (len != n)
        ref_error(L, "ref.%s: %s has %llu entries, expected %llu", fn, what,
                  (unsigned long long)len, (unsigned long long)n);
    for (uint64_t j = 0; j < n; j++) {
        if (lua_rawgeti(L, i, (lua_Integer)(j + 1)) != LUA_TNUMBER)
            ref_error(L, "ref.%s: %s[%llu] is a %s, expected a number", fn, what,
                      (unsigned long long)(j + 1), luaL_typename(L, -1));
        out[j] = lua_tonumber(L, -1);
        lua_pop(L, 1);
    }
}

static void push_doubles(lua_State *L, const double *v, uint64_t n) {
    lua_createtable(L, n > INT32_MAX ? 0 : (int)n, 0);
    for (uint64_t j = 0; j < n; j++) {
        lua_pushnumber(L, v[j]);
        lua_rawseti(L, -2, (lua_Integer)(j + 1));
    }
}

/* ref.row_bytes(fmt, k) */
static int l_row_bytes(lua_State *L) {
    const gb_format *f = check_format(L, 1, "row_bytes");
    uint64_t k = check_positive(L, 2, "row_bytes", "k"), bytes;
    gb_err e = {0};
    if (gb_format_row_bytes(f, k, &bytes, &e) != 0) lb_raise(L, &e);
    lua_pushinteger(L, (lua_Integer)bytes);
    return 1;
}

/* ref.random_blocks(fmt, nblocks, seed) */
static int l_random_blocks(lua_State *L) {
    const gb_format *f = check_format(L, 1, "random_blocks");
    uint64_t n = check_positive(L, 2, "random_blocks", "nblocks");
    uint64_t seed = check_seed(L, 3, "random_blocks");
    if (n > (SIZE_MAX / 2) / f->block_bytes)
        ref_error(L, "ref.random_blocks: %llu %s blocks is too many", (unsigned long long)n,
                  f->name);
    size_t bytes = (size_t)n * f->block_bytes;
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, bytes);
    gb_err e = {0};
    if (gb_ref_random_blocks(f, n, seed, p, &e) != 0) lb_raise(L, &e);
    luaL_pushresultsize(&b, bytes);
    return 1;
}

/* ref.random_f32(n, seed [, dist]) */
/* n random values of dtype (elem bytes each) as a string: ref.random_f32 and
 * ref.random_bf16, normal (0, 1; the default) or uniform [-1, 1) as
 * buf:fill_random's default, from the project's generator. */
static int push_random(lua_State *L, const char *fn, gb_dtype dt, size_t elem) {
    uint64_t n = check_positive(L, 1, fn, "n");
    uint64_t seed = check_seed(L, 2, fn);
    const char *dist = luaL_optstring(L, 3, "normal");
    gb_dist d;
    double a, b;
    if (strcmp(dist, "normal") == 0) {
        d = GB_DIST_NORMAL, a = 0.0, b = 1.0;
    } else if (strcmp(dist, "uniform") == 0) {
        d = GB_DIST_UNIFORM, a = -1.0, b = 1.0;
    } else {
        return ref_error(L, "ref.%s: dist must be 'normal' or 'uniform', got '%s'", fn, dist);
    }
    if (n > (SIZE_MAX / 2) / elem) ref_error(L, "ref.%s: n=%llu is too large", fn, (unsigned long long)n);
    gb_rng r;
    gb_rng_seed(&r, seed);
    luaL_Buffer buf;
    char *p = luaL_buffinitsize(L, &buf, (size_t)n * elem);
    gb_err e = {0};
    if (gb_ref_random_fill(p, (size_t)n, dt, d, a, b, &r, &e) != 0) lb_raise(L, &e);
    luaL_pushresultsize(&buf, (size_t)n * elem);
    return 1;
}

static int l_random_f32(lua_State *L) { return push_random(L, "random_f32", GB_DT_F32, 4); }

/* ref.dequantize(fmt, bytes) -> f32 string */
static int l_dequantize(lua_State *L) {
    const gb_format *f = check_format(L, 1, "dequantize");
    size_t nbytes;
    const char *src = check_bytes(L, 2, &nbytes, "dequantize", "bytes");
    /* gb_ref_dequantize rejects a partial block; the output is sized for the whole ones. */
    size_t nblocks = nbytes / f->block_bytes;
    if (nblocks > (SIZE_MAX / 2) / (4 * (size_t)f->qk))
        ref_error(L, "ref.dequantize: %zu %s blocks is too many", nblocks, f->name);
    size_t out_bytes = nblocks * f->qk * 4;
    float *y = scratch(L, nblocks * f->qk, sizeof(float), "dequantize", "output");
    gb_err e = {0};
    if (gb_ref_dequantize(f, src, nbytes, y, &e) != 0) lb_raise(L, &e);
    /* Floats are stored little-endian on every supported host (x86-64, aarch64). */
    lua_pushlstring(L, (const char *)y, out_bytes);
    return 1;
}

/* x for gemv: an f32 string of k elements or a list of k numbers. */
static float *check_x(lua_State *L, int i, uint64_t k) {
    float *x = scratch(L, k, sizeof(float), "gemv", "x");
    if (lua_type(L, i) == LUA_TSTRING) {
        size_t len;
        const char *s = lua_tolstring(L, i, &len);
        if (len != k * 4)
            ref_error(L, "ref.gemv: x is %zu bytes, expected k=%llu f32 values (%llu bytes)", len,
                      (unsigned long long)k, (unsigned long long)(k * 4));
        memcpy(x, s, len);
    } else if (lua_type(L, i) == LUA_TTABLE) {
        double *tmp = scratch(L, k, sizeof(double), "gemv", "x");
        read_doubles(L, i, k, tmp, "gemv", "x");
        for (uint64_t j = 0; j < k; j++) x[j] = (float)tmp[j];
        lua_pop(L, 1);
    } else {
        ref_error(L, "ref.gemv: x must be an f32 string or a table of numbers, got %s",
                  luaL_typename(L, i));
    }
    return x;
}

/* Arguments 1..4 of ref.gemv and ref.gemv_tokens: the format, weights of
 * exactly the m x k matrix's bytes, m and k. */
static const char *check_matrix(lua_State *L, const char *fn, const gb_format **f, size_t *wbytes, uint64_t *m,
                                uint64_t *k) {
    *f = check_format(L, 1, fn);
    const char *w = check_bytes(L, 2, wbytes, fn, "weights");
    *m = check_positive(L, 3, fn, "m");
    *k = check_positive(L, 4, fn, "k");
    uint64_t need;
    gb_err e = {0};
    if (gb_format_matrix_bytes(*f, *m, *k, &need, &e) != 0) lb_raise(L, &e);
    if (need != *wbytes)
        ref_error(L, "ref.%s: weights are %zu bytes, but %s m=%llu k=%llu takes %llu bytes", fn, *wbytes,
                  (*f)->name, (unsigned long long)*m, (unsigned long long)*k, (unsigned long long)need);
    return w;
}

/* ref.gemv(fmt, bytes, m, k, x) -> y, absdot */
static int l_gemv(lua_State *L) {
    const gb_format *f;
    size_t wbytes;
    uint64_t m, k;
    const char *w = check_matrix(L, "gemv", &f, &wbytes, &m, &k);
    gb_err e = {0};
    const float *x = check_x(L, 5, k);
    double *y = scratch(L, m, sizeof(double), "gemv", "y");
    double *absdot = scratch(L, m, sizeof(double), "gemv", "absdot");
    if (gb_ref_gemv(f, w, wbytes, m, k, x, y, absdot, &e) != 0) lb_raise(L, &e);
    push_doubles(L, y, m);
    push_doubles(L, absdot, m);
    return 2;
}

/* ref.gemv_tokens(fmt, bytes, m, k, xs, tokens) -> { {y, absdot}, ... }: one
 * {y, absdot} per row of xs (an f32 string of tokens * k values), each the
 * bits ref.gemv gives for that row; the weights decoded once for all. */
static int l_gemv_tokens(lua_State *L) {
    const gb_format *f;
    size_t wbytes, xbytes;
    uint64_t m, k;
    const char *w = check_matrix(L, "gemv_tokens", &f, &wbytes, &m, &k);
    const char *xs = check_bytes(L, 5, &xbytes, "gemv_tokens", "xs");
    uint64_t tokens = check_positive(L, 6, "gemv_tokens", "tokens");
    gb_err e = {0};
    if (tokens > UINT64_MAX / 4 / k || (uint64_t)xbytes != 4 * k * tokens)
        ref_error(L, "ref.gemv_tokens: xs is %zu bytes, expected tokens*k=%llu*%llu f32 values", xbytes,
                  (unsigned long long)tokens, (unsigned long long)k);
    if (tokens > UINT64_MAX / m) ref_error(L, "ref.gemv_tokens: tokens*m is too large");
    float *x = scratch(L, k * tokens, sizeof(float), "gemv_tokens", "xs");
    memcpy(x, xs, xbytes);
    double *y = scratch(L, m * tokens, sizeof(double), "gemv_tokens", "y");
    double *absdot = scratch(L, m * tokens, sizeof(double), "gemv_tokens", "absdot");
    if (gb_ref_gemv_tokens(f, w, wbytes, m, k, x, tokens, y, absdot, &e) != 0) lb_raise(L, &e);
    lua_createtable(L, tokens > INT32_MAX ? 0 : (int)tokens, 0);
    for (uint64_t t = 0; t < tokens; t++) {
        lua_createtable(L, 2, 0);
        push_doubles(L, y + t * m, m);
        lua_rawseti(L, -2, 1);
        push_doubles(L, absdot + t * m, m);
        lua_rawseti(L, -2, 2);
        lua_rawseti(L, -2, (lua_Integer)(t + 1));
    }
    return 1;
}

/* ref.check_rows(y_f32_string, y_ref, absdot, tol) -> ok, worst_row, worst_rel, failures */
static int l_check_rows(lua_State *L) {
    size_t len;
    const char *ys = check_bytes(L, 1, &len, "check_rows", "y");
    if (len == 0 || len % 4 != 0)
        ref_error(L,
                  "ref.check_rows: y must be a non-empty f32 string (a multiple of 4 bytes), "
                  "got %zu bytes",
                  len);
    lua_Number tol = luaL_checknumber(L, 4);
    if (!(tol >= 0) || isinf(tol))
        ref_error(L, "ref.check_rows: tol must be a finite non-negative number, got %g",
                  (double)tol);
    uint64_t m = len / 4;
    float *y = scratch(L, m, sizeof(float), "check_rows", "y");
    memcpy(y, ys, len);
    double *ref = scratch(L, m, sizeof(double), "check_rows", "y_ref");
    double *absdot = scratch(L, m, sizeof(double), "check_rows", "absdot");
    read_doubles(L, 2, m, ref, "check_rows", "y_ref");
    read_doubles(L, 3, m, absdot, "check_rows", "absdot");
    gb_row_check c;
    gb_ref_check_rows(y, ref, absdot, m, tol, &c);
    lua_pushboolean(L, c.failures == 0);
    lua_pushinteger(L, (lua_Integer)(c.worst_row + 1));
    lua_pushnumber(L, c.worst_rel);
    lua_pushinteger(L, (lua_Integer)c.failures);
    return 4;
}

/* ------------------------------------------------------------------ planar formats
 * The planar group formats and the Linear reference (host/ref/planar.c,
 * linear.c). A planar format is named by its table name ("Q4G64_F16S") or its
 * qtype ("q4", "q5", "q6", "w8", "nvfp4", "bf16"), or given as one of the
 * ref.planar_formats tables. */

static const gb_planar_format *check_planar(lua_State *L, int i, const char *fn) {
    const char *name = format_name(L, i, fn, "planar format");
    const gb_planar_format *f;
    gb_err e = {0};
    if (gb_planar_lookup(name, &f, &e) != 0) lb_raise(L, &e);
    return f;
}

/* The optional NVFP4 tensor scale: a finite number, 1 when absent. */
static float check_gscale(lua_State *L, int i, const char *fn) {
    if (lua_isnoneornil(L, i)) return 1.0f;
    if (lua_type(L, i) != LUA_TNUMBER)
        ref_error(L, "ref.%s: gscale must be a finite number, got %s", fn, luaL_typename(L, i));
    double g = lua_tonumber(L, i);
    if (!isfinite(g) || fabs(g) > FLT_MAX) /* checked before the cast, which would be UB */
        ref_error(L, "ref.%s: gscale must be a finite number (an fp32), got %g", fn, g);
    return (float)g;
}

static void planar_layout(lua_State *L, const gb_planar_format *f, uint64_t n, uint64_t k,
                          gb_planar_layout *l, const char *fn) {
    gb_err e = {0};
    if (gb_planar_layout_of(f, n, k, l, fn, &e) != 0) lb_raise(L, &e);
    if (l->bytes > SIZE_MAX / 2)
        ref_error(L, "ref.%s: %s n=%llu k=%llu is too large", fn, f->name, (unsigned long long)n,
                  (unsigned long long)k);
}

/* The weights argument: exactly the weight bytes of the shape. */
static const char *check_weights(lua_State *L, int i, const gb_planar_format *f,
                                 const gb_planar_layout *l, const char *fn) {
    size_t len;
    const char *w = check_bytes(L, i, &len, fn, "weights");
    if ((uint64_t)len != l->bytes)
        ref_error(L, "ref.%s: weights are %zu bytes, but %s n=%llu k=%llu takes %llu bytes", fn,
                  len, f->name, (unsigned long long)l->n, (unsigned long long)l->k,
                  (unsigned long long)l->bytes);
    return w;
}

/* A string argument of exactly count elements of elem bytes, copied into
 * aligned scratch memory (a Lua string's bytes carry no alignment promise). */
static void *check_array(lua_State *L, int i, uint64_t count, size_t elem, const char *fn,
                         const char *what, const char *kind, const char *shape) {
    size_t len;
    const char *p = check_bytes(L, i, &len, fn, what);
    if (count > (SIZE_MAX / 2) / elem || (uint64_t)len != count * elem)
        ref_error(L, "ref.%s: %s is %zu bytes, expected %s = %llu %s values (%llu bytes)", fn, what,
                  len, shape, (unsigned long long)count, kind, (unsigned long long)(count * elem));
    void *out = scratch(L, count, elem, fn, what);
    memcpy(out, p, len);
    return out;
}

/* t x n, checked for overflow; the product is what every [T, N] array holds. */
static uint64_t outputs(lua_State *L, uint64_t t, uint64_t n, const char *fn) {
    if (t > (SIZE_MAX / 16) / n)
        ref_error(L, "ref.%s: t=%llu x n=%llu outputs is too many", fn, (unsigned long long)t,
                  (unsigned long long)n);
    return t * n;
}

/* The format (argument 1) and the n and k (arguments n_arg, n_arg + 1) a
 * planar call is given, checked in that order. */
static const gb_planar_format *check_planar_nk(lua_State *L, int n_arg, const char *fn, uint64_t *n,
                                               uint64_t *k) {
    const gb_planar_format *f = check_planar(L, 1, fn);
    *n = check_positive(L, n_arg, fn, "n");
    *k = check_positive(L, n_arg + 1, fn, "k");
    return f;
}

/* ref.k_pad(fmt, k) -> K padded to the format's multiple (k itself for BF16) */
static int l_k_pad(lua_State *L) {
    const gb_planar_format *f = check_planar(L, 1, "k_pad");
    uint64_t k = check_positive(L, 2, "k_pad", "k");
    gb_planar_layout l;
    planar_layout(L, f, 1, k, &l, "k_pad");
    lua_pushinteger(L, (lua_Integer)l.k_pad);
    return 1;
}

/* ref.planar_weight_bytes(fmt, n, k) */
static int l_planar_weight_bytes(lua_State *L) {
    uint64_t n, k;
    const gb_planar_format *f = check_planar_nk(L, 2, "planar_weight_bytes", &n, &k);
    gb_planar_layout l;
    planar_layout(L, f, n, k, &l, "planar_weight_bytes");
    lua_pushinteger(L, (lua_Integer)l.bytes);
    return 1;
}

/* ref.planar_planes(fmt, n, k) -> {{name=, offset=, row_bytes=, bytes=}, ...} in plane order */
static int l_planar_planes(lua_State *L) {
    uint64_t n, k;
    const gb_planar_format *f = check_planar_nk(L, 2, "planar_planes", &n, &k);
    gb_planar_layout l;
    planar_layout(L, f, n, k, &l, "planar_planes");
    lua_createtable(L, l.nplanes, 0);
    for (int p = 0; p < l.nplanes; p++) {
        lua_createtable(L, 0, 4);
        lua_pushstring(L, l.planes[p].name);
        lua_setfield(L, -2, "name");
        lua_pushinteger(L, (lua_Integer)l.planes[p].offset);
        lua_setfield(L, -2, "offset");
        lua_pushinteger(L, (lua_Integer)l.planes[p].row_bytes);
        lua_setfield(L, -2, "row_bytes");
        lua_pushinteger(L, (lua_Integer)(l.planes[p].row_bytes * n));
        lua_setfield(L, -2, "bytes");
        lua_rawseti(L, -2, p + 1);
    }
    return 1;
}

/* ref.planar_random(fmt, n, k, seed) -> exactly the weight bytes */
static int l_planar_random(lua_State *L) {
    uint64_t n, k;
    const gb_planar_format *f = check_planar_nk(L, 2, "planar_random", &n, &k);
    uint64_t seed = check_seed(L, 4, "planar_random");
    gb_planar_layout l;
    planar_layout(L, f, n, k, &l, "planar_random");
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, (size_t)l.bytes);
    gb_err e = {0};
    if (gb_ref_planar_random(f, n, k, seed, p, (size_t)l.bytes, &e) != 0) lb_raise(L, &e);
    luaL_pushresultsize(&b, (size_t)l.bytes);
    return 1;
}

/* ref.planar_dequantize(fmt, bytes, n, k [, gscale]) -> f32 string [N, K] */
static int l_planar_dequantize(lua_State *L) {
    const char *fn = "planar_dequantize";
    uint64_t n, k;
    const gb_planar_format *f = check_planar_nk(L, 3, fn, &n, &k);
    gb_planar_layout l;
    planar_layout(L, f, n, k, &l, fn);
    const char *w = check_weights(L, 2, f, &l, fn);
    float gscale = check_gscale(L, 5, fn);
    if (n > (SIZE_MAX / 2) / sizeof(float) / k)
        ref_error(L, "ref.%s: n=%llu x k=%llu floats is too many", fn, (unsigned long long)n,
                  (unsigned long long)k);
    float *y = scratch(L, n * k, sizeof(float), fn, "output");
    gb_err e = {0};
    if (gb_ref_planar_dequantize(f, w, (size_t)l.bytes, n, k, gscale, y, &e) != 0) lb_raise(L, &e);
    lua_pushlstring(L, (const char *)y, (size_t)(n * k) * sizeof(float));
    return 1;
}

/* ref.random_bf16(n, seed [, dist]) -> bf16 string: normal(0, 1) or uniform [-1, 1) */
static int l_random_bf16(lua_State *L) { return push_random(L, "random_bf16", GB_DT_BF16, 2); }

/* ref.linear(fmt, weights, n, k, x_bf16, t [, gscale]) -> r, s (f64 strings [T, N]) */
static int l_linear(lua_State *L) {
    const char *fn = "linear";
    uint64_t n, k;
    const gb_planar_format *f = check_planar_nk(L, 3, fn, &n, &k);
    uint64_t t = check_positive(L, 6, fn, "t");
    gb_planar_layout l;
    planar_layout(L, f, n, k, &l, fn);
    const char *w = check_weights(L, 2, f, &l, fn);
    float gscale = check_gscale(L, 7, fn);
    uint64_t tn = outputs(L, t, n, fn);
    if (t > (SIZE_MAX / 4) / k)
        ref_error(L, "ref.%s: x of t=%llu x k=%llu is too large", fn, (unsigned long long)t,
                  (unsigned long long)k);
    char shape[64];
    snprintf(shape, sizeof shape, "t=%llu x k=%llu", (unsigned long long)t, (unsigned long long)k);
    const uint16_t *x = check_array(L, 5, t * k, 2, fn, "x", "bf16", shape);
    double *r = scratch(L, tn, sizeof(double), fn, "r");
    double *s = scratch(L, tn, sizeof(double), fn, "s");
    gb_err e = {0};
    if (gb_ref_linear(f, w, (size_t)l.bytes, n, k, gscale, x, (size_t)(t * k), t, r, s, &e) != 0)
        lb_raise(L, &e);
    lua_pushlstring(L, (const char *)r, (size_t)tn * sizeof(double));
    lua_pushlstring(L, (const char *)s, (size_t)tn * sizeof(double));
    return 2;
}

/* ref.check_linear(y_bf16, r, s, t, n [, weights]) -> {ok=, failures=, worst=, worst_at={t=, n=},
 * first={t=, n=, y=, ref=, bound=} (absent when nothing failed)}. t and n are
 * 0-based coordinates, as in y[t*N + n] (and as a kernel's rows are counted).
 * weights: "exact" (the default; exact or fp16 weights) or "bf16" (the wider bound
 * of weights rounded to bf16). */
static int l_check_linear(lua_State *L) {
    const char *fn = "check_linear";
    gb_weight_rounding wr = GB_WEIGHTS_EXACT;
    if (!lua_isnoneornil(L, 6)) {
        const char *v = lua_type(L, 6) == LUA_TSTRING ? lua_tostring(L, 6) : NULL;
        if (!v || (strcmp(v, "exact") != 0 && strcmp(v, "bf16") != 0))
            ref_error(L, "ref.%s: weights must be \"exact\" or \"bf16\", got %s", fn,
                      v ? v : luaL_typename(L, 6));
        wr = strcmp(v, "bf16") == 0 ? GB_WEIGHTS_BF16 : GB_WEIGHTS_EXACT;
    }
    uint64_t t = check_positive(L, 4, fn, "t");
    uint64_t n = check_positive(L, 5, fn, "n");
    uint64_t tn = outputs(L, t, n, fn);
    char shape[64];
    snprintf(shape, sizeof shape, "t=%llu x n=%llu", (unsigned long long)t, (unsigned long long)n);
    const uint16_t *y = check_array(L, 1, tn, 2, fn, "y", "bf16", shape);
    const double *r = check_array(L, 2, tn, 8, fn, "r", "f64", shape);
    const double *s = check_array(L, 3, tn, 8, fn, "s", "f64", shape);
    gb_linear_check c;
    gb_ref_check_linear(y, r, s, t, n, wr, &c);
    lua_createtable(L, 0, 5);
    lua_pushboolean(L, c.failures == 0);
    lua_setfield(L, -2, "ok");
    lua_pushinteger(L, (lua_Integer)c.failures);
    lua_setfield(L, -2, "failures");
    lua_pushnumber(L, c.worst);
    lua_setfield(L, -2, "worst");
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, (lua_Integer)c.worst_t);
    lua_setfield(L, -2, "t");
    lua_pushinteger(L, (lua_Integer)c.worst_n);
    lua_setfield(L, -2, "n");
    lua_setfield(L, -2, "worst_at");
    if (c.has_first) {
        lua_createtable(L, 0, 5);
        lua_pushinteger(L, (lua_Integer)c.first_t);
        lua_setfield(L, -2, "t");
        lua_pushinteger(L, (lua_Integer)c.first_n);
        lua_setfield(L, -2, "n");
        lua_pushnumber(L, c.first_y);
        lua_setfield(L, -2, "y");
        lua_pushnumber(L, c.first_r);
        lua_setfield(L, -2, "ref");
        lua_pushnumber(L, c.first_bound);
        lua_setfield(L, -2, "bound");
        lua_setfield(L, -2, "first");
    }
    return 1;
}

/* ref.planar_formats[name] and ref.planar_names (table names, in table order). */
static void push_planar_formats(lua_State *L) {
    int n = gb_planar_count();
    lua_createtable(L, 0, n); /* ref.planar_formats */
    lua_createtable(L, n, 0); /* ref.planar_names */
    for (int i = 0; i < n; i++) {
        const gb_planar_format *f = gb_planar_at(i);
        /* BF16 reads as groups of one element and a K_pad multiple of 1: not padded. */
        int planar = f->geom.layout == GB_LAYOUT_PLANAR;
        lua_createtable(L, 0, 7);
        lua_pushstring(L, f->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, f->qtype);
        lua_setfield(L, -2, "qtype");
        lua_pushinteger(L, f->geom.qk);
        lua_setfield(L, -2, "group");
        lua_pushinteger(L, planar ? f->geom.k_pad : 1);
        lua_setfield(L, -2, "k_pad");
        lua_pushinteger(L, f->geom.block_bytes);
        lua_setfield(L, -2, "group_bytes");
        lua_pushnumber(L, gb_format_bits(&f->geom));
        lua_setfield(L, -2, "bits");
        lua_pushinteger(L, f->zero_code);
        lua_setfield(L, -2, "zero_code");
        lua_setfield(L, -3, f->name);
        lua_pushstring(L, f->name);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -3, "planar_names");
    lua_setfield(L, -2, "planar_formats");
}

/* ------------------------------------------------------------------ mixture of experts
 * The MoE GEMV and SwiGLU references (host/ref/moe.c, ref_moe.h): ids are an
 * i32 string (one per pair), x an f32 string, results f64 strings of
 * pairs x n values, pair-major. */

/* A non-negative integer argument. */
static uint64_t check_count(lua_State *L, int i, const char *fn, const char *what) {
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, i, &ok);
    if (!ok || v < 0)
        ref_error(L, "ref.%s: %s must be a non-negative integer, got %s", fn, what,
                  lua_type(L, i) == LUA_TNUMBER || lua_type(L, i) == LUA_TSTRING
                      ? lua_tostring(L, i)
                      : luaL_typename(L, i));
    return (uint64_t)v;
}

/* ref.moe_gemv(fmt, stack, experts, n, k, ids_i32, top_k, x_f32, outer, inner) -> y, absdot */
static int l_moe_gemv(lua_State *L) {
    const char *fn = "moe_gemv";
    const gb_format *f = check_format(L, 1, fn);
    size_t stack_bytes;
    const char *stack = check_bytes(L, 2, &stack_bytes, fn, "stack");
    gb_moe_shape sh;
    sh.experts = check_positive(L, 3, fn, "experts");
    sh.n = check_positive(L, 4, fn, "n");
    sh.k = check_positive(L, 5, fn, "k");
    size_t ids_len, x_len;
    check_bytes(L, 6, &ids_len, fn, "ids");
    if (ids_len == 0 || ids_len % 4 != 0)
        ref_error(L, "ref.%s: ids must be a non-empty i32 string (a multiple of 4 bytes), got %zu bytes",
                  fn, ids_len);
    sh.pairs = ids_len / 4;
    sh.top_k = check_positive(L, 7, fn, "top_k");
    check_bytes(L, 8, &x_len, fn, "x");
    if (x_len == 0 || x_len % 4 != 0)
        ref_error(L, "ref.%s: x must be a non-empty f32 string (a multiple of 4 bytes), got %zu bytes", fn,
                  x_len);
    sh.outer = check_count(L, 9, fn, "outer");
    sh.inner = check_count(L, 10, fn, "inner");
    uint64_t count = outputs(L, sh.pairs, sh.n, fn);
    const int32_t *ids = check_array(L, 6, sh.pairs, 4, fn, "ids", "i32", "pairs");
    const float *x = check_array(L, 8, x_len / 4, 4, fn, "x", "f32", "the activations");
    double *y = scratch(L, count, sizeof(double), fn, "y");
    double *absdot = scratch(L, count, sizeof(double), fn, "absdot");
    gb_err e = {0};
    if (gb_ref_moe_gemv(f, stack, stack_bytes, &sh, ids, x, x_len / 4, y, absdot, &e) != 0) lb_raise(L, &e);
    lua_pushlstring(L, (const char *)y, (size_t)count * sizeof(double));
    lua_pushlstring(L, (const char *)absdot, (size_t)count * sizeof(double));
    return 2;
}

/* An f64 string argument of count values (count 0: take its length). */
static const double *check_f64(lua_State *L, int i, uint64_t *count, const char *fn, const char *what,
                               const char *shape) {
    size_t len;
    check_bytes(L, i, &len, fn, what);
    if (*count == 0) {
        if (len == 0 || len % 8 != 0)
            ref_error(L, "ref.%s: %s must be a non-empty f64 string (a multiple of 8 bytes), got %zu bytes",
                      fn, what, len);
        *count = len / 8;
    }
    return check_array(L, i, *count, 8, fn, what, "f64", shape);
}

/* ref.swiglu(g, ag, u, au) -> out, scale (f64 strings of one length) */
static int l_swiglu(lua_State *L) {
    const char *fn = "swiglu";
    uint64_t n = 0;
    const double *g = check_f64(L, 1, &n, fn, "g", "g's length");
    const double *ag = check_f64(L, 2, &n, fn, "ag", "g's length");
    const double *u = check_f64(L, 3, &n, fn, "u", "g's length");
    const double *au = check_f64(L, 4, &n, fn, "au", "g's length");
    double *out = scratch(L, n, sizeof(double), fn, "out");
    double *scale = scratch(L, n, sizeof(double), fn, "scale");
    gb_ref_swiglu(g, ag, u, au, n, out, scale);
    lua_pushlstring(L, (const char *)out, (size_t)n * sizeof(double));
    lua_pushlstring(L, (const char *)scale, (size_t)n * sizeof(double));
    return 2;
}

/* ref.check_rows_f64(y_f32, y_ref_f64, absdot_f64, tol) -> ok, worst_row, worst_rel, failures:
 * ref.check_rows with the reference as f64 strings (gb_ref_check_rows). */
static int l_check_rows_f64(lua_State *L) {
    const char *fn = "check_rows_f64";
    size_t len;
    check_bytes(L, 1, &len, fn, "y");
    if (len == 0 || len % 4 != 0)
        ref_error(L, "ref.%s: y must be a non-empty f32 string (a multiple of 4 bytes), got %zu bytes", fn,
                  len);
    lua_Number tol = luaL_checknumber(L, 4);
    if (!(tol >= 0) || isinf(tol))
        ref_error(L, "ref.%s: tol must be a finite non-negative number, got %g", fn, (double)tol);
    uint64_t m = len / 4;
    const float *y = check_array(L, 1, m, 4, fn, "y", "f32", "y");
    const double *r = check_f64(L, 2, &m, fn, "y_ref", "y's length");
    const double *a = check_f64(L, 3, &m, fn, "absdot", "y's length");
    gb_row_check c;
    gb_ref_check_rows(y, r, a, m, tol, &c);
    lua_pushboolean(L, c.failures == 0);
    lua_pushinteger(L, (lua_Integer)(c.worst_row + 1));
    lua_pushnumber(L, c.worst_rel);
    lua_pushinteger(L, (lua_Integer)c.failures);
    return 4;
}

static const char *layout_name(gb_layout l) { return l == GB_LAYOUT_PLANAR ? "planar" : "blocks"; }

int luaopen_gpubench_ref(lua_State *L) {
    static const luaL_Reg fns[] = {{"row_bytes", l_row_bytes},
                                   {"random_blocks", l_random_blocks},
                                   {"random_f32", l_random_f32},
                                   {"dequantize", l_dequantize},
                                   {"gemv", l_gemv},
                                   {"gemv_tokens", l_gemv_tokens},
                                   {"check_rows", l_check_rows},
                                   {"k_pad", l_k_pad},
                                   {"planar_weight_bytes", l_planar_weight_bytes},
                                   {"planar_planes", l_planar_planes},
                                   {"planar_random", l_planar_random},
                                   {"planar_dequantize", l_planar_dequantize},
                                   {"random_bf16", l_random_bf16},
                                   {"linear", l_linear},
                                   {"check_linear", l_check_linear},
                                   {"moe_gemv", l_moe_gemv},
                                   {"swiglu", l_swiglu},
                                   {"check_rows_f64", l_check_rows_f64},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    int n = gb_format_count();
    lua_createtable(L, 0, n); /* ref.formats */
    lua_createtable(L, n, 0); /* ref.format_names */
    for (int i = 0; i < n; i++) {
        const gb_format *f = gb_format_at(i);
        lua_createtable(L, 0, 5);
        lua_pushstring(L, f->name);
        lua_setfield(L, -2, "name");
        lua_pushinteger(L, f->qk);
        lua_setfield(L, -2, "qk");
        lua_pushinteger(L, f->block_bytes);
        lua_setfield(L, -2, "block_bytes");
        lua_pushnumber(L, gb_format_bits(f));
        lua_setfield(L, -2, "bits");
        lua_pushstring(L, layout_name(f->layout));
        lua_setfield(L, -2, "layout");
        lua_setfield(L, -3, f->name);
        lua_pushstring(L, f->name);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -3, "format_names");
    lua_setfield(L, -2, "formats");
    push_planar_formats(L);
    return 1;
}
