/* The documents' comparisons as the report reads them (see report_runs.h). */
#include <math.h>
#include <string.h>

#include "results/interval.h"
#include "report/report_runs.h"
#include "results/results.h"

xpb_status xpb_rcmps_of(xpb_report *r, const char *kind, xpb_rcmp **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    for (size_t d = 0; d < r->n_docs; d++) {
        const json_t *list = json_object_get(r->docs[d], "comparisons");
        for (size_t i = 0; i < json_array_size(list); i++) {
            const json_t *c = json_array_get(list, i);
            const char *k = json_string_value(json_object_get(c, "kind"));
            const char *b = json_string_value(json_object_get(c, "baseline"));
            const char *a = json_string_value(json_object_get(c, "candidate"));
            if (!k || !b || !a || strcmp(k, kind) != 0)
                continue;
            const xpb_rrun *base = xpb_rruns_find(r, d, b), *cand = xpb_rruns_find(r, d, a);
            if (!base || !cand)
                continue;
            xpb_rcmp *slot = xpb_arena_push(&r->arena, (void **)out, n, &cap, sizeof **out);
            if (!slot)
                return XPB_OUT_OF_MEMORY;
            *slot = (xpb_rcmp){d, i, c, base, cand};
        }
    }
    return XPB_OK;
}

void xpb_rcmp_speedup_cell(xpb_report *r, xpb_report_cell *c, const xpb_rcmp *k)
{
    const json_t *sp = json_object_get(k->cmp, "speedup");
    const json_t *lo = json_object_get(k->cmp, "ci95_low");
    const json_t *hi = json_object_get(k->cmp, "ci95_high");
    const json_t *significant = json_object_get(k->cmp, "significant");
    if (significant) { /* version 2: the file has it all */
        xpb_cell_number(
            c, json_number_value(sp), XPB_UNIT_SPEEDUP,
            xpb_arena_printf(&r->arena, "f%zu:comparisons[%zu].speedup", k->doc, k->index));
        if (json_is_number(lo) && json_is_number(hi)) {
            c->lo = json_number_value(lo);
            c->hi = json_number_value(hi);
        }
        c->flags |= json_is_true(significant) ? XPB_CELL_SIGNIFICANT : XPB_CELL_NOT_SIGNIFICANT;
    } else {
        xpb_interval iv;
        if (xpb_results_speedup(&iv, k->base->run, k->cand->run) != 0) {
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
