/* Vulkan timers (timestamp queries) and profiler ranges (debug-utils labels). */
#include <stdlib.h>

#include "vulkan_internal.h"

/* A timer's stop as every path records it: the stream barrier, then query 1
 * (the timer's stop command buffer, a timed batch's own: launch.c). */
void vk_cmd_timer_stop(vk_device *vd, VkCommandBuffer cb, VkQueryPool pool)
{
    vk_cmd_barrier(vd, cb);
    vd->f.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 1u);
}

int vk_timer_create(gb_timer *t, gb_err *e)
{
    vk_device *vd = vk_dev(t->dev);
    if (vd->timestamp_bits == 0)
        return GB_FAIL(e, "timer failed: TIMESTAMPS_UNSUPPORTED (queue family %u of %s has "
                          "timestampValidBits = 0)", vd->qfamily, t->dev->info.name);
    vk_timer *vt = calloc(1, sizeof *vt);
    if (!vt)
        return GB_FAIL(e, "timer failed: OUT_OF_HOST_MEMORY (timer record)");
    static uint64_t next_id;
    vt->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    VkQueryPoolCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = 2,
    };
    VkResult r = vd->f.vkCreateQueryPool(vd->dev, &ci, NULL, &vt->pool);
    if (r != VK_SUCCESS) {
        free(vt);
        return VK_FAIL(e, "vkCreateQueryPool", r);
    }
    /* The stop of a timed batch submit (vk_timed_batch_submit): the stream
     * barrier, then query 1, as vk_timer_record(t, 1) records it, in a
     * command buffer of its own that rides in the batch's submission. */
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = vd->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    r = vd->f.vkAllocateCommandBuffers(vd->dev, &ai, &vt->stop_cb);
    if (r == VK_SUCCESS) {
        VkCommandBufferBeginInfo bi = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
            .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
        };
        r = vd->f.vkBeginCommandBuffer(vt->stop_cb, &bi);
        if (r == VK_SUCCESS) {
            vk_cmd_timer_stop(vd, vt->stop_cb, vt->pool);
            r = vd->f.vkEndCommandBuffer(vt->stop_cb);
        }
        if (r != VK_SUCCESS)
            vd->f.vkFreeCommandBuffers(vd->dev, vd->cmd_pool, 1, &vt->stop_cb);
    }
    if (r != VK_SUCCESS) {
        vd->f.vkDestroyQueryPool(vd->dev, vt->pool, NULL);
        free(vt);
        return VK_FAIL(e, "recording a timer's stop command buffer", r);
    }
    t->impl = vt;
    return 0;
}

/* Query 0 is the start, query 1 the stop. Both are written at BOTTOM_OF_PIPE
 * after the stream barrier, i.e. once all earlier work has completed; the
 * work after a start waits on its own barrier, so it cannot begin earlier. */
int vk_timer_record(gb_timer *t, int which, gb_err *e)
{
    vk_device *vd = vk_dev(t->dev);
    vk_timer *vt = t->impl;
    VkCommandBuffer cb;
    uint64_t serial;
    if (vk_stream_begin(vd, 1, &cb, &serial, e) != 0)
        return -1;
    if (which == 0) /* queries must be reset before they are written again */
        vd->f.vkCmdResetQueryPool(cb, vt->pool, 0, 2);
    vd->f.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, vt->pool,
                              which ? 1u : 0u);
    vt->last_use = serial;
    if (which)
        vt->stop_serial = serial;
    return vk_stream_end(vd, e);
}

int vk_timer_elapsed_ms(gb_timer *t, double *ms, gb_err *e)
{
    vk_device *vd = vk_dev(t->dev);
    vk_timer *vt = t->impl;
    /* Submits the stop if it is still being recorded and waits for it (not for later work). */
    if (vk_stream_wait(vd, vt->stop_serial, "a timer's stop timestamp", e) != 0)
        return -1;
    uint64_t ts[2];
    VkResult r = vd->f.vkGetQueryPoolResults(vd->dev, vt->pool, 0, 2, sizeof ts, ts,
                                             sizeof ts[0],
                                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS)
        return VK_FAIL(e, "vkGetQueryPoolResults", r);
    uint32_t bits = vd->timestamp_bits;
    uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    uint64_t t0 = ts[0] & mask, t1 = ts[1] & mask;
    if (bits >= 64 && t1 < t0)
        return GB_FAIL(e, "timer failed: TIMESTAMPS_OUT_OF_ORDER (stop %llu < start %llu ticks)",
                       (unsigned long long)t1, (unsigned long long)t0);
    uint64_t ticks = (t1 - t0) & mask; /* modulo 2^bits: one wrap-around is harmless */
    *ms = (double)ticks * (double)vd->limits.timestampPeriod * 1e-6;
    return 0;
}

static void destroy_timer(vk_device *vd, void *obj)
{
    vk_timer *vt = obj;
    vd->f.vkFreeCommandBuffers(vd->dev, vd->cmd_pool, 1, &vt->stop_cb);
    vd->f.vkDestroyQueryPool(vd->dev, vt->pool, NULL);
    free(vt);
}

void vk_timer_free(gb_timer *t)
{
    vk_timer *vt = t->impl;
    t->impl = NULL;
    if (vt)
        vk_defer(vk_dev(t->dev), vt->last_use, destroy_timer, vt);
}

/* A debug-utils label region in stream order, visible in RenderDoc / Nsight.
 * A queue label, not a command-buffer label: a range outlives the command
 * buffer it began in whenever the stream submits in between (a sync, a
 * download), and a command-buffer end without a begin in the same buffer
 * crashed lavapipe. The open segment is submitted first, so the label falls
 * between the work before and after it. Without VK_EXT_debug_utils it does
 * nothing (the pairing is checked in host/core/backend.c either way). */
int vk_profiler_range(gb_device *d, const char *name, int begin, gb_err *e)
{
    vk_device *vd = vk_dev(d);
    if (!vd->queue_begin_label || !vd->queue_end_label)
        return 0;
    if (vk_stream_flush(vd, e) != 0)
        return -1;
    if (begin) {
        VkDebugUtilsLabelEXT label = {
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
            .pLabelName = name ? name : "gpubench",
        };
        vd->queue_begin_label(vd->queue, &label);
    } else {
        vd->queue_end_label(vd->queue);
    }
    return 0;
}
