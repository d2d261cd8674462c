/* gpubench: the command line. Options, then LUA_INIT, --list-devices, the -e
 * chunks, the script (or stdin) and the REPL, in that order, each through a
 * protected call (protect.c); the first error stops the sequence and sets the
 * exit status. Modelled on Lua 5.4's lua.c; the differences: gpubench's
 * options, usage errors exit 2, error objects carrying `gpubench_exit` end the
 * program with that status, and chunks load as source only unless
 * --allow-binary (textload.c). The REPL is repl.c, its line input lineedit.c. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "backend.h"
#include "git_version.h"
#include "lgpu.h"
#include "protect.h"
#include "repl.h"
#include "textload.h"

#define EXIT_USAGE 2
#define LUA_INIT_PLAIN "LUA_INIT"
#define LUA_INIT_VERSIONED LUA_INIT_PLAIN "_" LUA_VERSION_MAJOR "_" LUA_VERSION_MINOR

/* ------------------------------------------------------------- options */

typedef struct cli {
    int argc;
    char **argv;
    int script;           /* index of the script in argv; argc when there is none */
    int script_is_stdin;  /* the script is "-" (not after "--") */
    const char **codes;   /* the -e chunks, in order */
    int ncodes;
    int has_i, has_version, list_devices, allow_binary;
    const char *backend;  /* --backend, or NULL */
    int device;           /* --device, or -1 */
    int exit_status;      /* what main() returns; set by pmain */
} cli;

static void usage_error(const char *fmt, const char *what) {
    fprintf(stderr, PROGNAME ": ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, " (try '" PROGNAME " --help')\n");
    fflush(stderr);
}

static void print_help(void) {
    printf("usage: " PROGNAME " [options] [script [args...]]\n"
           "Runs a Lua 5.4 script with the gpu module (devices, buffers, kernels, timers).\n"
           "\n"
           "options:\n"
           "  -e CODE            run CODE (may repeat; runs before the script)\n"
           "  -i                 enter the interactive REPL after the script or -e code\n"
           "  -                  read the script from stdin (stops option handling)\n"
           "  --                 stop handling options; the next word is the script\n"
           "  --backend NAME     default backend for gpu.open{} (");
    for (int i = 0; i < gb_backend_count(); i++)
        printf("%s%s", i ? ", " : "", gb_backend_at(i)->name);
    printf(")\n"
           "  --device N         default device index for gpu.open{} (N >= 0)\n"
           "  --list-devices     list every backend (available or why not) and device\n"
           "  --allow-binary     also load precompiled (binary) Lua chunks; refused by\n"
           "                     default, since a crafted one can crash the Lua VM\n"
           "  --version, -v      print the gpubench, git and Lua versions\n"
           "  --help, -h         print this help\n"
           "\n"
           "With no script: the REPL when stdin is a terminal, else stdin runs as a script.\n"
           "The script's arguments are in the global table 'arg' (arg[0] is the script).\n"
           "Exit status: 0 success, 1 script error, 2 usage error (or the status an error\n"
           "object's gpubench_exit field names). See docs/CLI.md.\n");
}

/* Takes an option's value from "--opt=value" or the next argument. Returns
 * NULL (after a usage message) when there is none. */
static const char *option_value(cli *c, int *i, const char *opt) {
    const char *a = c->argv[*i];
    size_t n = strlen(opt);
    if (a[n] == '=') return a + n + 1;
    if (*i + 1 >= c->argc) {
        usage_error("'%s' needs a value", opt);
        return NULL;
    }
    return c->argv[++*i];
}

/* Does argument a name option opt, either alone or as "opt=value"? */
static int is_option(const char *a, const char *opt) {
    size_t n = strlen(opt);
    return strncmp(a, opt, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

/* Digits only (no sign, no spaces). Returns 0, -1 for anything that is not a
 * non-negative integer, -2 for one past INT_MAX (gpu.open takes an int). */
static int parse_device(const char *s, int *out) {
    if (*s == '\0') return -1;
    long long v = 0;
    int too_big = 0;
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p)) return -1;
        if (!too_big) v = v * 10 + (*p - '0');
        if (v > INT_MAX) too_big = 1;
    }
    if (too_big) return -2;
    *out = (int)v;
    return 0;
}

static int parse_backend(const char *v) {
    if (gb_backend_find(v)) return 0;
    char known[128] = "";
    for (int k = 0; k < gb_backend_count(); k++) {
        if (k) strncat(known, ", ", sizeof known - strlen(known) - 1);
        strncat(known, gb_backend_at(k)->name, sizeof known - strlen(known) - 1);
    }
    fprintf(stderr,
            PROGNAME ": unknown backend '%s' for --backend (known: %s) (try '" PROGNAME
                     " --help')\n",
            v, known);
    return EXIT_USAGE;
}

/* Reads the options up to the script (like lua.c's collectargs). Returns 0,
 * EXIT_USAGE after printing a usage error, or -1 when --help was printed. */
static int parse_args(cli *c) {
    c->script = c->argc;
    c->device = -1;
    for (int i = 1; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (a[0] != '-') { /* the script */
            c->script = i;
            return 0;
        }
        if (strcmp(a, "-") == 0) {
            c->script = i;
            c->script_is_stdin = 1;
            return 0;
        }
        if (strcmp(a, "--") == 0) {
            if (i + 1 < c->argc) c->script = i + 1;
            return 0;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_help();
            return -1;
        } else if (strcmp(a, "--version") == 0 || strcmp(a, "-v") == 0) {
            c->has_version = 1;
        } else if (strcmp(a, "--list-devices") == 0) {
            c->list_devices = 1;
        } else if (strcmp(a, "--allow-binary") == 0) {
            c->allow_binary = 1;
        } else if (strcmp(a, "-i") == 0) {
            c->has_i = 1;
        } else if (strncmp(a, "-e", 2) == 0) {
            /* "-e CODE" or "-eCODE", as in lua; the code itself runs later, in order */
            if (a[2] == '\0') {
                if (i + 1 >= c->argc) {
                    usage_error("'%s' needs an argument", "-e");
                    return EXIT_USAGE;
                }
                c->codes[c->ncodes++] = c->argv[++i];
            } else {
                c->codes[c->ncodes++] = a + 2;
            }
        } else if (is_option(a, "--backend")) {
            const char *v = option_value(c, &i, "--backend");
            if (!v) return EXIT_USAGE;
            if (parse_backend(v) != 0) return EXIT_USAGE;
            c->backend = v;
        } else if (is_option(a, "--device")) {
            const char *v = option_value(c, &i, "--device");
            if (!v) return EXIT_USAGE;
            int rc = parse_device(v, &c->device);
            if (rc == -2) {
                char fmt[64];
                snprintf(fmt, sizeof fmt, "--device %%s is out of range (0 to %d)", INT_MAX);
                usage_error(fmt, v);
                return EXIT_USAGE;
            }
            if (rc != 0) {
                usage_error("--device needs a non-negative integer, got '%s'", v);
                return EXIT_USAGE;
            }
        } else {
            usage_error("unrecognized option '%s'", a);
            return EXIT_USAGE;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ the chunks */

static int dochunk(lua_State *L, int status) {
    if (status == LUA_OK) status = cli_docall(L, 0, 0);
    return cli_report(L, status);
}

static int dofile(lua_State *L, const char *name) { return dochunk(L, textload_file(L, name)); }

static int dostring(lua_State *L, const char *s, const char *name) {
    return dochunk(L, textload_buffer(L, s, strlen(s), name));
}

/* arg[0] is the script, positive indices its arguments, negative indices the
 * interpreter and its options (as in lua.c). */
static void createargtable(lua_State *L, char **argv, int argc, int script) {
    if (script == argc) script = 0; /* no script: arg[0] is the interpreter */
    int narg = argc - (script + 1);
    lua_createtable(L, narg > 0 ? narg : 0, script + 1);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

static int pushargs(lua_State *L) {
    if (lua_getglobal(L, "arg") != LUA_TTABLE) luaL_error(L, "'arg' is not a table");
    int n = (int)luaL_len(L, -1);
    luaL_checkstack(L, n + 3, "too many arguments to script");
    int i;
    for (i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
    lua_remove(L, -i); /* the table */
    return n;
}

static int handle_script(lua_State *L, cli *c) {
    const char *fname = c->script_is_stdin ? NULL : c->argv[c->script];
    int status = textload_file(L, fname);
    if (status == LUA_OK) {
        int n = pushargs(L);
        status = cli_docall(L, n, LUA_MULTRET);
    }
    return cli_report(L, status);
}

/* -e chunks, in command-line order. */
static int runargs(lua_State *L, cli *c) {
    for (int i = 0; i < c->ncodes; i++) {
        int rc = dostring(L, c->codes[i], "=(command line)");
        if (rc != 0) return rc;
    }
    return 0;
}

static int handle_luainit(lua_State *L) {
    const char *name = "=" LUA_INIT_VERSIONED;
    const char *init = getenv(name + 1);
    if (init == NULL) {
        name = "=" LUA_INIT_PLAIN;
        init = getenv(name + 1);
    }
    if (init == NULL) return 0;
    if (init[0] == '@') return dofile(L, init + 1);
    return dostring(L, init, name);
}

static void print_version(void) {
    const char *git = GPUBENCH_GIT;
    printf(PROGNAME " %s (git %s), %s\n", GPUBENCH_VERSION, git[0] ? git : "unknown",
           LUA_RELEASE);
    fflush(stdout);
}

/* --list-devices: gpubench.cli.list_devices_text() returns the listing and,
 * when device discovery failed, the error, reported after the listing. */
static int list_devices(lua_State *L) {
    int status = cli_call_module(L, "gpubench.cli", "list_devices_text", 0, 2);
    if (status != LUA_OK) return cli_report(L, status);
    size_t n = 0;
    const char *text = lua_tolstring(L, -2, &n);
    if (text) fwrite(text, 1, n, stdout);
    fflush(stdout);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 2);
        return 0;
    }
    lua_remove(L, -2);
    return cli_report(L, LUA_ERRRUN);
}

/* ------------------------------------------------------------------ main */

static int pmain(lua_State *L) {
    cli *c = (cli *)lua_touserdata(L, 1);
    luaL_checkversion(L);
    if (c->has_version) print_version();
    luaL_openlibs(L);
    textload_guard_globals(L);
    gpubench_open_modules(L);
    gpubench_set_device_defaults(L, c->backend, c->device);
    createargtable(L, c->argv, c->argc, c->script);
    lua_gc(L, LUA_GCRESTART);
    lua_gc(L, LUA_GCGEN, 0, 0);
    int rc;
    if ((rc = handle_luainit(L)) != 0) goto done;
    if (c->list_devices && (rc = list_devices(L)) != 0) goto done;
    if ((rc = runargs(L, c)) != 0) goto done;
    if (c->script < c->argc && (rc = handle_script(L, c)) != 0) goto done;
    if (c->has_i) {
        repl_run(L, isatty(STDIN_FILENO));
    } else if (c->script == c->argc && !c->ncodes && !c->has_version && !c->list_devices) {
        if (isatty(STDIN_FILENO))
            repl_run(L, 1);
        else
            rc = dofile(L, NULL); /* stdin is a script */
    }
done:
    c->exit_status = rc & 0xff;
    return 0;
}

int main(int argc, char **argv) {
    /* The backends this executable links, in order of preference. */
    gb_backend_register(&gb_cuda_backend);
    gb_backend_register(&gb_vulkan_backend);
    cli c;
    memset(&c, 0, sizeof c);
    c.argc = argc;
    c.argv = argv;
    c.codes = calloc((size_t)argc, sizeof *c.codes);
    if (c.codes == NULL) {
        cli_message(PROGNAME, "not enough memory");
        return EXIT_FAILURE;
    }
    int prc = parse_args(&c);
    if (prc != 0) {
        free(c.codes);
        return prc == -1 ? EXIT_SUCCESS : prc; /* -1: --help */
    }
    textload_allow_binary(c.allow_binary);
    cli_protect_init();

    lua_State *L = luaL_newstate();
    if (L == NULL) {
        cli_message(PROGNAME, "cannot create the Lua state: not enough memory");
        return EXIT_FAILURE;
    }
    lua_gc(L, LUA_GCSTOP); /* no collection while the libraries load (as lua.c) */
    lua_pushcfunction(L, pmain);
    lua_pushlightuserdata(L, &c);
    int status = lua_pcall(L, 1, 0, 0);
    if (status != LUA_OK) c.exit_status = cli_report(L, status) & 0xff;
    /* Closing runs every __gc: device memory, kernels and devices are released. */
    lua_close(L);
    gpubench_free_leftovers(L);
    free(c.codes);
    /* A device whose work never finished (the watchdog broke it) keeps its
     * driver objects, and a driver's exit handlers could wait on that work:
     * leave without them (LeakSanitizer's exit check included). */
    if (gb_broken_devices() > 0) {
        fflush(NULL);
        _exit(c.exit_status);
    }
    return c.exit_status;
}
