/* The in-order stream of a Vulkan device.
 *
 * Every operation appends to one open command buffer (a "segment"), after a
 * global memory barrier, so the device behaves like a CUDA stream: each
 * command sees the writes of everything recorded or submitted before it (a
 * barrier's first scope covers earlier submissions on the queue too). A
 * segment is submitted when the host has to wait (sync, download, timer read)
 * or when it holds VK_SEGMENT_MAX_CMDS commands; then the GPU starts without
 * the host waiting.
 *
 * Each submission has a serial number and a fence. Objects remember the
 * serial of the last command that used them; freeing one whose serial has not
 * completed defers the destruction until its fence signals (vk_defer), so a
 * free never stalls the stream and never destroys what the GPU still reads.
 * Command buffers, fences and descriptor pools are recycled once their
 * submission completes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_internal.h"

/* Descriptor pools serve launches' sets: enough for a full segment of
 * 8-buffer launches; a segment chains more pools if it needs them. */
enum { POOL_SETS = 128, POOL_BUFFERS = POOL_SETS * 8 };

void vk_cmd_barrier(vk_device *vd, VkCommandBuffer cb)
{
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                         VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
    };
    VkPipelineStageFlags stages =
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vd->f.vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* ------------------------------------------------------------ recycling */

static int push_pool(VkDescriptorPool **arr, int *n, int *cap, VkDescriptorPool p)
{
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 4;
        VkDescriptorPool *q = realloc(*arr, (size_t)c * sizeof *q);
        if (!q)
            return -1;
        *arr = q;
        *cap = c;
    }
    (*arr)[(*n)++] = p;
    return 0;
}

/* Destroys (in order) the deferred objects whose serial has completed. */
static void run_deferred(vk_device *vd)
{
    int keep = 0;
    for (int i = 0; i < vd->ndeferred; i++) {
        vk_deferred d = vd->deferred[i];
        if (d.serial <= vd->done_serial)
            d.fn(vd, d.obj);
        else
            vd->deferred[keep++] = d;
    }
    vd->ndeferred = keep;
}

static void free_segment(vk_device *vd, vk_segment *s);

/* A completed (or never submitted) segment: its fence, pools and command
 * buffer become reusable. */
static void recycle(vk_device *vd, vk_segment *s)
{
    if (vd->f.vkResetFences(vd->dev, 1, &s->fence) != VK_SUCCESS) {
        free_segment(vd, s); /* a fence left signaled must not be submitted again */
        return;
    }
    for (int i = 0; i < s->npools; i++) {
        (void)vd->f.vkResetDescriptorPool(vd->dev, s->pools[i], 0); /* only VK_SUCCESS */
        if (push_pool(&vd->free_pools, &vd->nfree_pools, &vd->cap_free_pools, s->pools[i]))
            vd->f.vkDestroyDescriptorPool(vd->dev, s->pools[i], NULL);
    }
    s->npools = 0;
    s->ncmds = 0;
    s->next = vd->free_segs;
    vd->free_segs = s;
}

/* Removes the oldest submission; when it completed, every serial up to its
 * own has (a fence covers all earlier work on the queue). */
static vk_segment *pop_inflight(vk_device *vd, int completed)
{
    vk_segment *s = vd->inflight;
    if (completed && s->serial > vd->done_serial)
        vd->done_serial = s->serial;
    vd->inflight = s->next;
    if (!vd->inflight)
        vd->inflight_tail = NULL;
    vd->ninflight--;
    return s;
}

/* A failed fence call: a lost device can do nothing more. */
static int fence_failed(vk_device *vd, const char *call, VkResult r, const char *what, gb_err *e)
{
    VK_FAILX(e, call, r, "waiting for %s", what);
    if (r == VK_ERROR_DEVICE_LOST)
        gb_device_break(vd->owner, e->msg);
    return -1;
}

/* Recycles submitted segments that have completed, oldest first, without waiting. */
static int poll(vk_device *vd, gb_err *e)
{
    while (vd->inflight) {
        VkResult r = vd->f.vkGetFenceStatus(vd->dev, vd->inflight->fence);
        if (r == VK_NOT_READY)
            break;
        if (r != VK_SUCCESS)
            return fence_failed(vd, "vkGetFenceStatus", r, "a submission's fence", e);
        recycle(vd, pop_inflight(vd, 1));
    }
    run_deferred(vd);
    return 0;
}

static int wait_oldest(vk_device *vd, const char *what, gb_err *e)
{
    double limit;
    if (gb_wait_limit(&limit, e) != 0)
        return -1;
    uint64_t ns = limit > 0 ? (uint64_t)(limit * 1e9) : UINT64_MAX;
    VkResult r = vd->f.vkWaitForFences(vd->dev, 1, &vd->inflight->fence, VK_TRUE, ns);
    if (r == VK_TIMEOUT)
        return gb_wait_timed_out(vd->owner, "vkWaitForFences", what, limit, e);
    if (r != VK_SUCCESS)
        return fence_failed(vd, "vkWaitForFences", r, what, e);
    recycle(vd, pop_inflight(vd, 1));
    return 0;
}

/* A segment ready to record or submit; bounds how much is queued ahead. */
static int take_segment(vk_device *vd, int need_cb, vk_segment **out, gb_err *e)
{
    if (poll(vd, e) != 0)
        return -1;
    while (vd->ninflight >= VK_MAX_INFLIGHT)
        if (wait_oldest(vd, "room among the submissions in flight", e) != 0)
            return -1;
    vk_segment *s = vd->free_segs;
    if (s) {
        vd->free_segs = s->next;
    } else {
        s = calloc(1, sizeof *s);
        if (!s)
            return GB_FAIL(e, "vulkan stream failed: OUT_OF_HOST_MEMORY (a submission record)");
        VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        VkResult r = vd->f.vkCreateFence(vd->dev, &fci, NULL, &s->fence);
        if (r != VK_SUCCESS) {
            free(s);
            return VK_FAIL(e, "vkCreateFence", r);
        }
    }
    s->next = NULL;
    if (need_cb && !s->cb) {
        VkCommandBufferAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
            .commandPool = vd->cmd_pool,
            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
            .commandBufferCount = 1,
        };
        VkResult r = vd->f.vkAllocateCommandBuffers(vd->dev, &ai, &s->cb);
        if (r != VK_SUCCESS) {
            s->cb = VK_NULL_HANDLE;
            s->next = vd->free_segs;
            vd->free_segs = s;
            return VK_FAIL(e, "vkAllocateCommandBuffers", r);
        }
    }
    *out = s;
    return 0;
}

/* ------------------------------------------------------------ commands */

int vk_stream_begin(vk_device *vd, int barrier, VkCommandBuffer *cb, uint64_t *serial, gb_err *e)
{
    if (!vd->open) {
        vk_segment *s;
        if (take_segment(vd, 1, &s, e) != 0)
            return -1;
        VkCommandBufferBeginInfo bi = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
            .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
        };
        VkResult r = vd->f.vkBeginCommandBuffer(s->cb, &bi); /* resets it (pool flag) */
        if (r != VK_SUCCESS) {
            s->next = vd->free_segs;
            vd->free_segs = s;
            return VK_FAIL(e, "vkBeginCommandBuffer", r);
        }
        s->serial = ++vd->last_serial;
        vd->open = s;
    }
    if (barrier)
        vk_cmd_barrier(vd, vd->open->cb);
    vd->open->ncmds++;
    *cb = vd->open->cb;
    if (serial)
        *serial = vd->open->serial;
    return 0;
}

int vk_stream_end(vk_device *vd, gb_err *e)
{
    if (vd->open && vd->open->ncmds >= VK_SEGMENT_MAX_CMDS)
        return vk_stream_flush(vd, e);
    return 0;
}

int vk_stream_alloc_set(vk_device *vd, VkDescriptorSetLayout layout, VkDescriptorSet *set,
                        gb_err *e)
{
    vk_segment *s = vd->open;
    if (!s)
        return GB_FAIL(e, "vkAllocateDescriptorSets failed: NO_OPEN_COMMAND (internal: no "
                          "command begun)");
    VkDescriptorSetAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorSetCount = 1,
        .pSetLayouts = &layout,
    };
    if (s->npools) {
        ai.descriptorPool = s->pools[s->npools - 1];
        VkResult r = vd->f.vkAllocateDescriptorSets(vd->dev, &ai, set);
        if (r == VK_SUCCESS)
            return 0;
        if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
            return VK_FAIL(e, "vkAllocateDescriptorSets", r);
    }
    /* The current pool is full (or there is none): chain a fresh one. A set
     * has at most GB_MAX_PARAMS buffers, so it always fits a fresh pool. */
    VkDescriptorPool pool;
    if (vd->nfree_pools) {
        pool = vd->free_pools[--vd->nfree_pools];
    } else {
        VkDescriptorPoolSize sz = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, POOL_BUFFERS};
        VkDescriptorPoolCreateInfo pci = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
            .maxSets = POOL_SETS,
            .poolSizeCount = 1,
            .pPoolSizes = &sz,
        };
        VkResult r = vd->f.vkCreateDescriptorPool(vd->dev, &pci, NULL, &pool);
        if (r != VK_SUCCESS)
            return VK_FAIL(e, "vkCreateDescriptorPool", r);
    }
    if (push_pool(&s->pools, &s->npools, &s->cap_pools, pool) != 0) {
        vd->f.vkDestroyDescriptorPool(vd->dev, pool, NULL);
        return GB_FAIL(e, "vkCreateDescriptorPool failed: OUT_OF_HOST_MEMORY (pool list)");
    }
    ai.descriptorPool = pool;
    VkResult r = vd->f.vkAllocateDescriptorSets(vd->dev, &ai, set);
    if (r != VK_SUCCESS)
        return VK_FAIL(e, "vkAllocateDescriptorSets", r);
    return 0;
}

/* ------------------------------------------------------------ submission */

static void enqueue(vk_device *vd, vk_segment *s)
{
    s->next = NULL;
    if (vd->inflight_tail)
        vd->inflight_tail->next = s;
    else
        vd->inflight = s;
    vd->inflight_tail = s;
    vd->ninflight++;
}

static int submit(vk_device *vd, vk_segment *s, const VkCommandBuffer *cbs, uint32_t n, gb_err *e)
{
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = n,
        .pCommandBuffers = cbs,
    };
    VkResult r = vd->f.vkQueueSubmit(vd->queue, 1, &si, s->fence);
    if (r != VK_SUCCESS) {
        /* Nothing of it will run; its resources are free again. */
        recycle(vd, s);
        return VK_FAIL(e, "vkQueueSubmit", r);
    }
    enqueue(vd, s);
    return 0;
}

int vk_stream_flush(vk_device *vd, gb_err *e)
{
    vk_segment *s = vd->open;
    if (!s)
        return 0;
    vd->open = NULL;
    VkResult r = vd->f.vkEndCommandBuffer(s->cb);
    if (r != VK_SUCCESS) {
        recycle(vd, s);
        return VK_FAIL(e, "vkEndCommandBuffer", r);
    }
    return submit(vd, s, &s->cb, 1, e);
}

int vk_stream_submit_open_with(vk_device *vd, VkCommandBuffer *list, uint32_t n, uint64_t *serial,
                               gb_err *e)
{
    vk_segment *s = vd->open;
    if (!s)
        return GB_FAIL(e, "vkQueueSubmit failed: NO_OPEN_COMMAND (internal: nothing recorded before the "
                          "command buffers submitted after it)");
    vd->open = NULL;
    VkResult r = vd->f.vkEndCommandBuffer(s->cb);
    if (r != VK_SUCCESS) {
        recycle(vd, s);
        return VK_FAIL(e, "vkEndCommandBuffer", r);
    }
    list[0] = s->cb;
    if (submit(vd, s, list, n, e) != 0)
        return -1;
    *serial = s->serial;
    return 0;
}

int vk_stream_submit_cbs(vk_device *vd, const VkCommandBuffer *cbs, uint32_t n, uint64_t *serial,
                         gb_err *e)
{
    if (vk_stream_flush(vd, e) != 0)
        return -1;
    vk_segment *s;
    if (take_segment(vd, 0, &s, e) != 0)
        return -1;
    s->serial = ++vd->last_serial;
    if (submit(vd, s, cbs, n, e) != 0)
        return -1;
    *serial = s->serial;
    return 0;
}

int vk_stream_wait(vk_device *vd, uint64_t serial, const char *what, gb_err *e)
{
    if (vd->open && vd->open->serial <= serial && vk_stream_flush(vd, e) != 0)
        return -1;
    while (vd->inflight && vd->inflight->serial <= serial)
        if (wait_oldest(vd, what, e) != 0)
            return -1;
    /* Anything <= serial not in flight has completed or was never submitted. */
    if (serial > vd->done_serial)
        vd->done_serial = serial;
    run_deferred(vd);
    return 0;
}

int vk_stream_wait_all(vk_device *vd, const char *what, gb_err *e)
{
    return vk_stream_wait(vd, vd->last_serial, what, e);
}

/* ------------------------------------------------------------ destruction */

void vk_defer(vk_device *vd, uint64_t serial, vk_destroy_fn fn, void *obj)
{
    if (serial <= vd->done_serial) {
        fn(vd, obj);
        return;
    }
    if (vd->ndeferred == vd->cap_deferred) {
        int c = vd->cap_deferred ? vd->cap_deferred * 2 : 16;
        vk_deferred *p = realloc(vd->deferred, (size_t)c * sizeof *p);
        if (!p) { /* no memory to remember it: wait, then destroy now */
            gb_err tmp = {0};
            vk_stream_wait(vd, serial, "an object's last use before it is destroyed", &tmp);
            gb_err_clear(&tmp);
            fn(vd, obj);
            return;
        }
        vd->deferred = p;
        vd->cap_deferred = c;
    }
    vd->deferred[vd->ndeferred++] = (vk_deferred){serial, fn, obj};
    /* When obj is used by the segment still being recorded, submit it so the
     * fence that frees obj comes soon; a failure here resurfaces at the next
     * wait. */
    if (vd->open && serial >= vd->open->serial) {
        gb_err tmp = {0};
        vk_stream_flush(vd, &tmp);
        gb_err_clear(&tmp);
    }
}

static void free_segment(vk_device *vd, vk_segment *s)
{
    for (int i = 0; i < s->npools; i++)
        vd->f.vkDestroyDescriptorPool(vd->dev, s->pools[i], NULL);
    free(s->pools);
    if (s->cb)
        vd->f.vkFreeCommandBuffers(vd->dev, vd->cmd_pool, 1, &s->cb);
    vd->f.vkDestroyFence(vd->dev, s->fence, NULL);
    free(s);
}

void vk_stream_shutdown(vk_device *vd)
{
    gb_err tmp = {0};
    vk_stream_wait_all(vd, "the device's work to finish before it closes", &tmp);
    if (tmp.msg && vd->owner && vd->owner->broken) /* the work never finished: leave it be */
        fprintf(stderr, "gpubench: warning: closing a vulkan device: %s\n", tmp.msg);
    gb_err_clear(&tmp);
    if (vd->owner && vd->owner->broken)
        return;
    vd->done_serial = UINT64_MAX;
    run_deferred(vd);
    free(vd->deferred);
    vd->deferred = NULL;
    vd->ndeferred = vd->cap_deferred = 0;
    while (vd->inflight)
        free_segment(vd, pop_inflight(vd, 0));
    while (vd->free_segs) {
        vk_segment *s = vd->free_segs;
        vd->free_segs = s->next;
        free_segment(vd, s);
    }
    for (int i = 0; i < vd->nfree_pools; i++)
        vd->f.vkDestroyDescriptorPool(vd->dev, vd->free_pools[i], NULL);
    free(vd->free_pools);
    vd->free_pools = NULL;
    vd->nfree_pools = vd->cap_free_pools = 0;
}
