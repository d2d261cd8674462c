/* CUDA timers: a pair of events recorded on the device's stream. */
#define _POSIX_C_SOURCE 200809L
#include "cuda_internal.h"

#if GPUBENCH_HAVE_CUDA_HEADERS
#include <stdio.h>
#include <stdlib.h>

static void destroy_events(cuda_timer *ct) {
    gb_err e = {0};
    for (int i = 0; i < 2; i++)
        if (ct->ev[i]) CU(&e, EventDestroy, (ct->ev[i]));
    if (e.msg) fprintf(stderr, "gpubench: warning: destroying a cuda timer: %s\n", e.msg);
    gb_err_clear(&e);
}

int gb_cuda_timer_create(gb_timer *t, gb_err *e) {
    cuda_timer *ct = calloc(1, sizeof *ct);
    if (!ct) return GB_FAIL(e, "out of host memory creating a timer");
    /* Default flags: CU_EVENT_DISABLE_TIMING would make elapsed time unavailable,
     * and blocking sync would trade latency for CPU time while waiting. */
    if (gb_cuda_current(t->dev, e) || CU(e, EventCreate, (&ct->ev[0], CU_EVENT_DEFAULT)) ||
        CU(e, EventCreate, (&ct->ev[1], CU_EVENT_DEFAULT))) {
        destroy_events(ct);
        free(ct);
        return -1;
    }
    t->impl = ct;
    return 0;
}

int gb_cuda_timer_record(gb_timer *t, int which, gb_err *e) {
    cuda_timer *ct = t->impl;
    if (which != 0 && which != 1) return GB_FAIL(e, "timer record: %d is neither start (0) nor stop (1)", which);
    if (gb_cuda_current(t->dev, e)) return -1;
    return CU(e, EventRecord, (ct->ev[which], cuda_dev_of(t->dev)->stream));
}

int gb_cuda_timer_elapsed_ms(gb_timer *t, double *ms, gb_err *e) {
    cuda_timer *ct = t->impl;
    float f = 0;
    if (gb_cuda_wait_event(t->dev, ct->ev[1], "a timer's stop event", e) ||
        CU(e, EventElapsedTime, (&f, ct->ev[0], ct->ev[1])))
        return -1;
    *ms = f;
    return 0;
}

void gb_cuda_timer_free(gb_timer *t) {
    cuda_timer *ct = t->impl;
    if (!ct) return;
    gb_err e = {0};
    if (!t->dev->broken && gb_cuda_current(t->dev, &e) == 0) destroy_events(ct);
    if (e.msg) fprintf(stderr, "gpubench: warning: destroying a cuda timer: %s\n", e.msg);
    gb_err_clear(&e);
    free(ct);
    t->impl = NULL;
}

#endif
