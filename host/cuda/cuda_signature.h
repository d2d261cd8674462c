/* Kernel parameter kinds read from CUDA source text.
 *
 * A launch is checked against its kernel's parameter kinds before it reaches
 * the driver, and the driver cannot tell a kernel's parameter types (at most
 * their sizes, through cuFuncGetParamInfo). So the kinds come from the source:
 * the declaration `extern "C" __global__ void <entry>(...)` is found after
 * removing comments and preprocessor lines, and each parameter is mapped:
 *
 *   any pointer or array                          -> buffer
 *   unsigned, unsigned int, uint32_t              -> u32
 *   int, signed, signed int, int32_t              -> i32
 *   float                                         -> f32
 *   unsigned long [long] [int], uint64_t, size_t  -> u64
 *
 * Qualifiers (const, volatile, __restrict__, __grid_constant__), attributes
 * (__align__(n), alignas(n)), std:: prefixes, default arguments and line
 * breaks are ignored; __launch_bounds__(...) may sit anywhere before the name.
 * Object-like macros are expanded inside the declaration, taking the caller's
 * defines first and then the source's own `#define NAME text`, so
 * `#define T float` ... `T scale` reads as a float.
 *
 * Anything else (half, double, bool, long long, a struct by value, a
 * reference) has no argument kind: the error names the parameter and asks for
 * params={...}, which is also the way out when the declaration is hidden in a
 * function-like macro and cannot be found. */
#ifndef GPUBENCH_CUDA_SIGNATURE_H
#define GPUBENCH_CUDA_SIGNATURE_H

#include "backend.h"

enum { GB_CUDA_PARAM_NAME = 64 };

typedef struct gb_cuda_signature {
    int nparams;
    gb_kind kinds[GB_MAX_PARAMS];
    char names[GB_MAX_PARAMS][GB_CUDA_PARAM_NAME]; /* "" for an unnamed parameter */
    int line;                                      /* 1-based line of the entry's name */
} gb_cuda_signature;

/* Parses the signature of `entry` in `code`. label names the source in
 * messages ("kernels/cuda/x.cu"; NULL reads "<string>"). defines may be NULL.
 * Returns 0, or -1 with e set. */
int gb_cuda_parse_signature(const char *label, const char *code, const char *entry,
                            const gb_define *defines, int ndefines, gb_cuda_signature *sig,
                            gb_err *e);

#endif
