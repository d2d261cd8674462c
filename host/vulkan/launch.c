/* Vulkan launches and batches.
 *
 * Descriptor sets: a launch allocates its set from descriptor pools owned by
 * the stream segment it is recorded in, and the pools are reset wholesale when
 * that segment's fence signals (stream.c). VK_KHR_push_descriptor would
 * save the allocation, but its set layouts cannot back allocated sets, and
 * batches need allocated sets (recorded once, replayed many times); one layout
 * and one pipeline per kernel serve both paths this way, on every driver.
 *
 * A batch is Vulkan's graph: a command buffer recorded once with up to
 * GB_BATCH_CHUNK dispatches cycling through the batch's launches (a barrier
 * before each, so each sees the previous one's writes), submitted as many
 * times as the count needs (plus one of the rest) in one vkQueueSubmit by
 * every submit. graph=0 and graph=1 are therefore the same here. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_internal.h"

/* Buffers bound as storage buffers must fit the device's binding range. */
static int check_launch(vk_device *vd, const gb_launch *l, VkPipeline *pipe, gb_err *e)
{
    gb_kernel *k = l->kernel;
    for (int i = 0; i < l->nargs; i++) {
        if (l->args[i].kind != GB_ARG_BUFFER)
            continue;
        uint64_t size = l->args[i].v.buf->size;
        if (size > vd->limits.maxStorageBufferRange)
            return GB_FAIL(e, "launch failed: BUFFER_TOO_LARGE (kernel %s argument %d: a buffer of "
                              "%" PRIu64 " bytes exceeds the device's maxStorageBufferRange of "
                              "%u bytes)", k->label, i + 1, size,
                           vd->limits.maxStorageBufferRange);
    }
    return vk_kernel_pipeline(k, l->block, pipe, e);
}

/* Points the set's bindings 0..nbuffers-1 at the launch's buffers (which come
 * first in its arguments, by the gpubench convention). */
static void write_set(vk_device *vd, const gb_launch *l, VkDescriptorSet set)
{
    const vk_kernel *vk = l->kernel->impl;
    VkDescriptorBufferInfo bi[GB_MAX_PARAMS];
    VkWriteDescriptorSet w[GB_MAX_PARAMS];
    for (int i = 0; i < vk->refl.nbuffers; i++) {
        const vk_buffer *vb = l->args[i].v.buf->impl;
        bi[i] = (VkDescriptorBufferInfo){vb->buf, 0, VK_WHOLE_SIZE};
        w[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = set,
            .dstBinding = (uint32_t)i,
            .descriptorCount = 1,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = &bi[i],
        };
    }
    vd->f.vkUpdateDescriptorSets(vd->dev, (uint32_t)vk->refl.nbuffers, w, 0, NULL);
}

/* Binds what changed since the previous dispatch in cb, pushes the scalars, dispatches. */
static void record(vk_device *vd, VkCommandBuffer cb, const gb_launch *l, VkPipeline pipe,
                   VkDescriptorSet set, int bind)
{
    const vk_kernel *vk = l->kernel->impl;
    if (bind) {
        vd->f.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
        if (set)
            vd->f.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, vk->layout, 0, 1,
                                          &set, 0, NULL);
        if (vk->refl.push_size) {
            uint8_t push[VK_PUSH_MAX];
            memset(push, 0, vk->refl.push_size);
            for (int i = vk->refl.nbuffers; i < l->nargs; i++)
                memcpy(push + vk->refl.push_offset[i], &l->args[i].v,
                       gb_kind_size(l->args[i].kind));
            vd->f.vkCmdPushConstants(cb, vk->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                     vk->refl.push_size, push);
        }
    }
    vd->f.vkCmdDispatch(cb, l->grid[0], l->grid[1], l->grid[2]);
}

static void mark_used(const gb_launch *l, uint64_t serial)
{
    ((vk_kernel *)l->kernel->impl)->last_use = serial;
    for (int i = 0; i < l->nargs; i++)
        if (l->args[i].kind == GB_ARG_BUFFER)
            ((vk_buffer *)l->args[i].v.buf->impl)->last_use = serial;
}

int vk_launch(const gb_launch *l, gb_err *e)
{
    vk_device *vd = vk_dev(l->kernel->dev);
    const vk_kernel *vk = l->kernel->impl;
    VkPipeline pipe;
    if (check_launch(vd, l, &pipe, e) != 0)
        return -1;
    VkCommandBuffer cb;
    uint64_t serial;
    if (vk_stream_begin(vd, 1, &cb, &serial, e) != 0)
        return -1;
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (vk->refl.nbuffers) {
        if (vk_stream_alloc_set(vd, vk->set_layout, &set, e) != 0)
            return -1;
        write_set(vd, l, set);
    }
    record(vd, cb, l, pipe, set, 1);
    mark_used(l, serial);
    return vk_stream_end(vd, e);
}

/* ------------------------------------------------------------ batches */

static void destroy_batch(vk_device *vd, void *obj)
{
    vk_batch *vb = obj;
    if (vb->cb)
        vd->f.vkFreeCommandBuffers(vd->dev, vd->cmd_pool, 1, &vb->cb);
    if (vb->rest)
        vd->f.vkFreeCommandBuffers(vd->dev, vd->cmd_pool, 1, &vb->rest);
    if (vb->timed)
        vd->f.vkFreeCommandBuffers(vd->dev, vd->cmd_pool, 1, &vb->timed);
    free(vb->slots);
    free(vb->pipes);
    free(vb->sets);
    if (vb->pool)
        vd->f.vkDestroyDescriptorPool(vd->dev, vb->pool, NULL);
    free(vb);
}

/* One descriptor set per distinct launch, from a pool the batch owns. */
static int batch_sets(vk_device *vd, gb_batch *b, vk_batch *vb, VkDescriptorSet *sets,
                      gb_err *e)
{
    uint32_t nsets = 0, nbuf = 0;
    for (int i = 0; i < b->nlaunches; i++) {
        const vk_kernel *vk = b->launches[i].kernel->impl;
        sets[i] = VK_NULL_HANDLE;
        nsets += vk->refl.nbuffers > 0;
        nbuf += (uint32_t)vk->refl.nbuffers;
    }
    if (!nsets)
        return 0;
    VkDescriptorPoolSize sz = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, nbuf};
    VkDescriptorPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = nsets,
        .poolSizeCount = 1,
        .pPoolSizes = &sz,
    };
    VkResult r = vd->f.vkCreateDescriptorPool(vd->dev, &pci, NULL, &vb->pool);
    if (r != VK_SUCCESS) {
        vb->pool = VK_NULL_HANDLE;
        return VK_FAIL(e, "vkCreateDescriptorPool", r);
    }
    for (int i = 0; i < b->nlaunches; i++) {
        const vk_kernel *vk = b->launches[i].kernel->impl;
        if (!vk->refl.nbuffers)
            continue;
        VkDescriptorSetAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
            .descriptorPool = vb->pool,
            .descriptorSetCount = 1,
            .pSetLayouts = &vk->set_layout,
        };
        r = vd->f.vkAllocateDescriptorSets(vd->dev, &ai, &sets[i]);
        if (r != VK_SUCCESS)
            return VK_FAIL(e, "vkAllocateDescriptorSets", r);
        write_set(vd, &b->launches[i], sets[i]);
    }
    return 0;
}

/* Records `count` launches, cycling from the batch's first, into a new
 * command buffer *cb; with a timer's query pool `timed` (else VK_NULL_HANDLE)
 * between its reset and start and its stop, as vk_timer_record and the
 * timer's stop command buffer record them. */
static int record_cb(vk_device *vd, gb_batch *b, uint32_t count, const VkPipeline *pipes,
                     const VkDescriptorSet *sets, VkQueryPool timed, VkCommandBuffer *cb, gb_err *e)
{
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = vd->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VkResult r = vd->f.vkAllocateCommandBuffers(vd->dev, &ai, cb);
    if (r != VK_SUCCESS) {
        *cb = VK_NULL_HANDLE;
        return VK_FAIL(e, "vkAllocateCommandBuffers", r);
    }
    /* Simultaneous use: a batch may be submitted again before the previous
     * submission finished (submit does not wait), and one submission holds
     * the chunk several times. */
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
    };
    r = vd->f.vkBeginCommandBuffer(*cb, &bi);
    if (r != VK_SUCCESS)
        return VK_FAIL(e, "vkBeginCommandBuffer", r);
    if (timed != VK_NULL_HANDLE) {
        vd->f.vkCmdResetQueryPool(*cb, timed, 0, 2);
        vk_cmd_barrier(vd, *cb);
        vd->f.vkCmdWriteTimestamp(*cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timed, 0u);
    }
    for (uint32_t j = 0; j < count; j++) {
        int i = (int)(j % (uint32_t)b->nlaunches);
        /* The first barrier also orders the chunk after everything before it. */
        vk_cmd_barrier(vd, *cb);
        /* Bound state persists in a command buffer: with one launch, bind once. */
        int bind = j == 0 || b->nlaunches > 1;
        record(vd, *cb, &b->launches[i], pipes[i], sets[i], bind);
    }
    if (timed != VK_NULL_HANDLE)
        vk_cmd_timer_stop(vd, *cb, timed);
    r = vd->f.vkEndCommandBuffer(*cb);
    if (r != VK_SUCCESS)
        return VK_FAIL(e, "vkEndCommandBuffer", r);
    return 0;
}

/* The batch's command buffers: a chunk (gb_batch_chunk) and, when count is
 * not a multiple of it, the rest; the submission list repeats the chunk. */
static int batch_record(vk_device *vd, gb_batch *b, vk_batch *vb, const VkPipeline *pipes,
                        const VkDescriptorSet *sets, gb_err *e)
{
    uint32_t chunk = gb_batch_chunk(b->count, b->nlaunches);
    uint32_t full = b->count / chunk, rest = b->count % chunk;
    vb->ncbs = full + (rest ? 1 : 0);
    vb->slots = calloc(vb->ncbs + 2, sizeof *vb->slots);
    if (!vb->slots)
        return GB_FAIL(e, "batch failed: OUT_OF_HOST_MEMORY (%u command buffers of a %u-launch batch)",
                       vb->ncbs, b->count);
    vb->cbs = vb->slots + 1;
    if (record_cb(vd, b, chunk, pipes, sets, VK_NULL_HANDLE, &vb->cb, e) != 0)
        return -1;
    if (rest && record_cb(vd, b, rest, pipes, sets, VK_NULL_HANDLE, &vb->rest, e) != 0)
        return -1;
    for (uint32_t i = 0; i < full; i++)
        vb->cbs[i] = vb->cb;
    if (rest)
        vb->cbs[full] = vb->rest;
    return 0;
}

int vk_batch_prepare(gb_batch *b, gb_err *e)
{
    vk_device *vd = vk_dev(b->dev);
    VkPipeline pipes[GB_MAX_LAUNCHES];
    VkDescriptorSet sets[GB_MAX_LAUNCHES];
    if (b->nlaunches > GB_MAX_LAUNCHES)
        return GB_FAIL(e, "batch failed: TOO_MANY_LAUNCHES (%d distinct launches; at most %d)",
                       b->nlaunches, GB_MAX_LAUNCHES);
    for (int i = 0; i < b->nlaunches; i++)
        if (check_launch(vd, &b->launches[i], &pipes[i], e) != 0)
            return -1;
    vk_batch *vb = calloc(1, sizeof *vb);
    if (!vb)
        return GB_FAIL(e, "batch failed: OUT_OF_HOST_MEMORY (batch record)");
    if (batch_sets(vd, b, vb, sets, e) != 0 || batch_record(vd, b, vb, pipes, sets, e) != 0) {
        destroy_batch(vd, vb);
        return -1;
    }
    /* kept for the timed command buffer (vk_timed_batch_submit) */
    vb->pipes = malloc((size_t)b->nlaunches * sizeof *vb->pipes);
    vb->sets = malloc((size_t)b->nlaunches * sizeof *vb->sets);
    if (!vb->pipes || !vb->sets) {
        destroy_batch(vd, vb);
        return GB_FAIL(e, "batch failed: OUT_OF_HOST_MEMORY (batch record)");
    }
    memcpy(vb->pipes, pipes, (size_t)b->nlaunches * sizeof *vb->pipes);
    memcpy(vb->sets, sets, (size_t)b->nlaunches * sizeof *vb->sets);
    b->impl = vb;
    return 0;
}

static void mark_batch_used(gb_batch *b, uint64_t serial)
{
    ((vk_batch *)b->impl)->last_use = serial;
    for (int i = 0; i < b->nlaunches; i++)
        mark_used(&b->launches[i], serial);
}

int vk_batch_submit(gb_batch *b, gb_err *e)
{
    vk_batch *vb = b->impl;
    uint64_t serial;
    if (vk_stream_submit_cbs(vk_dev(b->dev), vb->cbs, vb->ncbs, &serial, e) != 0)
        return -1;
    mark_batch_used(b, serial);
    return 0;
}

static void free_cb(vk_device *vd, void *obj)
{
    VkCommandBuffer *cb = obj;
    vd->f.vkFreeCommandBuffers(vd->dev, vd->cmd_pool, 1, cb);
    free(cb);
}

/* A batch of one command buffer: the timer's reset, start, the launches and
 * the stop in one command buffer of their own (recorded for this timer on
 * first use), submitted with the open segment (a hold's wait, the flush): no
 * command-buffer boundary inside the timed interval, where NVIDIA's driver
 * timed each boundary with the batch (docs/results/h200-linear.md, "One
 * recording"). */
static int timed_one_cb(vk_device *vd, gb_batch *b, vk_batch *vb, vk_timer *vt, gb_err *e)
{
    if (vb->timed && vb->timed_for != vt->id) {
        VkCommandBuffer *old = malloc(sizeof *old);
        if (!old)
            return GB_FAIL(e, "batch failed: OUT_OF_HOST_MEMORY (a timed command buffer's release)");
        *old = vb->timed;
        vk_defer(vd, vb->last_use, free_cb, old);
        vb->timed = VK_NULL_HANDLE;
    }
    if (!vb->timed) {
        if (record_cb(vd, b, b->count, vb->pipes, vb->sets, vt->pool, &vb->timed, e) != 0) {
            if (vb->timed)
                vd->f.vkFreeCommandBuffers(vd->dev, vd->cmd_pool, 1, &vb->timed);
            vb->timed = VK_NULL_HANDLE;
            return -1;
        }
        vb->timed_for = vt->id;
    }
    VkCommandBuffer list[2] = {VK_NULL_HANDLE, vb->timed};
    uint64_t serial;
    int rc = vd->open ? vk_stream_submit_open_with(vd, list, 2, &serial, e)
                      : vk_stream_submit_cbs(vd, list + 1, 1, &serial, e);
    if (rc != 0)
        return -1;
    mark_batch_used(b, serial);
    vt->last_use = vt->stop_serial = serial;
    return 0;
}

/* The timer's start (recorded into the open segment, behind whatever was
 * queued before: a hold's wait, the flush), the batch's command buffers and
 * the timer's stop command buffer as one vkQueueSubmit: a submission boundary
 * inside the timed interval would be timed with the batch. A batch of one
 * command buffer takes timed_one_cb instead. */
int vk_timed_batch_submit(gb_batch *b, gb_timer *t, gb_err *e)
{
    vk_device *vd = vk_dev(b->dev);
    vk_batch *vb = b->impl;
    vk_timer *vt = t->impl;
    if (vb->ncbs == 1)
        return timed_one_cb(vd, b, vb, vt, e);
    if (vk_timer_record(t, 0, e) != 0)
        return -1;
    vb->cbs[vb->ncbs] = vt->stop_cb;
    uint64_t serial;
    /* vk_timer_record leaves the segment open unless it filled it: then the
     * start went out alone, and the stop follows the batch as before */
    int rc = vd->open ? vk_stream_submit_open_with(vd, vb->slots, vb->ncbs + 2, &serial, e)
                      : vk_stream_submit_cbs(vd, vb->cbs, vb->ncbs + 1, &serial, e);
    if (rc != 0)
        return -1;
    mark_batch_used(b, serial);
    vt->last_use = vt->stop_serial = serial;
    return 0;
}

void vk_batch_free(gb_batch *b)
{
    vk_batch *vb = b->impl;
    b->impl = NULL;
    if (vb)
        vk_defer(vk_dev(b->dev), vb->last_use, destroy_batch, vb);
}
