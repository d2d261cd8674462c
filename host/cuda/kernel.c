/* CUDA kernels: compile (compile.c), load the CUBIN, find the entry, and
 * settle the parameter kinds: explicit ones, or read from the source
 * (signature.c), cross-checked against the compiled kernel where the
 * driver can tell parameter sizes. */
#define _POSIX_C_SOURCE 200809L
#include "cuda_internal.h"

#if GPUBENCH_HAVE_CUDA_HEADERS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_blaslt.h"
#include "cuda_compile.h"
#include "cuda_cubin.h"
#include "cuda_signature.h"

static const char *label_of(const gb_kernel_source *src) {
    return src->label ? src->label : "<string>";
}

/* Explicit params win; otherwise the kinds come from the source text. */
static int param_kinds(const gb_kernel_source *src, gb_cuda_signature *sig, gb_err *e) {
    if (src->params) {
        if (src->nparams < 0 || src->nparams > GB_MAX_PARAMS)
            return GB_FAIL(e, "%s: %d explicit parameters; 0 to %d are supported", label_of(src),
                           src->nparams, GB_MAX_PARAMS);
        memset(sig, 0, sizeof *sig);
        sig->nparams = src->nparams;
        memcpy(sig->kinds, src->params, (size_t)src->nparams * sizeof *src->params);
        return 0;
    }
    return gb_cuda_parse_signature(src->label, src->code, src->entry, src->defines, src->ndefines,
                                   sig, e);
}

/* cuFuncGetParamInfo (CUDA 12.4+) knows the compiled kernel's parameter
 * count and sizes: a wrong explicit params= or a misread signature would
 * otherwise pass garbage to the kernel. */
static int cross_check(CUfunction fn, const gb_kernel_source *src, const gb_cuda_signature *sig,
                       gb_err *e) {
    if (!gb_cu.FuncGetParamInfo) return 0;
    const char *origin = src->params ? "given in params=" : "read from the source";
    for (int i = 0; i <= sig->nparams && i <= GB_MAX_PARAMS; i++) {
        size_t offset = 0, size = 0;
        CUresult r = gb_cu.FuncGetParamInfo(fn, (size_t)i, &offset, &size);
        if (r == CUDA_ERROR_NOT_SUPPORTED) return 0; /* the driver cannot tell: nothing to check */
        if (i == sig->nparams) {
            if (r == CUDA_ERROR_INVALID_VALUE) return 0; /* no parameter beyond the last: counts agree */
            if (r != CUDA_SUCCESS)
                return gb_cu_fail_at(e, __FILE__, __LINE__, "cuFuncGetParamInfo", r,
                                     " for parameter %d of %s", i + 1, src->entry);
            return GB_FAIL(e, "%s: the compiled kernel %s takes more than the %d parameter%s %s",
                           label_of(src), src->entry, sig->nparams, sig->nparams == 1 ? "" : "s",
                           origin);
        }
        if (r == CUDA_ERROR_INVALID_VALUE)
            return GB_FAIL(e, "%s: the compiled kernel %s takes %d parameter%s, but %d were %s",
                           label_of(src), src->entry, i, i == 1 ? "" : "s", sig->nparams, origin);
        if (r != CUDA_SUCCESS)
            return gb_cu_fail_at(e, __FILE__, __LINE__, "cuFuncGetParamInfo", r,
                                 " for parameter %d of %s", i + 1, src->entry);
        size_t want = gb_kind_size(sig->kinds[i]);
        if (size != want) {
            char who[GB_CUDA_PARAM_NAME + 4] = "";
            if (sig->names[i][0]) snprintf(who, sizeof who, " '%s'", sig->names[i]);
            return GB_FAIL(e, "%s: parameter %d%s of %s is %s (%zu bytes) as %s, but the compiled "
                              "kernel's parameter is %zu bytes",
                           label_of(src), i + 1, who, src->entry, gb_kind_name(sig->kinds[i]), want,
                           origin, size);
        }
    }
    return 0;
}

/* The dynamic shared memory a CUBIN asks for (GB_DYNAMIC_SHARED_SYMBOL): 0 when it
 * declares none. A value that cannot be read is an error, never a silent 0: a
 * kernel launched without its bytes would address past its shared memory. */
static int dynamic_shared_of(const void *cubin, size_t len, const char *label, uint32_t *bytes, gb_err *e) {
    *bytes = 0;
    int r = gb_cubin_u32_object(cubin, len, GB_DYNAMIC_SHARED_SYMBOL, bytes);
    if (r < 0)
        return GB_FAIL(e, "%s: the CUBIN's %s is not 4 bytes of data (declare it with "
                          "GB_DYNAMIC_SHARED, kernels/cuda/dynamic_shared.cuh)", label, GB_DYNAMIC_SHARED_SYMBOL);
    return 0;
}

/* What a CUBIN declares about its launches: its dynamic shared memory and
 * whether it may overlap the launch before it (GB_LAUNCH_OVERLAP_SYMBOL, 0 or 1;
 * any other value, like a damaged symbol, is an error: a launch that overlaps
 * a kernel which does not wait would race with it). */
static int traits_of(const void *cubin, size_t len, const char *label, gb_kernel_traits *t, gb_err *e) {
    *t = (gb_kernel_traits){0};
    if (dynamic_shared_of(cubin, len, label, &t->dynamic_shared, e)) return -1;
    uint32_t v = 0;
    int r = gb_cubin_u32_object(cubin, len, GB_LAUNCH_OVERLAP_SYMBOL, &v);
    if (r < 0 || v > 1)
        return GB_FAIL(e, "%s: the CUBIN's %s is not 4 bytes of data holding 0 or 1 (declare it with "
                          "GB_LAUNCH_OVERLAP, kernels/cuda/launch_overlap.cuh)", label, GB_LAUNCH_OVERLAP_SYMBOL);
    t->overlap = (int)v;
    return 0;
}

/* Lets fn take `bytes` of dynamic shared memory at launch; the error names the
 * device's limit and the kernel's static shared memory. */
static int allow_dynamic_shared(gb_device *d, CUfunction fn, uint32_t bytes, const char *entry, gb_err *e) {
    int static_bytes = 0;
    CUresult r = gb_cu.FuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
    if (r != CUDA_SUCCESS)
        return gb_cu_fail_at(e, __FILE__, __LINE__, "cuFuncGetAttribute", r, " (static shared memory of %s)", entry);
    uint64_t limit = d->info.max_shared_bytes;
    if ((uint64_t)bytes + (uint64_t)static_bytes > limit)
        return GB_FAIL(e, "%s needs %u bytes of dynamic shared memory and %d static, more than the %llu bytes "
                          "a block may have on %s",
                       entry, bytes, static_bytes, (unsigned long long)limit, d->info.name);
    r = gb_cu.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
    if (r != CUDA_SUCCESS)
        return gb_cu_fail_at(e, __FILE__, __LINE__, "cuFuncSetAttribute", r,
                             " (%u bytes of dynamic shared memory for %s)", bytes, entry);
    return 0;
}

/* Loads a CUBIN, naming the likely cause when the driver is older than NVRTC. */
static int load_module(const void *cubin, CUmodule *mod, const char *label, gb_err *e) {
    CUresult r = gb_cu.ModuleLoadData(mod, cubin);
    if (r == CUDA_SUCCESS) return 0;
    int nvrtc = gb_nvrtc_major * 1000 + gb_nvrtc_minor * 10;
    if (nvrtc > gb_cuda_driver_version)
        return gb_cu_fail_at(e, __FILE__, __LINE__, "cuModuleLoadData", r,
                             " loading %s: NVRTC %d.%d is newer than the driver (CUDA %d.%d); use "
                             "an NVRTC no newer than the driver",
                             label, gb_nvrtc_major, gb_nvrtc_minor, gb_cuda_driver_version / 1000,
                             (gb_cuda_driver_version % 1000) / 10);
    return gb_cu_fail_at(e, __FILE__, __LINE__, "cuModuleLoadData", r, " loading %s", label);
}

/* A kernel read from a file enters, when no entry is given, at the function
 * named like the file (kernels/cuda/copy.cu: copy); a string has no default. */
static const char *entry_of(const gb_kernel_source *src, char *buf, size_t cap) {
    if (src->entry) return src->entry;
    if (!src->dir || !src->label) return NULL;
    const char *base = strrchr(src->label, '/');
    base = base ? base + 1 : src->label;
    const char *dot = strrchr(base, '.');
    size_t n = dot ? (size_t)(dot - base) : strlen(base);
    if (n == 0 || n >= cap) return NULL;
    memcpy(buf, base, n);
    buf[n] = '\0';
    return buf;
}

int gb_cuda_kernel_load(gb_device *d, const gb_kernel_source *src0, gb_kernel *k, gb_err *e) {
    char entry[256];
    gb_kernel_source with_entry = *src0;
    with_entry.entry = entry_of(src0, entry, sizeof entry);
    const gb_kernel_source *src = &with_entry;
    const char *label = label_of(src);
    if (!src->entry || !*src->entry)
        return GB_FAIL(e, "%s: no kernel entry point given (entry = \"name\" of an extern \"C\" __global__ function)", label);
    /* backend.c frees entry and label with the kernel, also after a failure. */
    k->entry = strdup(src->entry);
    k->label = strdup(label);
    cuda_kernel *ck = calloc(1, sizeof *ck);
    if (!k->entry || !k->label || !ck) {
        free(ck);
        return GB_FAIL(e, "out of host memory loading %s", label);
    }
    void *cubin = NULL;
    size_t len = 0;
    int hit = 0;
    gb_cuda_signature sig;
    if (gb_cuda_current(d, e) || gb_cuda_compile(src, d->info.arch, 1, &cubin, &len, NULL, &hit, e))
        goto fail;
    if (load_module(cubin, &ck->mod, label, e)) {
        if (!hit) goto fail;
        /* A cached binary the driver rejects (damaged, or written by another
         * toolkit) is rebuilt once, replacing the cache entry. */
        gb_err_clear(e);
        free(cubin);
        cubin = NULL;
        hit = 0;
        if (gb_cuda_compile(src, d->info.arch, 0, &cubin, &len, NULL, &hit, e) ||
            load_module(cubin, &ck->mod, label, e))
            goto fail;
    }
    gb_kernel_traits traits;
    if (traits_of(cubin, len, label, &traits, e)) goto fail;
    free(cubin);
    cubin = NULL;
    CUresult r = gb_cu.ModuleGetFunction(&ck->fn, ck->mod, src->entry);
    if (r != CUDA_SUCCESS) {
        gb_cu_fail_at(e, __FILE__, __LINE__, "cuModuleGetFunction", r,
                      ": no kernel '%s' in %s (is it declared extern \"C\" __global__?)", src->entry,
                      label);
        goto fail;
    }
    if (param_kinds(src, &sig, e) || cross_check(ck->fn, src, &sig, e)) goto fail;
    if (traits.dynamic_shared && allow_dynamic_shared(d, ck->fn, traits.dynamic_shared, src->entry, e)) goto fail;
    k->dynamic_shared = traits.dynamic_shared;
    k->overlap = traits.overlap;
    k->nparams = sig.nparams;
    memcpy(k->params, sig.kinds, sizeof k->params);
    k->cache_hit = hit;
    k->impl = ck;
    return 0;
fail:
    free(cubin);
    if (ck->mod) {
        gb_err ignore = {0};
        CU(&ignore, ModuleUnload, (ck->mod));
        gb_err_clear(&ignore);
    }
    free(ck);
    return -1;
}

void gb_cuda_kernel_free(gb_kernel *k) {
    if (k->vendor) {
        gb_cuda_vendor_gemm_free(k);
        return;
    }
    cuda_kernel *ck = k->impl;
    if (!ck) return;
    gb_err e = {0};
    /* Launches still queued may run this module's code: wait for them first
     * (a broken device's modules are left to the process's end). */
    if (!k->dev->broken && gb_cuda_wait_stream(k->dev, "launches of a kernel before it is unloaded", &e) == 0)
        CU(&e, ModuleUnload, (ck->mod));
    if (e.msg) fprintf(stderr, "gpubench: warning: unloading kernel %s: %s\n", k->entry, e.msg);
    gb_err_clear(&e);
    free(ck);
    k->impl = NULL;
}

int gb_cuda_kernel_stats(gb_kernel *k, const uint32_t block[3], gb_kernel_stat *out, int max, int *n,
                         gb_err *e) {
    if (gb_cuda_current(k->dev, e)) return -1;
    CUfunction fn = ((cuda_kernel *)k->impl)->fn;
    static const struct { CUfunction_attribute a; const char *name, *what; } attrs[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, "registers_per_thread", "registers each thread holds"},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static_shared_bytes", "statically declared shared memory per block"},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "local_bytes_per_thread", "local memory per thread (spills, arrays)"},
        {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "const_bytes", "user constant memory"},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max_threads_per_block", "the most threads a block of this code may have"},
    };
    int max_threads = 0;
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = 0;
        CUresult r = gb_cu.FuncGetAttribute(&v, attrs[i].a, fn);
        if (r != CUDA_SUCCESS)
            return gb_cu_fail_at(e, __FILE__, __LINE__, "cuFuncGetAttribute", r, " (%s of %s)", attrs[i].name,
                                 k->entry);
        gb_kernel_stat_put(out, max, n, attrs[i].name, v, attrs[i].what);
        if (attrs[i].a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) max_threads = v;
    }
    gb_kernel_stat_put(out, max, n, "dynamic_shared_bytes", k->dynamic_shared, "dynamic shared memory every launch takes");
    uint32_t threads = block[0] * block[1] * block[2];
    if (threads > (uint32_t)max_threads)
        return GB_FAIL(e, "kernel statistics: %s runs at most %d threads a block (its registers or "
                          "__launch_bounds__), not %u", k->entry, max_threads, threads);
    int blocks = 0, sm_threads = 0;
    CUresult r = gb_cu.OccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, (int)threads, k->dynamic_shared);
    if (r != CUDA_SUCCESS)
        return gb_cu_fail_at(e, __FILE__, __LINE__, "cuOccupancyMaxActiveBlocksPerMultiprocessor", r,
                             " (%s, %u threads)", k->entry, threads);
    r = gb_cu.DeviceGetAttribute(&sm_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                                 cuda_dev_of(k->dev)->dev);
    if (r != CUDA_SUCCESS)
        return gb_cu_fail_at(e, __FILE__, __LINE__, "cuDeviceGetAttribute", r, " (threads per SM)");
    uint32_t warps = (threads + 31) / 32;
    gb_kernel_stat_put(out, max, n, "blocks_per_sm", blocks, "blocks of this size resident on one SM (the occupancy calculator)");
    gb_kernel_stat_put(out, max, n, "warps_per_sm", (double)blocks * warps, "their warps");
    gb_kernel_stat_put(out, max, n, "max_warps_per_sm", sm_threads / 32, "the most warps an SM holds");
    return 0;
}

int gb_cuda_compile_only(const gb_kernel_source *src0, const char *target, gb_kind *params,
                         int *nparams, gb_kernel_traits *traits, char **log, gb_err *e) {
    char entry[256];
    gb_kernel_source with_entry = *src0;
    with_entry.entry = entry_of(src0, entry, sizeof entry);
    const gb_kernel_source *src = &with_entry;
    void *cubin = NULL;
    size_t len = 0;
    int hit = 0;
    char *text = NULL;
    if (log) *log = NULL;
    if (!src->entry || !*src->entry)
        return GB_FAIL(e, "%s: no kernel entry point given (entry = \"name\" of an extern \"C\" __global__ function)",
                       label_of(src));
    if (gb_cuda_compile(src, target, 1, &cubin, &len, &text, &hit, e)) return -1;
    /* Without a driver to ask, the CUBIN's symbol table tells whether the entry exists. */
    int has_entry = gb_cubin_has_function(cubin, len, src->entry);
    gb_kernel_traits found;
    int traits_rc = traits_of(cubin, len, label_of(src), &found, e);
    free(cubin);
    if (traits_rc) {
        free(text);
        return -1;
    }
    if (traits) *traits = found;
    gb_cuda_signature sig;
    if (has_entry == 0) {
        free(text);
        return GB_FAIL(e, "%s: no kernel '%s' in the compiled CUBIN (is it declared extern \"C\" "
                          "__global__?)", label_of(src), src->entry);
    }
    if (param_kinds(src, &sig, e)) {
        free(text);
        return -1;
    }
    memcpy(params, sig.kinds, (size_t)sig.nparams * sizeof *params);
    *nparams = sig.nparams;
    if (log)
        *log = text;
    else
        free(text);
    return 0;
}

#endif
