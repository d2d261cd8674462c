/* The Vulkan entry points gpubench uses, as X-macro lists. Nothing links
 * libvulkan: loader.c dlopens it and fills tables from these lists
 * through vkGetInstanceProcAddr / vkGetDeviceProcAddr. */
#ifndef GPUBENCH_VULKAN_FNS_H
#define GPUBENCH_VULKAN_FNS_H

/* Global commands: vkGetInstanceProcAddr(NULL, name). vkEnumerateInstanceVersion
 * is Vulkan 1.1 and may be NULL on a 1.0 loader. */
#define GB_VK_GLOBAL_FNS(X)                     \
    X(vkEnumerateInstanceVersion)               \
    X(vkEnumerateInstanceExtensionProperties)   \
    X(vkEnumerateInstanceLayerProperties)       \
    X(vkCreateInstance)

/* Instance commands (required). */
#define GB_VK_INSTANCE_FNS(X)                   \
    X(vkDestroyInstance)                        \
    X(vkEnumeratePhysicalDevices)               \
    X(vkGetPhysicalDeviceProperties)            \
    X(vkGetPhysicalDeviceProperties2)           \
    X(vkGetPhysicalDeviceFeatures2)             \
    X(vkGetPhysicalDeviceMemoryProperties)      \
    X(vkGetPhysicalDeviceQueueFamilyProperties) \
    X(vkEnumerateDeviceExtensionProperties)     \
    X(vkCreateDevice)                           \
    X(vkGetDeviceProcAddr)

/* VK_EXT_debug_utils queue labels (optional: NULL without the extension). */
#define GB_VK_DEBUG_FNS(X)                      \
    X(vkQueueBeginDebugUtilsLabelEXT)           \
    X(vkQueueEndDebugUtilsLabelEXT)

/* Device commands (required), loaded per device through vkGetDeviceProcAddr. */
#define GB_VK_DEVICE_FNS(X)                     \
    X(vkDestroyDevice)                          \
    X(vkGetDeviceQueue)                         \
    X(vkDeviceWaitIdle)                         \
    X(vkQueueSubmit)                            \
    X(vkCreateCommandPool)                      \
    X(vkDestroyCommandPool)                     \
    X(vkAllocateCommandBuffers)                 \
    X(vkFreeCommandBuffers)                     \
    X(vkBeginCommandBuffer)                     \
    X(vkEndCommandBuffer)                       \
    X(vkCreateFence)                            \
    X(vkDestroyFence)                           \
    X(vkResetFences)                            \
    X(vkWaitForFences)                          \
    X(vkGetFenceStatus)                         \
    X(vkCreateBuffer)                           \
    X(vkDestroyBuffer)                          \
    X(vkGetBufferMemoryRequirements)            \
    X(vkAllocateMemory)                         \
    X(vkFreeMemory)                             \
    X(vkBindBufferMemory)                       \
    X(vkMapMemory)                              \
    X(vkUnmapMemory)                            \
    X(vkFlushMappedMemoryRanges)                \
    X(vkInvalidateMappedMemoryRanges)           \
    X(vkCreateShaderModule)                     \
    X(vkDestroyShaderModule)                    \
    X(vkCreateDescriptorSetLayout)              \
    X(vkDestroyDescriptorSetLayout)             \
    X(vkCreatePipelineLayout)                   \
    X(vkDestroyPipelineLayout)                  \
    X(vkCreateComputePipelines)                 \
    X(vkDestroyPipeline)                        \
    X(vkCreateDescriptorPool)                   \
    X(vkDestroyDescriptorPool)                  \
    X(vkResetDescriptorPool)                    \
    X(vkAllocateDescriptorSets)                 \
    X(vkUpdateDescriptorSets)                   \
    X(vkCreateQueryPool)                        \
    X(vkDestroyQueryPool)                       \
    X(vkGetQueryPoolResults)                    \
    X(vkCmdPipelineBarrier)                     \
    X(vkCmdCopyBuffer)                          \
    X(vkCmdFillBuffer)                          \
    X(vkCmdBindPipeline)                        \
    X(vkCmdBindDescriptorSets)                  \
    X(vkCmdPushConstants)                       \
    X(vkCmdDispatch)                            \
    X(vkCmdResetQueryPool)                      \
    X(vkCmdWriteTimestamp)                      \
    X(vkCreateEvent)                            \
    X(vkDestroyEvent)                           \
    X(vkSetEvent)                               \
    X(vkCmdWaitEvents)

#endif
