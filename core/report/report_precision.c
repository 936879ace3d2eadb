/* fp32 against the other precision policies (see report_sections.h): the two throughputs, the
 * speedup with its interval and the losses of the first and last timed steps, then per pair a
 * chart of both loss curves (metrics.loss.series), so that a faster policy can be seen to
 * learn the same. */
#include <math.h>
#include <string.h>

#include "report/report_comparisons.h"
#include "report/report_describe.h"
#include "report/report_sections.h"

#define OVERLAP_SHARE 0.005 /* of the chart's range: closer than a line is wide */
#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_BATCH | XPB_COL_BACKEND |               \
     XPB_COL_FUSION | XPB_COL_THREADS)

static xpb_status pairs_table(xpb_report *r, xpb_report_section *s, const xpb_rcmp *cmps, size_t n)
{
    const char *headers[9 + 8];
    size_t nd = xpb_rrun_desc_headers(r, headers, DESC);
    static const char *const more[] = {"precision",  "fp32 samples/s",  "samples/s",
                                       "speedup ×",  "fp32 loss first", "fp32 loss last",
                                       "loss first", "loss last"};
    memcpy(headers + nd, more, sizeof more);
    xpb_report_table *t =
        xpb_report_table_new(r, s, "table", "fp32 against other precisions", headers, nd + 8);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = "loss first/last: the loss of the first and of the last timed step; "
              "emulated: the device has no native support for the policy";
    for (size_t i = 0; i < n; i++) {
        const xpb_rrun *base = cmps[i].base, *cand = cmps[i].cand;
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_rrun_desc_cells(r, c, cand, DESC);
        xpb_rrun_desc_cells(r, &c[nd], cand, XPB_COL_PRECISION);
        xpb_rrun_throughput_cell(r, &c[nd + 1], base);
        xpb_rrun_throughput_cell(r, &c[nd + 2], cand);
        xpb_rcmp_speedup_cell(r, &c[nd + 3], &cmps[i]);
        xpb_rrun_cell(r, &c[nd + 4], base, XPB_RF_LOSS_FIRST, XPB_UNIT_NONE);
        xpb_rrun_cell(r, &c[nd + 5], base, XPB_RF_LOSS_LAST, XPB_UNIT_NONE);
        xpb_rrun_cell(r, &c[nd + 6], cand, XPB_RF_LOSS_FIRST, XPB_UNIT_NONE);
        xpb_rrun_cell(r, &c[nd + 7], cand, XPB_RF_LOSS_LAST, XPB_UNIT_NONE);
    }
    return XPB_OK;
}

/* Adds the loss series of `run` to the chart; returns its number of points, -1 when out of
 * memory. */
static int add_series(xpb_report *r, xpb_chart *c, const xpb_rrun *run, int color)
{
    const struct xpb_results_metrics *m = &run->v->metrics;
    xpb_chart_series *s = xpb_chart_series_new(
        r, c,
        xpb_arena_printf(&r->arena, "%s%s", run->precision, run->emulated ? " (emulated)" : ""),
        XPB_SERIES_LINE | XPB_SERIES_POINTS | (color ? XPB_SERIES_DASHED : 0u), color);
    if (!s)
        return -1;
    for (size_t i = 0; i < m->loss.n_series; i++) {
        const struct xpb_results_loss_point *p = &m->loss.series[i];
        if (p->step != XPB_RESULTS_NO_INT && !isnan(p->loss) &&
            xpb_chart_point(r, s, (double)p->step, p->loss, NAN, NAN) != XPB_OK)
            return -1;
    }
    return (int)s->n;
}

/* Says so when the two curves of c lie on each other (every common step within
 * OVERLAP_SHARE of the range the chart shows), so that a reader does not take the one on top
 * for the only one. XPB_OUT_OF_MEMORY or XPB_OK. */
static xpb_status overlap_note(xpb_report *r, xpb_chart *c)
{
    const xpb_chart_series *a = &c->series[0], *b = &c->series[1];
    double lo = INFINITY, hi = -INFINITY, most = 0;
    size_t common = 0;
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < c->series[s].n; i++) {
            lo = fmin(lo, c->series[s].y[i]);
            hi = fmax(hi, c->series[s].y[i]);
        }
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < b->n; j++)
            if (a->x[i] == b->x[j]) {
                most = fmax(most, fabs(a->y[i] - b->y[j]));
                common++;
            }
    if (common == 0 || most > OVERLAP_SHARE * (hi - lo))
        return XPB_OK;
    char diff[48];
    xpb_report_format_number(diff, sizeof diff, most);
    c->note = xpb_arena_printf(&r->arena,
                               "the two curves coincide (at most %s apart at %zu common steps): "
                               "the dashed %s line lies on the %s one",
                               diff, common, b->label, a->label);
    return c->note ? XPB_OK : XPB_OUT_OF_MEMORY;
}

static xpb_status loss_chart(xpb_report *r, xpb_report_section *s, const xpb_rcmp *k, size_t i)
{
    const char *label = xpb_rrun_label(r, k->cand, DESC);
    xpb_chart *c =
        label ? xpb_report_chart_new(r, s, XPB_CHART_XY, xpb_arena_printf(&r->arena, "loss-%zu", i),
                                     xpb_arena_printf(&r->arena, "Loss against step: %s", label))
              : NULL;
    if (!c)
        return XPB_OUT_OF_MEMORY;
    c->x_label = "timed step (over all repeats)";
    c->y_label = "loss";
    c->x_unit = XPB_UNIT_COUNT;
    c->y_unit = XPB_UNIT_NONE;
    int na = add_series(r, c, k->base, 0), nb = add_series(r, c, k->cand, 1);
    if (na < 0 || nb < 0)
        return XPB_OUT_OF_MEMORY;
    if (na == 0 && nb == 0)
        c->note = "no loss series in the file (version 1, or a program without a loss)";
    else if (na > 0 && nb > 0)
        return overlap_note(r, c);
    return XPB_OK;
}

xpb_status xpb_report_precision(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "precision", "Precision");
    xpb_rcmp *cmps;
    size_t n;
    if (!s || xpb_rcmps_of(r, "precision", &cmps, &n) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    if (n == 0)
        return xpb_report_text(r, s,
                               "No precision comparison: no two finished runs differ only "
                               "in their precision policy, one of them fp32.");
    xpb_status st = pairs_table(r, s, cmps, n);
    for (size_t i = 0; st == XPB_OK && i < n; i++)
        st = loss_chart(r, s, &cmps[i], i);
    return st;
}
