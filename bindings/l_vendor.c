/* dev:vendor_gemm{n=, k=, t=}: the vendor library's bf16 GEMM (cuBLASLt on
 * CUDA) as a gpu.kernel, so it is launched, recorded, batched, captured and
 * timed exactly as a compiled kernel is: {g, 1, 1, W, x, y} is a launch like
 * any other. g.vendor says which library, version and algorithm it runs. */
#include <string.h>

#include "lbind.h"

static uint32_t dim_field(lua_State *L, int t, const char *field) {
    int type = lua_getfield(L, t, field);
    int ok = 0;
    lua_Integer v = type == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
    if (!ok || v < 1 || v > 0x7fffffff)
        luaL_error(L, "dev:vendor_gemm: field '%s' must be an integer from 1 to 2147483647, got %s", field,
                   type == LUA_TNUMBER ? luaL_tolstring(L, -1, NULL)
                   : type == LUA_TNIL  ? "nothing"
                                       : luaL_typename(L, -1));
    lua_pop(L, 1);
    return (uint32_t)v;
}

/* dev:vendor_gemm{n = N, k = K, t = T} -> gpu.kernel taking (W, x, y) */
int lb_device_vendor_gemm(lua_State *L) {
    lb_check_device(L, 1);
    if (!lua_istable(L, 2))
        luaL_error(L, "dev:vendor_gemm: expected a table {n =, k =, t =}, got %s", luaL_typename(L, 2));
    lb_plain_table(L, 2, "dev:vendor_gemm", "the table");
    for (lua_pushnil(L); lua_next(L, 2); lua_pop(L, 1)) {
        const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        if (!key || (strcmp(key, "n") != 0 && strcmp(key, "k") != 0 && strcmp(key, "t") != 0))
            luaL_error(L, "dev:vendor_gemm: unknown field %s (the fields are n, k, t)",
                       key ? lua_pushfstring(L, "'%s'", key) : luaL_typename(L, -2));
    }
    uint32_t n = dim_field(L, 2, "n"), k = dim_field(L, 2, "k"), t = dim_field(L, 2, "t");
    l_kernel *u = lb_new(L, GPU_KERNEL_MT);
    gb_device *d = lb_check_device(L, 1); /* after the allocation, which can run a finalizer */
    gb_err e = {0};
    if (gb_vendor_gemm_create(d, n, k, t, &u->k, &e) != 0) lb_raise(L, &e);
    lb_track(L, GPU_KERNEL_MT, u->k);
    return 1;
}

void lb_push_vendor(lua_State *L, const gb_vendor_gemm *g) {
    lua_createtable(L, 0, 20);
    lb_set_str(L, "op", "bf16 gemm");
    lb_set_str(L, "library", g->library);
    lb_set_str(L, "path", g->path);
    lb_set_str(L, "version", g->version);
    lb_set_int(L, "version_number", (lua_Integer)g->version_number);
    lb_set_int(L, "n", g->n);
    lb_set_int(L, "k", g->k);
    lb_set_int(L, "t", g->t);
    lb_set_int(L, "algo_id", g->algo_id);
    lb_set_int(L, "tile_id", g->tile_id);
    lb_set_int(L, "stages_id", g->stages_id);
    lb_set_int(L, "splitk", g->splitk);
    lb_set_int(L, "reduction_scheme", g->reduction_scheme);
    lb_set_int(L, "swizzle", g->swizzle);
    lb_set_int(L, "custom_option", g->custom_option);
    lb_set_int(L, "workspace_bytes", (lua_Integer)g->workspace_bytes);
    lb_set_int(L, "workspace_limit", (lua_Integer)g->workspace_limit);
    lua_pushnumber(L, g->waves);
    lua_setfield(L, -2, "waves");
}
