/* Text-mode loading for every chunk gpubench and its scripts load (see
 * textload.h). The global load, loadfile and dofile are lbaselib.c's, with the
 * mode forced to "t" (the mode argument is still type-checked, then ignored),
 * so their errors read as the stock ones; require's Lua searcher is
 * loadlib.c's searcher_Lua in text mode. */
#include <string.h>

#include <lauxlib.h>

#include "textload.h"

#define REFUSED "binary chunks are refused (run with --allow-binary to load them)"
/* What lua_load leaves for a binary chunk in text mode (ldo.c, checkmode). */
#define BINARY_IN_TEXT_MODE "attempt to load a binary chunk (mode is 't')"

static int allow_binary = 0;

void textload_allow_binary(int allow) { allow_binary = allow; }

static const char *load_mode(void) { return allow_binary ? "bt" : "t"; }

/* Replaces Lua's message for a refused binary chunk by one naming the flag. */
static int refused(lua_State *L, int status, const char *where) {
    if (status != LUA_ERRSYNTAX) return status;
    const char *msg = lua_tostring(L, -1);
    if (msg && strcmp(msg, BINARY_IN_TEXT_MODE) == 0) {
        if (where)
            lua_pushfstring(L, "%s: " REFUSED, where);
        else
            lua_pushliteral(L, REFUSED);
        lua_replace(L, -2);
    }
    return status;
}

int textload_file(lua_State *L, const char *fname) {
    return refused(L, luaL_loadfilex(L, fname, load_mode()), fname ? fname : "stdin");
}

int textload_buffer(lua_State *L, const char *s, size_t len, const char *chunkname) {
    const char *where = chunkname + (chunkname[0] == '=' || chunkname[0] == '@');
    return refused(L, luaL_loadbufferx(L, s, len, chunkname, load_mode()), where);
}

/* ------------------------------------------- the guarded global functions */

/* As lbaselib.c's load_aux: the loaded function with env as its first
 * upvalue, or fail plus the message. */
static int load_result(lua_State *L, int status, int envidx) {
    if (status == LUA_OK) {
        if (envidx != 0) {
            lua_pushvalue(L, envidx);
            if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
        }
        return 1;
    }
    luaL_pushfail(L);
    lua_insert(L, -2);
    return 2;
}

#define RESERVEDSLOT 5 /* where generic_reader keeps the current piece */

static const char *generic_reader(lua_State *L, void *ud, size_t *size) {
    (void)ud;
    luaL_checkstack(L, 2, "too many nested functions");
    lua_pushvalue(L, 1);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        *size = 0;
        return NULL;
    }
    if (!lua_isstring(L, -1)) luaL_error(L, "reader function must return a string");
    lua_replace(L, RESERVEDSLOT);
    return lua_tolstring(L, RESERVEDSLOT, size);
}

/* load(chunk [, chunkname [, mode [, env]]]) */
static int g_load(lua_State *L) {
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    luaL_optstring(L, 3, "t");
    int env = !lua_isnone(L, 4) ? 4 : 0;
    int status;
    if (s != NULL) {
        const char *chunkname = luaL_optstring(L, 2, s);
        status = luaL_loadbufferx(L, s, len, chunkname, "t");
    } else {
        const char *chunkname = luaL_optstring(L, 2, "=(load)");
        luaL_checktype(L, 1, LUA_TFUNCTION);
        lua_settop(L, RESERVEDSLOT);
        status = lua_load(L, generic_reader, NULL, chunkname, "t");
    }
    return load_result(L, refused(L, status, NULL), env);
}

/* loadfile([filename [, mode [, env]]]) */
static int g_loadfile(lua_State *L) {
    const char *fname = luaL_optstring(L, 1, NULL);
    luaL_optstring(L, 2, "t");
    int env = !lua_isnone(L, 3) ? 3 : 0;
    return load_result(L, textload_file(L, fname), env);
}

static int dofile_cont(lua_State *L, int status, lua_KContext ctx) {
    (void)status;
    (void)ctx;
    return lua_gettop(L) - 1;
}

/* dofile([filename]) */
static int g_dofile(lua_State *L) {
    const char *fname = luaL_optstring(L, 1, NULL);
    lua_settop(L, 1);
    if (textload_file(L, fname) != LUA_OK) return lua_error(L);
    lua_callk(L, 0, LUA_MULTRET, 0, dofile_cont);
    return dofile_cont(L, 0, 0);
}

/* package.searchers[2]: a Lua file on package.path, loaded as text. The
 * upvalue is the package table, as for the stock searcher. */
static int searcher_text(lua_State *L) {
    const char *name = luaL_checkstring(L, 1);
    lua_getfield(L, lua_upvalueindex(1), "path");
    if (!lua_isstring(L, -1)) return luaL_error(L, "'package.path' must be a string");
    lua_getfield(L, lua_upvalueindex(1), "searchpath");
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 2);   /* the file name, or fail and the "no file" list */
    if (lua_isnil(L, -2)) return 1;
    lua_settop(L, 3);
    const char *filename = lua_tostring(L, 3);
    if (textload_file(L, filename) == LUA_OK) {
        lua_pushvalue(L, 3); /* the second argument of the module's chunk */
        return 2;
    }
    return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, filename,
                      lua_tostring(L, -1));
}

void textload_guard_globals(lua_State *L) {
    if (allow_binary) return;
    lua_pushcfunction(L, g_load);
    lua_setglobal(L, "load");
    lua_pushcfunction(L, g_loadfile);
    lua_setglobal(L, "loadfile");
    lua_pushcfunction(L, g_dofile);
    lua_setglobal(L, "dofile");
    if (lua_getglobal(L, "package") == LUA_TTABLE) {
        if (lua_getfield(L, -1, "searchers") == LUA_TTABLE) {
            lua_pushvalue(L, -2);
            lua_pushcclosure(L, searcher_text, 1);
            lua_rawseti(L, -2, 2);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}
