/* The Vulkan loader, loaded at run time, and the process-wide instance.
 *
 * libvulkan.so.1 is dlopen'ed so the same gpubench binary starts on machines
 * without Vulkan; every entry point comes through vkGetInstanceProcAddr or
 * vkGetDeviceProcAddr. One instance serves every device and lives until the
 * process exits: creating and destroying an instance per probe would reload
 * every driver (seconds on some systems), and the pointers kept in gb_vk keep
 * its memory reachable for leak checkers. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_internal.h"

vk_global gb_vk;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

const char *vk_result_name(VkResult r)
{
    switch (r) {
#define N(x) case x: return #x;
    N(VK_SUCCESS) N(VK_NOT_READY) N(VK_TIMEOUT) N(VK_EVENT_SET) N(VK_EVENT_RESET)
    N(VK_INCOMPLETE) N(VK_ERROR_OUT_OF_HOST_MEMORY) N(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    N(VK_ERROR_INITIALIZATION_FAILED) N(VK_ERROR_DEVICE_LOST) N(VK_ERROR_MEMORY_MAP_FAILED)
    N(VK_ERROR_LAYER_NOT_PRESENT) N(VK_ERROR_EXTENSION_NOT_PRESENT)
    N(VK_ERROR_FEATURE_NOT_PRESENT) N(VK_ERROR_INCOMPATIBLE_DRIVER) N(VK_ERROR_TOO_MANY_OBJECTS)
    N(VK_ERROR_FORMAT_NOT_SUPPORTED) N(VK_ERROR_FRAGMENTED_POOL) N(VK_ERROR_UNKNOWN)
    N(VK_ERROR_OUT_OF_POOL_MEMORY) N(VK_ERROR_INVALID_EXTERNAL_HANDLE) N(VK_ERROR_FRAGMENTATION)
    N(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS) N(VK_PIPELINE_COMPILE_REQUIRED)
    N(VK_ERROR_INVALID_SHADER_NV)
#undef N
    default: return "VK_RESULT_UNKNOWN";
    }
}

const char *vk_result_desc(VkResult r)
{
    switch (r) {
    case VK_SUCCESS: return "success";
    case VK_NOT_READY: return "not ready yet";
    case VK_TIMEOUT: return "timed out";
    case VK_INCOMPLETE: return "the result array was too small";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "out of host memory";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "out of device memory";
    case VK_ERROR_INITIALIZATION_FAILED: return "initialization of an object failed";
    case VK_ERROR_DEVICE_LOST: return "the device was lost (driver reset, hang or crash)";
    case VK_ERROR_MEMORY_MAP_FAILED: return "mapping memory failed";
    case VK_ERROR_LAYER_NOT_PRESENT: return "a requested layer is not present";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "a requested extension is not supported";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "a requested feature is not supported";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return "no compatible Vulkan driver (ICD) is installed, or it lacks the requested version";
    case VK_ERROR_TOO_MANY_OBJECTS: return "too many objects of this type";
    case VK_ERROR_FRAGMENTED_POOL: return "the pool is fragmented";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "the pool is out of memory";
    case VK_ERROR_FRAGMENTATION: return "the allocation failed due to fragmentation";
    case VK_ERROR_UNKNOWN: return "unknown driver error";
    case VK_ERROR_INVALID_SHADER_NV: return "the driver rejected the shader";
    default: return "unrecognized VkResult";
    }
}

static int has_name(const char *want, const char *const *names, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(names[i], want) == 0)
            return 1;
    return 0;
}

/* Instance extensions to enable: debug-utils labels and, where the loader
 * hides portability drivers (MoltenVK) without it, portability enumeration. */
static int pick_instance_extensions(const char **out, uint32_t *n, int *portability,
                                    gb_err *e)
{
    uint32_t count = 0;
    VkResult r = gb_vk.vkEnumerateInstanceExtensionProperties(NULL, &count, NULL);
    if (r != VK_SUCCESS)
        return VK_FAIL(e, "vkEnumerateInstanceExtensionProperties", r);
    VkExtensionProperties *props = calloc(count ? count : 1, sizeof *props);
    if (!props)
        return GB_FAIL(e, "vkEnumerateInstanceExtensionProperties failed: OUT_OF_HOST_MEMORY "
                          "(%u extensions)", count);
    r = gb_vk.vkEnumerateInstanceExtensionProperties(NULL, &count, props);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(props);
        return VK_FAIL(e, "vkEnumerateInstanceExtensionProperties", r);
    }
    *n = 0;
    *portability = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (strcmp(props[i].extensionName, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0) {
            out[(*n)++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
            gb_vk.has_debug_utils = 1;
        } else if (strcmp(props[i].extensionName,
                          VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) == 0) {
            out[(*n)++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
            *portability = 1;
        }
    }
    free(props);
    return 0;
}

/* VK_LAYER_KHRONOS_validation when GPUBENCH_VK_VALIDATION=1 and it is installed. */
static uint32_t pick_layers(const char **out)
{
    const char *env = getenv("GPUBENCH_VK_VALIDATION");
    if (!env || strcmp(env, "1") != 0)
        return 0;
    const char *want = "VK_LAYER_KHRONOS_validation";
    uint32_t count = 0, found = 0;
    if (gb_vk.vkEnumerateInstanceLayerProperties(&count, NULL) == VK_SUCCESS && count) {
        VkLayerProperties *props = calloc(count, sizeof *props);
        if (props && gb_vk.vkEnumerateInstanceLayerProperties(&count, props) >= 0) {
            const char *names[256];
            uint32_t n = count < 256 ? count : 256;
            for (uint32_t i = 0; i < n; i++)
                names[i] = props[i].layerName;
            found = has_name(want, names, n);
        }
        free(props);
    }
    if (!found) {
        fprintf(stderr, "gpubench: GPUBENCH_VK_VALIDATION=1 but %s is not installed; "
                        "running without validation\n", want);
        return 0;
    }
    out[0] = want;
    return 1;
}

static int load_symbols(gb_err *e)
{
    gb_vk.lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!gb_vk.lib)
        return GB_FAIL(e, "dlopen failed: VULKAN_LOADER_NOT_FOUND (%s)", dlerror());
    gb_vk.gipa = (PFN_vkGetInstanceProcAddr)dlsym(gb_vk.lib, "vkGetInstanceProcAddr");
    if (!gb_vk.gipa)
        return GB_FAIL(e, "dlsym failed: VULKAN_LOADER_INVALID (libvulkan.so.1 has no "
                          "vkGetInstanceProcAddr: %s)", dlerror());
#define LOAD_GLOBAL(name) gb_vk.name = (PFN_##name)gb_vk.gipa(NULL, #name);
    GB_VK_GLOBAL_FNS(LOAD_GLOBAL)
#undef LOAD_GLOBAL
    if (!gb_vk.vkCreateInstance || !gb_vk.vkEnumerateInstanceExtensionProperties ||
        !gb_vk.vkEnumerateInstanceLayerProperties)
        return GB_FAIL(e, "vkGetInstanceProcAddr failed: VULKAN_LOADER_INVALID (the loader lacks "
                          "vkCreateInstance)");
    return 0;
}

static int create_instance(gb_err *e)
{
    uint32_t loader_api = VK_API_VERSION_1_0;
    if (gb_vk.vkEnumerateInstanceVersion &&
        gb_vk.vkEnumerateInstanceVersion(&loader_api) != VK_SUCCESS)
        loader_api = VK_API_VERSION_1_0;
    if (VK_API_VERSION_MINOR(loader_api) < 1 && VK_API_VERSION_MAJOR(loader_api) == 1)
        return GB_FAIL(e, "vkEnumerateInstanceVersion failed: VK_ERROR_INCOMPATIBLE_DRIVER (the "
                          "Vulkan loader supports only 1.0; gpubench needs 1.1 or newer)");
    /* The highest version the loader supports, up to the 1.3 this code targets. */
    gb_vk.api_version = loader_api >= VK_API_VERSION_1_3
                            ? VK_API_VERSION_1_3
                            : VK_MAKE_API_VERSION(0, 1, VK_API_VERSION_MINOR(loader_api), 0);
    const char *exts[4], *layers[1];
    uint32_t next = 0;
    int portability = 0;
    if (pick_instance_extensions(exts, &next, &portability, e) != 0)
        return -1;
    uint32_t nlayers = pick_layers(layers);
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "gpubench",
        .applicationVersion = 1,
        .pEngineName = "gpubench",
        .apiVersion = gb_vk.api_version,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .flags = portability ? VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR : 0,
        .pApplicationInfo = &app,
        .enabledLayerCount = nlayers,
        .ppEnabledLayerNames = layers,
        .enabledExtensionCount = next,
        .ppEnabledExtensionNames = exts,
    };
    VkResult r = gb_vk.vkCreateInstance(&ci, NULL, &gb_vk.instance);
    if (r != VK_SUCCESS) {
        gb_vk.instance = VK_NULL_HANDLE;
        return VK_FAIL(e, "vkCreateInstance", r);
    }
    int missing = 0;
#define LOAD_INSTANCE(name)                                                  \
    gb_vk.name = (PFN_##name)gb_vk.gipa(gb_vk.instance, #name);              \
    if (!gb_vk.name && !missing) {                                           \
        missing = 1;                                                         \
        GB_FAIL(e, "vkGetInstanceProcAddr failed: VK_ERROR_INCOMPATIBLE_DRIVER " \
                   "(the instance has no %s)", #name);                       \
    }
    GB_VK_INSTANCE_FNS(LOAD_INSTANCE)
#undef LOAD_INSTANCE
#define LOAD_DEBUG(name) gb_vk.name = (PFN_##name)gb_vk.gipa(gb_vk.instance, #name);
    GB_VK_DEBUG_FNS(LOAD_DEBUG)
#undef LOAD_DEBUG
    if (missing)
        return -1;
    return 0;
}

static int enumerate_devices(gb_err *e)
{
    uint32_t n = 0;
    VkResult r = gb_vk.vkEnumeratePhysicalDevices(gb_vk.instance, &n, NULL);
    if (r != VK_SUCCESS)
        return VK_FAIL(e, "vkEnumeratePhysicalDevices", r);
    VkPhysicalDevice *p = calloc(n ? n : 1, sizeof *p);
    if (!p)
        return GB_FAIL(e, "vkEnumeratePhysicalDevices failed: OUT_OF_HOST_MEMORY (%u devices)", n);
    r = gb_vk.vkEnumeratePhysicalDevices(gb_vk.instance, &n, p);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(p);
        return VK_FAIL(e, "vkEnumeratePhysicalDevices", r);
    }
    gb_vk.phys = p;
    gb_vk.nphys = n;
    return 0;
}

/* Undoes a failed initialization so the next probe retries from scratch
 * (a driver may be installed meanwhile; the error is reported each time). */
static void reset_after_failure(void)
{
    if (gb_vk.instance && gb_vk.vkDestroyInstance)
        gb_vk.vkDestroyInstance(gb_vk.instance, NULL);
    free(gb_vk.phys);
    void *lib = gb_vk.lib;
    memset(&gb_vk, 0, sizeof gb_vk);
    if (lib)
        dlclose(lib);
}

int vk_init(gb_err *e)
{
    pthread_mutex_lock(&init_lock);
    int rc = 0;
    if (!gb_vk.phys) {
        rc = load_symbols(e);
        if (rc == 0)
            rc = create_instance(e);
        if (rc == 0)
            rc = enumerate_devices(e);
        if (rc != 0)
            reset_after_failure();
    }
    pthread_mutex_unlock(&init_lock);
    return rc;
}

int vk_probe(int *count, gb_err *e)
{
    *count = 0;
    if (vk_init(e) != 0)
        return -1;
    *count = (int)gb_vk.nphys;
    return 0;
}
