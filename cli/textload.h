/* Source chunks only, unless --allow-binary: a crafted precompiled (binary)
 * chunk can crash the Lua VM, so every chunk gpubench loads (the script,
 * stdin, -e, LUA_INIT) and every one a script loads (load, loadfile, dofile,
 * require) is loaded in text mode and a binary one refused with a message
 * naming the flag. */
#ifndef GPUBENCH_CLI_TEXTLOAD_H
#define GPUBENCH_CLI_TEXTLOAD_H

#include <stddef.h>

#include <lua.h>

/* --allow-binary: the loads below accept binary chunks and the globals stay
 * the stock ones. Set before anything is loaded. */
void textload_allow_binary(int allow);

/* luaL_loadfilex / luaL_loadbufferx in the mode above; a refused binary
 * chunk leaves "<where>: binary chunks are refused (...)" as the error.
 * fname NULL is stdin. */
int textload_file(lua_State *L, const char *fname);
int textload_buffer(lua_State *L, const char *s, size_t len, const char *chunkname);

/* Replaces the globals load, loadfile, dofile and require's Lua-file searcher
 * (package.searchers[2]) by versions whose mode is always "t". Does nothing
 * when binary chunks are allowed. */
void textload_guard_globals(lua_State *L);

#endif
