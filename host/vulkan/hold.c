/* The Vulkan stream hold and the clean flush's read kernel (backend.h).
 *
 * Hold: the open command buffer waits on a fresh event (vkCmdWaitEvents with
 * the host stage as source); release submits what was queued meanwhile and
 * sets the event from the host, so those submissions run back to back. An
 * event is used once and destroyed after its submission completes: an event
 * must not be reset while a pending command waits on it. */
#include <stdlib.h>

#include "vulkan_internal.h"

const char vk_flush_source[] =
    "#version 450\n"
    "layout(local_size_x = 256) in;\n"
    "layout(std430, set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };\n"
    "layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_[]; };\n"
    "layout(push_constant) uniform Params { uint n16; uint sentinel; };\n"
    "void main() {\n"
    "    uint gid = gl_GlobalInvocationID.x, stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;\n"
    "    uint acc = 0u, i = gid;\n"
    "    for (; i < n16 && n16 - i > 3u * stride; i += 4u * stride) {\n"
    "        uvec4 a = src[i], b = src[i + stride], c = src[i + 2u * stride], d = src[i + 3u * stride];\n"
    "        uvec4 f = a ^ b ^ c ^ d;\n"
    "        acc ^= f.x ^ f.y ^ f.z ^ f.w;\n"
    "    }\n"
    "    for (; i < n16; i += stride) { uvec4 a = src[i]; acc ^= a.x ^ a.y ^ a.z ^ a.w; }\n"
    "    if (acc == sentinel) out_[gid] = acc;\n"
    "}\n";

static void destroy_event(vk_device *vd, void *obj)
{
    VkEvent *ev = obj;
    vd->f.vkDestroyEvent(vd->dev, *ev, NULL);
    free(ev);
}

int vk_hold(gb_device *d, gb_err *e)
{
    vk_device *vd = vk_dev(d);
    if (vd->held)
        return GB_FAIL(e, "stream hold failed: ALREADY_HELD (a hold is not released yet)");
    VkEventCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent ev;
    VkResult r = vd->f.vkCreateEvent(vd->dev, &ci, NULL, &ev);
    if (r != VK_SUCCESS)
        return VK_FAIL(e, "vkCreateEvent", r);
    VkCommandBuffer cb;
    uint64_t serial;
    if (vk_stream_begin(vd, 1, &cb, &serial, e) != 0) {
        vd->f.vkDestroyEvent(vd->dev, ev, NULL);
        return -1;
    }
    /* Everything after waits: the barrier the next command records orders
     * it after this wait (compute and transfer stages). */
    vd->f.vkCmdWaitEvents(cb, 1, &ev, VK_PIPELINE_STAGE_HOST_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, NULL,
                          0, NULL, 0, NULL);
    vd->held = ev;
    if (vk_stream_end(vd, e) != 0) {
        vk_release(d, NULL);
        return -1;
    }
    return 0;
}

int vk_release(gb_device *d, gb_err *e)
{
    vk_device *vd = vk_dev(d);
    if (!vd->held)
        return 0;
    VkEvent ev = vd->held;
    vd->held = VK_NULL_HANDLE;
    /* What was queued since the hold is submitted first, so it is all on the
     * queue, behind the wait, when the event is set. */
    gb_err tmp = {0};
    int rc = vk_stream_flush(vd, e ? e : &tmp);
    VkResult r = vd->f.vkSetEvent(vd->dev, ev);
    if (r != VK_SUCCESS && rc == 0) {
        rc = e ? VK_FAIL(e, "vkSetEvent", r) : -1;
    }
    gb_err_clear(&tmp);
    VkEvent *box = malloc(sizeof *box);
    if (box) {
        *box = ev;
        vk_defer(vd, vd->last_serial, destroy_event, box);
    } /* without memory to remember it, the event is left to the device's end */
    return rc;
}
