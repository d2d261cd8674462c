/* Small helpers used by more than one C test (tests/c/test_*.c). */
#ifndef GPUBENCH_TEST_UTIL_H
#define GPUBENCH_TEST_UTIL_H
#include <stdint.h>
#include <string.h>

#include "backend.h"

/* "buffer,u32,..." for a list of parameter kinds, to compare in one string.
 * The text lives in a static buffer until the next call. */
static inline const char *kinds_text(const gb_kind *k, int n) {
    static char buf[512];
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        strcat(buf, i ? "," : "");
        strcat(buf, gb_kind_name(k[i]));
    }
    return buf;
}

/* Stores v little-endian at p (the byte order of every block field). */
static inline void put16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
#endif
