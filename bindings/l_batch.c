/* gpu.batch and dev:record: many launches in one submission with no Lua work
 * per launch (two-point timing), optionally replayed as a CUDA graph or a
 * pre-recorded Vulkan command buffer.
 *
 * A batch's user value keeps the Lua objects of the buffers and kernels it
 * launches reachable, so the collector does not release them while it
 * lives; the C batch holds references on the objects themselves and refuses
 * to submit when one was released with :free() (host/core/backend.c). */
#include <string.h>

#include "lbind.h"

static void batch_free(void *ud) {
    l_batch *u = ud;
    if (u->b) {
        gb_batch_free(u->b);
        u->b = NULL;
    }
}

/* Appends the kernel and buffer objects of the launch at stack index i (a
 * {kernel, grid, block, args...} table) or of the values [first, last]. */
static void anchor_values(lua_State *L, int refs, int first, int last) {
    for (int i = first; i <= last; i++)
        if (lb_testud(L, i, GPU_KERNEL_MT) || lb_testud(L, i, GPU_BUFFER_MT)) {
            lua_pushvalue(L, i);
            lua_rawseti(L, refs, (lua_Integer)lua_rawlen(L, refs) + 1);
        }
}

static void anchor_table(lua_State *L, int refs, int t) {
    int n = (int)lua_rawlen(L, t);
    for (int j = 1; j <= n; j++) {
        lua_rawgeti(L, t, j);
        anchor_values(L, refs, lua_gettop(L), lua_gettop(L));
        lua_pop(L, 1);
    }
}

static uint32_t check_count(lua_State *L, int i, const char *what) {
    int ok;
    lua_Integer n = lua_tointegerx(L, i, &ok);
    if (!ok || n < 1 || n > 0xffffffffLL) luaL_error(L, "%s must be a positive integer", what);
    return (uint32_t)n;
}

/* The batch userdata, pushed, holding refs (the table of what it launches)
 * as its user value. Made before the launches are read: reading them stores
 * raw pointers, and no allocation (which can run a finalizer that frees one)
 * may come between that and gb_batch_create taking its references. */
static l_batch *new_batch(lua_State *L, int refs) {
    l_batch *u = lb_new(L, GPU_BATCH_MT);
    lua_pushvalue(L, refs);
    lua_setiuservalue(L, -2, 1);
    return u;
}

static void create_batch(lua_State *L, l_batch *u, gb_launch *ls, int n, uint32_t count, int flags) {
    gb_device *d = lb_check_device(L, 1);
    gb_err e = {0};
    if (gb_batch_create(d, ls, n, count, flags, &u->b, &e) != 0) lb_raise(L, &e);
    lb_track(L, GPU_BATCH_MT, u->b);
}

/* The live batch at ud_index. Whether what it launches was released is the
 * C batch's to check (it holds references on them: backend.h), so nothing
 * read back from the user value, which the debug library can replace, is
 * trusted here. */
static l_batch *check_submittable(lua_State *L, int ud_index) {
    l_batch *u = lb_checkud(L, ud_index, GPU_BATCH_MT);
    if (!u->b) luaL_error(L, "use of a released %s", GPU_BATCH_MT);
    return u;
}

static void submit(lua_State *L, int ud_index) {
    l_batch *u = check_submittable(L, ud_index);
    gb_err e = {0};
    if (gb_batch_submit(u->b, &e) != 0) lb_raise(L, &e);
}

/* batch:cold_sample(timer [, {flush = "clean" | "write" | "none", hold = true}])
 *   -> ms, held
 * One cold sample: the flush, the timer's start, one submit, the stop,
 * queued behind a held stream (backend.h, gb_cold_sample). */
static int batch_cold_sample(lua_State *L) {
    check_submittable(L, 1);
    lb_check_timer(L, 2);
    gb_flush_kind flush = GB_FLUSH_CLEAN;
    int hold = 1;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        lb_plain_table(L, 3, "batch:cold_sample", "the options table");
        if (lua_getfield(L, 3, "flush") != LUA_TNIL) {
            if (lua_type(L, -1) == LUA_TBOOLEAN) {
                flush = lua_toboolean(L, -1) ? GB_FLUSH_CLEAN : GB_FLUSH_NONE;
            } else {
                const char *name = lua_tostring(L, -1);
                if (!name || gb_flush_kind_from_name(name, &flush) != 0)
                    luaL_error(L, "batch:cold_sample: flush must be \"clean\", \"write\", \"none\" or a "
                                  "boolean, got %s", luaL_tolstring(L, -1, NULL));
            }
        }
        lua_pop(L, 1);
        if (lua_getfield(L, 3, "hold") != LUA_TNIL) hold = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    /* The objects are fetched once the options are read. */
    l_batch *u = check_submittable(L, 1);
    gb_timer *timer = lb_check_timer(L, 2);
    double ms = 0;
    int held = 0;
    gb_err e = {0};
    if (gb_cold_sample(u->b, timer, flush, hold, &ms, &held, &e) != 0) lb_raise(L, &e);
    lua_pushnumber(L, ms);
    lua_pushboolean(L, held);
    return 2;
}

/* dev:record(n, kernel, grid, block, args...)
 * dev:record(n, {kernel, grid, block, args...}, {...}, ...)  -- rotating sets */
int lb_device_record(lua_State *L) {
    lb_check_device(L, 1);
    uint32_t count = check_count(L, 2, "dev:record: the launch count");
    int top = lua_gettop(L);
    int sets = lua_istable(L, 3);
    int n = sets ? top - 2 : 1;
    if (n > GB_MAX_LAUNCHES) luaL_error(L, "dev:record takes at most %d launch sets", GB_MAX_LAUNCHES);
    /* Every allocation first (new_batch says why), then the reads. */
    lua_newtable(L);
    int refs = lua_gettop(L);
    for (int j = 0; j < n && sets; j++) {
        lb_check_launch_table_shape(L, 3 + j);
        anchor_table(L, refs, 3 + j);
    }
    if (!sets) anchor_values(L, refs, 3, top);
    gb_launch *ls = lua_newuserdatauv(L, sizeof *ls * (size_t)n, 0);
    memset(ls, 0, sizeof *ls * (size_t)n);
    l_batch *u = new_batch(L, refs);
    int ud = lua_gettop(L);
    if (sets) {
        for (int j = 0; j < n; j++) lb_check_launch_table(L, 3 + j, &ls[j]);
    } else {
        gb_kernel *k = lb_check_kernel(L, 3);
        lb_check_dim3(L, 4, "grid", ls->grid);
        lb_check_dim3(L, 5, "block", ls->block);
        lb_collect_args(L, k, 6, top - 5, ls);
    }
    create_batch(L, u, ls, n, count, 0);
    lua_toclose(L, ud); /* released on return, and when the submit raises */
    submit(L, ud);
    return 0;
}

/* dev:batch{count=n, graph=false, overlap=false, {kernel, grid, block, args...}, ...} */
int lb_device_batch(lua_State *L) {
    lb_check_device(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lb_plain_table(L, 2, "dev:batch", "the batch table");
    lua_getfield(L, 2, "count");
    uint32_t count = check_count(L, -1, "dev:batch: count");
    lua_getfield(L, 2, "graph");
    int flags = lua_toboolean(L, -1) ? GB_BATCH_GRAPH : 0;
    lua_getfield(L, 2, "overlap");
    if (lua_toboolean(L, -1)) flags |= GB_BATCH_OVERLAP;
    int n = (int)lua_rawlen(L, 2);
    if (n < 1 || n > GB_MAX_LAUNCHES)
        luaL_error(L, "dev:batch takes 1 to %d launches {kernel, grid, block, args...}", GB_MAX_LAUNCHES);
    /* Every allocation first (new_batch says why), then the reads. */
    lua_newtable(L);
    int refs = lua_gettop(L);
    for (int j = 0; j < n; j++) {
        lua_rawgeti(L, 2, j + 1);
        lb_check_launch_table_shape(L, -1);
        anchor_table(L, refs, lua_gettop(L));
        lua_pop(L, 1);
    }
    gb_launch *ls = lua_newuserdatauv(L, sizeof *ls * (size_t)n, 0);
    memset(ls, 0, sizeof *ls * (size_t)n);
    l_batch *u = new_batch(L, refs);
    for (int j = 0; j < n; j++) {
        lua_rawgeti(L, 2, j + 1);
        lb_check_launch_table(L, -1, &ls[j]);
        lua_pop(L, 1);
    }
    create_batch(L, u, ls, n, count, flags);
    return 1;
}

static int batch_submit(lua_State *L) {
    submit(L, 1);
    return 0;
}

static int batch_index(lua_State *L) {
    l_batch *u = lb_checkud(L, 1, GPU_BATCH_MT);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
    const char *k = lua_tostring(L, 2);
    if (!k || !u->b) return 0;
    if (strcmp(k, "count") == 0) lua_pushinteger(L, u->b->count);
    else if (strcmp(k, "graph") == 0) lua_pushboolean(L, u->b->graph);
    else if (strcmp(k, "overlap") == 0) lua_pushboolean(L, u->b->overlap);
    else if (strcmp(k, "overlapped") == 0) lua_pushinteger(L, u->b->overlapped);
    else if (strcmp(k, "launches") == 0) lua_pushinteger(L, u->b->nlaunches);
    else return 0;
    return 1;
}

void lb_open_batch(lua_State *L) {
    static const luaL_Reg methods[] = {{"submit", batch_submit}, {"cold_sample", batch_cold_sample},
                                       {NULL, NULL}};
    lb_register(L, GPU_BATCH_MT, sizeof(l_batch), methods, batch_free, batch_index, NULL);
}
