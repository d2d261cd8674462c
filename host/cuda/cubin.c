/* A minimal ELF64 symbol-table reader for CUBINs (see cuda_cubin.h). Every
 * offset is bounds-checked: the bytes may come from a damaged cache file. */
#include "cuda_cubin.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

static int in_bounds(uint64_t off, uint64_t size, size_t len) {
    return off <= len && size <= len - off;
}

int gb_cubin_has_function(const void *cubin, size_t len, const char *name) {
    const unsigned char *p = cubin;
    Elf64_Ehdr eh;
    if (!p || len < sizeof eh || memcmp(p, ELFMAG, SELFMAG) != 0 || p[EI_CLASS] != ELFCLASS64 ||
        p[EI_DATA] != ELFDATA2LSB)
        return -1;
    memcpy(&eh, p, sizeof eh);
    if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
        !in_bounds(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), len))
        return -1;
    size_t nlen = strlen(name);
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh, strtab;
        memcpy(&sh, p + eh.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_SYMTAB) continue;
        if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= eh.e_shnum ||
            !in_bounds(sh.sh_offset, sh.sh_size, len))
            return -1;
        memcpy(&strtab, p + eh.e_shoff + (uint64_t)sh.sh_link * sizeof strtab, sizeof strtab);
        if (!in_bounds(strtab.sh_offset, strtab.sh_size, len)) return -1;
        const char *names = (const char *)p + strtab.sh_offset;
        for (uint64_t s = 0; s < sh.sh_size / sizeof(Elf64_Sym); s++) {
            Elf64_Sym sym;
            memcpy(&sym, p + sh.sh_offset + s * sizeof sym, sizeof sym);
            if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_name >= strtab.sh_size) continue;
            /* The name must end inside the string table. */
            if (nlen < strtab.sh_size - sym.st_name &&
                memcmp(names + sym.st_name, name, nlen + 1) == 0)
                return 1;
        }
    }
    return 0;
}
