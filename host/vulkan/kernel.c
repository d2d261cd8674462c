/* Vulkan kernels: GLSL compiled to SPIR-V (glsl_compile.c), reflected
 * (spirv_reflect.c: buffers of set 0, then push constants), and turned into
 * compute pipelines.
 *
 * A shader whose workgroup size comes from specialization constants
 * (layout(local_size_x_id = 0) in;) gets one pipeline per distinct block size
 * it is launched with, created on first use; its gb_kernel.local_size is 0 so
 * any block size is accepted there. A fixed-size shader gets its pipeline at
 * load time, so driver errors surface at load, not in the first launch. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_internal.h"

/* SPIR-V capabilities that need a device feature enabled at device creation. */
static int missing_feature(const vk_device *vd, const gb_spv_reflection *r, const char **name)
{
    const struct { uint32_t cap; int have; const char *feature; } need[] = {
        {9, vd->feat_float16, "shaderFloat16"},
        {10, vd->feat.shaderFloat64, "shaderFloat64"},
        {11, vd->feat.shaderInt64, "shaderInt64"},
        {22, vd->feat.shaderInt16, "shaderInt16"},
        {39, vd->feat_int8, "shaderInt8"},
        {4433, vd->feat_sb16, "storageBuffer16BitAccess"},
        {4435, vd->feat_pc16, "storagePushConstant16"},
        {4448, vd->feat_sb8, "storageBuffer8BitAccess"},
        {4450, vd->feat_pc8, "storagePushConstant8"},
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (gb_spv_has_cap(r, need[i].cap) && !need[i].have) {
            *name = need[i].feature;
            return 1;
        }
    return 0;
}

/* Reflection plus the explicit-parameter check, shared by load and compile_only. */
static int reflect(const gb_kernel_source *src, const uint32_t *words, size_t nwords,
                   const char *label, gb_spv_reflection *r, gb_err *e)
{
    if (gb_spv_reflect(words, nwords, "main", label, r, e) != 0)
        return -1;
    if (src->params && gb_spv_check_params(r, src->params, src->nparams, label, e) != 0)
        return -1;
    if (src->params)
        memcpy(r->kinds, src->params, (size_t)src->nparams * sizeof r->kinds[0]);
    return 0;
}

static int create_pipeline(vk_device *vd, vk_kernel *vk, const uint32_t block[3],
                           VkPipelineCreateFlags flags, const char *label, VkPipeline *pipe, gb_err *e)
{
    VkSpecializationMapEntry map[3];
    uint32_t data[3];
    uint32_t n = 0;
    for (int d = 0; d < 3; d++) {
        int32_t id = vk->refl.local_size_spec_id[d];
        int dup = 0;
        for (uint32_t j = 0; j < n; j++)
            dup |= map[j].constantID == (uint32_t)id;
        if (id < 0 || dup) /* one SpecId feeding two dimensions takes the first's size */
            continue;
        map[n] = (VkSpecializationMapEntry){(uint32_t)id, n * 4, 4};
        data[n++] = block[d];
    }
    VkSpecializationInfo spec = {n, map, n * 4, data};
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .flags = flags,
        .stage = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
            .stage = VK_SHADER_STAGE_COMPUTE_BIT,
            .module = vk->module,
            .pName = "main",
            .pSpecializationInfo = n ? &spec : NULL,
        },
        .layout = vk->layout,
    };
    VkResult r = vd->f.vkCreateComputePipelines(vd->dev, VK_NULL_HANDLE, 1, &ci, NULL, pipe);
    if (r != VK_SUCCESS) {
        *pipe = VK_NULL_HANDLE;
        return VK_FAILX(e, "vkCreateComputePipelines", r, "%s, block %ux%ux%u", label, block[0],
                        block[1], block[2]);
    }
    return 0;
}

static int add_variant(vk_device *vd, vk_kernel *vk, const uint32_t block[3], const char *label,
                       VkPipeline *pipe, gb_err *e)
{
    if (vk->nvariants == vk->cap_variants) {
        int c = vk->cap_variants ? vk->cap_variants * 2 : 2;
        vk_variant *v = realloc(vk->variants, (size_t)c * sizeof *v);
        if (!v)
            return GB_FAIL(e, "vkCreateComputePipelines failed: OUT_OF_HOST_MEMORY (%s)", label);
        vk->variants = v;
        vk->cap_variants = c;
    }
    if (create_pipeline(vd, vk, block, 0, label, pipe, e) != 0)
        return -1;
    vk_variant *v = &vk->variants[vk->nvariants++];
    memcpy(v->block, block, sizeof v->block);
    v->pipe = *pipe;
    return 0;
}

/* A block the shader can run: each dimension its fixed size, or any where a
 * specialization constant sets it. `what` starts the message ("launch"). */
static int check_block(const gb_kernel *k, const vk_kernel *vk, const uint32_t block[3], const char *what,
                       gb_err *e)
{
    const uint32_t *ls = vk->refl.local_size;
    for (int d = 0; d < 3; d++)
        if (vk->refl.local_size_spec_id[d] < 0 && block[d] != ls[d])
            return GB_FAIL(e, "%s failed: BLOCK_SIZE_MISMATCH (kernel %s: the shader fixes "
                              "the workgroup size %c to %u (local size %ux%ux%u) but the %s "
                              "asked for block %ux%ux%u)", what, k->label, "xyz"[d], ls[d],
                           ls[0], ls[1], ls[2], what, block[0], block[1], block[2]);
    return 0;
}

int vk_kernel_pipeline(gb_kernel *k, const uint32_t block[3], VkPipeline *pipe, gb_err *e)
{
    vk_kernel *vk = k->impl;
    if (check_block(k, vk, block, "launch", e) != 0)
        return -1;
    /* A fixed-size kernel has exactly one pipeline; a specialized one, one per block size. */
    for (int i = 0; i < vk->nvariants; i++) {
        const vk_variant *v = &vk->variants[i];
        if (!vk->specialized || memcmp(v->block, block, sizeof v->block) == 0) {
            *pipe = v->pipe;
            return 0;
        }
    }
    return add_variant(vk_dev(k->dev), vk, block, k->label, pipe, e);
}

/* The driver's statistics of the pipeline for `block`: a pipeline of its own,
 * created to capture them (the launched pipelines are made without, as
 * capturing may cost a driver its pipeline cache), queried and destroyed. */
int vk_kernel_stats(gb_kernel *k, const uint32_t block[3], gb_kernel_stat *out, int max, int *n, gb_err *e)
{
    vk_device *vd = vk_dev(k->dev);
    vk_kernel *vk = k->impl;
    if (check_block(k, vk, block, "kernel statistics", e) != 0)
        return -1;
    if (!vd->exec_stats)
        return GB_FAIL(e, "kernel statistics: %s does not offer VK_KHR_pipeline_executable_properties "
                          "(pipelineExecutableInfo)", k->dev->info.name);
    VkPipeline pipe;
    if (create_pipeline(vd, vk, block, VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR, k->label, &pipe, e) != 0)
        return -1;
    VkPipelineInfoKHR pinfo = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe};
    uint32_t nexec = 0;
    VkResult r = vd->exec_props(vd->dev, &pinfo, &nexec, NULL);
    int rc = 0;
    if (r != VK_SUCCESS) {
        rc = VK_FAILX(e, "vkGetPipelineExecutablePropertiesKHR", r, "%s", k->label);
        goto done;
    }
    if (nexec == 0) {
        rc = GB_FAIL(e, "kernel statistics: the driver reports no executable for %s", k->label);
        goto done;
    }
    /* A compute pipeline has one executable, its shader. */
    VkPipelineExecutableInfoKHR einfo = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                         .pipeline = pipe, .executableIndex = 0};
    uint32_t ns = 0;
    r = vd->exec_stats(vd->dev, &einfo, &ns, NULL);
    if (r != VK_SUCCESS) {
        rc = VK_FAILX(e, "vkGetPipelineExecutableStatisticsKHR", r, "%s", k->label);
        goto done;
    }
    VkPipelineExecutableStatisticKHR *st = calloc(ns ? ns : 1, sizeof *st);
    if (!st) {
        rc = GB_FAIL(e, "kernel statistics: out of host memory (%u statistics)", ns);
        goto done;
    }
    for (uint32_t i = 0; i < ns; i++)
        st[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
    r = vd->exec_stats(vd->dev, &einfo, &ns, st);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(st);
        rc = VK_FAILX(e, "vkGetPipelineExecutableStatisticsKHR", r, "%s", k->label);
        goto done;
    }
    for (uint32_t i = 0; i < ns; i++) {
        double v = 0;
        switch (st[i].format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: v = st[i].value.b32 ? 1 : 0; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: v = (double)st[i].value.i64; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: v = (double)st[i].value.u64; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: v = st[i].value.f64; break;
        default: continue;
        }
        gb_kernel_stat_put(out, max, n, st[i].name, v, st[i].description);
    }
    free(st);
done:
    vd->f.vkDestroyPipeline(vd->dev, pipe, NULL);
    return rc;
}

static void destroy_kernel(vk_device *vd, void *obj)
{
    vk_kernel *vk = obj;
    for (int i = 0; i < vk->nvariants; i++)
        vd->f.vkDestroyPipeline(vd->dev, vk->variants[i].pipe, NULL);
    free(vk->variants);
    if (vk->layout)
        vd->f.vkDestroyPipelineLayout(vd->dev, vk->layout, NULL);
    if (vk->set_layout)
        vd->f.vkDestroyDescriptorSetLayout(vd->dev, vk->set_layout, NULL);
    if (vk->module)
        vd->f.vkDestroyShaderModule(vd->dev, vk->module, NULL);
    free(vk);
}

/* Shader module, set layout (one storage buffer per binding) and pipeline layout. */
static int create_layouts(vk_device *vd, vk_kernel *vk, const uint32_t *words, size_t nwords,
                          gb_err *e)
{
    VkShaderModuleCreateInfo mci = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = nwords * 4,
        .pCode = words,
    };
    VkResult r = vd->f.vkCreateShaderModule(vd->dev, &mci, NULL, &vk->module);
    if (r != VK_SUCCESS) {
        vk->module = VK_NULL_HANDLE;
        return VK_FAIL(e, "vkCreateShaderModule", r);
    }
    VkDescriptorSetLayoutBinding b[GB_MAX_PARAMS];
    for (int i = 0; i < vk->refl.nbuffers; i++)
        b[i] = (VkDescriptorSetLayoutBinding){
            .binding = (uint32_t)i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    VkDescriptorSetLayoutCreateInfo lci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = (uint32_t)vk->refl.nbuffers,
        .pBindings = b,
    };
    r = vd->f.vkCreateDescriptorSetLayout(vd->dev, &lci, NULL, &vk->set_layout);
    if (r != VK_SUCCESS) {
        vk->set_layout = VK_NULL_HANDLE;
        return VK_FAIL(e, "vkCreateDescriptorSetLayout", r);
    }
    VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, vk->refl.push_size};
    VkPipelineLayoutCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &vk->set_layout,
        .pushConstantRangeCount = vk->refl.push_size ? 1 : 0,
        .pPushConstantRanges = &pr,
    };
    r = vd->f.vkCreatePipelineLayout(vd->dev, &pci, NULL, &vk->layout);
    if (r != VK_SUCCESS) {
        vk->layout = VK_NULL_HANDLE;
        return VK_FAIL(e, "vkCreatePipelineLayout", r);
    }
    return 0;
}

/* Builds the kernel object from checked SPIR-V. */
static int build(vk_device *vd, gb_kernel *k, vk_kernel *vk, const uint32_t *words,
                 size_t nwords, gb_err *e)
{
    const char *feature;
    if (missing_feature(vd, &vk->refl, &feature))
        return GB_FAIL(e, "kernel load failed: VK_ERROR_FEATURE_NOT_PRESENT (%s needs the "
                          "device feature %s, which %s lacks)", k->label, feature,
                       k->dev->info.name);
    if (vk->refl.push_size > vd->limits.maxPushConstantsSize || vk->refl.push_size > VK_PUSH_MAX)
        return GB_FAIL(e, "kernel load failed: PUSH_CONSTANTS_TOO_LARGE (%s: the push-constant "
                          "block spans %u bytes; the device allows maxPushConstantsSize = %u)",
                       k->label, vk->refl.push_size, vd->limits.maxPushConstantsSize);
    if (create_layouts(vd, vk, words, nwords, e) != 0)
        return -1;
    for (int d = 0; d < 3; d++)
        vk->specialized |= vk->refl.local_size_spec_id[d] >= 0;
    if (vk->specialized)
        return 0; /* pipelines per block size, at launch */
    memcpy(k->local_size, vk->refl.local_size, sizeof k->local_size);
    VkPipeline pipe;
    return add_variant(vd, vk, vk->refl.local_size, k->label, &pipe, e);
}

int vk_kernel_load(gb_device *d, const gb_kernel_source *src, gb_kernel *k, gb_err *e)
{
    vk_device *vd = vk_dev(d);
    const char *label = src->label ? src->label : "<string>";
    k->entry = strdup(src->entry ? src->entry : "main");
    k->label = strdup(label);
    if (!k->entry || !k->label)
        return GB_FAIL(e, "kernel load failed: OUT_OF_HOST_MEMORY (%s)", label);
    uint32_t *words;
    size_t nwords;
    char *log;
    if (gb_glsl_compile(src, &vd->target, &words, &nwords, &log, &k->cache_hit, e) != 0)
        return -1;
    if (log) /* warnings are worth seeing; there is no other channel for them here */
        fprintf(stderr, "gpubench: warnings compiling %s:\n%s\n", label, log);
    free(log);
    vk_kernel *vk = calloc(1, sizeof *vk);
    int rc = vk ? 0 : GB_FAIL(e, "kernel load failed: OUT_OF_HOST_MEMORY (%s)", label);
    if (rc == 0)
        rc = reflect(src, words, nwords, label, &vk->refl, e);
    if (rc == 0)
        rc = build(vd, k, vk, words, nwords, e);
    free(words);
    if (rc != 0) {
        if (vk)
            destroy_kernel(vd, vk);
        return -1;
    }
    k->nparams = vk->refl.nparams;
    memcpy(k->params, vk->refl.kinds, (size_t)k->nparams * sizeof k->params[0]);
    k->impl = vk;
    return 0;
}

void vk_kernel_free(gb_kernel *k)
{
    vk_kernel *vk = k->impl;
    k->impl = NULL;
    if (vk)
        vk_defer(vk_dev(k->dev), vk->last_use, destroy_kernel, vk);
}

int vk_compile_only(const gb_kernel_source *src, const char *target, gb_kind *params,
                    int *nparams, gb_kernel_traits *traits, char **log, gb_err *e)
{
    gb_glsl_target t;
    const char *label = src->label ? src->label : "<string>";
    *log = NULL;
    /* GLSL sizes shared memory in the shader; no Vulkan launch overlaps */
    if (traits) *traits = (gb_kernel_traits){0};
    if (gb_glsl_target_parse(target, &t, e) != 0)
        return -1;
    uint32_t *words;
    size_t nwords;
    int hit;
    if (gb_glsl_compile(src, &t, &words, &nwords, log, &hit, e) != 0)
        return -1;
    gb_spv_reflection *r = malloc(sizeof *r);
    int rc = r ? reflect(src, words, nwords, label, r, e)
               : GB_FAIL(e, "compile failed: OUT_OF_HOST_MEMORY (%s)", label);
    free(words);
    if (rc == 0) {
        *nparams = r->nparams;
        memcpy(params, r->kinds, (size_t)r->nparams * sizeof params[0]);
    } else {
        free(*log);
        *log = NULL;
    }
    free(r);
    return rc;
}
