/* cuBLASLt as the vendor baseline: a bf16 GEMM planned once (layouts,
 * heuristic algorithm, workspace) and issued as one cublasLtMatmul on the
 * device's stream wherever a kernel launch would be issued.
 *
 * cublasLt.h is read for its types only; every function comes from dlsym,
 * so gpubench builds and starts without cuBLAS, and only a script that asks
 * for the vendor GEMM needs the library.
 *
 * Row-major y[T,N] = x[T,K] · W[N,K]^T is, read column-major, the TN GEMM
 * y^T[N,T] = W[N,K] · x^T[K,T]: A is W stored as a K x N column-major matrix
 * (ld K) used transposed, B is x stored as K x T (ld K), C = D is y stored
 * as N x T (ld N). */
#define _GNU_SOURCE
#include "cuda_blaslt.h"

#if GPUBENCH_HAVE_CUDA_HEADERS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if GPUBENCH_HAVE_CUBLASLT_HEADER
#include <cublasLt.h>
#include <dlfcn.h>
#include <stddef.h>

/* The heuristic may choose any algorithm whose workspace fits this. */
enum { LT_WORKSPACE_LIMIT = 32 << 20 };

typedef struct lt_api {
    __typeof__(&cublasLtGetVersion) GetVersion;
    __typeof__(&cublasLtGetStatusName) GetStatusName;
    __typeof__(&cublasLtGetStatusString) GetStatusString;
    __typeof__(&cublasLtCreate) Create;
    __typeof__(&cublasLtDestroy) Destroy;
    __typeof__(&cublasLtMatmulDescCreate) MatmulDescCreate;
    __typeof__(&cublasLtMatmulDescDestroy) MatmulDescDestroy;
    __typeof__(&cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute;
    __typeof__(&cublasLtMatrixLayoutCreate) MatrixLayoutCreate;
    __typeof__(&cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy;
    __typeof__(&cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate;
    __typeof__(&cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy;
    __typeof__(&cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute;
    __typeof__(&cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic;
    __typeof__(&cublasLtMatmulAlgoConfigGetAttribute) MatmulAlgoConfigGetAttribute;
    __typeof__(&cublasLtMatmul) Matmul;
} lt_api;

static lt_api lt;

#define LT_SYM(field) {offsetof(lt_api, field), "cublasLt" #field}
static const struct {
    size_t offset;
    const char *name;
} lt_syms[] = {
    LT_SYM(GetVersion),         LT_SYM(GetStatusName),          LT_SYM(GetStatusString),
    LT_SYM(Create),             LT_SYM(Destroy),                LT_SYM(MatmulDescCreate),
    LT_SYM(MatmulDescDestroy),  LT_SYM(MatmulDescSetAttribute), LT_SYM(MatrixLayoutCreate),
    LT_SYM(MatrixLayoutDestroy), LT_SYM(MatmulPreferenceCreate), LT_SYM(MatmulPreferenceDestroy),
    LT_SYM(MatmulPreferenceSetAttribute), LT_SYM(MatmulAlgoGetHeuristic),
    LT_SYM(MatmulAlgoConfigGetAttribute), LT_SYM(Matmul),
};

/* What the load found, kept so every later request reports the same outcome. */
static struct {
    int done; /* 0 not tried, 1 loaded, -1 failed */
    char *why;
    char path[512];
    size_t version;
} lib_state;

static int load_failed(gb_err *e) {
    lib_state.done = -1;
    lib_state.why = strdup(e->msg ? e->msg : "cuBLASLt failed to load");
    return -1;
}

/* dlopen by name first (LD_LIBRARY_PATH, the loader's cache), then in the
 * toolkit folders, as NVRTC is found (api.c). */
static void *open_library(gb_err *e) {
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so"};
    const char *home = getenv("CUDA_HOME");
    const char *dirs[] = {home && *home ? home : NULL, "/usr/local/cuda"};
    char first_error[1024] = "", tried[2048] = "";
    for (int d = -1; d < 2; d++) { /* d = -1: the loader's own search path */
        if (d >= 0 && !dirs[d]) continue;
        for (int i = 0; i < 2; i++) {
            char path[700];
            if (d < 0) snprintf(path, sizeof path, "%s", names[i]);
            else snprintf(path, sizeof path, "%s/lib64/%s", dirs[d], names[i]);
            void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (lib) return lib;
            const char *why = dlerror();
            if (!first_error[0]) snprintf(first_error, sizeof first_error, "%s", why ? why : path);
            size_t used = strlen(tried);
            snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", path);
        }
    }
    GB_FAIL(e, "vendor GEMM: cannot load cuBLASLt: %s (tried %s; set LD_LIBRARY_PATH or CUDA_HOME)",
            first_error, tried);
    return NULL;
}

static int load_library(gb_err *e) {
    if (lib_state.done > 0) return 0;
    if (lib_state.done < 0) {
        free(e->msg);
        e->msg = strdup(lib_state.why ? lib_state.why : "cuBLASLt failed to load");
        return -1;
    }
    void *lib = open_library(e);
    if (!lib) return load_failed(e);
    Dl_info info;
    const char *where = "libcublasLt";
    void *any = dlsym(lib, "cublasLtGetVersion");
    if (any && dladdr(any, &info) && info.dli_fname) where = info.dli_fname;
    snprintf(lib_state.path, sizeof lib_state.path, "%s", where);
    for (size_t i = 0; i < sizeof lt_syms / sizeof lt_syms[0]; i++) {
        void *p = dlsym(lib, lt_syms[i].name);
        if (!p) {
            GB_FAIL(e, "vendor GEMM: %s has no %s (gpubench needs cuBLASLt 12 or newer)",
                    lib_state.path, lt_syms[i].name);
            return load_failed(e);
        }
        /* POSIX guarantees that a dlsym result converts to a function pointer. */
        memcpy((char *)&lt + lt_syms[i].offset, &p, sizeof p);
    }
    lib_state.version = lt.GetVersion();
    if (lib_state.version / 10000 < 12) {
        GB_FAIL(e, "vendor GEMM: %s is cuBLASLt %zu.%zu; gpubench needs 12 or newer", lib_state.path,
                lib_state.version / 10000, lib_state.version / 100 % 100);
        return load_failed(e);
    }
    lib_state.done = 1; /* the library stays loaded: the table points into it */
    return 0;
}

int gb_cuda_load_blaslt(const char **path, uint64_t *version, gb_err *e) {
    if (load_library(e)) return -1;
    *path = lib_state.path;
    *version = lib_state.version;
    return 0;
}

/* "<call> failed: <NAME> (<description>)<suffix> [file:line]", as CU() formats. */
static int lt_fail_at(gb_err *e, const char *file, int line, const char *call, cublasStatus_t st,
                      const char *suffix) {
    const char *name = lt.GetStatusName ? lt.GetStatusName(st) : NULL;
    const char *desc = lt.GetStatusString ? lt.GetStatusString(st) : NULL;
    char code[32];
    if (!name) {
        snprintf(code, sizeof code, "cublasStatus_t %d", (int)st);
        name = code;
    }
    return gb_fail_at(e, file, line, "%s failed: %s (%s)%s", call, name, desc ? desc : "no description",
                      suffix);
}

#define LT(e, fn, args)                                                                           \
    lt_check_((lt.fn args), (e), __FILE__, __LINE__, "cublasLt" #fn)

static inline int lt_check_(cublasStatus_t st, gb_err *e, const char *file, int line, const char *call) {
    return st == CUBLAS_STATUS_SUCCESS ? 0 : lt_fail_at(e, file, line, call, st, "");
}

/* ------------------------------------------------------------------ plans */

typedef struct lt_plan {
    gb_vendor_gemm info; /* k->vendor points here */
    cublasLtHandle_t handle;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    CUdeviceptr workspace;
    float alpha, beta; /* read by the library at each call (host pointer mode) */
} lt_plan;

static void plan_destroy(lt_plan *p, int device_usable) {
    if (!p) return;
    gb_err ignore = {0};
    if (device_usable) {
        if (p->a) LT(&ignore, MatrixLayoutDestroy, (p->a));
        if (p->b) LT(&ignore, MatrixLayoutDestroy, (p->b));
        if (p->c) LT(&ignore, MatrixLayoutDestroy, (p->c));
        if (p->op) LT(&ignore, MatmulDescDestroy, (p->op));
        if (p->handle) LT(&ignore, Destroy, (p->handle));
        if (p->workspace) CU(&ignore, MemFree, (p->workspace));
    }
    gb_err_clear(&ignore); /* nothing to report to: destruction cannot fail */
    free(p);
}

/* An attribute of the chosen algorithm, -1 when unreadable. The library
 * checks the buffer size exactly, so the size is asked for first (16 or 32
 * bits, by attribute). */
static int32_t algo_attr(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t a) {
    size_t size = 0;
    if (lt.MatmulAlgoConfigGetAttribute(algo, a, NULL, 0, &size) != CUBLAS_STATUS_SUCCESS) return -1;
    uint16_t v16 = 0;
    uint32_t v32 = 0;
    size_t written = 0;
    if (size == sizeof v16 &&
        lt.MatmulAlgoConfigGetAttribute(algo, a, &v16, sizeof v16, &written) == CUBLAS_STATUS_SUCCESS)
        return v16;
    if (size == sizeof v32 &&
        lt.MatmulAlgoConfigGetAttribute(algo, a, &v32, sizeof v32, &written) == CUBLAS_STATUS_SUCCESS)
        return (int32_t)v32;
    return -1;
}

/* The descriptors of the TN GEMM in the header, and the heuristic's choice. */
static int plan_matmul(lt_plan *p, uint32_t n, uint32_t kdim, uint32_t t, gb_err *e) {
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    if (LT(e, Create, (&p->handle)) || LT(e, MatmulDescCreate, (&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) ||
        LT(e, MatmulDescSetAttribute, (p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) ||
        LT(e, MatmulDescSetAttribute, (p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)) ||
        LT(e, MatrixLayoutCreate, (&p->a, CUDA_R_16BF, kdim, n, kdim)) ||
        LT(e, MatrixLayoutCreate, (&p->b, CUDA_R_16BF, kdim, t, kdim)) ||
        LT(e, MatrixLayoutCreate, (&p->c, CUDA_R_16BF, n, t, n)))
        return -1;
    cublasLtMatmulPreference_t pref = NULL;
    uint64_t limit = LT_WORKSPACE_LIMIT;
    cublasLtMatmulHeuristicResult_t best;
    memset(&best, 0, sizeof best);
    int found = 0;
    int rc = LT(e, MatmulPreferenceCreate, (&pref));
    if (rc == 0)
        rc = LT(e, MatmulPreferenceSetAttribute,
                (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit));
    if (rc == 0)
        rc = LT(e, MatmulAlgoGetHeuristic, (p->handle, p->op, p->a, p->b, p->c, p->c, pref, 1, &best, &found));
    if (pref) {
        gb_err ignore = {0};
        LT(&ignore, MatmulPreferenceDestroy, (pref));
        gb_err_clear(&ignore);
    }
    if (rc) return -1;
    if (found < 1 || best.state != CUBLAS_STATUS_SUCCESS)
        return GB_FAIL(e, "vendor GEMM: cuBLASLt offers no algorithm for bf16 N = %u, K = %u, T = %u "
                          "within a %u MiB workspace", n, kdim, t, (unsigned)(limit >> 20));
    p->algo = best.algo;
    gb_vendor_gemm *g = &p->info;
    g->workspace_bytes = best.workspaceSize;
    g->workspace_limit = limit;
    g->waves = best.wavesCount;
    g->algo_id = algo_attr(&p->algo, CUBLASLT_ALGO_CONFIG_ID);
    g->tile_id = algo_attr(&p->algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
    g->stages_id = algo_attr(&p->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
    g->splitk = algo_attr(&p->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
    g->reduction_scheme = algo_attr(&p->algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
    g->swizzle = algo_attr(&p->algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
    g->custom_option = algo_attr(&p->algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
    return 0;
}

/* CUDA loads a kernel at its first launch (lazy loading), and the load
 * waits for the device: a first call queued behind a held stream
 * (gb_cold_sample) would wait for ever. One call at creation, on scratch
 * memory (the result is discarded), loads the algorithm's kernels while
 * nothing holds the stream. */
static int warm_up(gb_device *d, lt_plan *p, gb_err *e) {
    const uint64_t n = p->info.n, kdim = p->info.k, t = p->info.t;
    uint64_t bytes = 2 * n * kdim;
    if (2 * t * kdim > bytes) bytes = 2 * t * kdim;
    if (2 * t * n > bytes) bytes = 2 * t * n;
    bytes = (bytes + 3) / 4 * 4;
    CUdeviceptr scratch = 0;
    CUstream s = cuda_dev_of(d)->stream;
    if (CU(e, MemAlloc, (&scratch, bytes))) return -1;
    const uint64_t ptrs[3] = {scratch, scratch, scratch}; /* W, x and y alike: only the launch matters */
    int rc = CU(e, MemsetD32Async, (scratch, 0, bytes / 4, s));
    if (rc == 0) rc = gb_cuda_vendor_gemm_issue(d, p, ptrs, s, e);
    if (rc == 0) rc = gb_cuda_wait_stream(d, "the vendor GEMM's first call", e);
    if (!d->broken) {
        gb_err ignore = {0};
        CU(&ignore, MemFree, (scratch));
        gb_err_clear(&ignore);
    }
    return rc;
}

int gb_cuda_vendor_gemm(gb_device *d, gb_kernel *k, uint32_t n, uint32_t kdim, uint32_t t, gb_err *e) {
    if (load_library(e) || gb_cuda_current(d, e)) return -1;
    lt_plan *p = calloc(1, sizeof *p);
    k->entry = strdup("cublaslt_bf16_gemm");
    k->label = strdup(lib_state.path);
    if (!p || !k->entry || !k->label) {
        free(p);
        return GB_FAIL(e, "out of host memory creating a vendor GEMM");
    }
    gb_vendor_gemm *g = &p->info;
    g->n = n;
    g->k = kdim;
    g->t = t;
    snprintf(g->library, sizeof g->library, "cuBLASLt");
    snprintf(g->path, sizeof g->path, "%s", lib_state.path);
    g->version_number = lib_state.version;
    snprintf(g->version, sizeof g->version, "%zu.%zu.%zu", lib_state.version / 10000,
             lib_state.version / 100 % 100, lib_state.version % 100);
    p->alpha = 1.0f;
    p->beta = 0.0f;
    if (plan_matmul(p, n, kdim, t, e) ||
        (g->workspace_bytes && CU(e, MemAlloc, (&p->workspace, g->workspace_bytes))) || warm_up(d, p, e)) {
        plan_destroy(p, !d->broken);
        return -1;
    }
    k->nparams = 3;
    for (int i = 0; i < 3; i++) k->params[i] = GB_ARG_BUFFER;
    k->impl = p;
    k->vendor = &p->info;
    return 0;
}

int gb_cuda_vendor_gemm_issue(gb_device *d, const void *plan, const uint64_t ptrs[3], CUstream s,
                              gb_err *e) {
    const lt_plan *p = plan;
    void *w = (void *)(uintptr_t)ptrs[0], *x = (void *)(uintptr_t)ptrs[1], *y = (void *)(uintptr_t)ptrs[2];
    /* cudaStream_t and CUstream are the same type (struct CUstream_st *). */
    cublasStatus_t st = lt.Matmul(p->handle, p->op, &p->alpha, w, p->a, x, p->b, &p->beta, y, p->c, y,
                                  p->c, &p->algo, (void *)(uintptr_t)p->workspace,
                                  p->info.workspace_bytes, s);
    if (st == CUBLAS_STATUS_SUCCESS) return 0;
    char suffix[128];
    snprintf(suffix, sizeof suffix, " (bf16 GEMM N = %u, K = %u, T = %u)", p->info.n, p->info.k,
             p->info.t);
    return lt_fail_at(e, __FILE__, __LINE__, "cublasLtMatmul", st, suffix);
}

void gb_cuda_vendor_gemm_free(gb_kernel *k) {
    lt_plan *p = k->impl;
    if (!p) return;
    gb_err e = {0};
    /* Launches still queued read the workspace and descriptors: wait for
     * them (a broken device's resources are left to the process's end). */
    int usable = !k->dev->broken && gb_cuda_current(k->dev, &e) == 0 &&
                 gb_cuda_wait_stream(k->dev, "launches of a vendor GEMM before it is freed", &e) == 0;
    if (e.msg) fprintf(stderr, "gpubench: warning: freeing %s: %s\n", k->entry, e.msg);
    gb_err_clear(&e);
    plan_destroy(p, usable);
    k->impl = NULL;
    k->vendor = NULL;
}

#else /* CUDA headers without cublasLt.h */

int gb_cuda_load_blaslt(const char **path, uint64_t *version, gb_err *e) {
    return GB_FAIL(e, "vendor GEMM: cuBLASLt support not built (cublasLt.h was not found at build time)");
}

int gb_cuda_vendor_gemm(gb_device *d, gb_kernel *k, uint32_t n, uint32_t kdim, uint32_t t, gb_err *e) {
    return GB_FAIL(e, "vendor GEMM: cuBLASLt support not built (cublasLt.h was not found at build time)");
}

/* Unreachable: no vendor GEMM can be created in this build. */
void gb_cuda_vendor_gemm_free(gb_kernel *k) {}

int gb_cuda_vendor_gemm_issue(gb_device *d, const void *plan, const uint64_t ptrs[3], CUstream s,
                              gb_err *e) {
    return GB_FAIL(e, "vendor GEMM: cuBLASLt support not built");
}

#endif
#else /* no CUDA headers at build time */

int gb_cuda_load_blaslt(const char **path, uint64_t *version, gb_err *e) {
    return GB_FAIL(e, GB_CUDA_NOT_BUILT);
}

#endif
