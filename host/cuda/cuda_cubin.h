/* Looking inside a CUBIN (an ELF64 file) without a driver. */
#ifndef GPUBENCH_CUDA_CUBIN_H
#define GPUBENCH_CUDA_CUBIN_H

#include <stddef.h>
#include <stdint.h>

/* Whether the CUBIN defines a function symbol named `name` (an extern "C"
 * kernel keeps its name; a C++ one is mangled). Returns 1 found, 0 absent, -1
 * when the bytes are not an ELF64 image this reader understands. This lets
 * compile_only, which has no driver to ask, report a wrong entry name. */
int gb_cubin_has_function(const void *cubin, size_t len, const char *name);

/* The initial value of a 4-byte data symbol `name` (an extern "C" __device__
 * const unsigned lives in .nv.global.init, or in .nv.global when it is 0): 1
 * and *value set when found, 0 absent, -1 when the bytes are damaged or the
 * symbol is not 4 bytes of data. */
int gb_cubin_u32_object(const void *cubin, size_t len, const char *name, uint32_t *value);

/* The symbol a kernel source declares (kernels/cuda/dynamic_shared.cuh) to
 * have every launch given that many bytes of dynamic shared memory. */
#define GB_DYNAMIC_SHARED_SYMBOL "gpubench_dynamic_shared_bytes"

/* The symbol a kernel source declares (kernels/cuda/launch_overlap.cuh) to say
 * that it waits for the launch before it wherever it depends on it, so that
 * it may be launched while that one finishes. */
#define GB_LAUNCH_OVERLAP_SYMBOL "gpubench_launch_overlap"

#endif
