/* Shared pieces of the gpu module's bindings: the userdata layouts, their
 * metatable names, and the checks every method starts with.
 *
 * Every object is a userdata holding a tag and a pointer to the C object;
 * one release function serves :free(), __gc and __close and sets the pointer
 * to NULL, so a later use raises "use of a released gpu.buffer" instead of
 * touching freed memory. The C objects keep their device alive by reference
 * count (host/core/backend.c), so Lua may finalize them in any order.
 *
 * The tag (the userdata's first word) and its size say what a userdata is,
 * whatever its metatable: the debug library can swap metatables and user
 * values, and a check by metatable alone would then let C read one struct
 * as another. lb_checkud / lb_testud check all three; the release function
 * frees a userdata by its own tag. */
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

/* The common layout of the handle types below (a tag, then the C object). */
typedef struct { uint32_t tag; void *ptr; } lb_handle;
typedef struct { uint32_t tag; gb_device *d; } l_device;
typedef struct { uint32_t tag; gb_buffer *b; } l_buffer;
typedef struct { uint32_t tag; gb_kernel *k; } l_kernel;
typedef struct { uint32_t tag; gb_timer *t; } l_timer;
typedef struct { uint32_t tag; gb_batch *b; } l_batch;
typedef struct { uint32_t tag; gb_arg a; } l_scalar;

/* The userdata at index i if it is the gpu type of metatable `mt` (by
 * metatable, size and tag); lb_testud returns NULL otherwise, lb_checkud
 * raises an argument error naming what was expected. */
void *lb_testud(lua_State *L, int i, const char *mt);
void *lb_checkud(lua_State *L, int i, const char *mt);

/* Raises the error held in e (freeing it) as a Lua error. Never returns. */
int lb_raise(lua_State *L, gb_err *e);

/* Check that argument i is a live object of the type; raise otherwise. */
gb_device *lb_check_device(lua_State *L, int i);
gb_buffer *lb_check_buffer(lua_State *L, int i);
gb_kernel *lb_check_kernel(lua_State *L, int i);
gb_timer *lb_check_timer(lua_State *L, int i);

/* Creates a new userdata of the registered type `mt`, tagged, zeroed, with
 * one user value slot. */
void *lb_new(lua_State *L, const char *mt);
/* Frees the C object a userdata of this type holds and clears its pointer. */
typedef void (*lb_free_fn)(void *ud);
/* Registers a type: its size, its metatable (methods in __index, a table or
 * a function given as index_fn; __name set), and free_fn, which the one
 * release function (free/__gc/__close) calls for a userdata of this tag. */
void lb_register(lua_State *L, const char *mt, size_t size, const luaL_Reg *methods,
                 lb_free_fn free_fn, lua_CFunction index_fn, lua_CFunction tostring_fn);

/* Raises "<who>: <what> must be a plain table (...)" when the table at i has a
 * metatable. Argument and option tables are read while the binding holds raw
 * pointers to C objects; a metamethod run then (an __index that frees the
 * object) would leave them dangling, so no table with metamethods is read. */
void lb_plain_table(lua_State *L, int i, const char *who, const char *what);
/* Tracks a C object just stored in a new userdata of type `mt`, so that it is
 * freed after the Lua state closes even if its userdata lost its __gc (the
 * debug library can set any metatable; lgpu.h, gpubench_free_leftovers);
 * the release function stops tracking it. */
void lb_track(lua_State *L, const char *mt, void *ptr);
/* The string field `field` of the table at t (pushed: it stays alive on the
 * stack), NULL when absent; another type raises "<who>: field 'x' must be a
 * string, got number". */
const char *lb_field_string(lua_State *L, int t, const char *field, const char *who);

/* Reads a geometry (an integer or {x[, y[, z]]}) into out[3]. */
void lb_check_dim3(lua_State *L, int i, const char *what, uint32_t out[3]);
/* Converts Lua values [first, first+n) into launch arguments checked against
 * kernel k's parameters. */
void lb_collect_args(lua_State *L, gb_kernel *k, int first, int n, gb_launch *l);
/* Checks that index i holds a launch table (a plain table of at least 3
 * entries) without reading its entries. */
void lb_check_launch_table_shape(lua_State *L, int i);
/* Reads a launch description {kernel, grid, block, args...} at index i:
 * no allocation, so the pointers it stores stay valid until the caller's
 * next allocation. */
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
int lb_device_vendor_gemm(lua_State *L); /* l_vendor.c */
/* Pushes the table k.vendor reads for a vendor GEMM (l_vendor.c). */
void lb_push_vendor(lua_State *L, const gb_vendor_gemm *g);
/* gpu.u32/i32/f32/u64 (l_kernel.c) and gpu.compile (l_kernel.c). */
int lb_scalar_ctor(lua_State *L);
int lb_compile(lua_State *L);

/* t[k] = v for the table on top of the stack. */
void lb_set_int(lua_State *L, const char *k, lua_Integer v);
void lb_set_str(lua_State *L, const char *k, const char *v);
/* Pushes a device-info table (gpu.devices() entries and dev.info). */
void lb_push_info(lua_State *L, const gb_device_info *in);
/* The info table of an open device (dev.info): its info and flush_bytes. */
void lb_push_device_info(lua_State *L, gb_device *d);

/* Reads kernel source fields (file | source, entry, defines, include_dirs,
 * params) from the table at index i into *src. Everything src points to is
 * kept alive on the Lua stack (pushed above the caller's values), so a Lua
 * error while reading leaks nothing; the caller pops when done. */
void lb_read_source(lua_State *L, int i, gb_kernel_source *src, const char *who);

#endif
