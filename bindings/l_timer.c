/* gpu.timer: device timestamps in stream order (CUDA events, Vulkan
 * timestamp queries), read back in milliseconds. */
#include "lbind.h"

static void timer_free(void *ud) {
    l_timer *u = ud;
    if (u->t) {
        gb_timer_free(u->t);
        u->t = NULL;
    }
}

gb_timer *lb_check_timer(lua_State *L, int i) {
    l_timer *u = lb_checkud(L, i, GPU_TIMER_MT);
    if (!u->t) luaL_error(L, "use of a released %s", GPU_TIMER_MT);
    return u->t;
}

static gb_timer *check_timer(lua_State *L) { return lb_check_timer(L, 1); }

int lb_device_timer(lua_State *L) {
    lb_check_device(L, 1);
    l_timer *u = lb_new(L, GPU_TIMER_MT);
    gb_device *d = lb_check_device(L, 1); /* after the allocation, which can run a finalizer */
    gb_err e = {0};
    if (gb_timer_create(d, &u->t, &e) != 0) lb_raise(L, &e);
    lb_track(L, GPU_TIMER_MT, u->t);
    return 1;
}

static int timer_start(lua_State *L) {
    gb_err e = {0};
    if (gb_timer_start(check_timer(L), &e) != 0) lb_raise(L, &e);
    return 0;
}

static int timer_stop(lua_State *L) {
    gb_err e = {0};
    if (gb_timer_stop(check_timer(L), &e) != 0) lb_raise(L, &e);
    return 0;
}

static int timer_ms(lua_State *L) {
    gb_err e = {0};
    double ms = 0;
    if (gb_timer_ms(check_timer(L), &ms, &e) != 0) lb_raise(L, &e);
    lua_pushnumber(L, ms);
    return 1;
}

void lb_open_timer(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"start", timer_start}, {"stop", timer_stop}, {"ms", timer_ms}, {NULL, NULL}};
    lb_register(L, GPU_TIMER_MT, sizeof(l_timer), methods, timer_free, NULL, NULL);
}
