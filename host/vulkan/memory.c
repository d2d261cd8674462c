/* Vulkan buffers: device-local allocations, staged upload/download, fill, copy.
 *
 * Every buffer has its own VkDeviceMemory: benchmarks allocate few, large
 * buffers, and a dedicated allocation keeps offsets and alignment trivially
 * right. upload/download go through one host-visible staging buffer per
 * device (at most STAGING_MAX bytes, reused chunk after chunk) and wait for
 * each chunk, which makes them synchronous with respect to earlier work. */
#include <inttypes.h>
#include <string.h>
#include <stdlib.h>

#include "vulkan_internal.h"

enum { STAGING_MIN = 1u << 20 };
#define STAGING_MAX (64ull << 20)

static int alloc_memory(vk_device *vd, VkMemoryRequirements *req, VkMemoryPropertyFlags want,
                        VkMemoryPropertyFlags avoid, VkDeviceMemory *mem, int *type_out,
                        gb_err *e)
{
    int type = vk_find_memory_type(vd, req->memoryTypeBits, want, avoid);
    if (type < 0)
        type = vk_find_memory_type(vd, req->memoryTypeBits, want, 0);
    if (type < 0)
        return GB_FAIL(e, "vkAllocateMemory failed: NO_MEMORY_TYPE (no memory type with "
                          "properties 0x%x for a %" PRIu64 "-byte buffer)", (unsigned)want,
                       (uint64_t)req->size);
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req->size,
        .memoryTypeIndex = (uint32_t)type,
    };
    VkResult r = vd->f.vkAllocateMemory(vd->dev, &ai, NULL, mem);
    if ((r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) &&
        vd->ndeferred) {
        /* Freed buffers may still wait for the GPU: let them go, then retry. */
        gb_err tmp = {0};
        vk_stream_wait_all(vd, "freed buffers' last uses, to reuse their memory", &tmp);
        gb_err_clear(&tmp);
        r = vd->f.vkAllocateMemory(vd->dev, &ai, NULL, mem);
    }
    if (r != VK_SUCCESS) {
        *mem = VK_NULL_HANDLE;
        return VK_FAILX(e, "vkAllocateMemory", r, "%" PRIu64 " bytes", (uint64_t)req->size);
    }
    if (type_out)
        *type_out = type;
    return 0;
}

/* A VkBuffer with its own memory bound. */
static int make_buffer(vk_device *vd, uint64_t size, VkBufferUsageFlags usage,
                       VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid, VkBuffer *buf,
                       VkDeviceMemory *mem, int *type, gb_err *e)
{
    VkBufferCreateInfo bci = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkResult r = vd->f.vkCreateBuffer(vd->dev, &bci, NULL, buf);
    if (r != VK_SUCCESS) {
        *buf = VK_NULL_HANDLE;
        return VK_FAILX(e, "vkCreateBuffer", r, "%" PRIu64 " bytes", size);
    }
    VkMemoryRequirements req;
    vd->f.vkGetBufferMemoryRequirements(vd->dev, *buf, &req);
    if (alloc_memory(vd, &req, want, avoid, mem, type, e) != 0)
        goto fail;
    r = vd->f.vkBindBufferMemory(vd->dev, *buf, *mem, 0);
    if (r != VK_SUCCESS) {
        VK_FAIL(e, "vkBindBufferMemory", r);
        vd->f.vkFreeMemory(vd->dev, *mem, NULL);
        goto fail;
    }
    return 0;
fail:
    vd->f.vkDestroyBuffer(vd->dev, *buf, NULL);
    *buf = VK_NULL_HANDLE;
    *mem = VK_NULL_HANDLE;
    return -1;
}

/* ------------------------------------------------------------ buffers */

int vk_buffer_alloc(gb_buffer *b, gb_err *e)
{
    vk_device *vd = vk_dev(b->dev);
    if (vd->max_alloc && b->size > vd->max_alloc)
        return GB_FAIL(e, "vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (%" PRIu64
                          " bytes exceed the device's maxMemoryAllocationSize of %" PRIu64 ")",
                       b->size, vd->max_alloc);
    vk_buffer *vb = calloc(1, sizeof *vb);
    if (!vb)
        return GB_FAIL(e, "vulkan buffer failed: OUT_OF_HOST_MEMORY (buffer record)");
    /* Device-local memory; avoid the host-visible (BAR) variant when a plain one exists. */
    if (make_buffer(vd, b->size,
                    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                        VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                    VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                    &vb->buf, &vb->mem, NULL, e) != 0) {
        free(vb);
        return -1;
    }
    b->impl = vb;
    return 0;
}

static void destroy_buffer(vk_device *vd, void *obj)
{
    vk_buffer *vb = obj;
    vd->f.vkDestroyBuffer(vd->dev, vb->buf, NULL);
    vd->f.vkFreeMemory(vd->dev, vb->mem, NULL);
    free(vb);
}

void vk_buffer_free(gb_buffer *b)
{
    vk_buffer *vb = b->impl;
    b->impl = NULL;
    if (vb)
        vk_defer(vk_dev(b->dev), vb->last_use, destroy_buffer, vb);
}

/* ------------------------------------------------------------ staging */

void vk_staging_free(vk_device *vd)
{
    if (!vd->staging)
        return;
    vd->f.vkUnmapMemory(vd->dev, vd->staging_mem);
    vd->f.vkDestroyBuffer(vd->dev, vd->staging, NULL);
    vd->f.vkFreeMemory(vd->dev, vd->staging_mem, NULL);
    vd->staging = VK_NULL_HANDLE;
    vd->staging_mem = VK_NULL_HANDLE;
    vd->staging_map = NULL;
    vd->staging_size = 0;
}

/* A staging buffer of at least min(n, STAGING_MAX) bytes. It is idle here:
 * every user waits for its copy before returning. */
static int staging(vk_device *vd, uint64_t n, gb_err *e)
{
    uint64_t want = n < STAGING_MIN ? STAGING_MIN : n > STAGING_MAX ? STAGING_MAX : n;
    if (vd->staging_size >= want)
        return 0;
    vk_staging_free(vd);
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkMemoryPropertyFlags vis = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    VkMemoryPropertyFlags coh = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryPropertyFlags cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    /* Cached memory makes downloads fast (uncached reads crawl); coherent
     * spares the flush/invalidate calls. Fall back step by step. */
    int type = -1;
    gb_err tmp = {0};
    int rc = make_buffer(vd, want, usage, vis | coh | cached, 0, &vd->staging, &vd->staging_mem,
                         &type, &tmp);
    if (rc != 0) {
        gb_err_clear(&tmp);
        rc = make_buffer(vd, want, usage, vis, 0, &vd->staging, &vd->staging_mem, &type, e);
    }
    gb_err_clear(&tmp);
    if (rc != 0)
        return -1;
    VkResult r = vd->f.vkMapMemory(vd->dev, vd->staging_mem, 0, VK_WHOLE_SIZE, 0,
                                   &vd->staging_map);
    if (r != VK_SUCCESS) {
        vd->f.vkDestroyBuffer(vd->dev, vd->staging, NULL);
        vd->f.vkFreeMemory(vd->dev, vd->staging_mem, NULL);
        vd->staging = VK_NULL_HANDLE;
        vd->staging_mem = VK_NULL_HANDLE;
        return VK_FAIL(e, "vkMapMemory", r);
    }
    vd->staging_size = want;
    vd->staging_coherent = (vd->mem.memoryTypes[type].propertyFlags & coh) != 0;
    return 0;
}

static VkMappedMemoryRange whole_staging(const vk_device *vd)
{
    return (VkMappedMemoryRange){.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
                                 .memory = vd->staging_mem,
                                 .size = VK_WHOLE_SIZE};
}

int vk_upload(gb_buffer *b, uint64_t off, const void *src, uint64_t n, gb_err *e)
{
    vk_device *vd = vk_dev(b->dev);
    vk_buffer *vb = b->impl;
    if (staging(vd, n, e) != 0)
        return -1;
    for (uint64_t done = 0; done < n;) {
        uint64_t len = n - done < vd->staging_size ? n - done : vd->staging_size;
        memcpy(vd->staging_map, (const char *)src + done, len);
        if (!vd->staging_coherent) {
            VkMappedMemoryRange mr = whole_staging(vd);
            VkResult r = vd->f.vkFlushMappedMemoryRanges(vd->dev, 1, &mr);
            if (r != VK_SUCCESS)
                return VK_FAIL(e, "vkFlushMappedMemoryRanges", r);
        }
        VkCommandBuffer cb;
        uint64_t serial;
        if (vk_stream_begin(vd, 1, &cb, &serial, e) != 0)
            return -1;
        VkBufferCopy region = {.srcOffset = 0, .dstOffset = off + done, .size = len};
        vd->f.vkCmdCopyBuffer(cb, vd->staging, vb->buf, 1, &region);
        vb->last_use = serial;
        /* Host writes before vkQueueSubmit are visible to the copy (implicit
         * host-write domain operation of a submission). */
        if (vk_stream_wait(vd, serial, "an upload", e) != 0)
            return -1;
        done += len;
    }
    return 0;
}

int vk_download(gb_buffer *b, uint64_t off, void *dst, uint64_t n, gb_err *e)
{
    vk_device *vd = vk_dev(b->dev);
    vk_buffer *vb = b->impl;
    if (staging(vd, n, e) != 0)
        return -1;
    for (uint64_t done = 0; done < n;) {
        uint64_t len = n - done < vd->staging_size ? n - done : vd->staging_size;
        VkCommandBuffer cb;
        uint64_t serial;
        if (vk_stream_begin(vd, 1, &cb, &serial, e) != 0)
            return -1;
        VkBufferCopy region = {.srcOffset = off + done, .dstOffset = 0, .size = len};
        vd->f.vkCmdCopyBuffer(cb, vb->buf, vd->staging, 1, &region);
        /* Make the copy's writes available to host reads after the fence. */
        VkMemoryBarrier mb = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_HOST_READ_BIT,
        };
        vd->f.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                   VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
        vb->last_use = serial;
        if (vk_stream_wait(vd, serial, "a download", e) != 0)
            return -1;
        if (!vd->staging_coherent) {
            VkMappedMemoryRange mr = whole_staging(vd);
            VkResult r = vd->f.vkInvalidateMappedMemoryRanges(vd->dev, 1, &mr);
            if (r != VK_SUCCESS)
                return VK_FAIL(e, "vkInvalidateMappedMemoryRanges", r);
        }
        memcpy((char *)dst + done, vd->staging_map, len);
        done += len;
    }
    return 0;
}

/* ------------------------------------------------------------ fill, copy */

int vk_fill32(gb_buffer *b, uint64_t off, uint64_t n, uint32_t pattern, gb_err *e)
{
    vk_device *vd = vk_dev(b->dev);
    vk_buffer *vb = b->impl;
    VkCommandBuffer cb;
    uint64_t serial;
    if (vk_stream_begin(vd, 1, &cb, &serial, e) != 0)
        return -1;
    vd->f.vkCmdFillBuffer(cb, vb->buf, off, n, pattern);
    vb->last_use = serial;
    return vk_stream_end(vd, e);
}

int vk_copy(gb_buffer *dst, uint64_t doff, gb_buffer *src, uint64_t soff, uint64_t n, gb_err *e)
{
    vk_device *vd = vk_dev(dst->dev);
    vk_buffer *d = dst->impl, *s = src->impl;
    VkCommandBuffer cb;
    uint64_t serial;
    if (vk_stream_begin(vd, 1, &cb, &serial, e) != 0)
        return -1;
    VkBufferCopy region = {.srcOffset = soff, .dstOffset = doff, .size = n};
    vd->f.vkCmdCopyBuffer(cb, s->buf, d->buf, 1, &region);
    d->last_use = s->last_use = serial;
    return vk_stream_end(vd, e);
}
