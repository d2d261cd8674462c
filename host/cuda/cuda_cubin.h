/* Looking inside a CUBIN (an ELF64 file) without a driver. */
#ifndef GPUBENCH_CUDA_CUBIN_H
#define GPUBENCH_CUDA_CUBIN_H

#include <stddef.h>

/* Whether the CUBIN defines a function symbol named `name` (an extern "C"
 * kernel keeps its name; a C++ one is mangled). Returns 1 found, 0 absent, -1
 * when the bytes are not an ELF64 image this reader understands. This lets
 * compile_only, which has no driver to ask, report a wrong entry name. */
int gb_cubin_has_function(const void *cubin, size_t len, const char *name);

#endif
