/* gpubench: the command line, the REPL and protected calls.
 *
 * Modelled on Lua 5.4's own lua.c: the whole program runs as a C function
 * under lua_pcall (pmain), every chunk runs through docall() with a message
 * handler that appends a traceback, and Ctrl-C while code runs sets a hook that
 * raises "interrupted!" at the next Lua instruction, so the script unwinds
 * normally and every object it made stays valid or is collected. Differences
 * from lua.c: gpubench's options (--backend, --device, --list-devices, ...),
 * usage errors exit 2, error objects carrying `gpubench_exit` end the program
 * with that status and no traceback, and the REPL loads readline/libedit at run
 * time instead of linking them, and gives a fresh prompt on Ctrl-C. This is the
 * only host file that includes lua.h. */
#define _GNU_SOURCE /* ppoll, getline */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
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

#define PROGNAME "gpubench"
#define EXIT_USAGE 2
#define LUA_INIT_PLAIN "LUA_INIT"
#define LUA_INIT_VERSIONED LUA_INIT_PLAIN "_" LUA_VERSION_MAJOR "_" LUA_VERSION_MINOR
#define HISTORY_FILE ".gpubench_history"
#define HISTORY_LINES 1000

/* ------------------------------------------------------------- options */

typedef struct cli {
    int argc;
    char **argv;
    int script;           /* index of the script in argv; argc when there is none */
    int script_is_stdin;  /* the script is "-" (not after "--") */
    const char **codes;   /* the -e chunks, in order */
    int ncodes;
    int has_i, has_version, list_devices;
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

static int parse_device(const char *s, int *out) {
    size_t n = strlen(s);
    if (n == 0 || n > 9) return -1; /* 9 digits keep it inside an int */
    for (size_t k = 0; k < n; k++)
        if (!isdigit((unsigned char)s[k])) return -1;
    *out = atoi(s);
    return 0;
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
            if (!gb_backend_find(v)) {
                char known[128] = "";
                for (int k = 0; k < gb_backend_count(); k++) {
                    if (k) strncat(known, ", ", sizeof known - strlen(known) - 1);
                    strncat(known, gb_backend_at(k)->name, sizeof known - strlen(known) - 1);
                }
                fprintf(stderr,
                        PROGNAME ": unknown backend '%s' for --backend (known: %s) "
                                 "(try '" PROGNAME " --help')\n",
                        v, known);
                return EXIT_USAGE;
            }
            c->backend = v;
        } else if (is_option(a, "--device")) {
            const char *v = option_value(c, &i, "--device");
            if (!v) return EXIT_USAGE;
            if (parse_device(v, &c->device) != 0) {
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

/* ------------------------------------------------------ messages, errors */

/* Where the REPL is, error messages carry no program name (as in lua.c). */
static const char *progname = PROGNAME;

static void l_message(const char *pname, const char *msg) {
    if (pname) fprintf(stderr, "%s: ", pname);
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
}

/* An error object that asks to end the program with a status: a table whose
 * raw field gpubench_exit is an integer 0..255 (the option library raises these
 * for bad experiment options). Returns that status, or -1 for any other value. */
static int exit_request(lua_State *L, int idx) {
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

/* The message handler of every protected call: a traceback for ordinary
 * errors; exit requests pass through untouched so report() can read them. */
static int msghandler(lua_State *L) {
    if (exit_request(L, 1) >= 0) return 1;
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1; /* an object that describes itself: no traceback (as lua.c) */
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* report() returns 0 for "carry on", else STOP | the exit status, so that an
 * exit request for status 0 still ends the program. */
#define STOP 0x100

/* Prints the error on top of the stack (if status is an error) and pops it.
 * Returns 0 for no error, else STOP with the exit status the error asks for:
 * the gpubench_exit field for an exit request, else 1. */
static int report(lua_State *L, int status) {
    if (status == LUA_OK) return 0;
    int code = exit_request(L, -1);
    if (code >= 0) {
        lua_pushliteral(L, "message");
        lua_rawget(L, -2);
        if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER) {
            lua_pop(L, 1);
            luaL_tolstring(L, -1, NULL); /* honours __tostring */
        }
        /* An empty message has nothing to say: --help raises one after
         * printing the help, to exit 0 with a clean stderr. */
        const char *msg = lua_tostring(L, -1);
        if (msg[0] != '\0') l_message(progname, msg);
        lua_pop(L, 2);
        return STOP | code;
    }
    const char *msg = lua_tostring(L, -1);
    l_message(progname, msg ? msg : "(error object is not a string)");
    lua_pop(L, 1);
    return STOP | 1;
}

/* ------------------------------------------------------- Ctrl-C handling */

static lua_State *globalL = NULL;
static struct sigaction sigint_at_start; /* restored whenever no code runs */
static volatile sig_atomic_t prompt_sigint = 0;

static void set_sigint(void (*handler)(int), int restart) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGINT, &sa, NULL);
}

static void restore_sigint(void) { sigaction(SIGINT, &sigint_at_start, NULL); }

static void laction(int sig);

/* The hook laction sets: raises the error from inside the running code. It
 * re-arms the handler (laction left SIG_DFL for a Ctrl-C during a long C call):
 * a script that catches "interrupted!" with pcall and goes on must get the
 * same error for the next Ctrl-C, not be killed without closing its state. */
static void lstop(lua_State *L, lua_Debug *ar) {
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    set_sigint(laction, 0);
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

/* SIGINT at the prompt: the line reader looks at the flag. */
static void prompt_action(int sig) {
    (void)sig;
    prompt_sigint = 1;
}

/* Calls the function below its narg arguments with the message handler and
 * with Ctrl-C turned into an "interrupted!" error. */
static int docall(lua_State *L, int narg, int nres) {
    int base = lua_gettop(L) - narg;
    lua_pushcfunction(L, msghandler);
    lua_insert(L, base);
    globalL = L;
    set_sigint(laction, 0);
    int status = lua_pcall(L, narg, nres, base);
    restore_sigint();
    /* A Ctrl-C that landed after the code finished must not interrupt the
     * next statement; a script's own debug hook is left alone. */
    if (lua_gethook(L) == lstop) lua_sethook(L, NULL, 0, 0);
    lua_remove(L, base);
    return status;
}

static int dochunk(lua_State *L, int status) {
    if (status == LUA_OK) status = docall(L, 0, 0);
    return report(L, status);
}

static int dofile(lua_State *L, const char *name) {
    return dochunk(L, luaL_loadfile(L, name));
}

static int dostring(lua_State *L, const char *s, const char *name) {
    return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* ------------------------------------------------------------ the script */

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
    int status = luaL_loadfile(L, fname);
    if (status == LUA_OK) {
        int n = pushargs(L);
        status = docall(L, n, LUA_MULTRET);
    }
    return report(L, status);
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

/* --list-devices, written against the gpu module so it shows exactly what
 * scripts see. Unknown numbers are 0 in the info tables and print as "?". */
static const char LIST_DEVICES_LUA[] =
    "local gpu = require 'gpu'\n"
    "local function known(v, fmt) if v == nil or v == 0 or v == '' then return '?' end\n"
    "  return fmt and string.format(fmt, v) or tostring(v) end\n"
    "local function bytes(n)\n"
    "  if not n or n == 0 then return '?' end\n"
    "  if n >= 2^30 then return string.format('%.1f GiB', n / 2^30) end\n"
    "  if n >= 2^20 then return string.format('%.1f MiB', n / 2^20) end\n"
    "  return string.format('%.0f KiB', n / 2^10)\n"
    "end\n"
    "local ok, devs = pcall(gpu.devices)\n"
    "for _, b in ipairs(gpu.backends()) do\n"
    "  if b.available then\n"
    "    print(string.format('%s: available, %d device%s', b.name, b.count,\n"
    "                        b.count == 1 and '' or 's'))\n"
    "  else\n"
    "    print(string.format('%s: not available (%s)', b.name, tostring(b.reason)))\n"
    "  end\n"
    "  for _, d in ipairs(ok and devs or {}) do\n"
    "    if d.backend == b.name then\n"
    "      print(string.format('  %s %d: %s', d.backend, d.index, d.name))\n"
    "      print(string.format('      type %s, memory %s, SMs/CUs %s, L2 %s, spec %s GB/s, "
    "driver %s, api %s%s',\n"
    "        known(d.device_type), bytes(d.memory_bytes), known(d.sm_count), bytes(d.l2_bytes),\n"
    "        known(d.spec_gbs, '%.0f'), known(d.driver_version), known(d.api_version),\n"
    "        (d.arch and d.arch ~= '') and (', ' .. d.arch) or ''))\n"
    "    end\n"
    "  end\n"
    "end\n"
    "if not ok then error(devs, 0) end\n";

/* The REPL banner: versions and the devices found, on one line. Device
 * discovery failing must not keep the REPL from starting, hence the pcalls. */
static const char BANNER_LUA[] =
    "local ok, gpu = pcall(require, 'gpu')\n"
    "if not ok then return 'gpu module failed: ' .. tostring(gpu) end\n"
    "local okd, devs = pcall(gpu.devices)\n"
    "if not okd then return 'device discovery failed: ' .. tostring(devs) end\n"
    "local parts = {}\n"
    "for _, d in ipairs(devs) do\n"
    "  parts[#parts + 1] = string.format('%s:%d %s', d.backend, d.index, d.name)\n"
    "end\n"
    "if #parts > 0 then return 'devices: ' .. table.concat(parts, ', ') end\n"
    "return 'no devices (see gpubench --list-devices)'\n";

static void print_banner(lua_State *L) {
    const char *git = GPUBENCH_GIT;
    const char *devices = "device discovery failed";
    int top = lua_gettop(L);
    if (luaL_loadbuffer(L, BANNER_LUA, sizeof BANNER_LUA - 1, "=banner") == LUA_OK &&
        docall(L, 0, 1) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
        devices = lua_tostring(L, -1);
    printf(PROGNAME " %s (git %s), %s | %s\n", GPUBENCH_VERSION, git[0] ? git : "unknown",
           LUA_RELEASE, devices);
    fflush(stdout);
    lua_settop(L, top);
}

/* ------------------------------------------------------------ line input */

enum { LINE_EOF = 0, LINE_OK = 1, LINE_INTERRUPTED = 2 };

/* readline or libedit, loaded at run time so the binary starts without them.
 * Only the callback interface is used: the REPL waits for input itself (ppoll)
 * with its own SIGINT handler, so Ctrl-C at the prompt gives a fresh prompt
 * instead of ending the process. */
static struct lineedit {
    void *lib;
    const char *libname;
    void (*handler_install)(const char *, void (*)(char *));
    void (*read_char)(void);
    void (*handler_remove)(void);
    void (*add_history)(const char *);
    /* optional */
    void (*free_line_state)(void);
    void (*callback_sigcleanup)(void);
    void (*cleanup_after_signal)(void);
    int (*read_history)(const char *);
    int (*write_history)(const char *);
    int (*history_truncate_file)(const char *, int);
    char history_path[PATH_MAX];
} le;

static char *rl_line;
static int rl_got;

/* Fetches a symbol into a function pointer without the object-to-function
 * pointer cast warning (POSIX guarantees dlsym results can be used so). */
#define LE_SYM(field, name) (*(void **)(&le.field) = dlsym(le.lib, name))

static char lineedit_error[256];

static int lineedit_try(const char *libname) {
    le.lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
    if (!le.lib) {
        const char *why = dlerror();
        snprintf(lineedit_error, sizeof lineedit_error, "%s", why ? why : "dlopen failed");
        return 0;
    }
    LE_SYM(handler_install, "rl_callback_handler_install");
    LE_SYM(read_char, "rl_callback_read_char");
    LE_SYM(handler_remove, "rl_callback_handler_remove");
    LE_SYM(add_history, "add_history");
    if (!le.handler_install || !le.read_char || !le.handler_remove || !le.add_history) {
        snprintf(lineedit_error, sizeof lineedit_error,
                 "%s has no rl_callback_* interface or add_history", libname);
        dlclose(le.lib);
        memset(&le, 0, sizeof le);
        return 0;
    }
    LE_SYM(free_line_state, "rl_free_line_state");
    LE_SYM(callback_sigcleanup, "rl_callback_sigcleanup");
    LE_SYM(cleanup_after_signal, "rl_cleanup_after_signal");
    LE_SYM(read_history, "read_history");
    LE_SYM(write_history, "write_history");
    LE_SYM(history_truncate_file, "history_truncate_file");
    char **name = dlsym(le.lib, "rl_readline_name"); /* for $if gpubench in ~/.inputrc */
    if (name) *name = PROGNAME;
    le.libname = libname;
    return 1;
}

/* Line editing only for a terminal on both ends. GPUBENCH_READLINE=none turns
 * it off; GPUBENCH_READLINE=<library> picks the library. */
static void lineedit_open(void) {
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return;
    const char *want = getenv("GPUBENCH_READLINE");
    if (want && strcmp(want, "none") == 0) return;
    if (want && *want) {
        if (!lineedit_try(want))
            fprintf(stderr, PROGNAME ": GPUBENCH_READLINE=%s: %s; no line editing\n", want,
                    lineedit_error);
    } else if (!lineedit_try("libreadline.so.8")) {
        lineedit_try("libedit.so.2");
    }
    if (!le.lib) return;
    const char *home = getenv("HOME");
    if (home && *home && le.read_history && le.write_history) {
        snprintf(le.history_path, sizeof le.history_path, "%s/" HISTORY_FILE, home);
        le.read_history(le.history_path); /* a missing file is the normal first run */
    }
}

static void lineedit_close(void) {
    if (!le.lib) return;
    if (le.history_path[0]) {
        if (le.write_history(le.history_path) != 0)
            fprintf(stderr, PROGNAME ": cannot write history to %s\n", le.history_path);
        else if (le.history_truncate_file)
            le.history_truncate_file(le.history_path, HISTORY_LINES);
    }
    /* The library stays loaded: it may have registered atexit handlers. */
}

static void on_rl_line(char *line) {
    rl_line = line;
    rl_got = 1;
    le.handler_remove(); /* or readline would show the prompt again */
}

static int read_line_edit(const char *prompt, char **out) {
    sigset_t block, old, waitmask;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    /* SIGINT is blocked except inside ppoll, so a Ctrl-C cannot slip in
     * between the flag test and the wait. */
    sigprocmask(SIG_BLOCK, &block, &old);
    waitmask = old;
    sigdelset(&waitmask, SIGINT);
    prompt_sigint = 0;
    set_sigint(prompt_action, 0);
    rl_got = 0;
    rl_line = NULL;
    le.handler_install(prompt, on_rl_line);
    int result = LINE_EOF;
    for (;;) {
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN, .revents = 0};
        int r = ppoll(&p, 1, NULL, &waitmask);
        if (r < 0 && errno != EINTR) {
            le.handler_remove();
            break;
        }
        if (prompt_sigint) {
            /* "^C" goes after the text typed so far, before readline's clean-up
             * may move the cursor to the start of the line. */
            fputs("^C", stdout);
            fflush(stdout);
            /* The same clean-up Python's REPL does on Ctrl-C in callback mode. */
            if (le.free_line_state) le.free_line_state();
            if (le.callback_sigcleanup) le.callback_sigcleanup();
            if (le.cleanup_after_signal) le.cleanup_after_signal();
            le.handler_remove();
            fputs("\n", stdout);
            fflush(stdout);
            result = LINE_INTERRUPTED;
            break;
        }
        if (r <= 0) continue;
        le.read_char();
        if (rl_got) {
            result = rl_line ? LINE_OK : LINE_EOF;
            break;
        }
    }
    restore_sigint();
    sigprocmask(SIG_SETMASK, &old, NULL);
    *out = rl_line;
    return result;
}

/* Without line editing. Prompts go to stdout on a terminal, else to stderr, so
 * piping a session keeps stdout to the results. */
static int read_line_plain(const char *prompt, char **out) {
    FILE *pf = (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) ? stdout : stderr;
    fputs(prompt, pf);
    fflush(pf);
    prompt_sigint = 0;
    set_sigint(prompt_action, 0); /* no SA_RESTART: the read returns EINTR */
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n = getline(&buf, &cap, stdin);
    int interrupted = (n < 0 && prompt_sigint);
    restore_sigint();
    if (n < 0) {
        free(buf);
        *out = NULL;
        if (!interrupted) return LINE_EOF;
        clearerr(stdin);
        fputc('\n', pf);
        fflush(pf);
        return LINE_INTERRUPTED;
    }
    *out = buf;
    return LINE_OK;
}

/* A terminal's end of input is not sticky (the next read waits again), so the
 * first EOF ends the session even if the REPL asks for another line. */
static int input_ended = 0;

static int read_line(const char *prompt, char **out) {
    *out = NULL;
    if (input_ended) return LINE_EOF;
    int rs = le.lib ? read_line_edit(prompt, out) : read_line_plain(prompt, out);
    if (rs == LINE_EOF) input_ended = 1;
    return rs;
}

static void save_line(const char *line) {
    if (le.lib && line[0] != '\0') le.add_history(line);
}

/* ------------------------------------------------------------------ REPL
 * As lua.c: a line is first tried as "return <line>;" so an expression prints
 * its values; otherwise as a statement, reading ">> " lines while the only
 * complaint is the end of input. Lines are loaded as text only, so a line that
 * starts with ESC (an arrow key without line editing) is not taken for a
 * binary chunk. */

/* loadline's results besides a load status. */
enum { LOAD_EOF = -1, LOAD_NOTHING = -2 };

#define EOFMARK "<eof>"
#define MARKLEN (sizeof(EOFMARK) / sizeof(char) - 1)

static const char *get_prompt(lua_State *L, int firstline) {
    if (lua_getglobal(L, firstline ? "_PROMPT" : "_PROMPT2") == LUA_TNIL)
        return firstline ? "> " : ">> "; /* the nil stays; the caller pops it */
    const char *p = luaL_tolstring(L, -1, NULL);
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
    int rs = read_line(prmt, &b);
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
        save_line(line);
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
            save_line(line);
            return status;
        }
        int rs = pushline(L, 0);
        if (rs == LINE_INTERRUPTED) return LOAD_NOTHING;
        if (rs == LINE_EOF) { /* compile once more to report the <eof> error */
            status = luaL_loadbufferx(L, line, len, "=stdin", "t");
            save_line(line);
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

/* Prints the results with the global print (tostring on each, tab-separated). */
static void l_print(lua_State *L) {
    int n = lua_gettop(L);
    if (n == 0) return;
    luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
    lua_getglobal(L, "print");
    lua_insert(L, 1);
    if (lua_pcall(L, n, 0, 0) != LUA_OK)
        l_message(progname,
                  lua_pushfstring(L, "error calling 'print' (%s)", lua_tostring(L, -1)));
}

static void doREPL(lua_State *L) {
    const char *oldprogname = progname;
    progname = NULL;
    lineedit_open();
    int status;
    while ((status = loadline(L)) != LOAD_EOF) {
        if (status == LOAD_NOTHING) continue;
        if (status == LUA_OK) status = docall(L, 0, LUA_MULTRET);
        if (status == LUA_OK)
            l_print(L);
        else
            report(L, status); /* an exit request only prints its message here */
    }
    lua_settop(L, 0);
    lineedit_close();
    FILE *pf = (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) ? stdout : stderr;
    fputc('\n', pf); /* the shell's prompt starts on a fresh line */
    fflush(pf);
    progname = oldprogname;
}

/* ------------------------------------------------------------------ main */

static int pmain(lua_State *L) {
    cli *c = (cli *)lua_touserdata(L, 1);
    luaL_checkversion(L);
    if (c->has_version) print_version();
    luaL_openlibs(L);
    gpubench_open_modules(L);
    gpubench_set_device_defaults(L, c->backend, c->device);
    createargtable(L, c->argv, c->argc, c->script);
    lua_gc(L, LUA_GCRESTART);
    lua_gc(L, LUA_GCGEN, 0, 0);
    int rc;
    if ((rc = handle_luainit(L)) != 0) goto done;
    if (c->list_devices) {
        rc = dostring(L, LIST_DEVICES_LUA, "=--list-devices");
        if (rc != 0) goto done;
    }
    if ((rc = runargs(L, c)) != 0) goto done;
    if (c->script < c->argc && (rc = handle_script(L, c)) != 0) goto done;
    if (c->has_i) {
        if (isatty(STDIN_FILENO)) print_banner(L);
        doREPL(L);
    } else if (c->script == c->argc && !c->ncodes && !c->has_version && !c->list_devices) {
        if (isatty(STDIN_FILENO)) {
            print_banner(L);
            doREPL(L);
        } else {
            rc = dofile(L, NULL); /* stdin is a script */
        }
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
        l_message(PROGNAME, "not enough memory");
        return EXIT_FAILURE;
    }
    int prc = parse_args(&c);
    if (prc != 0) {
        free(c.codes);
        return prc == -1 ? EXIT_SUCCESS : prc; /* -1: --help */
    }
    sigaction(SIGINT, NULL, &sigint_at_start);

    lua_State *L = luaL_newstate();
    if (L == NULL) {
        l_message(PROGNAME, "cannot create the Lua state: not enough memory");
        return EXIT_FAILURE;
    }
    lua_gc(L, LUA_GCSTOP); /* no collection while the libraries load (as lua.c) */
    lua_pushcfunction(L, pmain);
    lua_pushlightuserdata(L, &c);
    int status = lua_pcall(L, 1, 0, 0);
    if (status != LUA_OK) c.exit_status = report(L, status) & 0xff;
    /* Closing runs every __gc: device memory, kernels and devices are released. */
    lua_close(L);
    free(c.codes);
    return c.exit_status;
}
