/* Line input for the REPL: readline or libedit loaded at run time (dlopen),
 * so the binary starts without them, with history, Ctrl-C at the prompt
 * (drops the line, never ends the session) and tab completion; plain lines
 * from stdin when neither library is there or stdin is not a terminal. No
 * Lua here: repl.c supplies the completion candidates. */
#ifndef GPUBENCH_CLI_LINEEDIT_H
#define GPUBENCH_CLI_LINEEDIT_H

#include <stdio.h>

enum { LINE_EOF = 0, LINE_OK = 1, LINE_INTERRUPTED = 2 };

/* The completions of word (the text before the cursor back to a word break;
 * '.' and ':' are not breaks, so "dev:fl" is one word): a NULL-terminated
 * array of whole replacements for word, all malloc'ed (lineedit frees them),
 * or NULL for none. */
typedef char **(*lineedit_completer)(const char *word);

/* Loads the library when stdin and stdout are both terminals (unless
 * GPUBENCH_READLINE=none; GPUBENCH_READLINE=<library> picks one), reads
 * ~/.gpubench_history, and installs the completer (may be NULL). */
void lineedit_open(lineedit_completer complete);

/* Writes the history back. The library stays loaded. */
void lineedit_close(void);

/* Reads a line (malloc'ed into *out, its newline kept when read plainly).
 * Returns LINE_OK, LINE_EOF (sticky: every later call returns it too) or
 * LINE_INTERRUPTED after Ctrl-C. */
int lineedit_read(const char *prompt, char **out);

/* Adds a non-empty line to the history (when a library is loaded). */
void lineedit_add_history(const char *line);

/* Where prompts go: stdout when stdin and stdout are terminals, else stderr,
 * so a piped session keeps stdout to the results. */
FILE *lineedit_prompt_stream(void);

#endif
