/* The seam between cli/main.c and the Lua modules in bindings/. */
#ifndef GPUBENCH_LGPU_H
#define GPUBENCH_LGPU_H
#include <lua.h>

/* require "gpu": devices, buffers, kernels, launches, batches, timers. */
int luaopen_gpu(lua_State *L);
/* require "gpubench.ref": weight formats and the FP64 oracle (bindings/l_ref.c). */
int luaopen_gpubench_ref(lua_State *L);

/* Registers every C module of gpubench (gpu, gpubench.ref, lfs, cjson) in
 * package.preload and points package.path at the Lua library
 * (lib/?.lua, lib/?/init.lua under the gpubench root, and the build's lua/
 * folder for bundled pure-Lua dependencies). */
void gpubench_open_modules(lua_State *L);

/* The defaults gpu.open{} uses when a script names no backend or index: set
 * by the CLI's --backend and --device. backend may be NULL (best available),
 * index may be -1 (first). */
void gpubench_set_device_defaults(lua_State *L, const char *backend, int index);

/* Frees the gpu objects of the closed state L (the pointer is compared, not
 * used) that no finalizer freed: a userdata whose metatable was replaced by
 * one without __gc would otherwise leak its device memory. Call after
 * lua_close(L). */
void gpubench_free_leftovers(const void *L);

/* The gpubench root (for lib/ and kernels/): $GPUBENCH_ROOT, else the source
 * directory compiled in, else the directory above the executable. */
const char *gpubench_root(void);
#endif
