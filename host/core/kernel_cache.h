/* The on-disk kernel cache shared by the backends.
 *
 * A compiled binary (CUBIN/PTX, SPIR-V) is stored under a key that hashes
 * everything that can change it: the compiler's identity and version, the
 * target, the entry point, the defines, the source text and the text of every
 * file it includes with #include "..." (found relative to the including file
 * and to the include directories, recursively). Editing a kernel or a header it
 * includes therefore takes effect on the next run without clearing anything.
 *
 * Location: $GPUBENCH_CACHE_DIR, else $XDG_CACHE_HOME/gpubench, else
 * $HOME/.cache/gpubench. GPUBENCH_NO_CACHE=1 disables loads and stores. */
#ifndef GPUBENCH_KERNEL_CACHE_H
#define GPUBENCH_KERNEL_CACHE_H
#include <stddef.h>
#include "backend.h"

enum { GB_CACHE_KEY_HEX = 33 }; /* 128-bit key as 32 hex digits + NUL */

int gb_cache_key(const gb_kernel_source *src, const char *compiler_id, const char *target,
                 char key[GB_CACHE_KEY_HEX], gb_err *e);
/* Returns 1 and a malloc'd copy on a hit, 0 on a miss (or when disabled). */
int gb_cache_load(const char *key, const char *ext, void **data, size_t *len);
/* Best effort: a cache that cannot be written is not an error for the caller. */
void gb_cache_store(const char *key, const char *ext, const void *data, size_t len);
const char *gb_cache_dir(void);
#endif
