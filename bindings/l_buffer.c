/* gpu.buffer: device memory with string upload/download, pattern and random
 * fills (generated in C, never per element in Lua) and copies. */
#include <stdlib.h>
#include <string.h>

#include "lbind.h"
#include "random.h"

static void buf_free(void *ud) {
    l_buffer *u = ud;
    if (u->b) {
        gb_buffer_free(u->b);
        u->b = NULL;
    }
}

/* Reads an optional non-negative byte count/offset argument. */
static uint64_t opt_u64(lua_State *L, int i, uint64_t def, const char *what) {
    if (lua_isnoneornil(L, i)) return def;
    int ok;
    lua_Integer v = lua_tointegerx(L, i, &ok);
    if (!ok || v < 0) luaL_error(L, "%s must be a non-negative integer", what);
    return (uint64_t)v;
}

int lb_device_buffer(lua_State *L) {
    gb_device *d = lb_check_device(L, 1);
    int ok;
    lua_Integer size = lua_tointegerx(L, 2, &ok);
    if (!ok || size < 1) luaL_error(L, "dev:buffer(bytes): bytes must be a positive integer");
    l_buffer *u = lb_new(L, GPU_BUFFER_MT);
    /* Fetched again after the allocation: a finalizer it ran may have released the device. */
    d = lb_check_device(L, 1);
    gb_err e = {0};
    if (gb_buffer_alloc(d, (uint64_t)size, &u->b, &e) != 0) lb_raise(L, &e);
    lb_track(L, GPU_BUFFER_MT, u->b);
    return 1;
}

static int buf_index(lua_State *L) {
    l_buffer *u = lb_checkud(L, 1, GPU_BUFFER_MT);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
    const char *k = lua_tostring(L, 2);
    if (k && strcmp(k, "size") == 0) {
        lua_pushinteger(L, (lua_Integer)lb_check_buffer(L, 1)->size);
        return 1;
    }
    if (k && strcmp(k, "closed") == 0) {
        lua_pushboolean(L, u->b == NULL);
        return 1;
    }
    lua_pushnil(L);
    return 1;
}

static int buf_len(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)lb_check_buffer(L, 1)->size);
    return 1;
}

static int buf_tostring(lua_State *L) {
    l_buffer *u = lb_checkud(L, 1, GPU_BUFFER_MT);
    if (!u->b) lua_pushstring(L, "gpu.buffer (released)");
    else lua_pushfstring(L, "gpu.buffer: %I bytes on %s %d", (lua_Integer)u->b->size,
                         u->b->dev->info.backend, u->b->dev->info.index);
    return 1;
}

/* buf:upload(str [, offset]) */
static int buf_upload(lua_State *L) {
    size_t n;
    /* Before the buffer: converting a number to a string allocates, and a
     * finalizer that collection runs could release the buffer. */
    const char *s = luaL_checklstring(L, 2, &n);
    uint64_t off = opt_u64(L, 3, 0, "upload offset");
    gb_buffer *b = lb_check_buffer(L, 1);
    gb_err e = {0};
    if (gb_buffer_upload(b, off, s, n, &e) != 0) lb_raise(L, &e);
    return 0;
}

/* buf:download([offset [, n]]) -> string */
static int buf_download(lua_State *L) {
    gb_buffer *b = lb_check_buffer(L, 1);
    uint64_t off = opt_u64(L, 2, 0, "download offset");
    uint64_t n = opt_u64(L, 3, off <= b->size ? b->size - off : 0, "download length");
    gb_err e = {0};
    if (off > b->size || n > b->size - off) {
        GB_FAIL(&e, "download out of range: offset %llu + %llu bytes exceeds the buffer's %llu bytes",
                (unsigned long long)off, (unsigned long long)n, (unsigned long long)b->size);
        lb_raise(L, &e);
    }
    luaL_Buffer lb;
    char *dst = luaL_buffinitsize(L, &lb, (size_t)n);
    b = lb_check_buffer(L, 1); /* again: the allocation may have run a finalizer that freed it */
    if (gb_buffer_download(b, off, dst, n, &e) != 0) lb_raise(L, &e);
    luaL_pushresultsize(&lb, (size_t)n);
    return 1;
}

/* buf:fill(byte | pattern_string [, offset [, n]]) */
static int buf_fill(lua_State *L) {
    gb_buffer *b = lb_check_buffer(L, 1);
    unsigned char byte;
    const void *pattern;
    size_t plen;
    if (lua_type(L, 2) == LUA_TNUMBER) {
        int ok;
        lua_Integer v = lua_tointegerx(L, 2, &ok);
        if (!ok || v < 0 || v > 255) luaL_error(L, "fill byte must be an integer from 0 to 255");
        byte = (unsigned char)v;
        pattern = &byte;
        plen = 1;
    } else if (lua_type(L, 2) == LUA_TSTRING) {
        pattern = lua_tolstring(L, 2, &plen);
    } else {
        return luaL_error(L, "fill pattern must be a byte (0-255) or a string of 1 to 256 bytes");
    }
    uint64_t off = opt_u64(L, 3, 0, "fill offset");
    uint64_t n = opt_u64(L, 4, off <= b->size ? b->size - off : 0, "fill length");
    gb_err e = {0};
    if (gb_buffer_fill(b, off, n, pattern, plen, &e) != 0) lb_raise(L, &e);
    return 0;
}

/* Reads number field k of the table at t into *out, if present; returns
 * whether it was. */
static int field_num(lua_State *L, int t, const char *k, double *out) {
    int type = lua_getfield(L, t, k);
    if (type == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (type != LUA_TNUMBER)
        luaL_error(L, "fill_random: field '%s' must be a number, got %s", k, luaL_typename(L, -1));
    double v = lua_tonumber(L, -1);
    if (v != v || v - v != 0) luaL_error(L, "fill_random: %s must be finite", k);
    lua_pop(L, 1);
    *out = v;
    return 1;
}

/* buf:fill_random{dtype=, dist=, seed=, lo=, hi=, mean=, std=, offset=, n=}
 * Generated on the host in C and uploaded in chunks: one generator state in
 * element order, so the bytes depend only on the seed, not on the chunking.
 * An option the dtype or dist cannot honour is an error, never ignored. */
static int buf_fill_random(lua_State *L) {
    gb_buffer *b = lb_check_buffer(L, 1);
    if (!lua_istable(L, 2))
        luaL_error(L, "fill_random: expected a table {dtype =, dist =, seed =, ...}, got %s", luaL_typename(L, 2));
    lb_plain_table(L, 2, "fill_random", "the options table");
    gb_dtype dt = GB_DT_F32;
    const char *dname = lb_field_string(L, 2, "dtype", "fill_random");
    if (dname && gb_dtype_from_name(dname, &dt) != 0)
        luaL_error(L, "fill_random: unknown dtype '%s' (f32, f16, bf16, u8)", dname);
    gb_dist dist = GB_DIST_UNIFORM;
    const char *dist_name = lb_field_string(L, 2, "dist", "fill_random");
    if (dist_name) {
        if (strcmp(dist_name, "normal") == 0) dist = GB_DIST_NORMAL;
        else if (strcmp(dist_name, "uniform") != 0)
            luaL_error(L, "fill_random: unknown dist '%s' (uniform, normal)", dist_name);
    }
    lua_Integer seed = 1;
    if (lua_getfield(L, 2, "seed") != LUA_TNIL) {
        int ok;
        seed = lua_tointegerx(L, -1, &ok);
        if (!ok || lua_type(L, -1) != LUA_TNUMBER)
            luaL_error(L, "fill_random: field 'seed' must be an integer, got %s",
                       lua_type(L, -1) == LUA_TNUMBER ? "a non-integral number" : luaL_typename(L, -1));
    }
    double lo = -1.0, hi = 1.0, mean = 0.0, sd = 1.0;
    int has_lo = field_num(L, 2, "lo", &lo), has_hi = field_num(L, 2, "hi", &hi);
    int has_mean = field_num(L, 2, "mean", &mean), has_std = field_num(L, 2, "std", &sd);
    double a, c;
    if (dist == GB_DIST_NORMAL) {
        if (dt == GB_DT_U8) luaL_error(L, "fill_random: dtype u8 draws integers uniformly: dist 'normal' is not available");
        if (has_lo || has_hi) luaL_error(L, "fill_random: lo and hi bound dist 'uniform'; dist 'normal' takes mean and std");
        if (sd < 0) luaL_error(L, "fill_random: std must be non-negative");
        a = mean, c = sd;
    } else {
        if (has_mean || has_std) luaL_error(L, "fill_random: mean and std belong to dist 'normal'; 'uniform' takes lo and hi");
        if (dt == GB_DT_U8) {
            if (!has_lo) lo = 0;
            if (!has_hi) hi = 255;
            if (lo != (double)(long)lo || hi != (double)(long)hi || lo < 0 || hi > 255)
                luaL_error(L, "fill_random: dtype u8 takes integer lo and hi within 0..255, got lo = %f, hi = %f", lo, hi);
        }
        if (!(hi >= lo)) luaL_error(L, "fill_random: hi must be at least lo");
        a = lo, c = hi;
    }
    size_t es = gb_dtype_size(dt);
    lua_getfield(L, 2, "offset");
    uint64_t off = opt_u64(L, -1, 0, "fill_random offset");
    lua_getfield(L, 2, "n");
    uint64_t max_n = off <= b->size ? (b->size - off) / es : 0;
    uint64_t n = opt_u64(L, -1, max_n, "fill_random n");
    gb_err e = {0};
    if (off > b->size || n > max_n) {
        GB_FAIL(&e, "fill_random out of range: %llu elements of %zu bytes at offset %llu exceed the "
                    "buffer's %llu bytes", (unsigned long long)n, es, (unsigned long long)off,
                (unsigned long long)b->size);
        lb_raise(L, &e);
    }
    gb_rng rng;
    gb_rng_seed(&rng, (uint64_t)seed);
    const uint64_t chunk_elems = (8u << 20) / es;
    /* A Lua-owned scratch block: freed by the GC even if an upload raises. */
    void *tmp = lua_newuserdatauv(L, (size_t)(n < chunk_elems ? n : chunk_elems) * es + 1, 0);
    b = lb_check_buffer(L, 1); /* again: the allocation may have run a finalizer that freed it */
    for (uint64_t done = 0; done < n;) {
        uint64_t cnt = n - done < chunk_elems ? n - done : chunk_elems;
        gb_random_fill(tmp, (size_t)cnt, dt, dist, a, c, &rng);
        if (gb_buffer_upload(b, off + done * es, tmp, cnt * es, &e) != 0) lb_raise(L, &e);
        done += cnt;
    }
    return 0;
}

/* dst:copy_from(src [, dst_offset [, src_offset [, n]]]) */
static int buf_copy_from(lua_State *L) {
    gb_buffer *dst = lb_check_buffer(L, 1);
    gb_buffer *src = lb_check_buffer(L, 2);
    uint64_t doff = opt_u64(L, 3, 0, "copy destination offset");
    uint64_t soff = opt_u64(L, 4, 0, "copy source offset");
    uint64_t drem = doff <= dst->size ? dst->size - doff : 0;
    uint64_t srem = soff <= src->size ? src->size - soff : 0;
    uint64_t n = opt_u64(L, 5, drem < srem ? drem : srem, "copy length");
    gb_err e = {0};
    if (gb_buffer_copy(dst, doff, src, soff, n, &e) != 0) lb_raise(L, &e);
    return 0;
}

void lb_open_buffer(lua_State *L) {
    static const luaL_Reg methods[] = {{"upload", buf_upload},
                                       {"download", buf_download},
                                       {"fill", buf_fill},
                                       {"fill_random", buf_fill_random},
                                       {"copy_from", buf_copy_from},
                                       {NULL, NULL}};
    lb_register(L, GPU_BUFFER_MT, sizeof(l_buffer), methods, buf_free, buf_index, buf_tostring);
    luaL_getmetatable(L, GPU_BUFFER_MT);
    lua_pushcfunction(L, buf_len);
    lua_setfield(L, -2, "__len");
    lua_pop(L, 1);
}
