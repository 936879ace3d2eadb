/* The device arena: every buffer is used by a range of steps (the steps that name it as an
 * operand, in global program order); buffers whose ranges do not overlap may share bytes.
 * Pinned buffers (persistent and host-visible tensors, everything under keep_all, shadows,
 * folded weights, the bookkeeping records) span the whole executable. Placement is greedy:
 * largest buffer first, at the lowest offset (aligned to CUX_ALIGN) that collides with no
 * placed buffer whose range overlaps. The plan records the arena's size (the end of the highest
 * buffer: exactly what compile allocates) and the most bytes live at any one step (a lower
 * bound no placement can beat; tests/test_cuda_plan.c checks the ratio), and after which step each
 * buffer that does not live throughout ends (its last use), for the stand-in's poison. */
#include <stdlib.h>
#include <string.h>

#include "kernels/fault.h"
#include "plan/plan_error.h"
#include "plan/plan_memory.h"

static uint64_t align_up(uint64_t v)
{
    return (v + CUX_ALIGN - 1) / CUX_ALIGN * CUX_ALIGN;
}

static void use(cux_plan *plan, const cux_view *v, uint32_t g)
{
    if (v->buf == CUX_NONE)
        return;
    cux_buf *b = &plan->bufs[v->buf];
    if (g < b->first)
        b->first = g;
    if (g > b->last)
        b->last = g;
}

static void mark_uses(cux_plan *plan)
{
    for (uint32_t g = 0; g < plan->n_steps; g++) {
        const cux_step *s = &plan->steps[g];
        for (uint32_t k = 0; k < CUX_MAX_IN; k++)
            use(plan, &s->in[k], g);
        for (uint32_t k = 0; k < CUX_MAX_OUT; k++)
            use(plan, &s->out[k], g);
        use(plan, &s->bias, g);
        use(plan, &s->resid, g);
        use(plan, &s->mask, g);
        use(plan, &s->extra, g);
    }
    /* prep steps run outside the phases: what they touch lives throughout */
    for (uint32_t g = 0; g < plan->n_prep; g++) {
        const cux_step *s = &plan->prep[g];
        for (uint32_t k = 0; k < CUX_MAX_IN; k++)
            if (s->in[k].buf != CUX_NONE)
                plan->bufs[s->in[k].buf].pinned = 1;
        for (uint32_t k = 0; k < CUX_MAX_OUT; k++)
            if (s->out[k].buf != CUX_NONE)
                plan->bufs[s->out[k].buf].pinned = 1;
    }
    for (uint32_t i = 0; i < plan->n_bufs; i++)
        if (plan->bufs[i].pinned) {
            plan->bufs[i].first = 0;
            plan->bufs[i].last = plan->n_steps ? plan->n_steps - 1 : 0;
        }
}

typedef struct span {
    uint64_t lo, hi;
} span;

static int by_lo(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

/* Sorts buffer ids by size, largest first (ties: lower id first). */
static void sort_by_size(uint32_t *ids, uint32_t n, const cux_buf *bufs)
{
    for (uint32_t i = 1; i < n; i++) {
        uint32_t v = ids[i], j = i;
        while (j > 0 && (bufs[ids[j - 1]].bytes < bufs[v].bytes ||
                         (bufs[ids[j - 1]].bytes == bufs[v].bytes && ids[j - 1] > v))) {
            ids[j] = ids[j - 1];
            j--;
        }
        ids[j] = v;
    }
}

/* The most aligned bytes live at one step. */
static uint64_t peak_live(const cux_plan *plan)
{
    uint32_t n = plan->n_steps ? plan->n_steps : 1;
    int64_t *delta = calloc((size_t)n + 1, sizeof *delta);
    if (!delta)
        return 0;
    for (uint32_t i = 0; i < plan->n_bufs; i++) {
        const cux_buf *b = &plan->bufs[i];
        if (b->first > b->last)
            continue;
        delta[b->first] += (int64_t)align_up(b->bytes);
        delta[b->last + 1] -= (int64_t)align_up(b->bytes);
    }
    int64_t live = 0, peak = 0;
    for (uint32_t g = 0; g < n; g++) {
        live += delta[g];
        if (live > peak)
            peak = live;
    }
    free(delta);
    return (uint64_t)peak;
}

/* True when buffer `b` is used by some step and does not live throughout. */
static int ends(const cux_buf *b)
{
    return !b->pinned && b->first <= b->last;
}

/* plan->end_first / end_bufs: the buffers whose lifetime ends with each step, by step (a
 * counting sort on the last use). */
static xpb_status list_ends(cux_plan *plan)
{
    uint32_t n = plan->n_steps;
    plan->end_first = calloc((size_t)n + 1, sizeof *plan->end_first);
    plan->end_bufs = malloc(((size_t)plan->n_bufs + 1) * sizeof *plan->end_bufs);
    uint32_t *next = malloc(((size_t)n + 1) * sizeof *next);
    if (!plan->end_first || !plan->end_bufs || !next) {
        free(next);
        return cux_fail(plan, XPB_OUT_OF_MEMORY, "compile: out of memory (memory plan)");
    }
    for (uint32_t i = 0; i < plan->n_bufs; i++)
        if (ends(&plan->bufs[i]))
            plan->end_first[plan->bufs[i].last + 1]++;
    for (uint32_t g = 0; g < n; g++) /* counts into the start of each step's list */
        plan->end_first[g + 1] += plan->end_first[g];
    memcpy(next, plan->end_first, ((size_t)n + 1) * sizeof *next);
    for (uint32_t i = 0; i < plan->n_bufs; i++)
        if (ends(&plan->bufs[i]))
            plan->end_bufs[next[plan->bufs[i].last]++] = i;
    free(next);
    return XPB_OK;
}

xpb_status cux_place_buffers(cux_plan *plan)
{
    mark_uses(plan);
    uint32_t n = plan->n_bufs, m = 0;
    uint32_t *ids = malloc(((size_t)n + 1) * sizeof *ids);
    uint32_t *done = malloc(((size_t)n + 1) * sizeof *done);
    span *spans = malloc(((size_t)n + 1) * sizeof *spans);
    if (!ids || !done || !spans) {
        free(ids);
        free(done);
        free(spans);
        return cux_fail(plan, XPB_OUT_OF_MEMORY, "compile: out of memory (memory plan)");
    }
    for (uint32_t i = 0; i < n; i++)
        if (plan->bufs[i].first <= plan->bufs[i].last)
            ids[m++] = i;
    sort_by_size(ids, m, plan->bufs);
    uint64_t total = 0;
    for (uint32_t i = 0; i < m; i++) {
        cux_buf *b = &plan->bufs[ids[i]];
        uint32_t ns = 0;
        for (uint32_t j = 0; j < i; j++) {
            const cux_buf *o = &plan->bufs[done[j]];
            if (o->first <= b->last && b->first <= o->last)
                spans[ns++] = (span){o->offset, o->offset + align_up(o->bytes)};
        }
        qsort(spans, ns, sizeof *spans, by_lo);
        uint64_t off = 0, need = align_up(b->bytes);
        for (uint32_t j = 0; j < ns; j++) {
            if (spans[j].lo >= off + need)
                break;
            if (spans[j].hi > off)
                off = spans[j].hi;
        }
        b->offset = off;
        done[i] = ids[i];
        if (off + need > total)
            total = off + need;
    }
#if defined(XPB_CUDA_STANDIN)
    if (cux_fault("arena_alias")) /* the two largest buffers live together share their bytes */
        for (uint32_t i = 1; i < m; i++) {
            cux_buf *b = &plan->bufs[ids[i]];
            const cux_buf *o = &plan->bufs[ids[0]];
            if (o->first <= b->last && b->first <= o->last && b->bytes <= o->bytes) {
                b->offset = o->offset;
                break;
            }
        }
#endif
    free(ids);
    free(done);
    free(spans);
    plan->arena_bytes = total;
    plan->peak_bytes = peak_live(plan);
    return list_ends(plan);
}
