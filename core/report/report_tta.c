/* Time to accuracy (see report_sections.h): per time-to-accuracy run, the time and the energy to
 * the target with their spread, how many runs reached it and the reference check; and a chart
 * of test accuracy against time, one line per seed, one colour per run (backend). Kept apart
 * from the throughput sections: a time to a target is not a step rate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_describe.h"
#include "report/report_sections.h"
#include "results/tta_table.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_BATCH | XPB_COL_PRECISION | XPB_COL_BACKEND |          \
     XPB_COL_THREADS)

/* A number read from the run's "tta" object at `path`; empty when it is not finite. */
static void tta_cell(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run, double v,
                     xpb_unit unit, const char *path)
{
    if (isfinite(v))
        xpb_cell_number(c, v, unit, xpb_rrun_src(r, run, path));
}

static xpb_status table(xpb_report *r, xpb_report_section *s, size_t *rows)
{
    const char *headers[9 + 10];
    size_t nd = xpb_rrun_desc_headers(r, headers, DESC);
    static const char *const more[] = {"target %", "reached", "time s",     "min s",   "max s",
                                       "energy J", "epochs",  "ref epochs", "outside", "init s"};
    memcpy(headers + nd, more, sizeof more);
    xpb_report_table *t =
        xpb_report_table_new(r, s, "runs", "Time and energy to the target", headers, nd + 10);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = "time s and energy J: the Olympic mean over the runs (the fastest and the slowest "
              "dropped; a run that missed the target counts as the slowest, and two that missed "
              "leave no mean); reached: runs that reached the target (diverged or stalled: stopped "
              "early, see docs/results.md); min s and max s: the converged runs' spread; epochs: "
              "their median; "
              "outside: runs that converged in fewer than half or more than twice the reference "
              "epochs; init s: building and compiling, before the clock (first run)";
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        if (!(run->v->ok && run->v->has_tta))
            continue;
        const struct xpb_results_tta *tt = &run->v->tta;
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_rrun_desc_cells(r, c, run, DESC);
        c += nd;
        tta_cell(r, &c[0], run, tt->target, XPB_UNIT_PERCENT, "tta.target");
        char reached[128], why[64];
        xpb_results_tta_stopped_note(why, sizeof why, tt);
        snprintf(reached, sizeof reached, "%lld of %lld%s", (long long)tt->seconds.converged,
                 (long long)tt->seconds.runs, why);
        xpb_cell_text(&c[1], xpb_arena_strdup(&r->arena, reached));
        tta_cell(r, &c[2], run, tt->seconds.mean, XPB_UNIT_NONE, "tta.seconds.mean");
        if (!isfinite(tt->seconds.mean))
            xpb_cell_text(&c[2], "not reached");
        tta_cell(r, &c[3], run, tt->seconds.min, XPB_UNIT_NONE, "tta.seconds.min");
        tta_cell(r, &c[4], run, tt->seconds.max, XPB_UNIT_NONE, "tta.seconds.max");
        tta_cell(r, &c[5], run, tt->joules.mean, XPB_UNIT_JOULES, "tta.joules.mean");
        if (!isfinite(tt->joules.mean))
            xpb_cell_text(&c[5], "not measured");
        double epochs = xpb_results_tta_median_epochs(tt);
        if (isfinite(epochs))
            xpb_cell_number(&c[6], epochs, XPB_UNIT_NONE, NULL);
        tta_cell(r, &c[7], run, tt->reference_epochs, XPB_UNIT_NONE, "tta.reference_epochs");
        size_t outside = xpb_results_tta_outside(tt);
        xpb_cell_number(&c[8], (double)outside, XPB_UNIT_COUNT, NULL);
        if (outside)
            c[8].flags |= XPB_CELL_FLAGGED;
        if (tt->n_runs)
            tta_cell(r, &c[9], run, tt->runs[0].init_seconds, XPB_UNIT_NONE,
                     "tta.runs[0].init_seconds");
        (*rows)++;
    }
    return XPB_OK;
}

static xpb_status chart(xpb_report *r, xpb_report_section *s)
{
    xpb_chart *c = xpb_report_chart_new(r, s, XPB_CHART_XY, "curve", "Test accuracy against time");
    if (!c)
        return XPB_OUT_OF_MEMORY;
    c->x_label = "seconds since the first batch";
    c->y_label = "test accuracy";
    c->x_unit = XPB_UNIT_NONE;
    c->y_unit = XPB_UNIT_PERCENT;
    c->y_zero = 1;
    c->note = "every evaluation of every run (seed), one colour per configuration; the "
              "horizontal line is the target";
    int color = 0;
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        if (!(run->v->ok && run->v->has_tta))
            continue;
        const struct xpb_results_tta *tt = &run->v->tta;
        c->hline = tt->target; /* the same target in a report that compares runs */
        c->hline_label = "target";
        for (size_t k = 0; k < tt->n_runs; k++) {
            const struct xpb_results_tta_run *tr = &tt->runs[k];
            const char *label = xpb_arena_printf(&r->arena, "%s (%s) seed %lld", run->id,
                                                 run->backend, (long long)tr->seed);
            xpb_chart_series *ser =
                xpb_chart_series_new(r, c, label, XPB_SERIES_LINE | XPB_SERIES_POINTS, color);
            if (!label || !ser)
                return XPB_OUT_OF_MEMORY;
            for (size_t p = 0; p < tr->n_curve; p++)
                if (xpb_chart_point(r, ser, tr->curve[p].seconds, tr->curve[p].accuracy, NAN,
                                    NAN) != XPB_OK)
                    return XPB_OUT_OF_MEMORY;
        }
        color++;
    }
    return XPB_OK;
}

xpb_status xpb_report_tta(xpb_report *r)
{
    size_t any = 0;
    for (size_t i = 0; i < r->runs->n; i++)
        any += r->runs->items[i].v->ok && r->runs->items[i].v->has_tta;
    if (!any)
        return XPB_OK; /* no section for documents without time-to-accuracy runs */
    xpb_report_section *s = xpb_report_section_new(r, "tta", "Time to accuracy");
    if (!s)
        return XPB_OUT_OF_MEMORY;
    size_t rows = 0;
    xpb_status st = table(r, s, &rows);
    if (st == XPB_OK)
        st = chart(r, s);
    return st;
}
