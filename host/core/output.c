/* Capturing stdout, excerpting logs (output.h). */
#define _POSIX_C_SOURCE 200809L
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void gb_capture_begin(gb_capture *c) {
    c->saved_fd = -1;
    c->file = NULL;
    fflush(stdout);
    FILE *f = tmpfile();
    if (!f) return;
    int saved = dup(STDOUT_FILENO);
    if (saved < 0) {
        fclose(f);
        return;
    }
    if (dup2(fileno(f), STDOUT_FILENO) < 0) {
        close(saved);
        fclose(f);
        return;
    }
    c->saved_fd = saved;
    c->file = f;
}

char *gb_capture_end(gb_capture *c) {
    if (c->saved_fd < 0) return NULL;
    fflush(stdout); /* what the library left in the stream's buffer goes to the file too */
    dup2(c->saved_fd, STDOUT_FILENO);
    close(c->saved_fd);
    c->saved_fd = -1;
    FILE *f = c->file;
    c->file = NULL;
    long n = ftell(f);
    char *text = NULL;
    if (n > 0 && fseek(f, 0, SEEK_SET) == 0) {
        text = malloc((size_t)n + 1);
        if (text) {
            size_t got = fread(text, 1, (size_t)n, f);
            text[got] = '\0';
            if (got == 0) {
                free(text);
                text = NULL;
            }
        }
    }
    fclose(f);
    return text;
}

/* Appends s[0..n) to the growing buffer *out (capacity *cap, length *len). */
static int append(char **out, size_t *len, size_t *cap, const char *s, size_t n) {
    if (*len + n + 1 > *cap) {
        size_t c = (*cap ? *cap * 2 : 256);
        while (c < *len + n + 1) c *= 2;
        char *p = realloc(*out, c);
        if (!p) return -1;
        *out = p;
        *cap = c;
    }
    memcpy(*out + *len, s, n);
    *len += n;
    (*out)[*len] = '\0';
    return 0;
}

char *gb_text_excerpt(const char *text, int max_lines) {
    if (!text) text = "";
    char *out = NULL;
    size_t len = 0, cap = 0;
    if (append(&out, &len, &cap, "", 0)) return NULL;
    int kept = 0, dropped = 0;
    const char *p = text;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        /* the run of identical lines starting here */
        int repeats = 1;
        const char *next = end ? end + 1 : p + n;
        while (*next) {
            const char *e2 = strchr(next, '\n');
            size_t n2 = e2 ? (size_t)(e2 - next) : strlen(next);
            if (n2 != n || memcmp(next, p, n) != 0) break;
            repeats++;
            next = e2 ? e2 + 1 : next + n2;
        }
        if (kept < max_lines) {
            char note[64] = "";
            if (repeats > 1) snprintf(note, sizeof note, " (this line %d times)", repeats);
            if ((len && append(&out, &len, &cap, "\n", 1)) || append(&out, &len, &cap, p, n) ||
                append(&out, &len, &cap, note, strlen(note))) {
                free(out);
                return NULL;
            }
            kept++;
        } else {
            dropped += repeats;
        }
        p = next;
    }
    if (dropped) {
        char note[64];
        snprintf(note, sizeof note, "\n... (%d more lines)", dropped);
        if (append(&out, &len, &cap, note, strlen(note))) {
            free(out);
            return NULL;
        }
    }
    return out;
}
