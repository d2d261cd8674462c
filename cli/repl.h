/* The read-eval-print loop: lines, statements that continue on the next
 * line, printing results, and the wiring of lib/gpubench/repl.lua (the
 * globals gpu, dev and help, readable printing, completion candidates). */
#ifndef GPUBENCH_CLI_REPL_H
#define GPUBENCH_CLI_REPL_H

#include <lua.h>

/* Runs the REPL until end of input; with banner, prints the one-line banner
 * (versions and devices) first. Errors are reported and the session goes on. */
void repl_run(lua_State *L, int banner);

#endif
