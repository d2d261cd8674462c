/* The kernel cache key (host/core/kernel_cache.c) must change whenever a file the
 * compiler reads changes: the source, and every header it includes, whether
 * with #include "..." or #include <...> (both compilers search the include
 * directories for <...>: NVRTC through -I, shaderc as a standard include).
 * A key that misses a header serves a stale binary after the header is edited. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fileutil.h"
#include "kernel_cache.h"

static char tmpdir[] = "/tmp/gb_kernel_cache_XXXXXX";

static void write_text(const char *name, const char *text) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    gb_err e = {0};
    CHECK(gb_write_file_atomic(path, text, strlen(text), &e) == 0, "%s", e.msg ? e.msg : "");
    gb_err_clear(&e);
}

/* The key of `code` compiled with tmpdir as its only include directory. */
static void key_of(const char *code, char key[GB_CACHE_KEY_HEX]) {
    const char *dirs[] = {tmpdir};
    gb_kernel_source src;
    memset(&src, 0, sizeof src);
    src.label = "<string>";
    src.code = code;
    src.entry = "main";
    src.include_dirs = dirs;
    src.ninclude_dirs = 1;
    gb_err e = {0};
    CHECK(gb_cache_key(&src, "test-compiler", "vulkan1.2", key, &e) == 0, "%s",
          e.msg ? e.msg : "");
    gb_err_clear(&e);
}

/* Editing an included header changes the key, for both include forms, and
 * for a header that a header includes. */
static void test_header_edit(const char *form_open, const char *form_close) {
    int before = failures;
    char code[128], k1[GB_CACHE_KEY_HEX], k2[GB_CACHE_KEY_HEX], k3[GB_CACHE_KEY_HEX];
    snprintf(code, sizeof code, "#include %shdr.glsl%s\nvoid main() {}\n", form_open, form_close);
    write_text("hdr.glsl", "#include \"inner.glsl\"\nconst int A = 1;\n");
    write_text("inner.glsl", "const int B = 1;\n");
    key_of(code, k1);
    write_text("hdr.glsl", "#include \"inner.glsl\"\nconst int A = 2;\n");
    key_of(code, k2);
    CHECK(strcmp(k1, k2) != 0, "%s...%s: editing the header kept key %s", form_open, form_close, k1);
    write_text("inner.glsl", "const int B = 2;\n");
    key_of(code, k3);
    CHECK(strcmp(k2, k3) != 0, "%s...%s: editing a nested header kept key %s", form_open,
          form_close, k2);
    char again[GB_CACHE_KEY_HEX];
    key_of(code, again);
    CHECK(strcmp(k3, again) == 0, "the key is not deterministic: %s then %s", k3, again);
    char name[64];
    snprintf(name, sizeof name, "the key covers #include %shdr%s", form_open, form_close);
    report(name, before);
}

int main(void) {
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_header_edit("\"", "\"");
    test_header_edit("<", ">");
    char path[256];
    snprintf(path, sizeof path, "%s/hdr.glsl", tmpdir);
    unlink(path);
    snprintf(path, sizeof path, "%s/inner.glsl", tmpdir);
    unlink(path);
    rmdir(tmpdir);
    return check_finish("test_kernel_cache");
}
