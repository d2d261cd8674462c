/* The REPL, as lua.c's: a line is first tried as "return <line>;" so an
 * expression prints its values; otherwise as a statement, reading ">> " lines
 * while the only complaint is the end of input. Lines are loaded as text only,
 * so a line that starts with ESC (an arrow key without line editing) is not
 * taken for a binary chunk. What the REPL adds for exploring a device lives in
 * lib/gpubench/repl.lua; when that module fails the REPL still runs, plainly. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "git_version.h"
#include "lineedit.h"
#include "protect.h"
#include "repl.h"

/* loadline's results besides a load status. */
enum { LOAD_EOF = -1, LOAD_NOTHING = -2 };

#define EOFMARK "<eof>"
#define MARKLEN (sizeof(EOFMARK) / sizeof(char) - 1)

/* The gpubench.repl module (a registry reference), or LUA_NOREF without it. */
static int helpers = LUA_NOREF;
static lua_State *replL; /* for the completer, called from inside the line reader */

/* ------------------------------------------------------------- helpers */

/* The banner: versions, and the devices from gpubench.cli. Device discovery
 * or the module failing must not keep the REPL from starting. */
static void print_banner(lua_State *L) {
    const char *git = GPUBENCH_GIT;
    int top = lua_gettop(L);
    const char *devices = "device discovery failed";
    int len = (int)strlen(devices);
    if (cli_call_module(L, "gpubench.cli", "banner_text", 0, 1) == LUA_OK) {
        if (lua_type(L, -1) == LUA_TSTRING) {
            devices = lua_tostring(L, -1);
            len = (int)strlen(devices);
        }
    } else {
        devices = lua_pushfstring(L, "gpubench.cli failed: %s", cli_tostring(L, -1));
        len = cli_first_line(devices);
    }
    printf(PROGNAME " %s (git %s), %s | %.*s\n", GPUBENCH_VERSION, git[0] ? git : "unknown",
           LUA_RELEASE, len, devices);
    fflush(stdout);
    lua_settop(L, top);
}

/* gpubench.repl's install(_G): the REPL's globals. Returns the module. */
static void load_helpers(lua_State *L) {
    lua_pushglobaltable(L);
    if (cli_call_module(L, "gpubench.repl", "install", 1, 1) == LUA_OK && lua_istable(L, -1)) {
        helpers = luaL_ref(L, LUA_REGISTRYINDEX);
        return;
    }
    const char *msg = cli_tostring(L, -1);
    fprintf(stderr, PROGNAME ": REPL helpers off (%.*s)\n", cli_first_line(msg), msg);
    fflush(stderr);
    lua_pop(L, 2);
}

/* Pushes helpers[name], or returns 0 (pushing nothing) without them. */
static int push_helper(lua_State *L, const char *name) {
    if (helpers == LUA_NOREF) return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, helpers);
    lua_pushstring(L, name);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (lua_isfunction(L, -1)) return 1;
    lua_pop(L, 1);
    return 0;
}

/* helpers.complete(word), under lua_pcall (its argument is a light userdata:
 * nothing that allocates runs outside the protected call). */
static int complete_protected(lua_State *L) {
    const char *word = lua_touserdata(L, 1);
    if (!push_helper(L, "complete")) return 0;
    lua_pushstring(L, word);
    lua_call(L, 1, 1);
    return 1;
}

/* The completer lineedit calls at Tab. The collector is held off meanwhile,
 * so no finalizer runs while a word is typed. */
static char **complete_word(const char *word) {
    lua_State *L = replL;
    if (!L || !lua_checkstack(L, 4)) return NULL;
    int top = lua_gettop(L);
    int gc_running = lua_gc(L, LUA_GCISRUNNING);
    lua_gc(L, LUA_GCSTOP);
    char **out = NULL;
    lua_pushcfunction(L, complete_protected);
    lua_pushlightuserdata(L, (void *)word);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TTABLE) {
        size_t n = lua_rawlen(L, -1), k = 0;
        out = calloc(n + 1, sizeof *out);
        for (size_t i = 1; out && i <= n; i++) {
            if (lua_rawgeti(L, -1, (lua_Integer)i) == LUA_TSTRING) {
                char *s = strdup(lua_tostring(L, -1));
                if (s) out[k++] = s;
            }
            lua_pop(L, 1);
        }
    }
    lua_settop(L, top);
    if (gc_running) lua_gc(L, LUA_GCRESTART);
    return out;
}

/* ------------------------------------------------------------ reading */

static const char *get_prompt(lua_State *L, int firstline) {
    if (lua_getglobal(L, firstline ? "_PROMPT" : "_PROMPT2") == LUA_TNIL)
        return firstline ? "> " : ">> "; /* the nil stays; the caller pops it */
    const char *p = cli_tostring(L, -1);
    lua_remove(L, -2);
    return p;
}

/* A syntax error at <eof> means the statement is not finished yet. */
static int incomplete(lua_State *L, int status) {
    if (status == LUA_ERRSYNTAX) {
        size_t lmsg;
        const char *msg = lua_tolstring(L, -1, &lmsg);
        if (lmsg >= MARKLEN && strcmp(msg + lmsg - MARKLEN, EOFMARK) == 0) {
            lua_pop(L, 1);
            return 1;
        }
    }
    return 0;
}

/* Pushes the next line. Returns LINE_OK, LINE_EOF or LINE_INTERRUPTED. */
static int pushline(lua_State *L, int firstline) {
    const char *prmt = get_prompt(L, firstline);
    char *b = NULL;
    int rs = lineedit_read(prmt, &b);
    lua_pop(L, 1); /* the prompt */
    if (rs != LINE_OK) return rs;
    size_t l = strlen(b);
    if (l > 0 && b[l - 1] == '\n') b[--l] = '\0';
    if (firstline && b[0] == '=') /* "=expr", kept from Lua 5.2 */
        lua_pushfstring(L, "return %s", b + 1);
    else
        lua_pushlstring(L, b, l);
    free(b);
    return LINE_OK;
}

/* Tries the line as an expression, "return <line>;". */
static int addreturn(lua_State *L) {
    const char *line = lua_tostring(L, -1);
    const char *retline = lua_pushfstring(L, "return %s;", line);
    int status = luaL_loadbufferx(L, retline, strlen(retline), "=stdin", "t");
    if (status == LUA_OK) {
        lua_remove(L, -2); /* the modified line */
        lineedit_add_history(line);
    } else {
        lua_pop(L, 2); /* the error and the modified line */
    }
    return status;
}

/* Reads continuation lines until the statement compiles or fails for a reason
 * other than ending early. Returns the load status, or LOAD_NOTHING when
 * Ctrl-C dropped the statement. */
static int multiline(lua_State *L) {
    for (;;) {
        size_t len;
        const char *line = lua_tolstring(L, 1, &len);
        int status = luaL_loadbufferx(L, line, len, "=stdin", "t");
        if (!incomplete(L, status)) {
            lineedit_add_history(line);
            return status;
        }
        int rs = pushline(L, 0);
        if (rs == LINE_INTERRUPTED) return LOAD_NOTHING;
        if (rs == LINE_EOF) { /* compile once more to report the <eof> error */
            status = luaL_loadbufferx(L, line, len, "=stdin", "t");
            lineedit_add_history(line);
            return status;
        }
        lua_pushliteral(L, "\n");
        lua_insert(L, -2);
        lua_concat(L, 3);
    }
}

/* Reads and compiles one statement, leaving the function (or error) on the
 * stack. Returns its load status, LOAD_EOF, or LOAD_NOTHING after Ctrl-C. */
static int loadline(lua_State *L) {
    lua_settop(L, 0);
    int rs = pushline(L, 1);
    if (rs == LINE_EOF) return LOAD_EOF;
    if (rs == LINE_INTERRUPTED) return LOAD_NOTHING;
    int status = addreturn(L);
    if (status != LUA_OK) status = multiline(L);
    if (status == LOAD_NOTHING) return LOAD_NOTHING;
    lua_remove(L, 1); /* the line */
    return status;
}

/* ----------------------------------------------------------- printing */

/* Prints the results: through helpers.print_results (readable values, then
 * the global print), else the global print alone (tostring, tab-separated). */
static void print_results(lua_State *L) {
    int n = lua_gettop(L);
    if (n == 0) return;
    luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
    if (push_helper(L, "print_results")) {
        lua_insert(L, 1);
        cli_report(L, cli_docall(L, n, 0));
        return;
    }
    lua_getglobal(L, "print");
    lua_insert(L, 1);
    if (cli_docall(L, n, 0) != LUA_OK) {
        const char *why = cli_tostring(L, -1);
        cli_message(NULL, lua_pushfstring(L, "error calling 'print' (%s)", why));
        lua_pop(L, 3);
    }
}

void repl_run(lua_State *L, int banner) {
    if (banner) print_banner(L);
    const char *oldprogname = cli_set_progname(NULL);
    load_helpers(L);
    replL = L;
    lineedit_open(helpers != LUA_NOREF ? complete_word : NULL);
    int status;
    while ((status = loadline(L)) != LOAD_EOF) {
        if (status == LOAD_NOTHING) continue;
        if (status == LUA_OK) status = cli_docall(L, 0, LUA_MULTRET);
        if (status == LUA_OK)
            print_results(L);
        else
            cli_report(L, status); /* an exit request only prints its message here */
    }
    lua_settop(L, 0);
    lineedit_close();
    replL = NULL;
    FILE *pf = lineedit_prompt_stream();
    fputc('\n', pf); /* the shell's prompt starts on a fresh line */
    fflush(pf);
    cli_set_progname(oldprogname);
}
