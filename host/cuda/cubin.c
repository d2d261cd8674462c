/* A minimal ELF64 symbol-table reader for CUBINs (see cuda_cubin.h). Every
 * offset is bounds-checked: the bytes may come from a damaged cache file. */
#include "cuda_cubin.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

static int in_bounds(uint64_t off, uint64_t size, size_t len) {
    return off <= len && size <= len - off;
}

static int read_header(const unsigned char *p, size_t len, Elf64_Ehdr *eh) {
    if (!p || len < sizeof *eh || memcmp(p, ELFMAG, SELFMAG) != 0 || p[EI_CLASS] != ELFCLASS64 ||
        p[EI_DATA] != ELFDATA2LSB)
        return -1;
    memcpy(eh, p, sizeof *eh);
    if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_bounds(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), len))
        return -1;
    return 0;
}

static void section(const unsigned char *p, const Elf64_Ehdr *eh, unsigned i, Elf64_Shdr *sh) {
    memcpy(sh, p + eh->e_shoff + (uint64_t)i * sizeof *sh, sizeof *sh);
}

/* The first symbol named `name` of ELF type `type`: 1 and *out, 0 absent, -1 damaged. */
static int find_symbol(const unsigned char *p, size_t len, const Elf64_Ehdr *eh, const char *name, int type,
                       Elf64_Sym *out) {
    size_t nlen = strlen(name);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        Elf64_Shdr sh, strtab;
        section(p, eh, i, &sh);
        if (sh.sh_type != SHT_SYMTAB) continue;
        if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= eh->e_shnum ||
            !in_bounds(sh.sh_offset, sh.sh_size, len))
            return -1;
        section(p, eh, sh.sh_link, &strtab);
        if (!in_bounds(strtab.sh_offset, strtab.sh_size, len)) return -1;
        const char *names = (const char *)p + strtab.sh_offset;
        for (uint64_t s = 0; s < sh.sh_size / sizeof(Elf64_Sym); s++) {
            Elf64_Sym sym;
            memcpy(&sym, p + sh.sh_offset + s * sizeof sym, sizeof sym);
            if (ELF64_ST_TYPE(sym.st_info) != type || sym.st_name >= strtab.sh_size) continue;
            /* The name must end inside the string table. */
            if (nlen < strtab.sh_size - sym.st_name &&
                memcmp(names + sym.st_name, name, nlen + 1) == 0) {
                *out = sym;
                return 1;
            }
        }
    }
    return 0;
}

int gb_cubin_has_function(const void *cubin, size_t len, const char *name) {
    Elf64_Ehdr eh;
    Elf64_Sym sym;
    if (read_header(cubin, len, &eh)) return -1;
    return find_symbol(cubin, len, &eh, name, STT_FUNC, &sym);
}

int gb_cubin_u32_object(const void *cubin, size_t len, const char *name, uint32_t *value) {
    const unsigned char *p = cubin;
    Elf64_Ehdr eh;
    Elf64_Sym sym;
    if (read_header(p, len, &eh)) return -1;
    int found = find_symbol(p, len, &eh, name, STT_OBJECT, &sym);
    if (found != 1) return found;
    if (sym.st_size != 4 || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= eh.e_shnum) return -1;
    Elf64_Shdr sh;
    section(p, &eh, sym.st_shndx, &sh);
    if (!in_bounds(sym.st_value, 4, sh.sh_size)) return -1;
    if (sh.sh_type == SHT_NOBITS) { /* .nv.global: a zero initializer takes no bytes in the file */
        *value = 0;
        return 1;
    }
    if (sh.sh_type != SHT_PROGBITS || !in_bounds(sh.sh_offset, sh.sh_size, len)) return -1;
    memcpy(value, p + sh.sh_offset + sym.st_value, 4); /* ELFDATA2LSB, as this host */
    return 1;
}
