/* SPIR-V reflection (host/vulkan/spirv_reflect.c) on shaders compiled by shaderc:
 * argument kinds and order, push offsets, workgroup sizes (fixed and
 * specialization constants), the errors for what a launch could not bind,
 * malformed modules, and the explicit-parameter consistency check.
 * Needs no GPU. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "glsl_compile.h"
#include "spirv_reflect.h"

/* Compiles GLSL text for target and reflects it; returns the status, *msg the error. */
static int reflect_for(const char *target, const char *code, gb_spv_reflection *r, char **msg)
{
    gb_kernel_source src = {.label = "<test>", .code = code};
    gb_glsl_target t;
    gb_err e = {0};
    uint32_t *words = NULL;
    size_t n = 0;
    char *log = NULL;
    int hit = 0, rc;
    gb_glsl_target_parse(target, &t, &e);
    rc = gb_glsl_compile(&src, &t, &words, &n, &log, &hit, &e);
    if (rc == 0)
        rc = gb_spv_reflect(words, n, "main", "<test>", r, &e);
    free(words);
    free(log);
    *msg = e.msg; /* caller frees */
    return rc;
}

static int reflect_glsl(const char *code, gb_spv_reflection *r, char **msg)
{
    return reflect_for("vulkan1.2", code, r, msg);
}

static void test_kinds_and_order(void)
{
    int before = failures;
    const char *code =
        "#version 450\n"
        "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
        "layout(local_size_x = 64, local_size_y = 2, local_size_z = 1) in;\n"
        "layout(std430, binding = 2) buffer C { uint c[]; } cc;\n"
        "layout(std430, binding = 0) buffer A { uint a[]; } aa;\n"
        "layout(std430, binding = 1) buffer B { float b[]; } bb;\n"
        "layout(push_constant) uniform P { uint n; int k; float f; uint64_t w; } p;\n"
        "void main() { uint i = gl_GlobalInvocationID.x;\n"
        "  cc.c[i] = aa.a[i] + uint(bb.b[i] * p.f) + uint(p.k) + p.n + uint(p.w); }\n";
    gb_spv_reflection r;
    char *msg = NULL;
    int rc = reflect_glsl(code, &r, &msg);
    CHECK(rc == 0, "reflect failed: %s", msg ? msg : "");
    free(msg);
    if (rc != 0)
        return;
    const gb_kind want[] = {GB_ARG_BUFFER, GB_ARG_BUFFER, GB_ARG_BUFFER, GB_ARG_U32,
                            GB_ARG_I32,    GB_ARG_F32,    GB_ARG_U64};
    const uint32_t off[] = {0, 0, 0, 0, 4, 8, 16};
    CHECK(r.nparams == 7 && r.nbuffers == 3, "nparams %d nbuffers %d", r.nparams, r.nbuffers);
    for (int i = 0; i < 7 && i < r.nparams; i++) {
        CHECK(r.kinds[i] == want[i], "param %d kind %s", i, gb_kind_name(r.kinds[i]));
        CHECK(r.push_offset[i] == off[i], "param %d offset %u", i, r.push_offset[i]);
    }
    CHECK(strcmp(r.names[0], "aa") == 0 && strcmp(r.names[2], "cc") == 0,
          "buffer names %s %s", r.names[0], r.names[2]);
    CHECK(strcmp(r.names[3], "n") == 0 && strcmp(r.names[6], "w") == 0, "push names %s %s",
          r.names[3], r.names[6]);
    CHECK(r.push_size == 24, "push_size %u", r.push_size);
    CHECK(r.local_size[0] == 64 && r.local_size[1] == 2 && r.local_size[2] == 1,
          "local size %ux%ux%u", r.local_size[0], r.local_size[1], r.local_size[2]);
    CHECK(r.local_size_spec_id[0] == -1 && r.local_size_spec_id[1] == -1, "spec ids %d %d",
          r.local_size_spec_id[0], r.local_size_spec_id[1]);
    CHECK(gb_spv_has_cap(&r, 11), "Int64 capability not recorded");

    /* Explicit kinds: same sizes may reinterpret, buffers must stay buffers. */
    gb_err e = {0};
    gb_kind ok[] = {GB_ARG_BUFFER, GB_ARG_BUFFER, GB_ARG_BUFFER, GB_ARG_I32,
                    GB_ARG_U32,    GB_ARG_F32,    GB_ARG_U64};
    CHECK(gb_spv_check_params(&r, ok, 7, "<test>", &e) == 0, "%s", e.msg ? e.msg : "");
    gb_err_clear(&e);
    gb_kind bad[] = {GB_ARG_BUFFER, GB_ARG_U64, GB_ARG_BUFFER, GB_ARG_U32,
                     GB_ARG_I32,    GB_ARG_F32, GB_ARG_U64};
    CHECK(gb_spv_check_params(&r, bad, 7, "<test>", &e) != 0 && e.msg &&
              strstr(e.msg, "parameter 2 is buffer in the shader but was declared u64"),
          "msg: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    gb_kind narrow[] = {GB_ARG_BUFFER, GB_ARG_BUFFER, GB_ARG_BUFFER, GB_ARG_U32,
                        GB_ARG_I32,    GB_ARG_F32,    GB_ARG_U32};
    CHECK(gb_spv_check_params(&r, narrow, 7, "<test>", &e) != 0 && e.msg &&
              strstr(e.msg, "parameter 7 is u64"),
          "msg: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    CHECK(gb_spv_check_params(&r, ok, 6, "<test>", &e) != 0 && e.msg &&
              strstr(e.msg, "6 explicit parameters but the shader has 7"),
          "msg: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    report("kinds, order, offsets, local size, explicit params", before);
}

/* vulkan1.2 expresses a specialized size through a WorkgroupSize built-in,
 * vulkan1.3 (SPIR-V 1.6) through LocalSizeId: both must reflect the same. */
static void test_spec_local_size(const char *target)
{
    int before = failures;
    const char *code =
        "#version 450\n"
        "layout(local_size_x_id = 3, local_size_y = 4) in;\n"
        "layout(std430, binding = 0) buffer O { uint o[]; };\n"
        "void main() { o[gl_GlobalInvocationID.x] = gl_WorkGroupSize.x; }\n";
    gb_spv_reflection r;
    char *msg = NULL;
    int rc = reflect_for(target, code, &r, &msg);
    CHECK(rc == 0, "reflect failed: %s", msg ? msg : "");
    free(msg);
    if (rc != 0)
        return;
    CHECK(r.local_size_spec_id[0] == 3, "x spec id %d", r.local_size_spec_id[0]);
    CHECK(r.local_size_spec_id[1] == -1 && r.local_size[1] == 4, "y %d/%u",
          r.local_size_spec_id[1], r.local_size[1]);
    CHECK(r.local_size_spec_id[2] == -1 && r.local_size[2] == 1, "z %d/%u",
          r.local_size_spec_id[2], r.local_size[2]);
    CHECK(r.nparams == 1 && r.kinds[0] == GB_ARG_BUFFER && r.push_size == 0,
          "nparams %d push %u", r.nparams, r.push_size);
    char name[96];
    snprintf(name, sizeof name, "specialization-constant workgroup size (%s)", target);
    report(name, before);
}

/* Each shader must fail reflection with a message containing `want`. */
static void expect_error(const char *what, const char *code, const char *want)
{
    int before = failures;
    gb_spv_reflection r;
    char *msg = NULL;
    int rc = reflect_glsl(code, &r, &msg);
    CHECK(rc != 0 && msg && strstr(msg, want), "%s: rc %d, message: %s (wanted '%s')", what, rc,
          msg ? msg : "(none)", want);
    free(msg);
    char name[128];
    snprintf(name, sizeof name, "error: %s", what);
    report(name, before);
}

static void test_errors(void)
{
    expect_error("binding gap",
                 "#version 450\nlayout(local_size_x=1) in;\n"
                 "layout(binding=0) buffer A { uint a[]; };\n"
                 "layout(binding=2) buffer C { uint c[]; };\n"
                 "void main() { a[0] = c[0]; }\n",
                 "binding 1 is missing");
    expect_error("shared binding",
                 "#version 450\nlayout(local_size_x=1) in;\n"
                 "layout(binding=0) buffer A { uint a[]; };\n"
                 "layout(binding=0) buffer C { uint c[]; };\n"
                 "void main() { a[0] = c[0]; }\n",
                 "share binding 0");
    expect_error("vector push member",
                 "#version 450\nlayout(local_size_x=1) in;\n"
                 "layout(binding=0) buffer A { vec2 a[]; };\n"
                 "layout(push_constant) uniform P { uint n; vec2 scale; };\n"
                 "void main() { a[n] = scale; }\n",
                 "push-constant member 'scale' is a 2-component vector");
    expect_error("signed 64-bit push member",
                 "#version 450\n"
                 "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
                 "layout(local_size_x=1) in;\n"
                 "layout(binding=0) buffer A { int64_t a[]; };\n"
                 "layout(push_constant) uniform P { int64_t big; };\n"
                 "void main() { a[0] = big; }\n",
                 "'big' is int64_t");
    expect_error("uniform buffer",
                 "#version 450\nlayout(local_size_x=1) in;\n"
                 "layout(binding=0) buffer A { uint a[]; };\n"
                 "layout(binding=1) uniform U { uint u; };\n"
                 "void main() { a[0] = u; }\n",
                 "is a uniform buffer");
    expect_error("descriptor set 1",
                 "#version 450\nlayout(local_size_x=1) in;\n"
                 "layout(set=1, binding=0) buffer A { uint a[]; };\n"
                 "void main() { a[0] = 1u; }\n",
                 "descriptor set 1");
    expect_error("array of buffers",
                 "#version 450\nlayout(local_size_x=1) in;\n"
                 "layout(binding=0) buffer A { uint a[]; } arr[2];\n"
                 "void main() { arr[0].a[0] = arr[1].a[0]; }\n",
                 "array of buffers");
}

static void test_malformed(void)
{
    int before = failures;
    gb_spv_reflection r;
    gb_err e = {0};
    uint32_t bad_magic[8] = {0x03022307u, 0x10500, 0, 10, 0};
    CHECK(gb_spv_reflect(bad_magic, 8, "main", "m.spv", &r, &e) != 0 && e.msg &&
              strstr(e.msg, "m.spv: magic 0x03022307"),
          "msg: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    CHECK(gb_spv_reflect(bad_magic, 3, "main", "m.spv", &r, &e) != 0 && e.msg &&
              strstr(e.msg, "shorter than a SPIR-V header"),
          "msg: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    /* An instruction whose word count runs past the end. */
    uint32_t trunc[7] = {0x07230203u, 0x10500, 0, 10, 0, (5u << 16) | 17u, 1};
    CHECK(gb_spv_reflect(trunc, 7, "main", "t.spv", &r, &e) != 0 && e.msg &&
              strstr(e.msg, "truncated instruction at word 5"),
          "msg: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    /* A valid header and capability but no GLCompute entry named main. */
    uint32_t noentry[7] = {0x07230203u, 0x10500, 0, 10, 0, (2u << 16) | 17u, 1};
    CHECK(gb_spv_reflect(noentry, 7, "main", "n.spv", &r, &e) != 0 && e.msg &&
              strstr(e.msg, "no GLCompute entry point named 'main'"),
          "msg: %s", e.msg ? e.msg : "(none)");
    gb_err_clear(&e);
    report("malformed modules", before);
}

int main(void)
{
    setenv("GPUBENCH_NO_CACHE", "1", 1); /* reflection, not the cache, is under test */
    test_kinds_and_order();
    test_spec_local_size("vulkan1.2");
    test_spec_local_size("vulkan1.3");
    test_errors();
    test_malformed();
    return check_finish("test_spirv_reflect");
}
