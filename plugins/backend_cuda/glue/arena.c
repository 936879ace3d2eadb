/* Device addresses of the plan's buffers: every buffer lives at its planned offset in the
 * executable's one arena (plan/plan_memory.c), so a plan view becomes a pointer and a kernel
 * view by arithmetic. */
#include <string.h>

#include "glue/arena.h"

void *cux_ptr(const xpb_executable *exe, uint32_t buf)
{
    if (buf == CUX_NONE)
        return NULL;
    return exe->arena + exe->plan->bufs[buf].offset;
}

cux_tview cux_tview_of(const xpb_executable *exe, const cux_view *v)
{
    cux_tview t;
    memset(&t, 0, sizeof t);
    if (v->buf == CUX_NONE)
        return t;
    t.p = cux_ptr(exe, v->buf);
    t.type = v->type;
    t.layout = v->layout;
    t.n = v->dims[0]; /* unused dims are 1 (plan_lower.c), so [d0] is [d0, 1, 1, 1] */
    t.c = v->dims[1];
    t.h = v->dims[2];
    t.w = v->dims[3];
    t.ndim = v->ndim;
    return t;
}
