/* readline or libedit, loaded at run time so the binary starts without them.
 * Only the callback interface is used: the REPL waits for input itself (ppoll)
 * with its own SIGINT handler, so Ctrl-C at the prompt gives a fresh prompt
 * instead of ending the process. Completion goes through
 * rl_attempted_completion_function and rl_completion_matches, both found with
 * dlsym like everything else. */
#define _GNU_SOURCE /* ppoll, getline */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lineedit.h"

#define PROGNAME "gpubench"
#define HISTORY_FILE ".gpubench_history"
#define HISTORY_LINES 1000

/* Readline's default breaks without '.' and ':' (a field or method path is one
 * word), plus Lua's operators and brackets. */
static char word_breaks[] = " \t\n\"\\'`@$><=;|&{}()[],+-*/%^~#";

typedef char *(*rl_entry_fn)(const char *, int);
typedef char **(*rl_attempt_fn)(const char *, int, int);

static struct lineedit {
    void *lib;
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
    char **(*completion_matches)(const char *, rl_entry_fn);
    rl_attempt_fn *attempted_completion; /* variables inside the library */
    int *attempted_completion_over;
    int *completion_append_character;
    char history_path[PATH_MAX];
} le;

static lineedit_completer completer;

/* Fetches a symbol into a function pointer without the object-to-function
 * pointer cast warning (POSIX guarantees dlsym results can be used so). */
#define LE_SYM(field, name) (*(void **)(&le.field) = dlsym(le.lib, name))

static char lineedit_error[256];

/* ---------------------------------------------------------- completion */

static char **candidates; /* from the completer; handed out one by one */
static size_t next_candidate;

static void drop_candidates(void) {
    if (candidates) {
        for (size_t i = next_candidate; candidates[i]; i++) free(candidates[i]);
        free(candidates);
    }
    candidates = NULL;
    next_candidate = 0;
}

/* rl_completion_matches' generator: state 0 starts a new word. Each string
 * returned belongs to the library from then on. */
static char *next_match(const char *text, int state) {
    if (state == 0) {
        drop_candidates();
        candidates = completer(text);
    }
    if (!candidates || !candidates[next_candidate]) {
        drop_candidates();
        return NULL;
    }
    return candidates[next_candidate++];
}

/* The library resets these before each completion, so they are set here:
 * no space after a completed name (it is often followed by '.', ':' or
 * '('), and no fallback to file names when nothing matches. */
static char **attempt_completion(const char *text, int start, int end) {
    (void)start;
    (void)end;
    if (le.completion_append_character) *le.completion_append_character = '\0';
    if (le.attempted_completion_over) *le.attempted_completion_over = 1;
    return le.completion_matches(text, next_match);
}

static void install_completion(void) {
    LE_SYM(completion_matches, "rl_completion_matches");
    LE_SYM(attempted_completion, "rl_attempted_completion_function");
    LE_SYM(attempted_completion_over, "rl_attempted_completion_over");
    LE_SYM(completion_append_character, "rl_completion_append_character");
    if (!completer || !le.completion_matches || !le.attempted_completion) return;
    *le.attempted_completion = attempt_completion;
    /* readline reads the first, libedit the second. */
    const char **breaks = dlsym(le.lib, "rl_completer_word_break_characters");
    if (breaks) *breaks = word_breaks;
    breaks = dlsym(le.lib, "rl_basic_word_break_characters");
    if (breaks) *breaks = word_breaks;
}

/* ------------------------------------------------------------- loading */

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
    const char **name = dlsym(le.lib, "rl_readline_name"); /* for $if gpubench in ~/.inputrc */
    if (name) *name = PROGNAME;
    /* Before the library initializes: SIGINT stays the prompt's alone. With it
     * on, readline and libedit install their own handler while a line is read
     * and re-raise the signal to the one they replaced. */
    int *catch_signals = dlsym(le.lib, "rl_catch_signals");
    if (catch_signals) *catch_signals = 0;
    return 1;
}

static int on_terminal(void) { return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO); }

FILE *lineedit_prompt_stream(void) { return on_terminal() ? stdout : stderr; }

void lineedit_open(lineedit_completer complete) {
    if (!on_terminal()) return;
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
    completer = complete;
    install_completion();
    const char *home = getenv("HOME");
    if (home && *home && le.read_history && le.write_history) {
        snprintf(le.history_path, sizeof le.history_path, "%s/" HISTORY_FILE, home);
        le.read_history(le.history_path); /* a missing file is the normal first run */
    }
}

void lineedit_close(void) {
    drop_candidates();
    if (!le.lib) return;
    if (le.history_path[0]) {
        if (le.write_history(le.history_path) != 0)
            fprintf(stderr, PROGNAME ": cannot write history to %s\n", le.history_path);
        else if (le.history_truncate_file)
            le.history_truncate_file(le.history_path, HISTORY_LINES);
    }
    /* The library stays loaded: it may have registered atexit handlers. */
}

void lineedit_add_history(const char *line) {
    if (le.lib && line[0] != '\0') le.add_history(line);
}

/* ------------------------------------------------------------- reading */

static volatile sig_atomic_t prompt_sigint = 0;

static void prompt_action(int sig) {
    (void)sig;
    prompt_sigint = 1;
}

/* Installs prompt_action without SA_RESTART (a blocked read returns EINTR);
 * *old receives what to restore. */
static void catch_sigint(struct sigaction *old) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = prompt_action;
    sigemptyset(&sa.sa_mask);
    prompt_sigint = 0;
    sigaction(SIGINT, &sa, old);
}

static char *rl_line;
static int rl_got;

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
    struct sigaction old_action;
    catch_sigint(&old_action);
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
    sigaction(SIGINT, &old_action, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    *out = rl_line;
    return result;
}

static int read_line_plain(const char *prompt, char **out) {
    FILE *pf = lineedit_prompt_stream();
    fputs(prompt, pf);
    fflush(pf);
    struct sigaction old_action;
    catch_sigint(&old_action);
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n = getline(&buf, &cap, stdin);
    int interrupted = (n < 0 && prompt_sigint);
    sigaction(SIGINT, &old_action, NULL);
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

int lineedit_read(const char *prompt, char **out) {
    *out = NULL;
    if (input_ended) return LINE_EOF;
    int rs = le.lib ? read_line_edit(prompt, out) : read_line_plain(prompt, out);
    if (rs == LINE_EOF) input_ended = 1;
    return rs;
}
