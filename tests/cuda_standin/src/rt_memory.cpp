// "Device" and pinned memory of the stand-in (CUDA Runtime API, Memory Management: cudaMalloc,
// cudaFree, cudaHostAlloc, cudaMallocHost, cudaFreeHost, cudaMemGetInfo).
//
// Device memory is host memory, kept distinguishable: every cudaMalloc gets its own pages inside
// one reserved address range, with an inaccessible page after its end (the allocation ends at
// the end of its last page, up to the 256-byte alignment the runtime guarantees; those slack
// bytes hold a canary checked at synchronisation), so that a kernel reading or writing past an
// allocation faults, which the launcher turns into cudaErrorIllegalAddress. Freed pages become
// inaccessible and their addresses are never handed out again, so a use after cudaFree faults
// too. Fresh allocations hold 0xFF bytes ("the memory is not cleared": NaN in every float type).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "rt_internal.hpp"
#include "xpbsi/standin.h"

namespace xpbsi
{

namespace
{

constexpr size_t k_align = 256; // "suitably aligned for any kind of variable": 256 on GPUs
constexpr unsigned char k_canary = 0xA5;

struct allocation {
    char *base;  // what the caller got
    size_t size; // what the caller asked for
    char *map;   // the pages (with the guard page after them for device memory)
    size_t map_len;
    mem_kind kind;
};

struct memory_state {
    char *arena = nullptr; // the reserved range of device addresses
    size_t arena_len = 0;
    size_t arena_next = 0; // bump pointer: addresses are never reused
    size_t device_used = 0;
    std::map<uintptr_t, allocation> by_base; // live and freed allocations
};

memory_state &mem()
{
    static memory_state &m = *new memory_state; // immortal: reachable at exit
    return m;
}

size_t page_size()
{
    static const size_t p = (size_t)sysconf(_SC_PAGESIZE);
    return p;
}

size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

bool reserve_arena(memory_state &m)
{
    if (m.arena)
        return true;
    for (size_t gib = 1024; gib >= 16; gib /= 4) {
        size_t len = gib << 30;
        void *p = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            m.arena = static_cast<char *>(p);
            m.arena_len = len;
            // the first page stays a guard in front of the first allocation
            m.arena_next = page_size();
            return true;
        }
    }
    return false;
}

// Device memory: the pages of `size` rounded up, placed in the arena after a gap of one
// inaccessible page, the data ending at the end of the last page.
allocation *alloc_device(size_t size)
{
    memory_state &m = mem();
    if (!reserve_arena(m))
        return nullptr;
    size_t pg = page_size(), span = round_up(size, k_align), pages = round_up(span, pg);
    if (m.arena_next + pages + pg > m.arena_len)
        return nullptr;
    char *map = m.arena + m.arena_next;
    if (mprotect(map, pages, PROT_READ | PROT_WRITE) != 0)
        return nullptr;
    m.arena_next += pages + pg; // the page after stays PROT_NONE: the guard
    char *base = map + pages - span;
    memset(map, 0xFF, pages);
    memset(base + size, k_canary, span - size);
    allocation a = {base, size, map, pages, mem_kind::device};
    return &(m.by_base[(uintptr_t)base] = a);
}

allocation *alloc_pinned(size_t size)
{
    size_t len = round_up(size ? size : 1, page_size());
    void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return nullptr;
    memset(p, 0xFF, len); // like device memory, pinned memory is not cleared
    allocation a = {static_cast<char *>(p), size, static_cast<char *>(p), len, mem_kind::pinned};
    return &(mem().by_base[(uintptr_t)p] = a);
}

allocation *find(const void *p)
{
    auto &by = mem().by_base;
    auto it = by.upper_bound((uintptr_t)p);
    if (it == by.begin())
        return nullptr;
    --it;
    allocation &a = it->second;
    const char *c = static_cast<const char *>(p);
    // a freed or live allocation covers [base, base + max(size, 1))
    if (c >= a.base && c < a.base + (a.size ? a.size : 1))
        return &a;
    return nullptr;
}

bool canary_intact(const allocation &a)
{
    size_t span = round_up(a.size, k_align);
    for (size_t i = a.size; i < span; i++)
        if ((unsigned char)a.base[i] != k_canary)
            return false;
    return true;
}

// Frees a live allocation of `kind` at exactly p: cudaErrorInvalidValue for anything else.
cudaError_t release(void *p, mem_kind kind, const char *api)
{
    allocation *a = find(p);
    if (!a || a->base != p || a->kind != kind) {
        diag("%s(%p): %s", api, p,
             !a                           ? "not an allocation of the runtime"
             : a->kind == mem_kind::freed ? "already freed"
             : a->base != p               ? "not the start of an allocation"
                            : "an allocation of the other kind (device vs pinned host)");
        return cudaErrorInvalidValue;
    }
    if (kind == mem_kind::device) {
        if (!canary_intact(*a))
            make_sticky(cudaErrorIllegalAddress,
                        "bytes behind the end of the %zu-byte allocation at %p were written",
                        a->size, a->base);
        mprotect(a->map, a->map_len, PROT_NONE);
        madvise(a->map, a->map_len, MADV_DONTNEED);
        mem().device_used -= a->size;
    } else {
        munmap(a->map, a->map_len);
    }
    a->kind = mem_kind::freed;
    return cudaSuccess;
}

} // namespace

mem_info lookup(const void *p)
{
    XPBSI_LOCK;
    allocation *a = find(p);
    if (!a)
        return {mem_kind::none, nullptr, 0};
    return {a->kind, a->base, a->size};
}

bool within(const void *p, size_t bytes, mem_kind kind)
{
    mem_info m = lookup(p);
    if (m.kind != kind)
        return false;
    const char *c = static_cast<const char *>(p);
    return (size_t)(c - m.base) + bytes <= m.size;
}

bool addressable(const void *p, size_t bytes)
{
    return within(p, bytes, mem_kind::device) || within(p, bytes, mem_kind::pinned);
}

const char *kind_name(mem_kind k)
{
    switch (k) {
    case mem_kind::device:
        return "device memory";
    case mem_kind::pinned:
        return "pinned host memory";
    case mem_kind::freed:
        return "freed memory";
    default:
        return "pageable host memory";
    }
}

std::string describe(const void *p)
{
    XPBSI_LOCK;
    const char *c = static_cast<const char *>(p);
    char buf[256];
    for (auto &kv : mem().by_base) {
        const allocation &a = kv.second;
        const char *end = a.map + a.map_len;
        if (c < a.map || c >= end + page_size())
            continue;
        const char *state = a.kind == mem_kind::freed ? "freed " : "";
        if (c >= a.base + a.size)
            snprintf(buf, sizeof buf, "%zu bytes behind the end of the %s%zu-byte allocation at %p",
                     (size_t)(c - (a.base + a.size)), state, a.size, (const void *)a.base);
        else if (c < a.base)
            snprintf(buf, sizeof buf, "%zu bytes in front of the %s%zu-byte allocation at %p",
                     (size_t)(a.base - c), state, a.size, (const void *)a.base);
        else
            snprintf(buf, sizeof buf, "offset %zu of the %s%zu-byte allocation at %p",
                     (size_t)(c - a.base), state, a.size, (const void *)a.base);
        return buf;
    }
    memory_state &m = mem();
    if (m.arena && c >= m.arena && c < m.arena + m.arena_len)
        return "device address space that was never allocated";
    snprintf(buf, sizeof buf, "an address outside the stand-in's memory (%s)",
             p ? "host memory the device cannot reach" : "NULL");
    return buf;
}

void check_canaries()
{
    XPBSI_LOCK;
    for (auto &kv : mem().by_base) {
        allocation &a = kv.second;
        if (a.kind == mem_kind::device && !canary_intact(a)) {
            make_sticky(cudaErrorIllegalAddress,
                        "bytes behind the end of the %zu-byte allocation at %p were written",
                        a.size, a.base);
            memset(a.base + a.size, k_canary, round_up(a.size, k_align) - a.size);
        }
    }
}

} // namespace xpbsi

extern "C" {

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    XPBSI_API_ENTER;
    if (!devPtr)
        return xpbsi::record(cudaErrorInvalidValue);
    if (cudaError_t e = xpbsi::check_unsafe("cudaMalloc"))
        return xpbsi::record(e);
    *devPtr = nullptr;
    if (size == 0)
        return cudaSuccess;
    xpbsi::memory_state &m = xpbsi::mem();
    if (size > xpbsi::device().total_mem - m.device_used)
        return xpbsi::record(cudaErrorMemoryAllocation);
    xpbsi::allocation *a = xpbsi::alloc_device(size);
    if (!a)
        return xpbsi::record(cudaErrorMemoryAllocation);
    m.device_used += size;
    *devPtr = a->base;
    return cudaSuccess;
}

// cudaFree(NULL) does nothing ("If devPtr is 0, no operation is performed"); anything but the
// start of a live cudaMalloc allocation is cudaErrorInvalidValue.
cudaError_t cudaFree(void *devPtr)
{
    XPBSI_API_ENTER;
    if (!devPtr)
        return cudaSuccess;
    if (cudaError_t e = xpbsi::check_unsafe("cudaFree"))
        return xpbsi::record(e);
    return xpbsi::record(xpbsi::release(devPtr, xpbsi::mem_kind::device, "cudaFree"));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    XPBSI_API_ENTER;
    const unsigned known = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if (!pHost || (flags & ~known))
        return xpbsi::record(cudaErrorInvalidValue);
    if (cudaError_t e = xpbsi::check_unsafe("cudaHostAlloc"))
        return xpbsi::record(e);
    xpbsi::allocation *a = xpbsi::alloc_pinned(size);
    if (!a)
        return xpbsi::record(cudaErrorMemoryAllocation);
    *pHost = a->base;
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

cudaError_t cudaFreeHost(void *ptr)
{
    XPBSI_API_ENTER;
    if (!ptr)
        return cudaSuccess;
    if (cudaError_t e = xpbsi::check_unsafe("cudaFreeHost"))
        return xpbsi::record(e);
    return xpbsi::record(xpbsi::release(ptr, xpbsi::mem_kind::pinned, "cudaFreeHost"));
}

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    XPBSI_API_ENTER;
    if (!free || !total)
        return xpbsi::record(cudaErrorInvalidValue);
    *total = xpbsi::device().total_mem;
    *free = *total - xpbsi::mem().device_used;
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    XPBSI_API_ENTER;
    if (!attributes)
        return xpbsi::record(cudaErrorInvalidValue);
    xpbsi::mem_info m = xpbsi::lookup(ptr);
    memset(attributes, 0, sizeof *attributes);
    attributes->type = m.kind == xpbsi::mem_kind::device   ? cudaMemoryTypeDevice
                       : m.kind == xpbsi::mem_kind::pinned ? cudaMemoryTypeHost
                                                           : cudaMemoryTypeUnregistered;
    attributes->device = 0;
    if (m.kind == xpbsi::mem_kind::device || m.kind == xpbsi::mem_kind::pinned) {
        attributes->devicePointer = const_cast<void *>(ptr);
        if (m.kind == xpbsi::mem_kind::pinned)
            attributes->hostPointer = const_cast<void *>(ptr);
    }
    return cudaSuccess;
}

int xpbsi_is_device_range(const void *p, size_t bytes)
{
    return xpbsi::within(p, bytes, xpbsi::mem_kind::device);
}

void xpbsi_poison(void *device_ptr, size_t bytes)
{
    if (bytes == 0)
        return;
    if (!xpbsi::within(device_ptr, bytes, xpbsi::mem_kind::device)) {
        xpbsi::diag("xpbsi_poison(%p, %zu): not inside one live device allocation (%s)", device_ptr,
                    bytes, xpbsi::kind_name(xpbsi::lookup(device_ptr).kind));
        abort();
    }
    memset(device_ptr, 0xFF, bytes);
}

} // extern "C"
