/* The Vulkan backend's operation table (the files behind it: vulkan_internal.h). */
#include "vulkan_internal.h"

/* Waits for everything submitted or recorded on the device. */
static int vk_sync(gb_device *d, gb_err *e)
{
    return vk_stream_wait_all(vk_dev(d), "the device (sync)", e);
}

const gb_backend_ops gb_vulkan_backend = {
    .name = "vulkan",
    .probe = vk_probe,
    .device_info = vk_device_info,
    .open = vk_open,
    .close = vk_close,
    .buffer_alloc = vk_buffer_alloc,
    .buffer_free = vk_buffer_free,
    .upload = vk_upload,
    .download = vk_download,
    .fill32 = vk_fill32,
    .copy = vk_copy,
    .kernel_load = vk_kernel_load,
    .kernel_stats = vk_kernel_stats,
    .kernel_free = vk_kernel_free,
    .compile_only = vk_compile_only,
    .launch = vk_launch,
    .batch_prepare = vk_batch_prepare,
    .batch_submit = vk_batch_submit,
    .batch_free = vk_batch_free,
    .timer_create = vk_timer_create,
    .timer_record = vk_timer_record,
    .timed_batch_submit = vk_timed_batch_submit,
    .timer_elapsed_ms = vk_timer_elapsed_ms,
    .timer_free = vk_timer_free,
    .profiler_range = vk_profiler_range,
    .sync = vk_sync,
    .flush_source = vk_flush_source,
    .flush_entry = "main",
    .hold = vk_hold,
    .release = vk_release,
};
