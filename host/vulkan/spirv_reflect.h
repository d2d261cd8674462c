/* A small SPIR-V reader: the argument list and workgroup size of a compute shader.
 *
 * THE GPUBENCH ARGUMENT CONVENTION FOR VULKAN KERNELS
 *   A Vulkan kernel's arguments, as passed to launch() from Lua or C, are
 *     1. the storage buffers of descriptor set 0, in binding order
 *        (bindings must be 0..n-1 with no gap; each binding one buffer), then
 *     2. the members of the push-constant block, in offset order
 *        (uint -> u32, int -> i32, float -> f32, uint64_t -> u64).
 *   So `layout(set=0, binding=0) buffer A; layout(binding=1) buffer B;
 *   layout(push_constant) uniform P { uint n; float s; }` takes (A, B, n, s),
 *   the same order a CUDA twin `k(A, B, n, s)` uses. Anything else bound by the
 *   shader (uniform buffers, images, other descriptor sets, arrays of buffers)
 *   is an error naming the variable, because a launch could not fill it.
 *
 * Workgroup size: the LocalSize execution mode, or LocalSizeId, or a constant
 * decorated BuiltIn WorkgroupSize (which overrides both, as SPIR-V specifies).
 * A dimension that comes from a specialization constant
 * (`layout(local_size_x_id = 0) in;`) is reported with its SpecId; the Vulkan
 * backend then specializes it from the launch's block size, so such a kernel
 * takes any block size in that dimension (gb_kernel.local_size[d] = 0).
 *
 * No external library: the parser reads only the module's global section. */
#ifndef GPUBENCH_SPIRV_REFLECT_H
#define GPUBENCH_SPIRV_REFLECT_H
#include <stddef.h>
#include <stdint.h>
#include "backend.h"

enum { GB_SPV_NAME_MAX = 64, GB_SPV_MAX_CAPS = 64 };

typedef struct gb_spv_reflection {
    int nparams;                          /* buffers first, then push-constant scalars */
    int nbuffers;
    gb_kind kinds[GB_MAX_PARAMS];
    uint32_t push_offset[GB_MAX_PARAMS];  /* byte offset in the push block (scalars only) */
    char names[GB_MAX_PARAMS][GB_SPV_NAME_MAX]; /* variable / member names, "" if stripped */
    uint32_t push_size;                   /* bytes the push block spans from offset 0; 0 = none */
    uint32_t local_size[3];               /* fixed sizes, or the spec constants' defaults */
    int32_t local_size_spec_id[3];        /* -1: fixed; else the SpecId that sets the dimension */
    int ncaps;
    uint32_t caps[GB_SPV_MAX_CAPS];       /* OpCapability operands, to check device features */
} gb_spv_reflection;

/* Reflects the GLCompute entry point named `entry` ("main" for GLSL). label
 * names the shader in error messages. */
int gb_spv_reflect(const uint32_t *words, size_t nwords, const char *entry, const char *label,
                   gb_spv_reflection *out, gb_err *e);

/* 1 if the module declares capability `cap` (a SpvCapability value). */
int gb_spv_has_cap(const gb_spv_reflection *r, uint32_t cap);

/* Checks explicit parameter kinds against the reflected ones: same count,
 * buffers where the shader has buffers, and scalars of the same byte size
 * (a push constant is raw bytes, so u32/i32/f32 may reinterpret each other).
 * Fails naming the first mismatch. */
int gb_spv_check_params(const gb_spv_reflection *r, const gb_kind *params, int nparams,
                        const char *label, gb_err *e);
#endif
