/* Small file helpers shared by the host: whole-file reads and atomic writes. */
#ifndef GPUBENCH_FILEUTIL_H
#define GPUBENCH_FILEUTIL_H
#include <stddef.h>
#include "backend.h"

/* Reads a whole file into a NUL-terminated malloc'd buffer; *len excludes the NUL. */
char *gb_read_file(const char *path, size_t *len, gb_err *e);
/* Writes through a temporary file and rename(), so readers never see a partial file. */
int gb_write_file_atomic(const char *path, const void *data, size_t len, gb_err *e);
/* mkdir -p */
int gb_mkdirs(const char *path, gb_err *e);
#endif
