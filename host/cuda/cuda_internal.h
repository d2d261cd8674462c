/* What the CUDA backend keeps behind each object's impl pointer, and the ops
 * each .c file of host/cuda contributes to gb_cuda_backend (backend.c). */
#ifndef GPUBENCH_CUDA_INTERNAL_H
#define GPUBENCH_CUDA_INTERNAL_H

#include "cuda_api.h"

#if GPUBENCH_HAVE_CUDA_HEADERS

typedef struct cuda_dev {
    CUdevice dev;
    CUcontext ctx;   /* the primary context, retained while the device is open */
    CUstream stream; /* every operation of this device goes to this one stream */
    char last_kernel[160]; /* the kernel launched last, named when a wait reports a fault */
    /* The stream hold (hold.c): the stream waits until the host word
     * hold_word, pinned and mapped, reaches hold_seq. */
    volatile uint32_t *hold_word;
    CUdeviceptr hold_dptr;
    uint32_t hold_seq;
} cuda_dev;

typedef struct cuda_buf {
    CUdeviceptr ptr;
} cuda_buf;

typedef struct cuda_kernel {
    CUmodule mod;
    CUfunction fn;
} cuda_kernel;

typedef struct cuda_timer {
    CUevent ev[2]; /* start, stop */
} cuda_timer;

/* Makes the device's context current on this thread: every op starts here, so
 * a script may interleave several devices (or another library's context). */
int gb_cuda_current(gb_device *d, gb_err *e);

static inline cuda_dev *cuda_dev_of(const gb_device *d) { return (cuda_dev *)d->impl; }
static inline CUdeviceptr cuda_ptr_of(const gb_buffer *b) { return ((cuda_buf *)b->impl)->ptr; }

/* Waits, polling, for everything queued on the device's stream (or for one
 * event) within the time limit (gb_wait_limit); `what` says what is waited
 * for in messages. A fault reported meanwhile (an illegal address, say)
 * names the kernel launched last and breaks the device, as does the limit. */
int gb_cuda_wait_stream(gb_device *d, const char *what, gb_err *e);
int gb_cuda_wait_event(gb_device *d, CUevent ev, const char *what, gb_err *e);
/* After a failed call r (its message already in e): breaks the device when
 * r is an error that leaves the context unusable. Returns -1. */
int gb_cuda_failed(gb_device *d, CUresult r, gb_err *e);

/* device.c */
int gb_cuda_probe(int *count, gb_err *e);
int gb_cuda_device_info(int index, gb_device_info *out, gb_err *e);
int gb_cuda_open(gb_device *d, int index, gb_err *e);
void gb_cuda_close(gb_device *d);
int gb_cuda_sync(gb_device *d, gb_err *e);
int gb_cuda_profiler_range(gb_device *d, const char *name, int begin, gb_err *e);

/* memory.c */
int gb_cuda_buffer_alloc(gb_buffer *b, gb_err *e);
void gb_cuda_buffer_free(gb_buffer *b);
int gb_cuda_upload(gb_buffer *b, uint64_t off, const void *src, uint64_t n, gb_err *e);
int gb_cuda_download(gb_buffer *b, uint64_t off, void *dst, uint64_t n, gb_err *e);
int gb_cuda_fill32(gb_buffer *b, uint64_t off, uint64_t n, uint32_t pattern, gb_err *e);
int gb_cuda_copy(gb_buffer *dst, uint64_t doff, gb_buffer *src, uint64_t soff, uint64_t n,
                 gb_err *e);

/* kernel.c */
int gb_cuda_kernel_load(gb_device *d, const gb_kernel_source *src, gb_kernel *k, gb_err *e);
void gb_cuda_kernel_free(gb_kernel *k);
int gb_cuda_kernel_stats(gb_kernel *k, const uint32_t block[3], gb_kernel_stat *out, int max, int *n,
                         gb_err *e);
int gb_cuda_compile_only(const gb_kernel_source *src, const char *target, gb_kind *params,
                         int *nparams, gb_kernel_traits *traits, char **log, gb_err *e);

/* launch.c */
int gb_cuda_launch(const gb_launch *l, gb_err *e);
int gb_cuda_batch_prepare(gb_batch *b, gb_err *e);
int gb_cuda_batch_submit(gb_batch *b, gb_err *e);
void gb_cuda_batch_free(gb_batch *b);

/* hold.c */
int gb_cuda_hold(gb_device *d, gb_err *e);
int gb_cuda_release(gb_device *d, gb_err *e);
void gb_cuda_hold_free(gb_device *d);
extern const char gb_cuda_flush_source[];

/* timer.c */
int gb_cuda_timer_create(gb_timer *t, gb_err *e);
int gb_cuda_timer_record(gb_timer *t, int which, gb_err *e);
int gb_cuda_timer_elapsed_ms(gb_timer *t, double *ms, gb_err *e);
void gb_cuda_timer_free(gb_timer *t);

#endif
#endif
