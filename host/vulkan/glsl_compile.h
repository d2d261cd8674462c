/* GLSL compute shaders -> SPIR-V with shaderc (linked statically), through the
 * disk kernel cache (host/kernel_cache.h, extension "spv").
 *
 * Defines come from src->defines; #include "x" is resolved relative to the
 * including file (src->dir for the top-level source), then src->include_dirs;
 * #include <x> only in src->include_dirs. Compiler messages name files by
 * src->label (or the resolved include path) with their line, e.g.
 * "kernels/vulkan/x.comp:12: error: ...". The SPIR-V entry point is always
 * "main" (GLSL has no other), whatever label src->entry gives the kernel. */
#ifndef GPUBENCH_GLSL_COMPILE_H
#define GPUBENCH_GLSL_COMPILE_H
#include <stddef.h>
#include <stdint.h>
#include "backend.h"

typedef struct gb_glsl_target {
    char name[16];         /* canonical name: "vulkan1.0" ... "vulkan1.3" */
    uint32_t api_version;  /* VK_MAKE_API_VERSION(0, 1, minor, 0) */
    uint32_t spirv_version;/* word 1 of the SPIR-V header it produces */
} gb_glsl_target;

/* "vulkan1.0".."vulkan1.3"; "vulkan" alone means vulkan1.2. */
int gb_glsl_target_parse(const char *target, gb_glsl_target *t, gb_err *e);
/* The newest target a device of Vulkan API version `api` accepts, capped at
 * vulkan1.2 (SPIR-V 1.5: every feature the kernels use, widely supported). */
void gb_glsl_target_for_api(uint32_t api, gb_glsl_target *t);

/* Identifies the compiler build in cache keys (glslang and SPIRV-Tools versions). */
const char *gb_glsl_compiler_id(void);

/* Compiles src for target. On success *words and *nwords hold malloc'd SPIR-V,
 * *log the compiler's warnings (malloc'd; NULL when none or on a cache hit)
 * and *cache_hit whether the binary came from the disk cache. */
int gb_glsl_compile(const gb_kernel_source *src, const gb_glsl_target *target, uint32_t **words,
                    size_t *nwords, char **log, int *cache_hit, gb_err *e);
#endif
