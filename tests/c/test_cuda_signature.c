/* Parameter kinds read from CUDA kernel source (host/cuda/signature.c):
 * realistic signatures with comments, __launch_bounds__, macros, line breaks,
 * and the exact messages of every error. Needs no GPU and no CUDA library. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cuda_signature.h"
#include "test_util.h"

static const char *names_text(const gb_cuda_signature *s) {
    static char buf[2048];
    buf[0] = 0;
    for (int i = 0; i < s->nparams; i++) {
        strcat(buf, i ? "," : "");
        strcat(buf, s->names[i]);
    }
    return buf;
}

/* Parses and expects success with the given kinds (and names, unless NULL). */
static void expect_ok(const char *what, const char *code, const char *entry,
                      const gb_define *defs, int ndefs, const char *kinds, const char *names,
                      int line) {
    gb_cuda_signature s;
    gb_err e = {0};
    int rc = gb_cuda_parse_signature("test.cu", code, entry, defs, ndefs, &s, &e);
    CHECK(rc == 0, "%s: parse failed: %s", what, e.msg ? e.msg : "(no message)");
    if (rc == 0) {
        CHECK(strcmp(kinds_text(s.kinds, s.nparams), kinds) == 0, "%s: kinds '%s', expected '%s'", what,
              kinds_text(s.kinds, s.nparams), kinds);
        if (names)
            CHECK(strcmp(names_text(&s), names) == 0, "%s: names '%s', expected '%s'", what,
                  names_text(&s), names);
        if (line) CHECK(s.line == line, "%s: line %d, expected %d", what, s.line, line);
    }
    gb_err_clear(&e);
}

/* Expects failure with exactly `msg`, followed by the " [host/cuda/signature.c:N]"
 * that every gb_err carries. */
static void expect_error(const char *what, const char *label, const char *code, const char *entry,
                         const gb_define *defs, int ndefs, const char *msg) {
    gb_cuda_signature s;
    gb_err e = {0};
    int rc = gb_cuda_parse_signature(label, code, entry, defs, ndefs, &s, &e);
    CHECK(rc == -1, "%s: parse succeeded, expected an error", what);
    if (rc == -1) {
        size_t n = strlen(msg);
        const char *got = e.msg ? e.msg : "";
        int line = 0;
        int same = strncmp(got, msg, n) == 0 &&
                   sscanf(got + n, " [host/cuda/signature.c:%d]", &line) == 1 && line > 0 &&
                   got[strlen(got) - 1] == ']';
        CHECK(same, "%s:\n  got      '%s'\n  expected '%s [host/cuda/signature.c:N]'", what, got, msg);
    }
    gb_err_clear(&e);
}

static void test_realistic(void) {
    expect_ok("copy kernel",
              "extern \"C\" __global__ void copy(const uint4* __restrict__ src, uint4* "
              "__restrict__ dst, unsigned n16)\n{\n}\n",
              "copy", NULL, 0, "buffer,buffer,u32", "src,dst,n16", 1);

    /* Decoys in comments and strings, __launch_bounds__ between void and the
     * name, one parameter per line with trailing comments. */
    const char *gemv =
        "// extern \"C\" __global__ void gemv(double bogus)\n"
        "/* extern \"C\" __global__ void gemv(double bogus) */\n"
        "static const char *doc = \"extern \\\"C\\\" __global__ void gemv(double x)\";\n"
        "#define ROWS 4\n"
        "extern \"C\" __global__ void __launch_bounds__(256, 2)\n"
        "gemv(const float *__restrict__ w,   // weights, row-major\n"
        "     const float* x, /* activations */\n"
        "     float *y,\n"
        "     unsigned int m,\n"
        "     int k,\n"
        "     float alpha,\n"
        "     unsigned long long stride,\n"
        "     size_t count,\n"
        "     uint64_t off,\n"
        "     int32_t delta,\n"
        "     uint32_t flags,\n"
        "     signed s,\n"
        "     unsigned long ul,\n"
        "     const volatile unsigned q)\n"
        "{\n  y[0] = w[0] * x[0] * alpha;\n}\n";
    expect_ok("multi-line gemv", gemv, "gemv", NULL, 0,
              "buffer,buffer,buffer,u32,i32,f32,u64,u64,u64,i32,u32,i32,u64,u32",
              "w,x,y,m,k,alpha,stride,count,off,delta,flags,s,ul,q", 6);

    expect_ok("__launch_bounds__ before __global__",
              "extern \"C\" __launch_bounds__(128) __global__ void k(float4 *out, unsigned n) {}",
              "k", NULL, 0, "buffer,u32", "out,n", 1);

    /* An extern "C" block, a __device__ helper and a call of the helper that
     * must not be mistaken for the kernel. */
    const char *block =
        "__device__ float scale(float x) { return 2.0f * x; }\n"
        "extern \"C\" {\n"
        "__global__ void scale_all(float *p, float s, int n)\n"
        "{\n"
        "    p[0] = scale(s);\n"
        "}\n"
        "}\n";
    expect_ok("extern C block", block, "scale_all", NULL, 0, "buffer,f32,i32", "p,s,n", 3);
    expect_error("a __device__ function is not a kernel", "kernels/cuda/scale.cu", block, "scale",
                 NULL, 0,
                 "kernels/cuda/scale.cu: no extern \"C\" __global__ function 'scale' found in the "
                 "source; pass params={...} explicitly");

    /* A prototype, then a call inside another kernel, then the definition. */
    expect_ok("prototype first",
              "extern \"C\" __global__ void step(unsigned *p, unsigned n);\n"
              "extern \"C\" __global__ void twice(unsigned *p, unsigned n) { step(p, n); }\n",
              "step", NULL, 0, "buffer,u32", "p,n", 1);

    expect_ok("unnamed parameters", "extern \"C\" __global__ void u(float*, unsigned int, int, float) {}",
              "u", NULL, 0, "buffer,u32,i32,f32", ",,,", 1);
    expect_ok("arrays are pointers", "extern \"C\" __global__ void a(float x[], int y[4]) {}", "a",
              NULL, 0, "buffer,buffer", "x,y", 1);
    expect_ok("(void)", "extern \"C\" __global__ void empty(void) {}", "empty", NULL, 0, "", "", 1);
    expect_ok("()", "extern \"C\" __global__ void empty() {}", "empty", NULL, 0, "", "", 1);
    expect_ok("default argument with a shift",
              "extern \"C\" __global__ void d(float *p, unsigned n = 1 << 4) {}", "d", NULL, 0,
              "buffer,u32", "p,n", 1);
    expect_ok("std:: and :: prefixes",
              "extern \"C\" __global__ void q(std::size_t a, ::uint32_t b, cuda::std::uint64_t c) {}",
              "q", NULL, 0, "u64,u32,u64", "a,b,c", 1);
    expect_ok("pointer to an unknown type is a buffer",
              "extern \"C\" __global__ void q4(const block_q4_0 * __restrict__ w, const __half *x, "
              "__nv_bfloat16 *y) {}",
              "q4", NULL, 0, "buffer,buffer,buffer", "w,x,y", 1);
    expect_ok("alignment attribute",
              "extern \"C\" __global__ void al(__align__(16) float *p, unsigned n) {}", "al", NULL,
              0, "buffer,u32", "p,n", 1);
    expect_ok("int unsigned order and long int",
              "extern \"C\" __global__ void o(int unsigned a, long unsigned int b, unsigned long int c) {}",
              "o", NULL, 0, "u32,u64,u64", "a,b,c", 1);
    expect_ok("CRLF line endings",
              "// kernel\r\nextern \"C\" __global__ void crlf(float *p,\r\n  unsigned n)\r\n{\r\n}\r\n",
              "crlf", NULL, 0, "buffer,u32", "p,n", 2);
}

static void test_macros(void) {
    /* The source's own object-like defines, including a continued line. */
    const char *src =
        "#define T float\n"
        "#define INDEX \\\n"
        "    unsigned\n"
        "#define KERNEL extern \"C\" __global__\n"
        "#define SQUARE(x) ((x) * (x))\n"
        "KERNEL void axpy(T *y, const T *x, T a, INDEX n) {}\n";
    expect_ok("source defines", src, "axpy", NULL, 0, "buffer,buffer,f32,u32", "y,x,a,n", 6);

    /* The caller's defines come first, as -D does, and an empty value reads
     * as 1 (it is passed as -DNAME). */
    const char *acc =
        "#ifndef ACC\n"
        "#define ACC float\n"
        "#endif\n"
        "extern \"C\" __global__ void reduce(const ACC *in, ACC init, BOUND_T bound) {}\n";
    gb_define defs[] = {{"ACC", "int"}, {"BOUND_T", "unsigned long long"}};
    expect_ok("caller defines win", acc, "reduce", defs, 2, "buffer,i32,u64", "in,init,bound", 4);
    gb_define only_bound[] = {{"BOUND_T", "unsigned"}};
    expect_ok("source default when not defined", acc, "reduce", only_bound, 1, "buffer,f32,u32",
              "in,init,bound", 4);

    gb_define self[] = {{"LOOP", "LOOP"}};
    expect_error("a macro naming itself stops expanding", "loop.cu",
                 "extern \"C\" __global__ void k(LOOP x) {}", "k", self, 1,
                 "loop.cu:1: parameter 1 'x' of k has type 'LOOP', which has no gpubench argument "
                 "kind (buffer, u32, i32, f32, u64); pass params={...} explicitly");
}

static void test_errors(void) {
    const char *tail = ", which has no gpubench argument kind (buffer, u32, i32, f32, u64); pass "
                       "params={...} explicitly";
    char msg[512];

    snprintf(msg, sizeof msg, "kernels/cuda/h.cu:3: parameter 2 'scale' of h has type '__half'%s", tail);
    expect_error("half scalar", "kernels/cuda/h.cu",
                 "#include <cuda_fp16.h>\n"
                 "extern \"C\" __global__ void h(const __half *x,\n"
                 "                               __half scale, float *y) {}\n",
                 "h", NULL, 0, msg);

    snprintf(msg, sizeof msg, "x.cu:1: parameter 1 'n' of k has type 'long long'%s", tail);
    expect_error("signed 64-bit", "x.cu", "extern \"C\" __global__ void k(long long n) {}", "k",
                 NULL, 0, msg);

    snprintf(msg, sizeof msg, "x.cu:1: parameter 2 'x' of k has type 'const float&'%s", tail);
    expect_error("reference", "x.cu", "extern \"C\" __global__ void k(float *p, const float &x) {}",
                 "k", NULL, 0, msg);

    snprintf(msg, sizeof msg, "x.cu:1: parameter 1 (unnamed) of k has type 'double'%s", tail);
    expect_error("unnamed double", "x.cu", "extern \"C\" __global__ void k(double) {}", "k", NULL,
                 0, msg);

    snprintf(msg, sizeof msg,
             "<string>:2: parameter 1 'p' of k has type '__grid_constant__ const Params'%s", tail);
    expect_error("struct by value", NULL,
                 "struct Params { int a; };\n"
                 "extern \"C\" __global__ void k(__grid_constant__ const Params p) {}\n",
                 "k", NULL, 0, msg);

    snprintf(msg, sizeof msg, "x.cu:4: parameter 3 'flag' of k has type 'bool'%s", tail);
    expect_error("line of the bad parameter", "x.cu",
                 "extern \"C\" __global__ void k(\n"
                 "    float *p,\n"
                 "    unsigned n,\n"
                 "    bool flag) {}\n",
                 "k", NULL, 0, msg);

    expect_error("entry not found", NULL, "extern \"C\" __global__ void k(float *p) {}", "nothere",
                 NULL, 0,
                 "<string>: no extern \"C\" __global__ function 'nothere' found in the source; "
                 "pass params={...} explicitly");
    expect_error("entry only in a comment", "c.cu",
                 "// extern \"C\" __global__ void gone(float *p) {}\n", "gone", NULL, 0,
                 "c.cu: no extern \"C\" __global__ function 'gone' found in the source; pass "
                 "params={...} explicitly");
    expect_error("unterminated list", "x.cu", "extern \"C\" __global__ void k(float *p,\n unsigned n",
                 "k", NULL, 0, "x.cu:1: the parameter list of k is not closed");
    expect_error("empty parameter", "x.cu",
                 "extern \"C\" __global__ void k(float *p, , unsigned n) {}", "k", NULL, 0,
                 "x.cu:1: parameter 2 of k is empty");
    expect_error("no entry", "x.cu", "extern \"C\" __global__ void k() {}", "", NULL, 0,
                 "x.cu: no kernel entry point given");

    char many[4096] = "extern \"C\" __global__ void wide(";
    for (int i = 0; i < GB_MAX_PARAMS + 1; i++) {
        char p[32];
        snprintf(p, sizeof p, "%sunsigned a%d", i ? ", " : "", i);
        strcat(many, p);
    }
    strcat(many, ") {}");
    snprintf(msg, sizeof msg, "x.cu:1: wide has more than %d parameters, the most gpubench supports",
             GB_MAX_PARAMS);
    expect_error("too many parameters", "x.cu", many, "wide", NULL, 0, msg);
    /* Exactly the maximum is fine. */
    char *last = strstr(many, ", unsigned a32");
    if (last) strcpy(last, ") {}");
    gb_cuda_signature s;
    gb_err e = {0};
    CHECK(gb_cuda_parse_signature("x.cu", many, "wide", NULL, 0, &s, &e) == 0 &&
              s.nparams == GB_MAX_PARAMS,
          "%d parameters: %s", GB_MAX_PARAMS, e.msg ? e.msg : "wrong count");
    gb_err_clear(&e);
}

int main(void) {
    test_realistic();
    test_macros();
    test_errors();
    return check_finish("test_cuda_signature");
}
