/* The documents' comparisons as the report reads them (see report_comparisons.h). */
#include "report/report_comparisons.h"

#include <math.h>
#include <string.h>

#include "results/comparisons.h"
#include "results/interval.h"

xpb_status xpb_rcmps_of(xpb_report *r, const char *kind, xpb_rcmp **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    for (size_t d = 0; d < r->n_docs; d++) {
        const struct xpb_results_doc *v = &r->views[d];
        for (size_t i = 0; i < v->n_comparisons; i++) {
            const struct xpb_results_comparison *c = &v->comparisons[i];
            if (!c->kind || !c->baseline || !c->candidate || strcmp(c->kind, kind) != 0)
                continue;
            const xpb_rrun *base = xpb_rruns_find(r, d, c->baseline);
            const xpb_rrun *cand = xpb_rruns_find(r, d, c->candidate);
            if (!base || !cand)
                continue;
            xpb_rcmp *slot = xpb_arena_push(&r->arena, (void **)out, n, &cap, sizeof **out);
            if (!slot)
                return XPB_OUT_OF_MEMORY;
            *slot = (xpb_rcmp){d, c, base, cand};
        }
    }
    return XPB_OK;
}

void xpb_rcmp_speedup_cell(xpb_report *r, xpb_report_cell *c, const xpb_rcmp *k)
{
    const struct xpb_results_comparison *cmp = k->c;
    if (cmp->significant != XPB_RESULTS_NO_BOOL) { /* version 2: the file has it all */
        xpb_cell_number(
            c, cmp->speedup, XPB_UNIT_SPEEDUP,
            xpb_arena_printf(&r->arena, "f%zu:comparisons[%zu].speedup", k->doc, cmp->index));
        if (!isnan(cmp->ci95_low) && !isnan(cmp->ci95_high)) {
            c->lo = cmp->ci95_low;
            c->hi = cmp->ci95_high;
        }
        c->flags |= cmp->significant == 1 ? XPB_CELL_SIGNIFICANT : XPB_CELL_NOT_SIGNIFICANT;
    } else {
        xpb_interval iv;
        if (xpb_results_speedup(&iv, k->base->v, k->cand->v) != 0) {
            xpb_cell_number(c, NAN, XPB_UNIT_SPEEDUP, NULL);
            return;
        }
        xpb_cell_number(c, iv.estimate, XPB_UNIT_SPEEDUP, NULL);
        c->lo = iv.low;
        c->hi = iv.high;
        c->flags |=
            XPB_CELL_RECOMPUTED |
            (xpb_interval_significant(&iv) ? XPB_CELL_SIGNIFICANT : XPB_CELL_NOT_SIGNIFICANT);
    }
    if (k->base->flagged || k->cand->flagged)
        c->flags |= XPB_CELL_FLAGGED;
}
