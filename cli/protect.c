/* Protected calls, as in Lua 5.4's lua.c: every chunk runs under lua_pcall
 * with a message handler that appends a traceback, and Ctrl-C while code runs
 * sets a hook that raises "interrupted!" at the next Lua instruction, so the
 * script unwinds normally and every object it made stays valid or is
 * collected. Differences from lua.c: error objects carrying `gpubench_exit`
 * pass through untouched (main.c ends the program with that status), and
 * every metamethod called while reporting an error runs under lua_pcall, so
 * no error object can raise an unprotected error (a PANIC). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "protect.h"

/* ------------------------------------------------------ messages, errors */

/* Where the REPL is, error messages carry no program name (as in lua.c). */
static const char *progname = PROGNAME;

const char *cli_set_progname(const char *pname) {
    const char *old = progname;
    progname = pname;
    return old;
}

void cli_message(const char *pname, const char *msg) {
    if (pname) fprintf(stderr, "%s: ", pname);
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
}

int cli_exit_request(lua_State *L, int idx) {
    if (lua_type(L, idx) != LUA_TTABLE) return -1;
    idx = lua_absindex(L, idx);
    lua_pushliteral(L, "gpubench_exit");
    lua_rawget(L, idx);
    /* An integer subtype only, as docs/CLI.md and gpubench.errors.is_exit
     * say: a float such as 3.0 is an ordinary error object. */
    int isint = lua_isinteger(L, -1);
    lua_Integer v = isint ? lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    return (isint && v >= 0 && v <= 255) ? (int)v : -1;
}

static int tolstring(lua_State *L) {
    luaL_tolstring(L, 1, NULL); /* raises when __tostring fails or returns no string */
    return 1;
}

/* Pushes tostring of the value at idx, computed under lua_pcall. Sets *ok to
 * whether __tostring worked; when it did not, the string is the fallback. */
static const char *push_string(lua_State *L, int idx, int *ok) {
    idx = lua_absindex(L, idx);
    *ok = 1;
    if (lua_type(L, idx) == LUA_TSTRING) {
        lua_pushvalue(L, idx);
        return lua_tostring(L, -1);
    }
    int base = lua_gettop(L);
    lua_pushcfunction(L, tolstring);
    lua_pushvalue(L, idx);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK) return lua_tostring(L, -1);
    *ok = 0;
    /* What __tostring raised: a string or number is shown; anything else only
     * by its type, since describing it could fail the same way. */
    int et = lua_type(L, -1);
    const char *why = (et == LUA_TSTRING || et == LUA_TNUMBER)
                          ? lua_tostring(L, -1)
                          : lua_pushfstring(L, "(error object is a %s value)", lua_typename(L, et));
    lua_pushfstring(L, "(error object is a %s value; its __tostring failed: %s)",
                    luaL_typename(L, idx), why);
    lua_replace(L, base + 1);
    lua_settop(L, base + 1);
    return lua_tostring(L, -1);
}

const char *cli_tostring(lua_State *L, int idx) {
    int ok;
    return push_string(L, idx, &ok);
}

/* The message handler of every protected call: a traceback for ordinary
 * errors; exit requests pass through untouched so cli_report can read them. */
static int msghandler(lua_State *L) {
    if (cli_exit_request(L, 1) >= 0) return 1;
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_getmetafield(L, 1, "__tostring") == LUA_TNIL) { /* a raw read: runs nothing */
            msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
        } else {
            lua_pop(L, 1);
            int ok;
            msg = push_string(L, 1, &ok);
            if (ok) return 1; /* an object that describes itself: no traceback (as lua.c) */
        }
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int cli_report(lua_State *L, int status) {
    if (status == LUA_OK) return 0;
    int code = cli_exit_request(L, -1);
    if (code >= 0) {
        lua_pushliteral(L, "message");
        lua_rawget(L, -2);
        if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER) {
            lua_pop(L, 1);
            cli_tostring(L, -1); /* the object's __tostring, protected */
        }
        /* An empty message has nothing to say: --help raises one after
         * printing the help, to exit 0 with a clean stderr. */
        const char *msg = lua_tostring(L, -1);
        if (msg[0] != '\0') cli_message(progname, msg);
        lua_pop(L, 2);
        return CLI_STOP | code;
    }
    cli_message(progname, cli_tostring(L, -1));
    lua_pop(L, 2);
    return CLI_STOP | 1;
}

/* ------------------------------------------------------- Ctrl-C handling */

static lua_State *globalL = NULL;
static struct sigaction sigint_at_start; /* restored whenever no code runs */

void cli_protect_init(void) { sigaction(SIGINT, NULL, &sigint_at_start); }

static void laction(int sig);

static void set_laction(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = laction;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

/* The hook laction sets: raises the error from inside the running code. It
 * re-arms the handler (laction left SIG_DFL for a Ctrl-C during a long C call):
 * a script that catches "interrupted!" with pcall and goes on must get the
 * same error for the next Ctrl-C, not be killed without closing its state. */
static void lstop(lua_State *L, lua_Debug *ar) {
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    set_laction();
    luaL_error(L, "interrupted!");
}

/* SIGINT while code runs. Only async-signal-safe work here: setting a hook is
 * (lua_sethook is documented as safe to call from a signal handler). A second
 * Ctrl-C before the hook fires (a long C call) ends the process. */
static void laction(int sig) {
    int flag = LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT;
    signal(sig, SIG_DFL);
    lua_sethook(globalL, lstop, flag, 1);
}

int cli_docall(lua_State *L, int narg, int nres) {
    int base = lua_gettop(L) - narg;
    lua_pushcfunction(L, msghandler);
    lua_insert(L, base);
    globalL = L;
    set_laction();
    int status = lua_pcall(L, narg, nres, base);
    sigaction(SIGINT, &sigint_at_start, NULL);
    /* A Ctrl-C that landed after the code finished must not interrupt the
     * next statement; a script's own debug hook is left alone. */
    if (lua_gethook(L) == lstop) lua_sethook(L, NULL, 0, 0);
    lua_remove(L, base);
    return status;
}

/* ------------------------------------------------------ calling modules */

/* require(upvalue 1)[upvalue 2](...), the arguments as given. */
static int call_field(lua_State *L) {
    int narg = lua_gettop(L);
    lua_getglobal(L, "require");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_call(L, 1, 1);
    lua_getfield(L, -1, lua_tostring(L, lua_upvalueindex(2)));
    lua_remove(L, -2);
    lua_insert(L, 1);
    lua_call(L, narg, LUA_MULTRET);
    return lua_gettop(L);
}

int cli_call_module(lua_State *L, const char *module, const char *fn, int narg, int nres) {
    lua_pushstring(L, module);
    lua_pushstring(L, fn);
    lua_pushcclosure(L, call_field, 2);
    lua_insert(L, -narg - 1);
    return cli_docall(L, narg, nres);
}

int cli_first_line(const char *msg) { return (int)strcspn(msg, "\n"); }
