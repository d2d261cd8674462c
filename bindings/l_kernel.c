/* gpu.kernel: kernels compiled at run time from a file or a string, typed
 * scalar arguments, and launches checked against the kernel's parameters
 * before anything reaches the device. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileutil.h"
#include "lbind.h"
#include "lgpu.h"

static void kernel_free(void *ud) {
    l_kernel *u = ud;
    if (u->k) {
        gb_kernel_free(u->k);
        u->k = NULL;
    }
}

/* ------------------------------------------------------------ kernel source */

/* Pushes the text of `file` (as given, else relative to the gpubench root)
 * and its directory; returns the text. */
static const char *push_file(lua_State *L, const char *file, const char **dir) {
    gb_err e = {0};
    const char *path = file;
    if (access(file, R_OK) != 0 && file[0] != '/') {
        lua_pushfstring(L, "%s/%s", gpubench_root(), file);
        path = lua_tostring(L, -1);
        if (access(path, R_OK) != 0) path = file; /* report the name as given */
    }
    size_t len;
    char *text = gb_read_file(path, &len, &e);
    if (!text) lb_raise(L, &e);
    lua_pushlstring(L, text, len);
    free(text);
    const char *slash = strrchr(path, '/');
    if (slash) lua_pushlstring(L, path, (size_t)(slash - path));
    else lua_pushliteral(L, ".");
    *dir = lua_tostring(L, -1);
    return lua_tostring(L, -2);
}

static int is_identifier(const char *s) {
    if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

static int cmp_define(const void *a, const void *b) {
    return strcmp(((const gb_define *)a)->name, ((const gb_define *)b)->name);
}

static void read_defines(lua_State *L, int t, gb_kernel_source *src, const char *who) {
    if (lua_getfield(L, t, "defines") == LUA_TNIL) return;
    if (!lua_istable(L, -1))
        luaL_error(L, "%s: field 'defines' must be a table {NAME = value}, got %s", who, luaL_typename(L, -1));
    lb_plain_table(L, -1, who, "defines");
    int defs = lua_gettop(L);
    int n = 0;
    for (lua_pushnil(L); lua_next(L, defs); lua_pop(L, 1)) n++;
    gb_define *d = lua_newuserdatauv(L, sizeof *d * (size_t)(n ? n : 1), 0);
    lua_createtable(L, n, 0); /* anchors the string forms of number values */
    int anchor = lua_gettop(L);
    int i = 0;
    for (lua_pushnil(L); lua_next(L, defs); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING || !is_identifier(lua_tostring(L, -2)))
            luaL_error(L, "%s: defines: names must be identifiers, got %s", who,
                       lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : luaL_typename(L, -2));
        const char *name = lua_tostring(L, -2);
        const char *value;
        switch (lua_type(L, -1)) {
        case LUA_TBOOLEAN:
            if (!lua_toboolean(L, -1)) continue; /* false: not defined */
            value = "";
            break;
        case LUA_TNUMBER:
        case LUA_TSTRING:
            lua_pushvalue(L, -1); /* convert a copy: the caller's table stays as it was */
            value = lua_tostring(L, -1);
            lua_rawseti(L, anchor, i + 1);
            /* One line: a newline would let a value add preprocessor lines of its own. */
            if (strpbrk(value, "\r\n"))
                luaL_error(L, "%s: defines.%s must be one line, got a value with a line break", who, name);
            break;
        default:
            luaL_error(L, "%s: defines.%s must be a number, string or boolean, got %s", who, name,
                       luaL_typename(L, -1));
            return;
        }
        d[i].name = name;
        d[i].value = value;
        i++;
    }
    qsort(d, (size_t)i, sizeof *d, cmp_define); /* the cache key must not depend on table order */
    src->defines = d;
    src->ndefines = i;
}

static void read_include_dirs(lua_State *L, int t, gb_kernel_source *src, const char *who) {
    if (lua_getfield(L, t, "include_dirs") == LUA_TNIL) return;
    if (!lua_istable(L, -1))
        luaL_error(L, "%s: field 'include_dirs' must be a list of strings, got %s", who, luaL_typename(L, -1));
    lb_plain_table(L, -1, who, "include_dirs");
    int n = (int)lua_rawlen(L, -1);
    const char **dirs = lua_newuserdatauv(L, sizeof *dirs * (size_t)(n ? n : 1), 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -2, i + 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            luaL_error(L, "%s: include_dirs[%d] must be a string, got %s", who, i + 1, luaL_typename(L, -1));
        dirs[i] = lua_tostring(L, -1); /* kept alive by the include_dirs table */
        lua_pop(L, 1);
    }
    src->include_dirs = dirs;
    src->ninclude_dirs = n;
}

static void read_params(lua_State *L, int t, gb_kernel_source *src, const char *who) {
    if (lua_getfield(L, t, "params") == LUA_TNIL) return;
    if (!lua_istable(L, -1))
        luaL_error(L, "%s: field 'params' must be a list of kinds, got %s", who, luaL_typename(L, -1));
    lb_plain_table(L, -1, who, "params");
    int n = (int)lua_rawlen(L, -1);
    if (n > GB_MAX_PARAMS) luaL_error(L, "%s: at most %d kernel parameters are supported", who, GB_MAX_PARAMS);
    gb_kind *kinds = lua_newuserdatauv(L, sizeof *kinds * (size_t)(n ? n : 1), 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -2, i + 1);
        const char *s = lua_tostring(L, -1);
        if (!s || gb_kind_from_name(s, &kinds[i]) != 0)
            luaL_error(L, "%s: params[%d] must be one of buffer, u32, i32, f32, u64", who, i + 1);
        lua_pop(L, 1);
    }
    src->params = kinds;
    src->nparams = n;
}

void lb_read_source(lua_State *L, int i, gb_kernel_source *src, const char *who) {
    if (!lua_istable(L, i))
        luaL_error(L, "%s: expected a table {file = | source =, entry =, defines =, ...}, got %s", who,
                   luaL_typename(L, i));
    i = lua_absindex(L, i);
    lb_plain_table(L, i, who, "the source table");
    /* Every string src points to stays on the stack: about 20 slots. */
    luaL_checkstack(L, 32, "reading a kernel source");
    memset(src, 0, sizeof *src);
    const char *file = lb_field_string(L, i, "file", who);
    const char *code = lb_field_string(L, i, "source", who);
    if (!file == !code) luaL_error(L, "%s: a kernel needs exactly one of file= or source=", who);
    if (file) {
        src->label = file;
        src->code = push_file(L, file, &src->dir);
    } else {
        src->code = code;
        src->label = "<string>";
    }
    /* Without an entry the backend picks its default (CUDA: the function named
     * like the file; GLSL: main). */
    src->entry = lb_field_string(L, i, "entry", who);
    read_defines(L, i, src, who);
    read_include_dirs(L, i, src, who);
    read_params(L, i, src, who);
}

int lb_device_kernel(lua_State *L) {
    lb_check_device(L, 1);
    gb_kernel_source src;
    lb_read_source(L, 2, &src, "dev:kernel");
    l_kernel *u = lb_new(L, GPU_KERNEL_MT);
    /* The device is fetched after the reads and allocations above: a
     * finalizer they ran may have released it. */
    gb_device *d = lb_check_device(L, 1);
    gb_err e = {0};
    if (gb_kernel_load(d, &src, &u->k, &e) != 0) lb_raise(L, &e);
    lb_track(L, GPU_KERNEL_MT, u->k);
    return 1;
}

/* gpu.compile{backend=, file=|source=, entry=, defines=, target=} */
int lb_compile(lua_State *L) {
    if (!lua_istable(L, 1)) luaL_error(L, "gpu.compile: expected a table, got %s", luaL_typename(L, 1));
    const char *name = lb_field_string(L, 1, "backend", "gpu.compile");
    if (!name) name = "cuda";
    const gb_backend_ops *ops = gb_backend_find(name);
    if (!ops) luaL_error(L, "gpu.compile: unknown backend '%s'", name);
    const char *target = lb_field_string(L, 1, "target", "gpu.compile");
    if (!target) target = strcmp(name, "cuda") == 0 ? "sm_90" : "vulkan1.2";
    gb_kernel_source src;
    lb_read_source(L, 1, &src, "gpu.compile");
    gb_kind params[GB_MAX_PARAMS];
    int nparams = 0;
    gb_kernel_traits traits = {0};
    char *log = NULL;
    gb_err e = {0};
    if (ops->compile_only(&src, target, params, &nparams, &traits, &log, &e) != 0) lb_raise(L, &e);
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, traits.dynamic_shared);
    lua_setfield(L, -2, "dynamic_shared");
    lua_pushboolean(L, traits.overlap);
    lua_setfield(L, -2, "overlap");
    lua_pushstring(L, log ? log : "");
    free(log);
    lua_setfield(L, -2, "log");
    lua_createtable(L, nparams, 0);
    for (int k = 0; k < nparams; k++) {
        lua_pushstring(L, gb_kind_name(params[k]));
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "params");
    return 1;
}

static int kernel_index(lua_State *L) {
    lb_checkud(L, 1, GPU_KERNEL_MT);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
    const char *key = lua_tostring(L, 2);
    if (!key) return 0;
    gb_kernel *k = lb_check_kernel(L, 1);
    /* What a table is built from is copied first: the pushes allocate, and a
     * finalizer run by that collection could free the kernel. */
    if (strcmp(key, "entry") == 0) lua_pushstring(L, k->entry);
    else if (strcmp(key, "label") == 0) lua_pushstring(L, k->label);
    else if (strcmp(key, "cache_hit") == 0) lua_pushboolean(L, k->cache_hit);
    else if (strcmp(key, "dynamic_shared") == 0) lua_pushinteger(L, k->dynamic_shared);
    else if (strcmp(key, "overlap") == 0) lua_pushboolean(L, k->overlap);
    else if (strcmp(key, "backend") == 0) lua_pushstring(L, k->dev->info.backend);
    else if (strcmp(key, "vendor") == 0) { /* false for compiled code (l_vendor.c) */
        if (k->vendor) {
            gb_vendor_gemm g = *k->vendor;
            lb_push_vendor(L, &g);
        } else lua_pushboolean(L, 0);
    }
    else if (strcmp(key, "params") == 0) {
        gb_kind kinds[GB_MAX_PARAMS];
        int n = k->nparams;
        memcpy(kinds, k->params, sizeof kinds[0] * (size_t)n);
        lua_createtable(L, n, 0);
        for (int i = 0; i < n; i++) {
            lua_pushstring(L, gb_kind_name(kinds[i]));
            lua_rawseti(L, -2, i + 1);
        }
    } else if (strcmp(key, "local_size") == 0) {
        if (!k->local_size[0]) return 0;
        uint32_t ls[3] = {k->local_size[0], k->local_size[1], k->local_size[2]};
        lua_createtable(L, 3, 0);
        for (int i = 0; i < 3; i++) {
            lua_pushinteger(L, ls[i]);
            lua_rawseti(L, -2, i + 1);
        }
    } else return 0;
    return 1;
}

static int kernel_tostring(lua_State *L) {
    l_kernel *u = lb_checkud(L, 1, GPU_KERNEL_MT);
    if (!u->k) lua_pushstring(L, "gpu.kernel (released)");
    else lua_pushfstring(L, "gpu.kernel: %s from %s", u->k->entry, u->k->label);
    return 1;
}

/* ------------------------------------------------------------------ scalars */

int lb_scalar_ctor(lua_State *L) {
    gb_kind kind;
    gb_kind_from_name(lua_tostring(L, lua_upvalueindex(1)), &kind);
    /* The argument is read before the new userdata goes on the stack (with no
     * argument, index 1 would be the new userdata). */
    if (kind == GB_ARG_F32) {
        if (lua_type(L, 1) != LUA_TNUMBER)
            luaL_error(L, "gpu.f32: expected a number, got %s", luaL_typename(L, 1));
        float f = (float)lua_tonumber(L, 1);
        l_scalar *s = lb_new(L, GPU_SCALAR_MT);
        s->a.kind = kind;
        s->a.v.f32 = f;
        return 1;
    }
    int ok;
    lua_Integer v = lua_tointegerx(L, 1, &ok);
    if (!ok || lua_type(L, 1) != LUA_TNUMBER)
        luaL_error(L, "gpu.%s: expected an integer, got %s", gb_kind_name(kind),
                   lua_type(L, 1) == LUA_TNUMBER ? "a non-integral number" : luaL_typename(L, 1));
    if (kind == GB_ARG_U32 && (v < 0 || v > 0xffffffffLL))
        luaL_error(L, "gpu.u32: %I is out of range 0..4294967295", v);
    if (kind == GB_ARG_I32 && (v < -2147483648LL || v > 2147483647LL))
        luaL_error(L, "gpu.i32: %I is out of range -2147483648..2147483647", v);
    if (kind == GB_ARG_U64 && v < 0) luaL_error(L, "gpu.u64: %I is negative", v);
    l_scalar *s = lb_new(L, GPU_SCALAR_MT);
    s->a.kind = kind;
    if (kind == GB_ARG_U32) s->a.v.u32 = (uint32_t)v;
    else if (kind == GB_ARG_I32) s->a.v.i32 = (int32_t)v;
    else s->a.v.u64 = (uint64_t)v;
    return 1;
}

static int scalar_tostring(lua_State *L) {
    l_scalar *s = lb_checkud(L, 1, GPU_SCALAR_MT);
    switch (s->a.kind) {
    case GB_ARG_U32: lua_pushfstring(L, "gpu.u32(%I)", (lua_Integer)s->a.v.u32); break;
    case GB_ARG_I32: lua_pushfstring(L, "gpu.i32(%I)", (lua_Integer)s->a.v.i32); break;
    case GB_ARG_U64: lua_pushfstring(L, "gpu.u64(%I)", (lua_Integer)s->a.v.u64); break;
    default: lua_pushfstring(L, "gpu.f32(%f)", (lua_Number)s->a.v.f32); break;
    }
    return 1;
}

/* ---------------------------------------------------------------- arguments */

static void convert_number(lua_State *L, int i, gb_kind want, gb_arg *a, const char *entry, int pos) {
    a->kind = want;
    if (want == GB_ARG_F32) {
        a->v.f32 = (float)lua_tonumber(L, i);
        return;
    }
    int ok;
    lua_Integer v = lua_tointegerx(L, i, &ok);
    if (!ok)
        luaL_error(L, "kernel %s argument %d: expected %s, got a non-integral number", entry, pos,
                   gb_kind_name(want));
    if ((want == GB_ARG_U32 && (v < 0 || v > 0xffffffffLL)) ||
        (want == GB_ARG_I32 && (v < -2147483648LL || v > 2147483647LL)) ||
        (want == GB_ARG_U64 && v < 0))
        luaL_error(L, "kernel %s argument %d: %I is out of range for %s", entry, pos, v,
                   gb_kind_name(want));
    if (want == GB_ARG_U32) a->v.u32 = (uint32_t)v;
    else if (want == GB_ARG_I32) a->v.i32 = (int32_t)v;
    else a->v.u64 = (uint64_t)v;
}

void lb_collect_args(lua_State *L, gb_kernel *k, int first, int n, gb_launch *l) {
    if (n != k->nparams)
        luaL_error(L, "kernel %s takes %d argument%s (%s), got %d", k->entry, k->nparams,
                   k->nparams == 1 ? "" : "s", k->nparams ? "see kernel.params" : "none", n);
    l->kernel = k;
    l->nargs = n;
    for (int j = 0; j < n; j++) {
        int i = first + j;
        gb_kind want = k->params[j];
        gb_arg *a = &l->args[j];
        void *ud;
        if ((ud = lb_testud(L, i, GPU_BUFFER_MT))) {
            if (want != GB_ARG_BUFFER)
                luaL_error(L, "kernel %s argument %d: expected %s, got gpu.buffer", k->entry, j + 1,
                           gb_kind_name(want));
            gb_buffer *b = ((l_buffer *)ud)->b;
            if (!b) luaL_error(L, "kernel %s argument %d: use of a released gpu.buffer", k->entry, j + 1);
            a->kind = GB_ARG_BUFFER;
            a->v.buf = b;
        } else if ((ud = lb_testud(L, i, GPU_SCALAR_MT))) {
            const gb_arg *s = &((l_scalar *)ud)->a;
            if (s->kind != want)
                luaL_error(L, "kernel %s argument %d: expected %s, got gpu.%s", k->entry, j + 1,
                           gb_kind_name(want), gb_kind_name(s->kind));
            *a = *s;
        } else if (lua_type(L, i) == LUA_TNUMBER && want != GB_ARG_BUFFER) {
            convert_number(L, i, want, a, k->entry, j + 1);
        } else {
            luaL_error(L, "kernel %s argument %d: expected %s, got %s", k->entry, j + 1,
                       gb_kind_name(want), luaL_typename(L, i));
        }
    }
}

void lb_check_launch_table_shape(lua_State *L, int i) {
    if (!lua_istable(L, i))
        luaL_error(L, "a launch is a table {kernel, grid, block, args...}, got %s", luaL_typename(L, i));
    lb_plain_table(L, i, "launch", "a launch table");
    if (lua_rawlen(L, i) < 3) luaL_error(L, "a launch is {kernel, grid, block, args...}");
}

void lb_check_launch_table(lua_State *L, int i, gb_launch *l) {
    lb_check_launch_table_shape(L, i);
    i = lua_absindex(L, i);
    int n = (int)lua_rawlen(L, i);
    luaL_checkstack(L, n + 2, "too many launch arguments");
    int base = lua_gettop(L);
    for (int j = 1; j <= n; j++) lua_rawgeti(L, i, j);
    l_kernel *ku = lb_testud(L, base + 1, GPU_KERNEL_MT);
    if (!ku) {
        const char *got = luaL_getmetafield(L, base + 1, "__name") == LUA_TSTRING ? lua_tostring(L, -1)
                                                                                   : luaL_typename(L, base + 1);
        luaL_error(L, "a launch table's first entry must be a gpu.kernel, got %s", got);
    }
    if (!ku->k) luaL_error(L, "a launch table's kernel was released (use of a released gpu.kernel)");
    gb_kernel *k = ku->k;
    lb_check_dim3(L, base + 2, "grid", l->grid);
    lb_check_dim3(L, base + 3, "block", l->block);
    lb_collect_args(L, k, base + 4, n - 3, l);
    lua_settop(L, base);
}

/* k:launch(grid, block, args...) */
static int kernel_launch(lua_State *L) {
    gb_kernel *k = lb_check_kernel(L, 1);
    gb_launch l;
    memset(&l, 0, sizeof l);
    lb_check_dim3(L, 2, "grid", l.grid);
    lb_check_dim3(L, 3, "block", l.block);
    lb_collect_args(L, k, 4, lua_gettop(L) - 3, &l);
    gb_err e = {0};
    if (gb_launch_run(&l, &e) != 0) lb_raise(L, &e);
    return 0;
}

/* k:stats([block]) -> {{name=, value=, description=}, ..., [name] = value}: what the
 * compiled code uses for launches of `block` (a number or {x, y, z}; default
 * the shader's fixed workgroup size), gb_kernel_stats. */
static int kernel_stats(lua_State *L) {
    gb_kernel *k = lb_check_kernel(L, 1);
    uint32_t block[3] = {k->local_size[0], k->local_size[1], k->local_size[2]};
    if (!lua_isnoneornil(L, 2)) lb_check_dim3(L, 2, "block", block);
    else if (!block[0])
        luaL_error(L, "kernel %s: stats needs a block (its workgroup size is set at launch)", k->entry);
    gb_kernel_stat *st = lua_newuserdatauv(L, GB_MAX_KERNEL_STATS * sizeof *st, 0);
    int n = 0;
    gb_err e = {0};
    if (gb_kernel_stats(k, block, st, GB_MAX_KERNEL_STATS, &n, &e) != 0) lb_raise(L, &e);
    lua_createtable(L, n, n);
    for (int i = 0; i < n; i++) {
        double v = st[i].value;
        int whole = v > -9.0e15 && v < 9.0e15 && v == (double)(lua_Integer)v;
        lua_createtable(L, 0, 3);
        lua_pushstring(L, st[i].name);
        lua_setfield(L, -2, "name");
        if (whole) lua_pushinteger(L, (lua_Integer)v);
        else lua_pushnumber(L, v);
        lua_setfield(L, -2, "value");
        lua_pushstring(L, st[i].description);
        lua_setfield(L, -2, "description");
        lua_getfield(L, -1, "value");
        lua_setfield(L, -3, st[i].name);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

void lb_open_kernel(lua_State *L) {
    static const luaL_Reg methods[] = {{"launch", kernel_launch}, {"stats", kernel_stats}, {NULL, NULL}};
    lb_register(L, GPU_KERNEL_MT, sizeof(l_kernel), methods, kernel_free, kernel_index, kernel_tostring);
    static const luaL_Reg none[] = {{NULL, NULL}};
    lb_register(L, GPU_SCALAR_MT, sizeof(l_scalar), none, NULL, NULL, scalar_tostring);
}
