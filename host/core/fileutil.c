/* Whole-file reads and atomic writes, with errors that name the path. */
#define _POSIX_C_SOURCE 200809L
#include "fileutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *gb_read_file(const char *path, size_t *len, gb_err *e) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        GB_FAIL(e, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        char *bigger = realloc(buf, cap * 2 + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf) {
        GB_FAIL(e, "out of host memory reading %s", path);
        return NULL;
    }
    if (failed) {
        free(buf);
        GB_FAIL(e, "cannot read %s", path);
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

int gb_mkdirs(const char *path, gb_err *e) {
    char *p = strdup(path);
    if (!p) return GB_FAIL(e, "out of host memory");
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                int err = errno;
                GB_FAIL(e, "cannot create directory %s: %s", p, strerror(err));
                free(p);
                return -1;
            }
            *s = c;
            if (c == '\0') break;
        }
    }
    free(p);
    return 0;
}

int gb_write_file_atomic(const char *path, const void *data, size_t len, gb_err *e) {
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp) return GB_FAIL(e, "out of host memory");
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int err = errno;
        free(tmp);
        return GB_FAIL(e, "cannot create %s: %s", path, strerror(err));
    }
    int ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int err = errno;
        unlink(tmp);
        free(tmp);
        return GB_FAIL(e, "cannot write %s: %s", path, strerror(err));
    }
    free(tmp);
    return 0;
}
