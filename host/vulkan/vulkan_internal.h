/* State shared by the Vulkan backend's files (the .c files of host/vulkan).
 *
 * Files and their jobs:
 *   loader.c         dlopen of the loader, the process-wide instance, VkResult names
 *   device.c         device info, open/close (features, queue, command pool)
 *   stream.c         the in-order stream: open command buffer, barriers,
 *                    submission, fences, descriptor pools, deferred destruction
 *   memory.c         buffers, staging upload/download, fill, copy
 *   kernel.c         GLSL compile + reflection, pipelines (with workgroup-size variants)
 *   launch.c         launches and batches (pre-recorded command buffers)
 *   timer.c          timestamp timers and debug-utils profiler ranges
 *   backend.c        the gb_backend_ops table
 *   glsl_compile.c   GLSL -> SPIR-V through shaderc (and the disk cache)
 *   spirv_reflect.c  kernel parameters read from the SPIR-V */
#ifndef GPUBENCH_VULKAN_INTERNAL_H
#define GPUBENCH_VULKAN_INTERNAL_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "backend.h"
#include "glsl_compile.h"
#include "spirv_reflect.h"
#include "vulkan_fns.h"

#define GB_VK_DECL(name) PFN_##name name;

/* ---------------------------------------------------------------- loader */

typedef struct vk_global {
    void *lib;                          /* dlopen("libvulkan.so.1"), kept for the process */
    PFN_vkGetInstanceProcAddr gipa;
    VkInstance instance;                /* one per process, never destroyed (see loader) */
    uint32_t api_version;               /* the instance's API version (<= 1.3) */
    int has_debug_utils;
    uint32_t nphys;
    VkPhysicalDevice *phys;
    GB_VK_GLOBAL_FNS(GB_VK_DECL)
    GB_VK_INSTANCE_FNS(GB_VK_DECL)
    GB_VK_DEBUG_FNS(GB_VK_DECL)
} vk_global;

extern vk_global gb_vk;

/* Loads the loader and creates the instance once; later calls return the
 * first outcome (the same error text if it failed). */
int vk_init(gb_err *e);
const char *vk_result_name(VkResult r);
const char *vk_result_desc(VkResult r);

/* "<call> failed: VK_ERROR_X (description)" with the caller's file:line. */
#define VK_FAIL(e, call, res)                                                               \
    gb_fail_at((e), __FILE__, __LINE__, "%s failed: %s (%s)", (call), vk_result_name(res), \
               vk_result_desc(res))
/* The same with extra context after the description. */
#define VK_FAILX(e, call, res, fmt, ...)                                                      \
    gb_fail_at((e), __FILE__, __LINE__, "%s failed: %s (%s; " fmt ")", (call),               \
               vk_result_name(res), vk_result_desc(res), __VA_ARGS__)

/* ---------------------------------------------------------------- device */

typedef struct vk_device vk_device;
typedef void (*vk_destroy_fn)(vk_device *vd, void *obj);

typedef struct vk_deferred { /* an object destroyed once `serial` has completed */
    uint64_t serial;
    vk_destroy_fn fn;
    void *obj;
} vk_deferred;

/* One submission: a command buffer (or a batch's, when external), its fence
 * and the descriptor pools its launches allocated from. */
typedef struct vk_segment {
    struct vk_segment *next;
    VkCommandBuffer cb;
    VkFence fence;
    uint64_t serial;
    uint32_t ncmds;
    int npools, cap_pools;
    VkDescriptorPool *pools;
} vk_segment;

struct vk_device {
    struct { GB_VK_DEVICE_FNS(GB_VK_DECL) } f;
    gb_device *owner;                   /* the device this is the impl of (its broken flag) */
    VkEvent held;                       /* the event the stream waits on while held (hold.c) */
    PFN_vkQueueBeginDebugUtilsLabelEXT queue_begin_label; /* NULL without VK_EXT_debug_utils */
    /* NULL without VK_KHR_pipeline_executable_properties (kernel statistics). */
    PFN_vkGetPipelineExecutablePropertiesKHR exec_props;
    PFN_vkGetPipelineExecutableStatisticsKHR exec_stats;
    PFN_vkQueueEndDebugUtilsLabelEXT queue_end_label;
    VkPhysicalDevice phys;
    VkDevice dev;
    VkQueue queue;
    uint32_t qfamily;
    uint32_t api_version;               /* min(device, instance) */
    gb_glsl_target target;              /* what kernels are compiled for */
    VkPhysicalDeviceLimits limits;
    VkPhysicalDeviceMemoryProperties mem;
    uint64_t max_alloc;                 /* maxMemoryAllocationSize, 0 if unknown */
    uint32_t timestamp_bits;            /* of the chosen queue family */
    VkPhysicalDeviceFeatures feat;      /* core features as enabled */
    int feat_int8, feat_float16, feat_sb8, feat_sb16, feat_pc8, feat_pc16;
    VkCommandPool cmd_pool;

    /* the stream (stream.c) */
    vk_segment *open;                   /* recording, not yet submitted */
    vk_segment *inflight, *inflight_tail; /* submitted, oldest first */
    int ninflight;
    vk_segment *free_segs;
    uint64_t last_serial;               /* serial of the newest segment */
    uint64_t done_serial;               /* every serial <= this has completed */
    VkDescriptorPool *free_pools;
    int nfree_pools, cap_free_pools;
    vk_deferred *deferred;
    int ndeferred, cap_deferred;

    /* host-visible staging for upload/download (memory.c) */
    VkBuffer staging;
    VkDeviceMemory staging_mem;
    void *staging_map;
    uint64_t staging_size;
    int staging_coherent;

};

static inline vk_device *vk_dev(const gb_device *d) { return (vk_device *)d->impl; }

int vk_probe(int *count, gb_err *e);
int vk_device_info(int index, gb_device_info *out, gb_err *e);
int vk_open(gb_device *d, int index, gb_err *e);
void vk_close(gb_device *d);
int vk_find_memory_type(const vk_device *vd, uint32_t type_bits, VkMemoryPropertyFlags want,
                        VkMemoryPropertyFlags avoid);

/* ---------------------------------------------------------------- stream */

/* Submit the open command buffer after this many commands even if nobody waits,
 * so the GPU starts early and recording memory stays bounded. */
enum { VK_SEGMENT_MAX_CMDS = 256, VK_MAX_INFLIGHT = 16 };
/* Largest push-constant block a launch assembles (devices allow 128..256). */
enum { VK_PUSH_MAX = 4096 };

/* Starts one command in stream order: opens a segment if none is open and,
 * when `barrier`, records the ordering barrier (all earlier compute/transfer
 * work and its writes before this command). *serial receives the serial the
 * command belongs to, for the objects it uses. */
int vk_stream_begin(vk_device *vd, int barrier, VkCommandBuffer *cb, uint64_t *serial, gb_err *e);
/* Ends the command begun last; submits the segment if it is full. */
int vk_stream_end(vk_device *vd, gb_err *e);
/* Allocates a descriptor set for the command begun last (pools recycled with its fence). */
int vk_stream_alloc_set(vk_device *vd, VkDescriptorSetLayout layout, VkDescriptorSet *set,
                        gb_err *e);
int vk_stream_flush(vk_device *vd, gb_err *e);   /* submits the open segment, no wait */
/* Flushes if needed and waits for `serial`, within the time limit
 * (gb_wait_limit); `what` says what is waited for in messages. A timeout or a
 * lost device breaks the device. */
int vk_stream_wait(vk_device *vd, uint64_t serial, const char *what, gb_err *e);
int vk_stream_wait_all(vk_device *vd, const char *what, gb_err *e);
/* The open segment (which must exist) and then list[1..n-1] in one
 * submission, under the segment's serial and fence: list[0] is a free slot
 * the segment's command buffer is written to (no list copied per submit). */
int vk_stream_submit_open_with(vk_device *vd, VkCommandBuffer *list, uint32_t n, uint64_t *serial,
                               gb_err *e);
/* Submits pre-recorded command buffers (in order, one submission) after the
 * open segment, without waiting. */
int vk_stream_submit_cbs(vk_device *vd, const VkCommandBuffer *cbs, uint32_t n, uint64_t *serial,
                         gb_err *e);
/* Destroys obj once `serial` has completed (now, if it already has). */
void vk_defer(vk_device *vd, uint64_t serial, vk_destroy_fn fn, void *obj);
/* The barrier every command follows; batches record it between dispatches. */
void vk_cmd_barrier(vk_device *vd, VkCommandBuffer cb);
/* Waits for everything, runs deferred destructions, frees the stream's objects. */
void vk_stream_shutdown(vk_device *vd);

/* ---------------------------------------------------------------- objects */

typedef struct vk_buffer {
    VkBuffer buf;
    VkDeviceMemory mem;
    uint64_t last_use;                  /* serial of the last command that used it */
} vk_buffer;

typedef struct vk_variant {             /* a pipeline for one specialized block size */
    uint32_t block[3];
    VkPipeline pipe;
} vk_variant;

typedef struct vk_kernel {
    VkShaderModule module;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    gb_spv_reflection refl;
    int specialized;                    /* some dimension comes from a spec constant */
    int nvariants, cap_variants;
    vk_variant *variants;
    uint64_t last_use;
} vk_kernel;

typedef struct vk_timer {
    uint64_t id;      /* unique over the process: what a batch's timed command buffer was recorded for */
    VkQueryPool pool;
    VkCommandBuffer stop_cb; /* a barrier and the stop timestamp, recorded once (vk_timed_batch_submit) */
    uint64_t stop_serial;
    uint64_t last_use;
} vk_timer;

/* A batch: one command buffer of `chunk` launches (and one of the rest when
 * count is not a multiple), submitted together as `cbs`: chunk, chunk, ...,
 * rest. `cbs` lies inside `slots`, between a free slot for the open segment
 * and one for a timer's stop (vk_timed_batch_submit). */
typedef struct vk_batch {
    VkCommandBuffer cb, rest;
    VkCommandBuffer *slots, *cbs;
    uint32_t ncbs;
    /* A one-command-buffer batch timed by vk_timed_batch_submit: the timer's reset, start,
     * the launches and its stop recorded together, for timer `timed_for` (recorded on first
     * use from the kept pipelines and descriptor sets) */
    VkCommandBuffer timed;
    uint64_t timed_for;
    VkPipeline *pipes;
    VkDescriptorSet *sets;
    VkDescriptorPool pool;
    uint64_t last_use;
} vk_batch;

/* ---------------------------------------------------------------- ops */

int vk_buffer_alloc(gb_buffer *b, gb_err *e);
void vk_buffer_free(gb_buffer *b);
int vk_upload(gb_buffer *b, uint64_t off, const void *src, uint64_t n, gb_err *e);
int vk_download(gb_buffer *b, uint64_t off, void *dst, uint64_t n, gb_err *e);
int vk_fill32(gb_buffer *b, uint64_t off, uint64_t n, uint32_t pattern, gb_err *e);
int vk_copy(gb_buffer *dst, uint64_t doff, gb_buffer *src, uint64_t soff, uint64_t n, gb_err *e);
void vk_staging_free(vk_device *vd);

int vk_kernel_load(gb_device *d, const gb_kernel_source *src, gb_kernel *k, gb_err *e);
void vk_kernel_free(gb_kernel *k);
int vk_kernel_stats(gb_kernel *k, const uint32_t block[3], gb_kernel_stat *out, int max, int *n, gb_err *e);
int vk_compile_only(const gb_kernel_source *src, const char *target, gb_kind *params,
                    int *nparams, gb_kernel_traits *traits, char **log, gb_err *e);
/* The pipeline for a launch's block size (checked against fixed dimensions). */
int vk_kernel_pipeline(gb_kernel *k, const uint32_t block[3], VkPipeline *pipe, gb_err *e);

int vk_launch(const gb_launch *l, gb_err *e);
int vk_batch_prepare(gb_batch *b, gb_err *e);
int vk_batch_submit(gb_batch *b, gb_err *e);
int vk_timed_batch_submit(gb_batch *b, gb_timer *t, gb_err *e);
/* timer.c: a timer's stop (the stream barrier, then query 1) recorded into cb. */
void vk_cmd_timer_stop(vk_device *vd, VkCommandBuffer cb, VkQueryPool pool);
void vk_batch_free(gb_batch *b);

/* hold.c: the stream hold (a host-set event the stream waits on) and the
 * clean flush's read kernel. */
int vk_hold(gb_device *d, gb_err *e);
int vk_release(gb_device *d, gb_err *e);
extern const char vk_flush_source[];

int vk_timer_create(gb_timer *t, gb_err *e);
int vk_timer_record(gb_timer *t, int which, gb_err *e);
int vk_timer_elapsed_ms(gb_timer *t, double *ms, gb_err *e);
void vk_timer_free(gb_timer *t);
int vk_profiler_range(gb_device *d, const char *name, int begin, gb_err *e);
#endif
