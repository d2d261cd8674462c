/* gpu.device: fields from the device's info table, and the methods that make
 * objects on it or act on its stream. */
#include <string.h>

#include "lbind.h"

static void dev_free(void *ud) {
    l_device *u = ud;
    if (u->d) {
        gb_device_release(u->d);
        u->d = NULL;
    }
}

/* Pushes the device's info table, its user value: made again from the C
 * info when the user value is not the table the device was given (the debug
 * library can replace it). */
static void push_info(lua_State *L, l_device *u) {
    if (lua_getiuservalue(L, 1, 1) == LUA_TTABLE) {
        if (lua_getmetatable(L, -1)) {
            lua_pop(L, 1); /* not the table C made (that has no metatable): made again below */
        } else {
            lua_getfield(L, -1, "backend");
            int ok = lua_type(L, -1) == LUA_TSTRING;
            lua_pop(L, 1);
            if (ok) return;
        }
    }
    lua_pop(L, 1);
    if (!u->d) {
        lua_newtable(L);
        return;
    }
    lb_push_device_info(L, u->d);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, 1, 1);
}

/* dev.<field>: methods first, then the info table (the user value). */
static int dev_index(lua_State *L) {
    l_device *u = lb_checkud(L, 1, GPU_DEVICE_MT);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    if (lua_type(L, 2) == LUA_TSTRING) {
        const char *k = lua_tostring(L, 2);
        if (strcmp(k, "closed") == 0) {
            lua_pushboolean(L, u->d == NULL);
            return 1;
        }
        push_info(L, u);
        if (strcmp(k, "info") == 0) return 1;
        lua_pushvalue(L, 2);
        lua_rawget(L, -2);
        return 1;
    }
    lua_pushnil(L);
    return 1;
}

static int dev_tostring(lua_State *L) {
    l_device *u = lb_checkud(L, 1, GPU_DEVICE_MT);
    if (!u->d) {
        lua_pushstring(L, "gpu.device (released)");
        return 1;
    }
    lua_pushfstring(L, "gpu.device: %s %d (%s)", u->d->info.backend, u->d->info.index,
                    u->d->info.name);
    return 1;
}

static int dev_sync(lua_State *L) {
    gb_device *d = lb_check_device(L, 1);
    gb_err e = {0};
    if (gb_sync(d, &e) != 0) lb_raise(L, &e);
    return 0;
}

/* The flush kind named by argument i ("clean" when absent). */
static gb_flush_kind flush_kind_arg(lua_State *L, int i, const char *who) {
    const char *name = luaL_optstring(L, i, "clean");
    gb_flush_kind k;
    if (gb_flush_kind_from_name(name, &k) != 0)
        luaL_error(L, "%s: flush must be \"clean\", \"write\" or \"none\", got \"%s\"", who, name);
    return k;
}

/* dev:flush_l2([kind]): "clean" (a read pass, the default) or "write". */
static int dev_flush_l2(lua_State *L) {
    gb_device *d = lb_check_device(L, 1);
    gb_flush_kind k = flush_kind_arg(L, 2, "dev:flush_l2");
    gb_err e = {0};
    if (gb_flush_l2(d, k, &e) != 0) lb_raise(L, &e);
    return 0;
}

/* dev:clocks() -> {sm_mhz, memory_mhz, max_sm_mhz, max_memory_mhz,
 * temperature_c, power_w, reasons, source} | nil, why */
static int dev_clocks(lua_State *L) {
    gb_device *d = lb_check_device(L, 1);
    gb_clocks c;
    gb_err e = {0};
    if (gb_device_clocks(d, &c, &e) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, e.msg ? e.msg : "clocks unavailable");
        gb_err_clear(&e);
        return 2;
    }
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, c.sm_mhz), lua_setfield(L, -2, "sm_mhz");
    lua_pushinteger(L, c.memory_mhz), lua_setfield(L, -2, "memory_mhz");
    lua_pushinteger(L, c.max_sm_mhz), lua_setfield(L, -2, "max_sm_mhz");
    lua_pushinteger(L, c.max_memory_mhz), lua_setfield(L, -2, "max_memory_mhz");
    lua_pushinteger(L, c.temperature_c), lua_setfield(L, -2, "temperature_c");
    lua_pushnumber(L, c.power_w), lua_setfield(L, -2, "power_w");
    if (c.has_reasons) lua_pushinteger(L, (lua_Integer)c.reasons), lua_setfield(L, -2, "reasons");
    lua_pushstring(L, c.source), lua_setfield(L, -2, "source");
    return 1;
}

static int dev_profiler(lua_State *L, int begin) {
    gb_device *d = lb_check_device(L, 1);
    const char *name = luaL_optstring(L, 2, "gpubench");
    gb_err e = {0};
    if (gb_profiler_range(d, name, begin, &e) != 0) lb_raise(L, &e);
    return 0;
}
static int dev_profiler_start(lua_State *L) { return dev_profiler(L, 1); }
static int dev_profiler_stop(lua_State *L) { return dev_profiler(L, 0); }

void lb_open_device(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"buffer", lb_device_buffer},   {"kernel", lb_device_kernel},
        {"timer", lb_device_timer},     {"record", lb_device_record},
        {"batch", lb_device_batch},     {"sync", dev_sync},
        {"flush_l2", dev_flush_l2},     {"clocks", dev_clocks},
        {"profiler_start", dev_profiler_start},
        {"profiler_stop", dev_profiler_stop},
        {"vendor_gemm", lb_device_vendor_gemm}, {NULL, NULL}};
    lb_register(L, GPU_DEVICE_MT, sizeof(l_device), methods, dev_free, dev_index, dev_tostring);
}
