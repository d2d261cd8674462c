/* Shared pieces of the gpu module's bindings: the userdata layouts, their
 * metatable names, and the checks every method starts with.
 *
 * Every object is a userdata holding a pointer to the C object; one release
 * function serves :free(), __gc and __close and sets the pointer to NULL, so a
 * later use raises "use of a released gpu.buffer" instead of touching freed
 * memory. The C objects keep their device alive by reference count
 * (host/core/backend.c), so Lua may finalize them in any order. */
#ifndef GPUBENCH_LBIND_H
#define GPUBENCH_LBIND_H

#include <lauxlib.h>
#include <lua.h>

#include "backend.h"

#define GPU_DEVICE_MT "gpu.device"
#define GPU_BUFFER_MT "gpu.buffer"
#define GPU_KERNEL_MT "gpu.kernel"
#define GPU_TIMER_MT "gpu.timer"
#define GPU_BATCH_MT "gpu.batch"
#define GPU_SCALAR_MT "gpu.scalar"

typedef struct { gb_device *d; } l_device;
typedef struct { gb_buffer *b; } l_buffer;
typedef struct { gb_kernel *k; } l_kernel;
typedef struct { gb_timer *t; } l_timer;
typedef struct { gb_batch *b; } l_batch;
typedef struct { gb_arg a; } l_scalar;

/* Raises the error held in e (freeing it) as a Lua error. Never returns. */
int lb_raise(lua_State *L, gb_err *e);

/* Check that argument i is a live object of the type; raise otherwise. */
gb_device *lb_check_device(lua_State *L, int i);
gb_buffer *lb_check_buffer(lua_State *L, int i);
gb_kernel *lb_check_kernel(lua_State *L, int i);

/* Create a new userdata of the metatable, with one user value slot. */
void *lb_new(lua_State *L, size_t size, const char *mt);
/* Registers a metatable: methods in __index (a table, or a function given
 * as index_fn), the release function as free/__gc/__close, __name set. */
void lb_register(lua_State *L, const char *mt, const luaL_Reg *methods, lua_CFunction release,
                 lua_CFunction index_fn, lua_CFunction tostring_fn);

/* Reads a geometry (an integer or {x[, y[, z]]}) into out[3]. */
void lb_check_dim3(lua_State *L, int i, const char *what, uint32_t out[3]);
/* Converts Lua values [first, first+n) into launch arguments checked against
 * kernel k's parameters. */
void lb_collect_args(lua_State *L, gb_kernel *k, int first, int n, gb_launch *l);
/* Reads a launch description {kernel, grid, block, args...} at index i. */
void lb_check_launch_table(lua_State *L, int i, gb_launch *l);

/* Per-type module setup (each file registers its metatable and, for the
 * device, its methods). */
void lb_open_device(lua_State *L);
void lb_open_buffer(lua_State *L);
void lb_open_kernel(lua_State *L);
void lb_open_timer(lua_State *L);
void lb_open_batch(lua_State *L);

/* Device methods implemented in the per-type files. */
int lb_device_buffer(lua_State *L); /* l_buffer.c */
int lb_device_kernel(lua_State *L); /* l_kernel.c */
int lb_device_timer(lua_State *L);  /* l_timer.c */
int lb_device_record(lua_State *L); /* l_batch.c */
int lb_device_batch(lua_State *L);  /* l_batch.c */
/* gpu.u32/i32/f32/u64 (l_kernel.c) and gpu.compile (l_kernel.c). */
int lb_scalar_ctor(lua_State *L);
int lb_compile(lua_State *L);

/* Pushes a device-info table (gpu.devices() entries and dev.info). */
void lb_push_info(lua_State *L, const gb_device_info *in);

/* Reads kernel source fields (file | source, entry, defines, include_dirs,
 * params) from the table at index i into *src. Everything src points to is
 * kept alive on the Lua stack (pushed above the caller's values), so a Lua
 * error while reading leaks nothing; the caller pops when done. */
void lb_read_source(lua_State *L, int i, gb_kernel_source *src);

#endif
