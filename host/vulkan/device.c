/* Vulkan devices: what they report (device_info) and opening/closing them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_internal.h"

/* The device extensions gpubench looks at. */
typedef struct dev_exts {
    int driver_props, sm_builtins, amd_core2, portability_subset;
    int coopmat_nv;      /* VK_NV_cooperative_matrix is listed */
    int coopmat_feature; /* ... and its cooperativeMatrix feature is set: open enables it */
    int exec_props;         /* VK_KHR_pipeline_executable_properties is listed */
    int exec_props_feature; /* ... with pipelineExecutableInfo: open enables it (kernel statistics) */
} dev_exts;

static int device_extensions(VkPhysicalDevice p, dev_exts *x, gb_err *e)
{
    memset(x, 0, sizeof *x);
    uint32_t n = 0;
    VkResult r = gb_vk.vkEnumerateDeviceExtensionProperties(p, NULL, &n, NULL);
    if (r != VK_SUCCESS)
        return VK_FAIL(e, "vkEnumerateDeviceExtensionProperties", r);
    VkExtensionProperties *props = calloc(n ? n : 1, sizeof *props);
    if (!props)
        return GB_FAIL(e, "vkEnumerateDeviceExtensionProperties failed: OUT_OF_HOST_MEMORY "
                          "(%u extensions)", n);
    r = gb_vk.vkEnumerateDeviceExtensionProperties(p, NULL, &n, props);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(props);
        return VK_FAIL(e, "vkEnumerateDeviceExtensionProperties", r);
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *s = props[i].extensionName;
        x->driver_props |= strcmp(s, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME) == 0;
        x->sm_builtins |= strcmp(s, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME) == 0;
        x->amd_core2 |= strcmp(s, VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME) == 0;
        x->portability_subset |= strcmp(s, "VK_KHR_portability_subset") == 0;
        x->coopmat_nv |= strcmp(s, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) == 0;
        x->exec_props |= strcmp(s, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0;
    }
    free(props);
    return 0;
}

static const char *type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    default: return "other";
    }
}

/* Vendors encode driverVersion differently; NVIDIA uses 10.8.8.6 bits. */
static void decode_driver_version(uint32_t vendor, uint32_t v, char *buf, size_t cap)
{
    if (vendor == 0x10DE)
        snprintf(buf, cap, "%u.%u.%u.%u", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f);
    else
        snprintf(buf, cap, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
                 VK_API_VERSION_PATCH(v));
}

static const char *component_name(VkComponentTypeNV t)
{
    static const char *names[] = {"f16", "f32", "f64", "s8", "s16", "s32",
                                  "s64", "u8", "u16", "u32", "u64"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* The subgroup-scope cooperative-matrix shapes the device lists, in its order
 * (the driver lists preferred ones first). */
static int coopmat_shapes(VkPhysicalDevice p, gb_device_info *out, gb_err *e)
{
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV get =
        (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)gb_vk.gipa(
            gb_vk.instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
    if (!get)
        return GB_FAIL(e, "vkGetInstanceProcAddr failed: VK_ERROR_EXTENSION_NOT_PRESENT (%s "
                          "lists VK_NV_cooperative_matrix but the loader has no "
                          "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)", out->name);
    uint32_t n = 0;
    VkResult r = get(p, &n, NULL);
    if (r != VK_SUCCESS)
        return VK_FAIL(e, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV", r);
    VkCooperativeMatrixPropertiesNV *props = calloc(n ? n : 1, sizeof *props);
    if (!props)
        return GB_FAIL(e, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV failed: "
                          "OUT_OF_HOST_MEMORY (%u shapes)", n);
    for (uint32_t i = 0; i < n; i++)
        props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
    r = get(p, &n, props);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(props);
        return VK_FAIL(e, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV", r);
    }
    out->ncoopmat_shapes = 0;
    for (uint32_t i = 0; i < n && out->ncoopmat_shapes < GB_MAX_COOPMAT_SHAPES; i++) {
        if (props[i].scope != VK_SCOPE_SUBGROUP_NV)
            continue;
        struct gb_coopmat_shape *s = &out->coopmat_shapes[out->ncoopmat_shapes++];
        s->m = props[i].MSize;
        s->n = props[i].NSize;
        s->k = props[i].KSize;
        snprintf(s->a, sizeof s->a, "%s", component_name(props[i].AType));
        snprintf(s->b, sizeof s->b, "%s", component_name(props[i].BType));
        snprintf(s->c, sizeof s->c, "%s", component_name(props[i].CType));
        snprintf(s->d, sizeof s->d, "%s", component_name(props[i].DType));
    }
    free(props);
    return 0;
}

/* Puts s, a feature struct, first in f2's pNext chain: vkCreateDevice enables
 * what it sets. */
static void chain_first(VkPhysicalDeviceFeatures2 *f2, void *s)
{
    ((VkBaseOutStructure *)s)->pNext = f2->pNext;
    f2->pNext = s;
}

/* Links s, a Vulkan output struct (sType, then pNext, as VkBaseOutStructure),
 * after the last link *tail of a pNext chain; returns s's pNext, the new tail. */
static void **chain(void **tail, void *s)
{
    *tail = s;
    return (void **)&((VkBaseOutStructure *)s)->pNext;
}

/* The storage and cooperative-matrix features a kernel may need, as info
 * fields; x->coopmat_feature tells create_device to enable the extension. */
static void fill_features(VkPhysicalDevice p, uint32_t api, gb_device_info *out, dev_exts *x,
                          gb_err *e)
{
    out->storage_buffer_16bit = out->storage_buffer_8bit = 0;
    out->integer_dot_product = out->integer_dot_4x8_accelerated = 0;
    out->cooperative_matrix[0] = 0;
    out->ncoopmat_shapes = 0;
    x->coopmat_feature = 0;
    x->exec_props_feature = 0;
    if (api < VK_API_VERSION_1_1)
        return; /* no vkGetPhysicalDeviceFeatures2 without 1.1 */
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    VkPhysicalDevice16BitStorageFeatures s16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features f13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cm = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    void **next = chain(&f2.pNext, &s16);
    if (api >= VK_API_VERSION_1_2)
        next = chain(next, &f12);
    if (api >= VK_API_VERSION_1_3)
        next = chain(next, &f13);
    if (x->coopmat_nv)
        next = chain(next, &cm);
    if (x->exec_props)
        next = chain(next, &pe);
    gb_vk.vkGetPhysicalDeviceFeatures2(p, &f2);
    x->exec_props_feature = x->exec_props && pe.pipelineExecutableInfo;
    out->storage_buffer_16bit = s16.storageBuffer16BitAccess != 0;
    out->storage_buffer_8bit = api >= VK_API_VERSION_1_2 && f12.storageBuffer8BitAccess;
    /* create_device passes the 1.3 features it queries to vkCreateDevice, so a
     * supported shaderIntegerDotProduct is enabled. */
    out->integer_dot_product = api >= VK_API_VERSION_1_3 && f13.shaderIntegerDotProduct;
    if (out->integer_dot_product) {
        VkPhysicalDeviceShaderIntegerDotProductProperties dp = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                          .pNext = &dp};
        gb_vk.vkGetPhysicalDeviceProperties2(p, &p2);
        out->integer_dot_4x8_accelerated =
            dp.integerDotProduct4x8BitPackedMixedSignednessAccelerated != 0;
    }
    x->coopmat_feature = x->coopmat_nv && cm.cooperativeMatrix;
    if (!x->coopmat_feature)
        return;
    snprintf(out->cooperative_matrix, sizeof out->cooperative_matrix, "nv");
    if (coopmat_shapes(p, out, e) != 0) {
        /* A driver that lists the extension but cannot say its shapes: the device
         * still opens, without cooperative matrices (no kernel may assume a shape). */
        gb_err_clear(e);
        out->cooperative_matrix[0] = 0;
        out->ncoopmat_shapes = 0;
        x->coopmat_feature = 0;
    }
}

/* Fills out (and, for open, the device's limits and memory properties). */
static int fill_info(VkPhysicalDevice p, gb_device_info *out, vk_device *vd, dev_exts *x,
                     gb_err *e)
{
    if (device_extensions(p, x, e) != 0)
        return -1;
    VkPhysicalDeviceProperties base;
    gb_vk.vkGetPhysicalDeviceProperties(p, &base);
    uint32_t api = base.apiVersion < gb_vk.api_version ? base.apiVersion : gb_vk.api_version;
    int v11 = api >= VK_API_VERSION_1_1, v12 = api >= VK_API_VERSION_1_2;

    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties sg = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceMaintenance3Properties m3 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceDriverProperties drv = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceShaderCoreProperties2AMD amd = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_2_AMD};
    /* Chain only what this device's version or extensions define. */
    void **next = &props.pNext;
    if (v11) {
        next = chain(next, &id);
        next = chain(next, &sg);
        next = chain(next, &m3);
    }
    if (v12 || x->driver_props)
        next = chain(next, &drv);
    if (x->sm_builtins)
        next = chain(next, &sm);
    if (x->amd_core2)
        next = chain(next, &amd);
    gb_vk.vkGetPhysicalDeviceProperties2(p, &props);
    const VkPhysicalDeviceLimits *lim = &props.properties.limits;

    VkPhysicalDeviceMemoryProperties mem;
    gb_vk.vkGetPhysicalDeviceMemoryProperties(p, &mem);
    uint64_t local = 0;
    for (uint32_t i = 0; i < mem.memoryHeapCount; i++)
        if ((mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
            mem.memoryHeaps[i].size > local)
            local = mem.memoryHeaps[i].size;

    snprintf(out->name, sizeof out->name, "%s", props.properties.deviceName);
    snprintf(out->device_type, sizeof out->device_type, "%s",
             type_name(props.properties.deviceType));
    if (v12 || x->driver_props)
        /* Both are short in practice ("NVIDIA 550.54.14"); cut to fit 63 chars. */
        snprintf(out->driver_version, sizeof out->driver_version, "%.20s %.42s",
                 drv.driverName, drv.driverInfo);
    else
        decode_driver_version(props.properties.vendorID, props.properties.driverVersion,
                              out->driver_version, sizeof out->driver_version);
    snprintf(out->api_version, sizeof out->api_version, "%u.%u.%u",
             VK_API_VERSION_MAJOR(base.apiVersion), VK_API_VERSION_MINOR(base.apiVersion),
             VK_API_VERSION_PATCH(base.apiVersion));
    out->vendor_id = props.properties.vendorID;
    out->device_id = props.properties.deviceID;
    out->memory_bytes = local;
    if (x->sm_builtins)
        out->sm_count = sm.shaderSMCount;
    else if (x->amd_core2)
        out->sm_count = amd.activeComputeUnitCount;
    out->timestamp_period_ns = lim->timestampPeriod;
    out->subgroup_size = v11 ? sg.subgroupSize : 0;
    out->max_threads_per_group = lim->maxComputeWorkGroupInvocations;
    for (int i = 0; i < 3; i++) {
        out->max_group_size[i] = lim->maxComputeWorkGroupSize[i];
        out->max_groups[i] = lim->maxComputeWorkGroupCount[i];
    }
    out->max_shared_bytes = lim->maxComputeSharedMemorySize;
    out->max_push_bytes = lim->maxPushConstantsSize;
    out->max_buffer_bytes = lim->maxStorageBufferRange;
    if (v11 && m3.maxMemoryAllocationSize && m3.maxMemoryAllocationSize < out->max_buffer_bytes)
        out->max_buffer_bytes = m3.maxMemoryAllocationSize;
    if (v11) {
        memcpy(out->uuid, id.deviceUUID, 16);
        out->has_uuid = 1;
    }
    fill_features(p, api, out, x, e);
    if (vd) {
        vd->phys = p;
        vd->api_version = api;
        vd->limits = *lim;
        vd->mem = mem;
        vd->max_alloc = v11 ? m3.maxMemoryAllocationSize : 0;
    }
    return 0;
}

static int physical(int index, VkPhysicalDevice *p, gb_err *e)
{
    if (vk_init(e) != 0)
        return -1;
    if (index < 0 || (uint32_t)index >= gb_vk.nphys)
        return GB_FAIL(e, "vulkan device failed: NO_SUCH_DEVICE (index %d; %u Vulkan device%s)",
                       index, gb_vk.nphys, gb_vk.nphys == 1 ? "" : "s");
    *p = gb_vk.phys[index];
    return 0;
}

int vk_device_info(int index, gb_device_info *out, gb_err *e)
{
    VkPhysicalDevice p;
    dev_exts x;
    if (physical(index, &p, e) != 0)
        return -1;
    return fill_info(p, out, NULL, &x, e);
}

/* The first queue family with compute and timestamps (else the first with
 * compute): on discrete GPUs the universal family, which every API shares. */
static int pick_queue(vk_device *vd, gb_err *e)
{
    uint32_t n = 0;
    gb_vk.vkGetPhysicalDeviceQueueFamilyProperties(vd->phys, &n, NULL);
    VkQueueFamilyProperties *q = calloc(n ? n : 1, sizeof *q);
    if (!q)
        return GB_FAIL(e, "vkGetPhysicalDeviceQueueFamilyProperties failed: OUT_OF_HOST_MEMORY "
                          "(%u families)", n);
    gb_vk.vkGetPhysicalDeviceQueueFamilyProperties(vd->phys, &n, q);
    int best = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].queueCount == 0)
            continue;
        if (best < 0 || (q[i].timestampValidBits && !q[best].timestampValidBits))
            best = (int)i;
    }
    if (best >= 0) {
        vd->qfamily = (uint32_t)best;
        vd->timestamp_bits = q[best].timestampValidBits;
    }
    free(q);
    if (best < 0)
        return GB_FAIL(e, "vkGetPhysicalDeviceQueueFamilyProperties failed: NO_COMPUTE_QUEUE "
                          "(the device has no queue family with compute)");
    return 0;
}

/* Enables every supported feature kernels may use (16/8-bit storage and
 * arithmetic, int64, subgroup controls, ...) except robustness: bounds checks
 * on every access would change what a bandwidth benchmark measures. */
static int create_device(vk_device *vd, const dev_exts *x, gb_err *e)
{
    int v12 = vd->api_version >= VK_API_VERSION_1_2, v13 = vd->api_version >= VK_API_VERSION_1_3;
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    VkPhysicalDevice16BitStorageFeatures s16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceVulkan11Features f11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features f13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    if (v12) {
        f2.pNext = &f11;
        f11.pNext = &f12;
        if (v13)
            f12.pNext = &f13;
    } else {
        f2.pNext = &s16;
    }
    gb_vk.vkGetPhysicalDeviceFeatures2(vd->phys, &f2);
    f2.features.robustBufferAccess = VK_FALSE;
    f11.protectedMemory = VK_FALSE;
    f13.robustImageAccess = VK_FALSE;
    vd->feat = f2.features;
    vd->feat_sb16 = v12 ? f11.storageBuffer16BitAccess : s16.storageBuffer16BitAccess;
    vd->feat_pc16 = v12 ? f11.storagePushConstant16 : s16.storagePushConstant16;
    vd->feat_int8 = v12 && f12.shaderInt8;
    vd->feat_float16 = v12 && f12.shaderFloat16;
    vd->feat_sb8 = v12 && f12.storageBuffer8BitAccess;
    vd->feat_pc8 = v12 && f12.storagePushConstant8;

    const char *exts[6];
    uint32_t next = 0;
    /* Cooperative matrices for the kernels that ask for them (the Linear
     * tensor-core route); robust access stays off, as for buffers. */
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cm = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
        .cooperativeMatrix = VK_TRUE,
    };
    if (x->coopmat_feature) {
        exts[next++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
        chain_first(&f2, &cm);
    }
    /* Statistics of compiled pipelines (registers, ...) for gb_kernel_stats; only
     * pipelines made for that query capture them (kernel.c). */
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
        .pipelineExecutableInfo = VK_TRUE,
    };
    if (x->exec_props_feature) {
        exts[next++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        chain_first(&f2, &pe);
    }
    if (x->portability_subset) /* required whenever the driver exposes it */
        exts[next++] = "VK_KHR_portability_subset";
    if (x->sm_builtins) /* gl_SMIDNV / gl_SMCountNV for kernels that want them */
        exts[next++] = VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = vd->qfamily,
        .queueCount = 1,
        .pQueuePriorities = &prio,
    };
    VkDeviceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &f2,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qci,
        .enabledExtensionCount = next,
        .ppEnabledExtensionNames = exts,
    };
    VkResult r = gb_vk.vkCreateDevice(vd->phys, &ci, NULL, &vd->dev);
    if (r != VK_SUCCESS) {
        vd->dev = VK_NULL_HANDLE;
        return VK_FAIL(e, "vkCreateDevice", r);
    }
    const char *missing = NULL;
#define LOAD_DEVICE(name)                                                        \
    vd->f.name = (PFN_##name)gb_vk.vkGetDeviceProcAddr(vd->dev, #name);          \
    if (!vd->f.name && !missing)                                                 \
        missing = #name;
    GB_VK_DEVICE_FNS(LOAD_DEVICE)
#undef LOAD_DEVICE
    if (missing)
        return GB_FAIL(e, "vkGetDeviceProcAddr failed: VK_ERROR_INCOMPATIBLE_DRIVER (the device "
                          "has no %s)", missing);
    if (x->exec_props_feature) {
        vd->exec_props = (PFN_vkGetPipelineExecutablePropertiesKHR)gb_vk.vkGetDeviceProcAddr(
            vd->dev, "vkGetPipelineExecutablePropertiesKHR");
        vd->exec_stats = (PFN_vkGetPipelineExecutableStatisticsKHR)gb_vk.vkGetDeviceProcAddr(
            vd->dev, "vkGetPipelineExecutableStatisticsKHR");
        if (!vd->exec_props || !vd->exec_stats)
            vd->exec_props = NULL, vd->exec_stats = NULL;
    }
    if (gb_vk.has_debug_utils) {
        vd->queue_begin_label = gb_vk.vkQueueBeginDebugUtilsLabelEXT;
        vd->queue_end_label = gb_vk.vkQueueEndDebugUtilsLabelEXT;
    }
    vd->f.vkGetDeviceQueue(vd->dev, vd->qfamily, 0, &vd->queue);
    VkCommandPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = vd->qfamily,
    };
    r = vd->f.vkCreateCommandPool(vd->dev, &pci, NULL, &vd->cmd_pool);
    if (r != VK_SUCCESS) {
        vd->cmd_pool = VK_NULL_HANDLE;
        return VK_FAIL(e, "vkCreateCommandPool", r);
    }
    return 0;
}

static void destroy(vk_device *vd)
{
    /* A broken device may still be running what it was given (a kernel that
     * never ends): destroying what that uses could crash the driver, so its
     * objects are left to the process's end. vkDestroyDevice is NULL only
     * when open failed while loading the table. */
    if (vd->dev && vd->f.vkDestroyDevice && !(vd->owner && vd->owner->broken)) {
        vk_stream_shutdown(vd);
        if (vd->owner && vd->owner->broken) { /* its work did not finish within the limit */
            free(vd);
            return;
        }
        vk_staging_free(vd);
        if (vd->cmd_pool)
            vd->f.vkDestroyCommandPool(vd->dev, vd->cmd_pool, NULL);
        vd->f.vkDestroyDevice(vd->dev, NULL);
    }
    free(vd);
}

int vk_open(gb_device *d, int index, gb_err *e)
{
    VkPhysicalDevice p;
    dev_exts x;
    if (physical(index, &p, e) != 0)
        return -1;
    vk_device *vd = calloc(1, sizeof *vd);
    if (!vd)
        return GB_FAIL(e, "vulkan device open failed: OUT_OF_HOST_MEMORY (device %d)", index);
    if (fill_info(p, &d->info, vd, &x, e) != 0 || pick_queue(vd, e) != 0 ||
        create_device(vd, &x, e) != 0) {
        destroy(vd);
        return -1;
    }
    gb_glsl_target_for_api(vd->api_version, &vd->target);
    vd->owner = d;
    d->impl = vd;
    return 0;
}

void vk_close(gb_device *d)
{
    if (d->impl)
        destroy(vk_dev(d));
    d->impl = NULL;
}

int vk_find_memory_type(const vk_device *vd, uint32_t type_bits, VkMemoryPropertyFlags want,
                        VkMemoryPropertyFlags avoid)
{
    for (uint32_t i = 0; i < vd->mem.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = vd->mem.memoryTypes[i].propertyFlags;
        if ((type_bits & (1u << i)) && (f & want) == want && !(f & avoid))
            return (int)i;
    }
    return -1;
}
