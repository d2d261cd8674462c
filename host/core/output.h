/* What compilers print: capturing a library's stdout into a string, and
 * excerpting a long log for an error message. glslang prints 4,500 lines of
 * built-in declarations to stdout when a shader has no #version, and a
 * runaway include recursion repeats one error thousands of times: a script's
 * stdout is its results, and an error message must stay readable. */
#ifndef GPUBENCH_OUTPUT_H
#define GPUBENCH_OUTPUT_H

#include <stddef.h>

typedef struct gb_capture {
    int saved_fd; /* the original stdout, or -1 when nothing is captured */
    void *file;   /* the FILE * the output goes to meanwhile */
} gb_capture;

/* Redirects file descriptor 1 (and the stdout stream) into a temporary file
 * until gb_capture_end. On failure nothing is redirected and the output
 * stays where it was. */
void gb_capture_begin(gb_capture *c);
/* Restores stdout and returns what was written meanwhile (malloc'd, NUL
 * terminated; NULL when nothing was or on failure). */
char *gb_capture_end(gb_capture *c);

/* An excerpt of text for a message: runs of identical lines collapsed to one
 * with "(the line above N times)", at most max_lines lines, then "... (N
 * more lines)". Returns a malloc'd copy (NULL only without memory). */
char *gb_text_excerpt(const char *text, int max_lines);

#endif
