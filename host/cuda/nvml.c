/* Clocks, temperature, power and throttle reasons of an NVIDIA GPU through
 * NVML, loaded at run time and never required: a device reports them
 * whichever backend opened it (the GPU is found by its UUID), so a cell that
 * ran on a throttled GPU can say so. There is no nvml.h on the build
 * machine; the few documented functions used are declared here with the
 * types of NVML's public API (nvml.h, NVML API reference). */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "cuda_backend.h"

typedef int nvmlReturn_t; /* NVML_SUCCESS = 0 */
typedef struct nvmlDevice_st *nvmlDevice_t;
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

static struct {
    int done; /* 0 not tried, 1 loaded, -1 failed */
    char why[256];
    nvmlReturn_t (*init)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned *); /* milliwatts */
    nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
} nv;

#define NV_SYM(field, name) (*(void **)(&nv.field) = dlsym(lib, name))

static int load(gb_err *e) {
    if (nv.done > 0) return 0;
    if (nv.done < 0) return GB_FAIL(e, "%s", nv.why);
    nv.done = -1;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(nv.why, sizeof nv.why, "NVML is not available (%s)", why ? why : "libnvidia-ml.so.1");
        return GB_FAIL(e, "%s", nv.why);
    }
    NV_SYM(init, "nvmlInit_v2");
    NV_SYM(error_string, "nvmlErrorString");
    NV_SYM(by_uuid, "nvmlDeviceGetHandleByUUID");
    NV_SYM(clock, "nvmlDeviceGetClockInfo");
    NV_SYM(max_clock, "nvmlDeviceGetMaxClockInfo");
    NV_SYM(temperature, "nvmlDeviceGetTemperature");
    NV_SYM(power, "nvmlDeviceGetPowerUsage");
    /* Renamed in CUDA 12 ("clocks event reasons"); the old name still exists. */
    if (!NV_SYM(reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
        NV_SYM(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!nv.init || !nv.error_string || !nv.by_uuid || !nv.clock || !nv.max_clock) {
        snprintf(nv.why, sizeof nv.why, "NVML is not available (libnvidia-ml.so.1 lacks a function gpubench uses)");
        return GB_FAIL(e, "%s", nv.why);
    }
    nvmlReturn_t r = nv.init();
    if (r != 0) {
        snprintf(nv.why, sizeof nv.why, "nvmlInit failed: %s", nv.error_string(r));
        return GB_FAIL(e, "%s", nv.why);
    }
    nv.done = 1;
    return 0;
}

int gb_cuda_clocks(const gb_device_info *info, gb_clocks *out, gb_err *e) {
    memset(out, 0, sizeof *out);
    if (!info->has_uuid) return GB_FAIL(e, "clocks: %s reports no UUID to find it by in NVML", info->name);
    if (load(e) != 0) return -1;
    const uint8_t *u = info->uuid;
    char id[64];
    snprintf(id, sizeof id, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
             u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    nvmlDevice_t dev;
    nvmlReturn_t r = nv.by_uuid(id, &dev);
    if (r != 0) return GB_FAIL(e, "nvmlDeviceGetHandleByUUID(%s) failed: %s", id, nv.error_string(r));
    unsigned v;
    if ((r = nv.clock(dev, NVML_CLOCK_SM, &v)) != 0)
        return GB_FAIL(e, "nvmlDeviceGetClockInfo failed: %s", nv.error_string(r));
    out->sm_mhz = v;
    if (nv.clock(dev, NVML_CLOCK_MEM, &v) == 0) out->memory_mhz = v;
    if (nv.max_clock(dev, NVML_CLOCK_SM, &v) == 0) out->max_sm_mhz = v;
    if (nv.max_clock(dev, NVML_CLOCK_MEM, &v) == 0) out->max_memory_mhz = v;
    if (nv.temperature && nv.temperature(dev, NVML_TEMPERATURE_GPU, &v) == 0) out->temperature_c = v;
    if (nv.power && nv.power(dev, &v) == 0) out->power_w = v / 1000.0;
    unsigned long long reasons = 0;
    if (nv.reasons && nv.reasons(dev, &reasons) == 0) {
        out->reasons = reasons;
        out->has_reasons = 1;
    }
    snprintf(out->source, sizeof out->source, "NVML");
    return 0;
}
