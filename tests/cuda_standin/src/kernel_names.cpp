// The names of kernels for the stand-in's diagnostics: a kernel is known by its function pointer
// only, and kernels are usually not exported (the plugin hides every symbol but one), so the name
// is looked up in the symbol table (.symtab) of the object file that contains the function, read
// from disk, when dladdr does not know it. Cached per address.
#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "rt_internal.hpp"

namespace xpbsi
{

namespace
{

std::string demangle(const char *sym)
{
    int status = 0;
    char *d = abi::__cxa_demangle(sym, nullptr, nullptr, &status);
    std::string name = status == 0 && d ? d : sym;
    free(d);
    return name;
}

// The symbol of the function at file address `addr` in the ELF file at `path` ("" if none).
std::string from_symtab(const char *path, uint64_t addr)
{
    std::string found;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return found;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(Elf64_Ehdr))
        map = mmap(nullptr, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return found;
    const char *base = static_cast<const char *>(map);
    size_t size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = reinterpret_cast<const Elf64_Ehdr *>(base);
    bool elf64 = memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64;
    if (elf64 && eh->e_shoff && eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size) {
        const Elf64_Shdr *sh = reinterpret_cast<const Elf64_Shdr *>(base + eh->e_shoff);
        for (unsigned i = 0; i < eh->e_shnum && found.empty(); i++) {
            if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
                continue;
            const Elf64_Shdr &strs = sh[sh[i].sh_link];
            if (sh[i].sh_offset + sh[i].sh_size > size || strs.sh_offset + strs.sh_size > size)
                continue;
            const Elf64_Sym *sym = reinterpret_cast<const Elf64_Sym *>(base + sh[i].sh_offset);
            size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
            for (size_t k = 0; k < n; k++)
                if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_value == addr &&
                    sym[k].st_name < strs.sh_size) {
                    found = demangle(base + strs.sh_offset + sym[k].st_name);
                    break;
                }
        }
    }
    munmap(map, size);
    return found;
}

} // namespace

std::string kernel_name(const void *fn)
{
    static std::map<const void *, std::string> &cache =
        *new std::map<const void *, std::string>; // immortal: reachable at exit
    XPBSI_LOCK;
    auto it = cache.find(fn);
    if (it != cache.end())
        return it->second;
    std::string name;
    Dl_info info;
    if (dladdr(fn, &info)) {
        if (info.dli_sname && info.dli_saddr == fn) {
            name = demangle(info.dli_sname);
        } else {
            // a shared object (or a position-independent executable) is mapped at dli_fbase;
            // the main program may be named by argv[0] only: read it through /proc/self/exe
            const char *path =
                info.dli_fname && info.dli_fname[0] == '/' ? info.dli_fname : "/proc/self/exe";
            uint64_t addr = (uint64_t)(uintptr_t)fn;
            const Elf64_Ehdr *eh = static_cast<const Elf64_Ehdr *>(info.dli_fbase);
            if (eh && eh->e_type == ET_DYN)
                addr -= (uint64_t)(uintptr_t)info.dli_fbase;
            name = from_symtab(path, addr);
        }
    }
    if (name.empty()) {
        char buf[48];
        snprintf(buf, sizeof buf, "kernel at %p", fn);
        name = buf;
    }
    return cache[fn] = name;
}

} // namespace xpbsi
