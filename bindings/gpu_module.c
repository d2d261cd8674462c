/* require "gpu": the module table, device discovery and opening, the shared
 * userdata helpers, and the registration of gpubench's C modules. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lualib.h>

#include "lbind.h"
#include "git_version.h"
#include "lgpu.h"

int luaopen_lfs(lua_State *L);
int luaopen_cjson(lua_State *L);

/* ----------------------------------------------------------- shared helpers */

int lb_raise(lua_State *L, gb_err *e) {
    lua_pushstring(L, e->msg ? e->msg : "unknown error");
    gb_err_clear(e);
    return lua_error(L);
}

/* ------------------------------------------------------------- the types */

enum { LB_MAX_TYPES = 8 };
#define LB_TAG_BASE 0x67627500u /* "gbu" + the type's index */

typedef struct lb_type {
    const char *mt;
    size_t size;
    lb_free_fn free_fn;
} lb_type;

static lb_type types[LB_MAX_TYPES];
static int ntypes;

static int type_index(const char *mt) {
    for (int i = 0; i < ntypes; i++)
        if (strcmp(types[i].mt, mt) == 0) return i;
    return -1;
}

/* The type a userdata's own bytes say it is (tag and size), or -1. */
static int type_of(lua_State *L, int i) {
    if (lua_type(L, i) != LUA_TUSERDATA) return -1;
    size_t n = lua_rawlen(L, i);
    if (n < sizeof(uint32_t)) return -1;
    uint32_t tag;
    memcpy(&tag, lua_touserdata(L, i), sizeof tag);
    uint32_t t = tag - LB_TAG_BASE;
    if (t >= (uint32_t)ntypes || types[t].size != n) return -1;
    return (int)t;
}

void *lb_testud(lua_State *L, int i, const char *mt) {
    void *p = luaL_testudata(L, i, mt);
    if (!p || type_of(L, i) != type_index(mt)) return NULL;
    return p;
}

void *lb_checkud(lua_State *L, int i, const char *mt) {
    void *p = lb_testud(L, i, mt);
    if (p) return p;
    if (luaL_testudata(L, i, mt)) { /* the right metatable on another object */
        int t = type_of(L, i);
        luaL_argerror(L, i, lua_pushfstring(L, "%s expected, got %s with the metatable of a %s (replaced)",
                                            mt, t >= 0 ? types[t].mt : "a userdata", mt));
    }
    luaL_typeerror(L, i, mt);
    return NULL;
}

void *lb_new(lua_State *L, const char *mt) {
    int t = type_index(mt);
    if (t < 0) luaL_error(L, "internal error: %s is not a registered type", mt);
    void *p = lua_newuserdatauv(L, types[t].size, 1);
    memset(p, 0, types[t].size);
    uint32_t tag = LB_TAG_BASE + (uint32_t)t;
    memcpy(p, &tag, sizeof tag);
    luaL_setmetatable(L, mt);
    return p;
}

/* The C objects that userdata hold, so that gpubench_free_leftovers frees,
 * after lua_close, those no finalizer freed (a userdata whose metatable lost
 * its __gc). Entries are C objects, which only a free function frees, never
 * userdata memory; owned by C, so nothing in Lua can reach or break the list.
 * Each entry names its state by its main thread. */
typedef struct tracked { const void *state; int type; void *ptr; } tracked;
static tracked *live_objs;
static size_t nlive, caplive;

static const void *main_state(lua_State *L) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    const void *m = lua_tothread(L, -1);
    lua_pop(L, 1);
    return m;
}

void lb_track(lua_State *L, const char *mt, void *ptr) {
    int t = type_index(mt);
    if (t < 0 || !ptr) return;
    if (nlive == caplive) {
        size_t cap = caplive ? 2 * caplive : 64;
        tracked *p = realloc(live_objs, cap * sizeof *p);
        if (!p) return; /* untracked: freed by its __gc as usual */
        live_objs = p, caplive = cap;
    }
    live_objs[nlive++] = (tracked){main_state(L), t, ptr};
}

static void untrack(void *ptr) {
    for (size_t i = nlive; i-- > 0;)
        if (live_objs[i].ptr == ptr) {
            live_objs[i] = live_objs[--nlive];
            return;
        }
}

/* Batches first (they hold references on kernels and buffers), devices last. */
void gpubench_free_leftovers(const void *L) {
    for (int pass = 0; pass < 3; pass++)
        for (size_t i = nlive; i-- > 0;) {
            tracked o = live_objs[i];
            if (o.state != L) continue;
            const char *mt = types[o.type].mt;
            int batch = strcmp(mt, GPU_BATCH_MT) == 0, device = strcmp(mt, GPU_DEVICE_MT) == 0;
            if ((pass == 0) != batch || (pass == 2) != device) continue;
            live_objs[i] = live_objs[--nlive];
            lb_handle h = {LB_TAG_BASE + (uint32_t)o.type, o.ptr};
            types[o.type].free_fn(&h);
        }
    if (nlive == 0) {
        free(live_objs);
        live_objs = NULL, caplive = 0;
    }
}

/* free, __gc and __close of every type: frees by the userdata's own tag, so
 * a userdata given another type's metatable is still freed as what it is. */
static int lb_release(lua_State *L) {
    int t = type_of(L, 1);
    if (t >= 0 && types[t].free_fn) {
        lb_handle *h = lua_touserdata(L, 1);
        if (h->ptr) untrack(h->ptr);
        types[t].free_fn(h);
    }
    return 0;
}

void lb_plain_table(lua_State *L, int i, const char *who, const char *what) {
    if (lua_type(L, i) == LUA_TTABLE && lua_getmetatable(L, i)) {
        lua_pop(L, 1);
        luaL_error(L, "%s: %s must be a plain table (one with a metatable is refused: its "
                      "metamethods would run while the call holds its objects)", who, what);
    }
}

void lb_register(lua_State *L, const char *mt, size_t size, const luaL_Reg *methods,
                 lb_free_fn free_fn, lua_CFunction index_fn, lua_CFunction tostring_fn) {
    int t = type_index(mt);
    if (t < 0) {
        if (ntypes == LB_MAX_TYPES) luaL_error(L, "internal error: too many gpu types");
        t = ntypes++;
    }
    types[t] = (lb_type){mt, size, free_fn};
    luaL_newmetatable(L, mt); /* sets __name, used by the type errors */
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    if (free_fn) {
        lua_pushcfunction(L, lb_release);
        lua_setfield(L, -2, "free");
    }
    if (index_fn) {
        /* The method table becomes the index function's first upvalue. */
        lua_pushcclosure(L, index_fn, 1);
    }
    lua_setfield(L, -2, "__index");
    if (free_fn) {
        lua_pushcfunction(L, lb_release);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, lb_release);
        lua_setfield(L, -2, "__close");
    }
    if (tostring_fn) {
        lua_pushcfunction(L, tostring_fn);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
}

const char *lb_field_string(lua_State *L, int t, const char *field, const char *who) {
    lb_plain_table(L, t, who, "the argument table");
    int type = lua_getfield(L, t, field);
    if (type == LUA_TNIL) return NULL;
    if (type != LUA_TSTRING)
        luaL_error(L, "%s: field '%s' must be a string, got %s", who, field, luaL_typename(L, -1));
    return lua_tostring(L, -1);
}

static void *check_live(lua_State *L, int i, const char *mt) {
    lb_handle *h = lb_checkud(L, i, mt);
    if (!h->ptr) luaL_error(L, "use of a released %s", mt);
    return h->ptr;
}

gb_device *lb_check_device(lua_State *L, int i) {
    gb_device *d = check_live(L, i, GPU_DEVICE_MT);
    return d;
}
gb_buffer *lb_check_buffer(lua_State *L, int i) { return check_live(L, i, GPU_BUFFER_MT); }
gb_kernel *lb_check_kernel(lua_State *L, int i) { return check_live(L, i, GPU_KERNEL_MT); }

static uint32_t dim_at(lua_State *L, int t, int k, const char *what) {
    int type = lua_rawgeti(L, t, k);
    lua_Integer v = 1;
    if (type != LUA_TNIL) {
        int ok;
        v = lua_tointegerx(L, -1, &ok);
        if (!ok || v < 1 || v > 0xffffffffLL)
            luaL_error(L, "%s[%d] must be an integer from 1 to 4294967295", what, k);
    }
    lua_pop(L, 1);
    return (uint32_t)v;
}

void lb_check_dim3(lua_State *L, int i, const char *what, uint32_t out[3]) {
    if (lua_type(L, i) == LUA_TNUMBER) {
        int ok;
        lua_Integer v = lua_tointegerx(L, i, &ok);
        if (!ok || v < 1 || v > 0xffffffffLL)
            luaL_error(L, "%s must be an integer from 1 to 4294967295 or a table {x, y, z}", what);
        out[0] = (uint32_t)v;
        out[1] = out[2] = 1;
        return;
    }
    if (!lua_istable(L, i))
        luaL_error(L, "%s must be an integer or a table {x, y, z}, got %s", what, luaL_typename(L, i));
    i = lua_absindex(L, i);
    lb_plain_table(L, i, "launch", what);
    if (lua_rawlen(L, i) < 1 || lua_rawlen(L, i) > 3)
        luaL_error(L, "%s must have 1 to 3 entries", what);
    for (int k = 0; k < 3; k++) out[k] = dim_at(L, i, k + 1, what);
}

/* -------------------------------------------------------------- device info */

void lb_set_int(lua_State *L, const char *k, lua_Integer v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}
static void set_num(lua_State *L, const char *k, lua_Number v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}
void lb_set_str(lua_State *L, const char *k, const char *v) {
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}
static void set_dim3(lua_State *L, const char *k, const uint32_t v[3]) {
    lua_createtable(L, 3, 0);
    for (int i = 0; i < 3; i++) {
        lua_pushinteger(L, v[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, k);
}

void lb_push_info(lua_State *L, const gb_device_info *in) {
    lua_createtable(L, 0, 32);
    lb_set_str(L, "backend", in->backend);
    lb_set_int(L, "index", in->index);
    lb_set_str(L, "name", in->name);
    lb_set_str(L, "device_type", in->device_type);
    lb_set_str(L, "driver_version", in->driver_version);
    lb_set_str(L, "api_version", in->api_version);
    lb_set_str(L, "arch", in->arch);
    lb_set_int(L, "vendor_id", in->vendor_id);
    lb_set_int(L, "device_id", in->device_id);
    lb_set_int(L, "memory_bytes", (lua_Integer)in->memory_bytes);
    lb_set_int(L, "sm_count", in->sm_count);
    lb_set_int(L, "l2_bytes", (lua_Integer)in->l2_bytes);
    set_num(L, "spec_gbs", in->spec_gbs);
    lb_set_int(L, "memory_clock_khz", in->memory_clock_khz);
    lb_set_int(L, "memory_bus_bits", in->memory_bus_bits);
    set_num(L, "timestamp_period_ns", in->timestamp_period_ns);
    lb_set_int(L, "subgroup_size", in->subgroup_size);
    lb_set_int(L, "max_threads_per_group", in->max_threads_per_group);
    set_dim3(L, "max_group_size", in->max_group_size);
    set_dim3(L, "max_groups", in->max_groups);
    lb_set_int(L, "max_shared_bytes", in->max_shared_bytes);
    lb_set_int(L, "max_push_bytes", in->max_push_bytes);
    lb_set_int(L, "max_buffer_bytes", (lua_Integer)in->max_buffer_bytes);
    lua_pushboolean(L, in->storage_buffer_16bit);
    lua_setfield(L, -2, "storage_buffer_16bit");
    lua_pushboolean(L, in->storage_buffer_8bit);
    lua_setfield(L, -2, "storage_buffer_8bit");
    lua_pushboolean(L, in->integer_dot_product);
    lua_setfield(L, -2, "integer_dot_product");
    lua_pushboolean(L, in->integer_dot_4x8_accelerated);
    lua_setfield(L, -2, "integer_dot_4x8_accelerated");
    lua_pushboolean(L, in->launch_overlap);
    lua_setfield(L, -2, "launch_overlap");
    /* "nv" or false; the shapes as {m=, n=, k=, a=, b=, c=, d=} component types. */
    if (in->cooperative_matrix[0])
        lua_pushstring(L, in->cooperative_matrix);
    else
        lua_pushboolean(L, 0);
    lua_setfield(L, -2, "cooperative_matrix");
    lua_createtable(L, in->ncoopmat_shapes, 0);
    for (int i = 0; i < in->ncoopmat_shapes; i++) {
        const struct gb_coopmat_shape *c = &in->coopmat_shapes[i];
        lua_createtable(L, 0, 7);
        lb_set_int(L, "m", c->m);
        lb_set_int(L, "n", c->n);
        lb_set_int(L, "k", c->k);
        lb_set_str(L, "a", c->a);
        lb_set_str(L, "b", c->b);
        lb_set_str(L, "c", c->c);
        lb_set_str(L, "d", c->d);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "cooperative_matrix_shapes");
    if (in->has_uuid) {
        char hex[33];
        for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", in->uuid[i]);
        lb_set_str(L, "uuid", hex);
    }
}

void lb_push_device_info(lua_State *L, gb_device *d) {
    /* Copied first: the pushes below allocate, and a finalizer run by that
     * collection could release d. */
    gb_device_info info = d->info;
    uint64_t flush = gb_flush_bytes(d);
    lb_push_info(L, &info);
    lua_pushinteger(L, (lua_Integer)flush);
    lua_setfield(L, -2, "flush_bytes");
}

/* ------------------------------------------------------ discovery and open */

static int probe(const gb_backend_ops *ops, int *count, char **why) {
    gb_err e = {0};
    *count = 0;
    if (ops->probe(count, &e) == 0) return 1;
    *why = e.msg; /* caller frees */
    return 0;
}

static int l_backends(lua_State *L) {
    lua_newtable(L);
    for (int i = 0; i < gb_backend_count(); i++) {
        const gb_backend_ops *ops = gb_backend_at(i);
        int count = 0;
        char *why = NULL;
        int ok = probe(ops, &count, &why);
        lua_createtable(L, 0, 4);
        lb_set_str(L, "name", ops->name);
        lua_pushboolean(L, ok);
        lua_setfield(L, -2, "available");
        lb_set_int(L, "count", count);
        if (!ok) lb_set_str(L, "reason", why ? why : "unavailable");
        free(why);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int l_devices(lua_State *L) {
    lua_newtable(L);
    int n = 0;
    for (int i = 0; i < gb_backend_count(); i++) {
        const gb_backend_ops *ops = gb_backend_at(i);
        int count = 0;
        char *why = NULL;
        if (!probe(ops, &count, &why)) {
            free(why);
            continue;
        }
        for (int j = 0; j < count; j++) {
            gb_device_info info;
            gb_err e = {0};
            if (gb_device_info_of(ops, j, &info, &e) != 0) lb_raise(L, &e);
            lb_push_info(L, &info);
            lua_rawseti(L, -2, ++n);
        }
    }
    return 1;
}

static const char *const DEFAULTS_KEY = "gpubench.device_defaults";

void gpubench_set_device_defaults(lua_State *L, const char *backend, int index) {
    lua_createtable(L, 0, 2);
    if (backend) lb_set_str(L, "backend", backend);
    if (index >= 0) lb_set_int(L, "index", index);
    lua_setfield(L, LUA_REGISTRYINDEX, DEFAULTS_KEY);
}

/* The best device: a CUDA device first (the reference platform), then a
 * Vulkan GPU, then a Vulkan CPU device (lavapipe). */
static int pick_best(const gb_backend_ops **ops_out, int *index_out, lua_State *L) {
    const gb_backend_ops *cuda = gb_backend_find("cuda");
    int count = 0;
    char *why = NULL;
    if (cuda && probe(cuda, &count, &why) && count > 0) {
        *ops_out = cuda;
        *index_out = 0;
        return 1;
    }
    free(why);
    why = NULL;
    const gb_backend_ops *vk = gb_backend_find("vulkan");
    if (vk && probe(vk, &count, &why) && count > 0) {
        int best = 0;
        for (int j = 0; j < count; j++) {
            gb_device_info info;
            gb_err e = {0};
            if (gb_device_info_of(vk, j, &info, &e) != 0) {
                gb_err_clear(&e);
                continue;
            }
            if (strcmp(info.device_type, "cpu") != 0) {
                best = j;
                break;
            }
        }
        *ops_out = vk;
        *index_out = best;
        return 1;
    }
    free(why);
    (void)L;
    return 0;
}

static int l_open(lua_State *L) {
    const char *backend = NULL;
    lua_Integer index = -1;
    if (!lua_isnoneornil(L, 1)) {
        if (!lua_istable(L, 1))
            luaL_error(L, "gpu.open: expected a table {backend =, index =} or nothing, got %s", luaL_typename(L, 1));
        lb_plain_table(L, 1, "gpu.open", "the options table");
        backend = lb_field_string(L, 1, "backend", "gpu.open");
        if (lua_getfield(L, 1, "index") != LUA_TNIL) {
            int ok;
            index = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : (ok = 0);
            /* Bounded by INT_MAX: the backends take an int, and a larger value
             * would wrap to another device's index (2^32 opened device 0). */
            if (!ok || index < 0 || index > INT_MAX)
                luaL_error(L, "gpu.open: index must be a non-negative integer up to %d", INT_MAX);
        }
    }
    /* The CLI's --backend/--device fill in what the script left out. */
    lua_getfield(L, LUA_REGISTRYINDEX, DEFAULTS_KEY);
    int defaults = lua_gettop(L);
    if (lua_istable(L, defaults)) {
        if (!backend && lua_getfield(L, defaults, "backend") == LUA_TSTRING)
            backend = lua_tostring(L, -1); /* stays on the stack, so stays alive */
        if (index < 0 && lua_getfield(L, defaults, "index") == LUA_TNUMBER)
            index = lua_tointeger(L, -1);
    }
    const gb_backend_ops *ops = NULL;
    if (backend) {
        ops = gb_backend_find(backend);
        if (!ops) luaL_error(L, "gpu.open: unknown backend '%s' (known: cuda, vulkan)", backend);
        if (index < 0) index = 0;
    } else {
        int best_index = 0;
        if (!pick_best(&ops, &best_index, L))
            luaL_error(L, "gpu.open: no device found (CUDA and Vulkan both unavailable; "
                          "run 'gpubench --list-devices' for the reasons)");
        if (index < 0) index = best_index;
    }
    l_device *u = lb_new(L, GPU_DEVICE_MT);
    gb_err e = {0};
    if (gb_device_open(ops, (int)index, &u->d, &e) != 0) lb_raise(L, &e);
    lb_track(L, GPU_DEVICE_MT, u->d);
    /* The info table is the device's user value: dev.name etc. read from it. */
    lb_push_device_info(L, u->d);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static int l_live(lua_State *L) {
    static const char *const names[GB_LIVE_COUNT] = {"devices", "buffers", "kernels", "timers",
                                                      "batches"};
    lua_createtable(L, 0, GB_LIVE_COUNT);
    for (int i = 0; i < GB_LIVE_COUNT; i++) lb_set_int(L, names[i], gb_live(i));
    return 1;
}

static int l_clock(lua_State *L) {
    lua_pushnumber(L, gb_clock_seconds());
    return 1;
}

static int l_isatty(lua_State *L) {
    lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
    return 1;
}

static int l_root(lua_State *L) {
    lua_pushstring(L, gpubench_root());
    return 1;
}

/* gpu.executable: the running binary's path (/proc/self/exe), so a script can
 * start workers of itself (--devices) whatever argv[0] and the current folder
 * were; absent where the link cannot be read. */
static void set_executable(lua_State *L) {
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return;
    path[n] = '\0';
    lb_set_str(L, "executable", path);
}

int luaopen_gpu(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"backends", l_backends}, {"devices", l_devices}, {"open", l_open},
        {"live", l_live},         {"clock", l_clock},     {"isatty", l_isatty},
        {"root", l_root},         {"compile", lb_compile}, {NULL, NULL}};
    lb_open_device(L);
    lb_open_buffer(L);
    lb_open_kernel(L);
    lb_open_timer(L);
    lb_open_batch(L);
    luaL_newlib(L, fns);
    static const char *const kinds[] = {"u32", "i32", "f32", "u64"};
    for (int i = 0; i < 4; i++) {
        lua_pushstring(L, kinds[i]);
        lua_pushcclosure(L, lb_scalar_ctor, 1);
        lua_setfield(L, -2, kinds[i]);
    }
    lb_set_int(L, "max_launches", GB_MAX_LAUNCHES); /* distinct launches per batch */
    lb_set_str(L, "version", GPUBENCH_VERSION);
    lb_set_str(L, "git", GPUBENCH_GIT);
    set_executable(L);
    return 1;
}

/* ---------------------------------------------------- root and module setup */

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char exe_dir[PATH_MAX];

static const char *executable_dir(void) {
    if (exe_dir[0]) return exe_dir;
    ssize_t n = readlink("/proc/self/exe", exe_dir, sizeof exe_dir - 1);
    if (n <= 0) return NULL;
    exe_dir[n] = '\0';
    char *slash = strrchr(exe_dir, '/');
    if (slash) *slash = '\0';
    return exe_dir;
}

const char *gpubench_root(void) {
    static char root[PATH_MAX];
    if (root[0]) return root;
    const char *env = getenv("GPUBENCH_ROOT");
    char probe_path[PATH_MAX + 32];
    if (env && *env) {
        snprintf(root, sizeof root, "%s", env);
        return root;
    }
    /* The binary travels inside its build folder (<root>/build/gpubench), so
     * the tree next to it wins over the path compiled in. */
    const char *dir = executable_dir();
    if (dir) {
        snprintf(probe_path, sizeof probe_path, "%s/../lib/gpubench", dir);
        if (is_dir(probe_path)) {
            snprintf(probe_path, sizeof probe_path, "%s/..", dir);
            if (realpath(probe_path, root)) return root;
        }
    }
    snprintf(root, sizeof root, "%s", GPUBENCH_SOURCE_DIR);
    return root;
}

void gpubench_open_modules(lua_State *L) {
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_gpu);
    lua_setfield(L, -2, "gpu");
    lua_pushcfunction(L, luaopen_gpubench_ref);
    lua_setfield(L, -2, "gpubench.ref");
    lua_pushcfunction(L, luaopen_lfs);
    lua_setfield(L, -2, "lfs");
    lua_pushcfunction(L, luaopen_cjson);
    lua_setfield(L, -2, "cjson");
    lua_pop(L, 1);

    const char *root = gpubench_root();
    const char *dir = executable_dir();
    lua_getglobal(L, "package");
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    /* The gpubench tree first, then the bundled pure-Lua dependencies next to
     * the binary and in the build folder, then whatever LUA_PATH gave. */
    lua_getfield(L, -1, "path");
    const char *old_path = lua_tostring(L, -1);
    if (!old_path) old_path = "";
    if (dir)
        lua_pushfstring(L, "%s/lib/?.lua;%s/lib/?/init.lua;%s/lua/?.lua;%s/?.lua;%s", root, root,
                        dir, GPUBENCH_BUILD_LUA_DIR, old_path);
    else
        lua_pushfstring(L, "%s/lib/?.lua;%s/lib/?/init.lua;%s/?.lua;%s", root, root,
                        GPUBENCH_BUILD_LUA_DIR, old_path);
    lua_remove(L, -2);
    lua_setfield(L, -2, "path");
    lua_pop(L, 1);
}
