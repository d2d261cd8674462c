/* The backend interface: the one seam between the Lua bindings and a GPU API.
 *
 * A backend is a table of C functions (gb_backend_ops). The bindings never call
 * a backend directly: they call the gb_* wrappers declared at the end of this
 * header (host/core/backend.c), which check what can be checked without the API
 * (released objects, ranges, launch argument kinds), keep the live-object
 * counters the leak checks read, and then call the backend. So a new backend is
 * one new file that fills in gb_backend_ops, and CUDA and Vulkan look the same
 * from Lua.
 *
 * Every fallible call returns 0 on success and -1 on failure, with the reason in
 * a gb_err: "<call> failed: <SYMBOLIC_CODE> (<description>) [file.c:line]". No
 * function here calls abort() or exit(). */
#ifndef GPUBENCH_BACKEND_H
#define GPUBENCH_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- errors */

typedef struct gb_err {
    char *msg; /* malloc'd; NULL while no error is held */
} gb_err;

/* Formats fmt into e->msg with " [file:line]" appended and returns -1.
 * A second failure replaces the first message. */
int gb_fail_at(gb_err *e, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define GB_FAIL(e, ...) gb_fail_at((e), __FILE__, __LINE__, __VA_ARGS__)
void gb_err_clear(gb_err *e);

/* ------------------------------------------------------------- objects */

typedef struct gb_device gb_device;
typedef struct gb_buffer gb_buffer;
typedef struct gb_kernel gb_kernel;
typedef struct gb_timer gb_timer;
typedef struct gb_batch gb_batch;
typedef struct gb_backend_ops gb_backend_ops;

/* GB_MAX_LAUNCHES bounds the distinct launches of one batch: enough to rotate
 * small weights through 4x a 60 MB L2 (a 0.5 MB matrix needs ~480 copies).
 * GB_BATCH_CHUNK bounds what one graph or command buffer records: a batch of
 * more launches (up to 2^32 - 1) replays whole chunks back to back in one
 * submission, so its memory stays that of GB_BATCH_CHUNK launches (a few MB)
 * whatever the count. */
enum { GB_MAX_PARAMS = 32, GB_MAX_LAUNCHES = 4096, GB_BATCH_CHUNK = 16384 };

/* The launches one recorded chunk of a batch holds: the largest multiple of
 * the batch's distinct launches (so every chunk starts at the first) not
 * above GB_BATCH_CHUNK, and never more than count. */
static inline uint32_t gb_batch_chunk(uint32_t count, int nlaunches) {
    uint32_t n = (uint32_t)(nlaunches > 0 ? nlaunches : 1);
    uint32_t chunk = GB_BATCH_CHUNK / n * n;
    if (chunk == 0) chunk = n;
    return count < chunk ? count : chunk;
}

typedef enum gb_kind {
    GB_ARG_BUFFER = 0,
    GB_ARG_U32,
    GB_ARG_I32,
    GB_ARG_F32,
    GB_ARG_U64,
    GB_ARG_KIND_COUNT
} gb_kind;

const char *gb_kind_name(gb_kind k); /* "buffer", "u32", ... */
int gb_kind_from_name(const char *name, gb_kind *out);
size_t gb_kind_size(gb_kind k); /* bytes a scalar occupies (buffer: 8) */

typedef struct gb_arg {
    gb_kind kind;
    union {
        gb_buffer *buf;
        uint32_t u32;
        int32_t i32;
        float f32;
        uint64_t u64;
    } v;
} gb_arg;

/* What a device reports. Unknown numbers are 0 (or empty strings). */
enum { GB_MAX_COOPMAT_SHAPES = 32 };

typedef struct gb_device_info {
    char backend[16];          /* "cuda", "vulkan" */
    int index;                 /* index within its backend */
    char name[256];
    char device_type[32];      /* "discrete", "integrated", "cpu", "virtual", "other" */
    char driver_version[64];
    char api_version[32];      /* CUDA driver API or Vulkan API version */
    char arch[32];             /* "sm_90" on CUDA; "" elsewhere */
    uint32_t vendor_id, device_id;
    uint64_t memory_bytes;
    uint32_t sm_count;         /* SMs (CUDA, VK_NV_shader_sm_builtins) or CUs where known */
    uint64_t l2_bytes;
    double spec_gbs;           /* theoretical DRAM bandwidth, GB/s (1e9 bytes/s) */
    uint32_t memory_clock_khz; /* where the API exposes it */
    uint32_t memory_bus_bits;
    double timestamp_period_ns;/* one device timestamp tick in ns */
    uint32_t subgroup_size;    /* warp size on CUDA */
    uint32_t max_threads_per_group;
    uint32_t max_group_size[3];
    uint32_t max_groups[3];
    uint32_t max_shared_bytes; /* per workgroup */
    uint32_t max_push_bytes;   /* Vulkan push-constant bytes; 4096 (param space) on CUDA */
    uint64_t max_buffer_bytes; /* largest single allocation/binding the API allows */
    uint8_t uuid[16];          /* device UUID (cuDeviceGetUuid, VkPhysicalDeviceIDProperties) */
    int has_uuid;              /* lets backend.c fill a Vulkan device's L2/SMs/bandwidth from
                                  the CUDA view of the same GPU */
    /* Vulkan storage features a kernel may need (1 when the device has them;
     * open enables them). 0 on CUDA, where no such switch exists. */
    int storage_buffer_16bit, storage_buffer_8bit;
    /* Vulkan 1.3 shaderIntegerDotProduct (OpSDot/OpUDot/OpSUDot; open enables it), and
     * whether the driver accelerates the packed 4x8-bit mixed-signedness dot (dp4a on
     * NVIDIA). 0 on CUDA and on devices below 1.3. */
    int integer_dot_product, integer_dot_4x8_accelerated;
    /* 1 when a launch may start while the launch before it finishes (CUDA's
     * programmatic dependent launch: sm_90 or later and cuLaunchKernelEx); a batch
     * asks for it (GB_BATCH_OVERLAP) for the kernels that declare
     * GB_LAUNCH_OVERLAP (kernels/cuda/launch_overlap.cuh). 0 on Vulkan. */
    int launch_overlap;
    /* Cooperative matrices: "nv" when VK_NV_cooperative_matrix is offered
     * (open enables it), "" otherwise; the subgroup-scope shapes the device
     * lists (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV), in its order. */
    char cooperative_matrix[8];
    int ncoopmat_shapes;
    struct gb_coopmat_shape {
        uint32_t m, n, k;
        char a[4], b[4], c[4], d[4]; /* component types: "f16", "f32", "s8", "u32", ... */
    } coopmat_shapes[GB_MAX_COOPMAT_SHAPES];
} gb_device_info;

/* What a compiled kernel declares about its launches (gb_kernel's fields of the
 * same names): its dynamic shared memory and whether it may overlap. */
typedef struct gb_kernel_traits {
    uint32_t dynamic_shared;
    int overlap;
} gb_kernel_traits;

/* One statistic of a kernel's compiled code (gb_kernel_stats): CUDA's by the
 * names gb_kernel_stats lists, Vulkan's by the driver's own names
 * (VK_KHR_pipeline_executable_properties). */
typedef struct gb_kernel_stat {
    char name[64];
    char description[192];
    double value;
} gb_kernel_stat;
enum { GB_MAX_KERNEL_STATS = 48 };

/* Common headers of the objects; each backend keeps its own state in impl. */
struct gb_device {
    const gb_backend_ops *ops;
    gb_device_info info;
    void *impl;
    int refs;             /* the handle plus one per live child object */
    int closed;           /* the handle was released; children keep the device alive */
    gb_buffer *flush_buf; /* the L2 flush buffer, allocated on first flush */
    gb_buffer *flush_out; /* the clean flush's never-written output */
    gb_kernel *flush_kernel; /* the clean flush's read kernel, compiled on first use */
    int flush_dirty;         /* a write flush left its pattern in flush_buf */
    int flush_primed;        /* the clean flush ran its first passes since the last fill */
    int profiler_depth;   /* open profiler ranges (gb_profiler_range) */
    /* Set when the device cannot be used any more: a wait ran past the time
     * limit (work still running), or a fault left the context unusable. Every
     * later call fails with broken_why; releases free host memory only. */
    int broken;
    char broken_why[512];
};

struct gb_buffer {
    gb_device *dev;
    uint64_t size;
    void *impl;
    int refs;     /* batches that launch with it; it is destroyed when none is left */
    int released; /* gb_buffer_free was called: no new use, batches refuse to submit */
};

struct gb_kernel {
    gb_device *dev;
    char *entry;       /* entry point name */
    char *label;       /* file name or "<string>", for messages */
    int nparams;
    gb_kind params[GB_MAX_PARAMS];
    int cache_hit;     /* 1 when the binary came from the disk cache */
    uint32_t local_size[3]; /* fixed workgroup size (Vulkan shaders); 0 = any size at launch */
    /* Dynamic shared memory every launch gets (CUDA: the source's GB_DYNAMIC_SHARED,
     * kernels/cuda/dynamic_shared.cuh); 0 for none. */
    uint32_t dynamic_shared;
    /* 1: the source declares GB_LAUNCH_OVERLAP (CUDA, kernels/cuda/launch_overlap.cuh):
     * it waits for the launch before it wherever it depends on it, so a batch
     * with GB_BATCH_OVERLAP may start it while that one finishes. */
    int overlap;
    void *impl;
    int refs;          /* batches that launch it (as for buffers) */
    int released;
    /* Non-NULL: not compiled code but a vendor library's GEMM (gb_vendor_gemm_create),
     * owned by impl; launched, batched, captured and timed like any kernel. */
    const struct gb_vendor_gemm *vendor;
};

/* A vendor bf16 GEMM, y[T,N] = x[T,K] · W[N,K]^T: W, x and y bf16 row-major,
 * fp32 compute, one library call per launch (cublasLtMatmul on CUDA). Its
 * launches take (W, x, y) buffers of at least 2NK, 2TK and 2TN bytes and
 * grid = block = 1: the library picks its own geometry. The algorithm is
 * chosen once, at creation, by the library's heuristic. */
typedef struct gb_vendor_gemm {
    uint32_t n, k, t;
    char library[32];          /* "cuBLASLt" */
    char path[512];            /* the file loaded */
    char version[32];          /* "13.1.0" */
    uint64_t version_number;   /* as the library reports it (cublasLtGetVersion: 130100) */
    /* The chosen algorithm's configuration (cublasLtMatmulAlgoConfigAttributes_t). */
    int32_t algo_id, tile_id, stages_id, splitk, reduction_scheme, swizzle, custom_option;
    uint64_t workspace_bytes;  /* device workspace the algorithm needs; the op owns it */
    uint64_t workspace_limit;  /* the most the heuristic was allowed to ask for */
    double waves;              /* the heuristic's estimate of waves over the GPU */
} gb_vendor_gemm;

struct gb_timer {
    gb_device *dev;
    int state;         /* 0 new, 1 started, 2 stopped */
    void *impl;
};

/* One launch of a batch: a kernel, its geometry and its arguments. */
typedef struct gb_launch {
    gb_kernel *kernel;
    uint32_t grid[3];  /* workgroups (CUDA blocks) in x, y, z */
    uint32_t block[3]; /* threads per workgroup; Vulkan checks it against the shader's local size */
    int nargs;
    gb_arg args[GB_MAX_PARAMS];
} gb_launch;

struct gb_batch {
    gb_device *dev;
    uint32_t count;     /* launches per submit, cycling through launches[] */
    int nlaunches;
    gb_launch *launches;/* copies; the batch holds a reference on every kernel and buffer they name */
    int graph;          /* 1: replayed as a CUDA graph / pre-recorded command buffer */
    /* 1: within a submission, each launch of a kernel with gb_kernel.overlap may
     * start while the launch before it finishes (the first of a submission never
     * does); overlapped counts the batch's distinct launches that may. */
    int overlap, overlapped;
    void *impl;
};

/* Kernel source handed to a backend: all text already read by the caller. */
typedef struct gb_define {
    const char *name;
    const char *value; /* may be "" */
} gb_define;

typedef struct gb_kernel_source {
    const char *label;      /* path as given, or "<string>"; used in compiler messages */
    const char *dir;        /* directory of the file for relative #include; NULL for strings */
    const char *code;       /* the source text */
    const char *entry;      /* entry point (CUDA: extern "C" __global__ name; Vulkan: "main" or given) */
    const gb_define *defines;
    int ndefines;
    const char *const *include_dirs;
    int ninclude_dirs;
    /* Explicit parameter kinds, overriding reflection; NULL to reflect. */
    const gb_kind *params;
    int nparams;
} gb_kernel_source;

/* Clocks and limits a device reports while it runs (NVML on NVIDIA GPUs).
 * Unknown values are 0. reasons: NVML's clocks event (throttle) reasons bit
 * mask, when has_reasons. */
typedef struct gb_clocks {
    uint32_t sm_mhz, memory_mhz, max_sm_mhz, max_memory_mhz;
    uint32_t temperature_c;
    double power_w;
    uint64_t reasons;
    int has_reasons;
    char source[16];
} gb_clocks;

/* ------------------------------------------------------------- backend ops */

struct gb_backend_ops {
    const char *name; /* "cuda", "vulkan" */

    /* Loads the system libraries (dlopen) on first call. Returns 0 and sets
     * *count (possibly 0) when the API is present; -1 with the reason (e.g.
     * "libcuda.so.1: cannot open shared object file") when it is not. */
    int (*probe)(int *count, gb_err *e);
    int (*device_info)(int index, gb_device_info *out, gb_err *e);

    /* Opens device `index`: fills d->info and d->impl. */
    int (*open)(gb_device *d, int index, gb_err *e);
    void (*close)(gb_device *d);

    int (*buffer_alloc)(gb_buffer *b, gb_err *e); /* b->dev, b->size set */
    void (*buffer_free)(gb_buffer *b);
    /* Ranges are checked by the wrappers. upload/download are synchronous with
     * respect to all earlier work on the device. */
    int (*upload)(gb_buffer *b, uint64_t off, const void *src, uint64_t n, gb_err *e);
    int (*download)(gb_buffer *b, uint64_t off, void *dst, uint64_t n, gb_err *e);
    /* Fills n bytes (a multiple of 4, off a multiple of 4) with a 32-bit
     * pattern, in stream order (asynchronous). */
    int (*fill32)(gb_buffer *b, uint64_t off, uint64_t n, uint32_t pattern, gb_err *e);
    int (*copy)(gb_buffer *dst, uint64_t doff, gb_buffer *src, uint64_t soff, uint64_t n,
                gb_err *e); /* asynchronous, in stream order */

    /* Compiles (through the disk cache) and loads a kernel. The backend sets
     * k->entry, k->label, k->params/nparams (from src->params or by
     * reflection), k->cache_hit and k->impl. Compile errors carry the
     * compiler log with file:line. */
    int (*kernel_load)(gb_device *d, const gb_kernel_source *src, gb_kernel *k, gb_err *e);
    void (*kernel_free)(gb_kernel *k);
    /* Compiles without a device, for a named target ("sm_90"; "vulkan1.2"),
     * through the disk cache. On success fills params/nparams with the
     * reflected (or explicit) parameter kinds, *traits (may be NULL) with what
     * the binary declares and *log with the compiler's warnings (malloc'd, may
     * be NULL). Needs only the compiler library. */
    int (*compile_only)(const gb_kernel_source *src, const char *target, gb_kind *params,
                        int *nparams, gb_kernel_traits *traits, char **log, gb_err *e);
    /* What the compiled code of k uses, for launches of `block` threads: up to
     * max statistics into out, their count in *n. Checked by the wrapper
     * (gb_kernel_stats); may be NULL (the backend reports none). */
    int (*kernel_stats)(gb_kernel *k, const uint32_t block[3], gb_kernel_stat *out, int max, int *n,
                        gb_err *e);
    /* One asynchronous launch; arguments already checked against k->params. */
    int (*launch)(const gb_launch *l, gb_err *e);

    /* Batches: prepare once, submit many times. A submit performs b->count
     * launches, launch i using b->launches[i % nlaunches], in one submission
     * with no host work per launch beyond the API's own. Consecutive launches
     * are ordered (each sees the previous one's writes), as on a CUDA stream. */
    int (*batch_prepare)(gb_batch *b, gb_err *e);
    int (*batch_submit)(gb_batch *b, gb_err *e);
    void (*batch_free)(gb_batch *b);

    /* Device timers: start/stop record timestamps in stream order; elapsed
     * waits for the stop timestamp and returns milliseconds. */
    int (*timer_create)(gb_timer *t, gb_err *e);
    int (*timer_record)(gb_timer *t, int which /* 0 start, 1 stop */, gb_err *e);
    int (*timer_elapsed_ms)(gb_timer *t, double *ms, gb_err *e);
    /* The timer's start, one submit of the batch and the timer's stop as one
     * submission to the device (Vulkan: one vkQueueSubmit, so that no
     * submission boundary falls between the timestamps). May be NULL: then
     * start, batch_submit and stop (gb_timed_batch_submit). */
    int (*timed_batch_submit)(gb_batch *b, gb_timer *t, gb_err *e);
    void (*timer_free)(gb_timer *t);

    /* A named profiler range (cuProfilerStart/Stop plus an NVTX range on CUDA;
     * a debug-utils label where Vulkan has one). May be NULL. */
    int (*profiler_range)(gb_device *d, const char *name, int begin, gb_err *e);

    int (*sync)(gb_device *d, gb_err *e);

    /* The read kernel of the clean L2 flush, in the backend's kernel
     * language: entry flush_entry(buffer src, buffer out, u32 n16, u32
     * sentinel) reads n16 16-byte words of src and writes out only when
     * their XOR fold equals sentinel (host/core/flush.c). */
    const char *flush_source;
    const char *flush_entry;

    /* Holds the stream: work queued after hold waits, on the device, until
     * release, so that a sequence queued meanwhile runs back to back with no
     * host round trip inside it (gb_cold_sample). May be NULL (no hold). */
    int (*hold)(gb_device *d, gb_err *e);
    int (*release)(gb_device *d, gb_err *e);

    /* Reads the clocks of the GPU that info describes (found by UUID, so a
     * device of another backend on the same GPU is served too). May be NULL. */
    int (*clocks)(const gb_device_info *info, gb_clocks *out, gb_err *e);

    /* Plans the vendor bf16 GEMM of shape (n, kdim, t) (gb_vendor_gemm): sets
     * k->entry, k->label, k->params (three buffers), k->impl and k->vendor;
     * kernel_free, launch and batch_prepare recognise it by k->vendor. The
     * library is loaded on first use. NULL: the backend has no vendor GEMM. */
    int (*vendor_gemm)(gb_device *d, gb_kernel *k, uint32_t n, uint32_t kdim, uint32_t t, gb_err *e);
};

/* The backends host/cuda and host/vulkan define. This library does not link
 * them: a program registers those it links, in order of preference for "best
 * available" (cli registers CUDA, then Vulkan). Registering a backend
 * twice is a no-op; returns -1 only when the registry is full. */
extern const gb_backend_ops gb_cuda_backend;
extern const gb_backend_ops gb_vulkan_backend;
int gb_backend_register(const gb_backend_ops *ops);
int gb_backend_count(void);
const gb_backend_ops *gb_backend_at(int i);
const gb_backend_ops *gb_backend_find(const char *name); /* NULL if not compiled in */

/* ------------------------------------------------- wrappers (host/core/backend.c)
 * The bindings use these, never the ops directly. */

/* Live object counts, for leak checks: [0] devices, [1] buffers, [2] kernels,
 * [3] timers, [4] batches. */
enum { GB_LIVE_DEVICES, GB_LIVE_BUFFERS, GB_LIVE_KERNELS, GB_LIVE_TIMERS, GB_LIVE_BATCHES,
       GB_LIVE_COUNT };
long gb_live(int which);

/* Device info as gpu.devices() shows it: the backend's, completed from the CUDA
 * view of the same GPU (by UUID) where the backend cannot tell L2/SMs/bandwidth. */
int gb_device_info_of(const gb_backend_ops *ops, int index, gb_device_info *out, gb_err *e);
int gb_device_open(const gb_backend_ops *ops, int index, gb_device **out, gb_err *e);
/* Releases the caller's handle; the device is destroyed when its last child goes. */
void gb_device_release(gb_device *d);

int gb_buffer_alloc(gb_device *d, uint64_t size, gb_buffer **out, gb_err *e);
/* Releases the caller's handle: no further use is accepted, and the buffer is
 * destroyed now, or when the last batch launching it is freed. */
void gb_buffer_free(gb_buffer *b);
int gb_buffer_upload(gb_buffer *b, uint64_t off, const void *src, uint64_t n, gb_err *e);
int gb_buffer_download(gb_buffer *b, uint64_t off, void *dst, uint64_t n, gb_err *e);
/* Repeats an arbitrary byte pattern (1..256 bytes) over [off, off+n). */
int gb_buffer_fill(gb_buffer *b, uint64_t off, uint64_t n, const void *pattern, size_t plen,
                   gb_err *e);
int gb_buffer_copy(gb_buffer *dst, uint64_t doff, gb_buffer *src, uint64_t soff, uint64_t n,
                   gb_err *e);

int gb_kernel_load(gb_device *d, const gb_kernel_source *src, gb_kernel **out, gb_err *e);
void gb_kernel_free(gb_kernel *k);
/* The statistics of k's compiled code for launches of `block` (each dimension
 * at least 1): CUDA registers_per_thread, static_shared_bytes,
 * dynamic_shared_bytes, local_bytes_per_thread, const_bytes,
 * max_threads_per_block, blocks_per_sm, warps_per_sm, max_warps_per_sm (the
 * occupancy calculator's, for this block and k's dynamic shared memory);
 * Vulkan the driver's statistics of the pipeline for that workgroup size,
 * where the device offers VK_KHR_pipeline_executable_properties. Up to max
 * into out; fails naming why a device, kernel or block has none. */
int gb_kernel_stats(gb_kernel *k, const uint32_t block[3], gb_kernel_stat *out, int max, int *n,
                    gb_err *e);
/* Appends one statistic to out[*n] while there is room (for the backends). */
void gb_kernel_stat_put(gb_kernel_stat *out, int max, int *n, const char *name, double value,
                        const char *description);
/* A vendor bf16 GEMM as a kernel (gb_vendor_gemm; freed by gb_kernel_free).
 * n, k, t: 1 to 2^31 - 1. Fails on a backend without one, naming the device's. */
int gb_vendor_gemm_create(gb_device *d, uint32_t n, uint32_t k, uint32_t t, gb_kernel **out,
                          gb_err *e);
/* Checks a launch (kernel, argument count and kinds, buffer devices, geometry). */
int gb_launch_check(const gb_launch *l, gb_err *e);
int gb_launch_run(const gb_launch *l, gb_err *e);

/* flags: GB_BATCH_GRAPH (replayed as a CUDA graph / pre-recorded command buffer),
 * GB_BATCH_OVERLAP (gb_batch.overlap: fails on a device without launch_overlap, and
 * when no launch's kernel declares it). */
enum { GB_BATCH_GRAPH = 1, GB_BATCH_OVERLAP = 2 };
int gb_batch_create(gb_device *d, const gb_launch *launches, int n, uint32_t count, int flags,
                    gb_batch **out, gb_err *e);
int gb_batch_submit(gb_batch *b, gb_err *e);
void gb_batch_free(gb_batch *b);

int gb_timer_create(gb_device *d, gb_timer **out, gb_err *e);
int gb_timer_start(gb_timer *t, gb_err *e);
int gb_timer_stop(gb_timer *t, gb_err *e);
int gb_timer_ms(gb_timer *t, double *ms, gb_err *e);
void gb_timer_free(gb_timer *t);

int gb_profiler_range(gb_device *d, const char *name, int begin, gb_err *e);
int gb_sync(gb_device *d, gb_err *e);

/* ------------------------------------------------------------ the L2 flush
 * (host/core/flush.c). Both kinds go through a buffer of 2 x L2 bytes (256
 * MiB where L2 is unknown, capped at the device's largest buffer), made on
 * first use and kept with the device.
 *   GB_FLUSH_CLEAN reads it: L2 is left holding clean lines only, so the
 *     next call writes back nothing it did not write itself;
 *   GB_FLUSH_WRITE overwrites it (a memset, as nvbench and triton flush):
 *     L2 is left full of dirty lines that the next call pays to write back. */
typedef enum gb_flush_kind { GB_FLUSH_NONE = 0, GB_FLUSH_CLEAN, GB_FLUSH_WRITE } gb_flush_kind;
/* "clean", "write", "none" <-> the kind; -1 for another name. */
int gb_flush_kind_from_name(const char *name, gb_flush_kind *out);
const char *gb_flush_kind_name(gb_flush_kind k);
/* Queues the flush in stream order (asynchronous). */
int gb_flush_queue(gb_device *d, gb_flush_kind kind, gb_err *e);
/* Queues the flush and waits for it. */
int gb_flush_l2(gb_device *d, gb_flush_kind kind, gb_err *e);
uint64_t gb_flush_bytes(const gb_device *d);
/* Frees the flush's buffers and kernel (gb_device_release). */
void gb_flush_release(gb_device *d);

/* One cold sample of batch b: with hold, the stream is held first; then the
 * flush, t's start, one submit of b and t's stop are queued with no host
 * wait between them, the stream released, and the elapsed time read (*ms).
 * Only device work lies between the two timestamps: the flush completes
 * before the start, and with the hold the call's launch does not wait for
 * the host either. *held says whether the stream was held (the backend may
 * have no hold). */
/* The timer's start, one submit of b and the timer's stop (the backend's
 * timed_batch_submit where it has one: a single submission). */
int gb_timed_batch_submit(gb_batch *b, gb_timer *t, gb_err *e);
int gb_cold_sample(gb_batch *b, gb_timer *t, gb_flush_kind flush, int hold, double *ms, int *held,
                   gb_err *e);

/* Adjusts a live-object counter (objects the device owns for itself, such
 * as the flush buffer, are not the caller's). */
void gb_live_adjust(int which, long delta);

/* The device's clocks through whichever registered backend can read them
 * for its GPU (CUDA's NVML for an NVIDIA GPU, also when Vulkan opened it). */
int gb_device_clocks(gb_device *d, gb_clocks *out, gb_err *e);

/* Monotonic host clock in seconds. */
double gb_clock_seconds(void);

/* ------------------------------------------------------------ the watchdog
 * Every wait on a device is bounded: GPUBENCH_TIMEOUT seconds (default 60; 0
 * means no limit; a fraction is allowed). A wait past it fails with "... did
 * not finish within N s ..." and breaks the device, so the program can go on
 * to report and exit instead of hanging. */
enum { GB_DEFAULT_TIMEOUT_S = 60 };
/* The limit in seconds (0 = none); -1 with a message when GPUBENCH_TIMEOUT is
 * set but is not a number >= 0. Read from the environment on every call. */
int gb_wait_limit(double *seconds, gb_err *e);
/* Formats the timeout failure of a wait on `what` ("the device (sync)", "a
 * download of 64 bytes") after `limit` seconds, breaks the device with it,
 * and returns -1. */
int gb_wait_timed_out(gb_device *d, const char *call, const char *what, double limit, gb_err *e);
/* Marks d unusable (see gb_device.broken); the reason is kept for messages. */
void gb_device_break(gb_device *d, const char *why);
/* Devices broken so far in this process (the CLI skips driver teardown at
 * exit when any is: a device whose work never finished can hang it). */
long gb_broken_devices(void);

#ifdef __cplusplus
}
#endif
#endif
