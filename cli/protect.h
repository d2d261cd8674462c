/* Protected calls shared by the command line (main.c) and the REPL (repl.c):
 * the message handler, error reporting, and Ctrl-C while Lua code runs. */
#ifndef GPUBENCH_CLI_PROTECT_H
#define GPUBENCH_CLI_PROTECT_H

#include <lua.h>

#define PROGNAME "gpubench"

/* cli_report()'s "stop" bit: STOP | status, so an exit request for status 0
 * still ends the program. */
#define CLI_STOP 0x100

/* Saves the SIGINT disposition gpubench started with; restored whenever no
 * code runs. Call once before the first cli_docall. */
void cli_protect_init(void);

/* "pname: msg" on stderr (no prefix when pname is NULL). */
void cli_message(const char *pname, const char *msg);

/* The prefix cli_report puts on messages (NULL in the REPL); returns the old one. */
const char *cli_set_progname(const char *pname);

/* Pushes a printable string for the value at idx, honouring __tostring and
 * __name, and returns it. Never raises: a failing or non-string __tostring
 * gives "(error object is a table value; its __tostring failed: ...)". */
const char *cli_tostring(lua_State *L, int idx);

/* An error object asking to end the program: a table whose raw field
 * gpubench_exit is an integer 0..255. Returns that status, else -1. */
int cli_exit_request(lua_State *L, int idx);

/* Calls the function below its narg arguments with the message handler and
 * Ctrl-C turned into an "interrupted!" error. Returns the lua_pcall status. */
int cli_docall(lua_State *L, int narg, int nres);

/* Prints the error on top of the stack (for a non-OK status) and pops it.
 * Returns 0 for LUA_OK, else CLI_STOP | the status the error asks for. */
int cli_report(lua_State *L, int status);

/* Calls require(module)[fn] with the narg values on top of the stack as its
 * arguments, through cli_docall. Returns the status; nres results (or the
 * error) are left on the stack. */
int cli_call_module(lua_State *L, const char *module, const char *fn, int narg, int nres);

/* The length of msg's first line (error messages carry a traceback). */
int cli_first_line(const char *msg);

#endif
