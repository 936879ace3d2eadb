/* Buffers and activation memory reuse. A buffer is a piece of the executable's arena: tensor
 * storage, a reorder temporary, a step-private output. Every buffer is used by a range of steps
 * (the steps that name it as an operand); buffers whose ranges do not overlap may share arena
 * bytes. Pinned buffers (persistent tensors, host-visible tensors, everything under keep_all,
 * prep-step buffers) span the whole executable. Placement is greedy: largest buffer first,
 * lowest offset that does not collide with an already placed buffer whose range overlaps. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "odn.h"

#define ODN_ALIGN 64u

static size_t align_up(size_t v)
{
    return (v + ODN_ALIGN - 1) / ODN_ALIGN * ODN_ALIGN;
}

xpb_status odn_buf_new(uint32_t *out, xpb_executable *exe, size_t bytes, int pinned)
{
    if (exe->n_bufs == exe->cap_bufs) {
        uint32_t cap = exe->cap_bufs ? 2 * exe->cap_bufs : 256;
        odn_buf *b = realloc(exe->bufs, cap * sizeof *b);
        if (!b)
            return odn_fail(exe, XPB_OUT_OF_MEMORY, "compile: out of memory (buffers)");
        exe->bufs = b;
        exe->cap_bufs = cap;
    }
    odn_buf *b = &exe->bufs[exe->n_bufs];
    memset(b, 0, sizeof *b);
    b->bytes = bytes ? bytes : 1;
    b->first = UINT32_MAX;
    b->last = 0;
    b->pinned = pinned;
    *out = exe->n_bufs++;
    return XPB_OK;
}

static void mark_uses(xpb_executable *exe, const odn_step *steps, uint32_t n, int pin)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < steps[i].n; k++) {
            odn_buf *b = &exe->bufs[steps[i].o[k].buf];
            if (pin)
                b->pinned = 1;
            if (i < b->first)
                b->first = i;
            if (i > b->last)
                b->last = i;
        }
}

typedef struct placed {
    size_t lo, hi;
} placed;

static int by_size_desc(const void *a, const void *b, void *ctx)
{
    const odn_buf *bufs = ctx;
    size_t sa = bufs[*(const uint32_t *)a].bytes, sb = bufs[*(const uint32_t *)b].bytes;
    if (sa != sb)
        return sa < sb ? 1 : -1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int by_lo(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

/* qsort has no context argument in C11: a small insertion-merge sort does the job. */
static void sort_ids(uint32_t *ids, uint32_t n, const odn_buf *bufs)
{
    if (n < 2)
        return;
    uint32_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) { /* fall back to insertion sort: slow but correct */
        for (uint32_t i = 1; i < n; i++)
            for (uint32_t j = i; j > 0 && by_size_desc(&ids[j - 1], &ids[j], (void *)bufs) > 0;
                 j--) {
                uint32_t t = ids[j];
                ids[j] = ids[j - 1];
                ids[j - 1] = t;
            }
        return;
    }
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = by_size_desc(&ids[i], &ids[j], (void *)bufs) <= 0 ? ids[i++] : ids[j++];
            while (i < mid)
                tmp[k++] = ids[i++];
            while (j < hi)
                tmp[k++] = ids[j++];
        }
        memcpy(ids, tmp, n * sizeof *ids);
    }
    free(tmp);
}

#if defined(__SANITIZE_ADDRESS__)
#define ODN_ARENA_FROM_HEAP 1 /* AddressSanitizer's red zones around it */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ODN_ARENA_FROM_HEAP 1
#endif
#endif

/* `bytes` of zeroes, page-aligned; NULL when out of memory. Zero pages of the kernel's, made
 * resident by their first use rather than by a memset here: at compile only the parameters and
 * the state are written, so the host's generation of initial values no longer coincides with
 * an arena already wholly resident (AlexNet: a process peak 107 MiB above its training
 * steps'). The mapping is asked to be transparent huge pages (2 MiB on x86-64; *huge says
 * whether the kernel took the request): a step streams its weights from memory once they exceed
 * the last-level cache (ResNet-18's 45 MB at batch 1), and with 4 KiB pages that is a TLB miss
 * every 4 KiB; resnet18-cifar batch 1 took 10-13% longer (docs/backend-guide.md, "Memory").
 * XPB_ONEDNN_NO_HUGEPAGES=1 keeps 4 KiB pages. Under AddressSanitizer, from the heap, whose red
 * zones catch a step writing past its end. */
static char *arena_alloc(size_t bytes, int *huge)
{
    *huge = 0;
#ifdef ODN_ARENA_FROM_HEAP
    void *p = NULL;
    return posix_memalign(&p, 4096, bytes) == 0 ? memset(p, 0, bytes) : NULL;
#else
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    const char *off = getenv("XPB_ONEDNN_NO_HUGEPAGES");
    if (!(off && *off && strcmp(off, "0") != 0))
        *huge = madvise(p, bytes, MADV_HUGEPAGE) == 0; /* a kernel without THP says EINVAL */
#endif
    return p;
#endif
}

void odn_arena_free(xpb_executable *exe)
{
    if (!exe->arena)
        return;
#ifdef ODN_ARENA_FROM_HEAP
    free(exe->arena);
#else
    munmap(exe->arena, exe->arena_bytes);
#endif
    exe->arena = NULL;
}

xpb_status odn_plan_memory(xpb_executable *exe)
{
    mark_uses(exe, exe->steps, exe->n_steps, 0);
    mark_uses(exe, exe->prep, exe->n_prep, 1);
    uint32_t n = exe->n_bufs, m = 0;
    uint32_t *ids = malloc((n + 1) * sizeof *ids);
    placed *pl = malloc((n + 1) * sizeof *pl);
    uint32_t *done = malloc((n + 1) * sizeof *done);
    if (!ids || !pl || !done) {
        free(ids);
        free(pl);
        free(done);
        return odn_fail(exe, XPB_OUT_OF_MEMORY, "compile: out of memory (memory plan)");
    }
    for (uint32_t i = 0; i < n; i++) {
        odn_buf *b = &exe->bufs[i];
        if (b->pinned) {
            b->first = 0;
            b->last = UINT32_MAX;
        }
        if (b->first <= b->last)
            ids[m++] = i;
    }
    sort_ids(ids, m, exe->bufs);
    size_t total = 0;
    for (uint32_t i = 0; i < m; i++) {
        odn_buf *b = &exe->bufs[ids[i]];
        uint32_t np = 0;
        for (uint32_t j = 0; j < i; j++) {
            const odn_buf *o = &exe->bufs[done[j]];
            if (o->first <= b->last && b->first <= o->last)
                pl[np++] = (placed){o->offset, o->offset + align_up(o->bytes)};
        }
        qsort(pl, np, sizeof *pl, by_lo);
        size_t off = 0, need = align_up(b->bytes);
        for (uint32_t j = 0; j < np; j++) {
            if (pl[j].lo >= off + need)
                break;
            if (pl[j].hi > off)
                off = pl[j].hi;
        }
        b->offset = off;
        done[i] = ids[i];
        if (off + need > total)
            total = off + need;
    }
    free(ids);
    free(pl);
    free(done);
    exe->arena_bytes = total;
    if (total && !(exe->arena = arena_alloc(total, &exe->arena_huge)))
        return odn_fail(exe, XPB_OUT_OF_MEMORY, "compile: cannot allocate %zu bytes", total);
    for (uint32_t i = 0; i < n; i++) {
        odn_buf *b = &exe->bufs[i];
        b->ptr = b->first <= b->last ? exe->arena + b->offset : NULL;
    }
    return XPB_OK;
}
