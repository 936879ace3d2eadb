/* Throughput against threads (see report_sections.h): for every group of finished runs of one
 * file that differ only in threads, each run's throughput with its interval, its speedup over
 * the run with the fewest threads (Welch interval on the repeats) and the parallel efficiency
 * (speedup / thread ratio); a chart with one line per group. */
#include <math.h>

#include "report/report_describe.h"
#include "report/report_sections.h"
#include "results/comparisons.h"
#include "results/interval.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_BATCH | XPB_COL_PRECISION |             \
     XPB_COL_BACKEND | XPB_COL_FUSION)

/* The threads a run used: its config's, or for "auto" (0) the backend's (device.threads). */
static double used_threads(const xpb_rrun *run)
{
    if (run->threads > 0)
        return (double)run->threads;
    int64_t t = run->v->device.threads;
    return t != XPB_RESULTS_NO_INT && t > 0 ? (double)t : NAN;
}

static xpb_status group_rows(xpb_report *r, xpb_report_table *t, xpb_chart *chart,
                             const xpb_rgroup *g, int color)
{
    const char *headers[9];
    size_t nd = xpb_rrun_desc_headers(r, headers, DESC);
    const xpb_rrun *first = g->runs[0];
    xpb_chart_series *s = xpb_chart_series_new(r, chart, xpb_rrun_label(r, first, DESC),
                                               XPB_SERIES_LINE | XPB_SERIES_POINTS, color);
    if (!s)
        return XPB_OUT_OF_MEMORY;
    for (size_t i = 0; i < g->n; i++) {
        const xpb_rrun *run = g->runs[i];
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_rrun_desc_cells(r, c, run, DESC);
        xpb_rrun_desc_cells(r, &c[nd], run, XPB_COL_THREADS);
        xpb_rrun_throughput_cell(r, &c[nd + 1], run);
        xpb_interval iv;
        if (xpb_results_speedup(&iv, first->v, run->v) == 0) {
            xpb_cell_number(&c[nd + 2], iv.estimate, XPB_UNIT_SPEEDUP, NULL);
            c[nd + 2].lo = iv.low;
            c[nd + 2].hi = iv.high;
            c[nd + 2].flags |=
                xpb_interval_significant(&iv) ? XPB_CELL_SIGNIFICANT : XPB_CELL_NOT_SIGNIFICANT;
            double ratio = used_threads(run) / used_threads(first);
            if (isfinite(ratio) && ratio > 0)
                xpb_cell_number(&c[nd + 3], iv.estimate / ratio, XPB_UNIT_PERCENT, NULL);
        }
        if (i == 0) {
            xpb_cell_text(&c[nd + 2], "base");
            c[nd + 2].flags |= XPB_CELL_STRONG;
        }
        double x = used_threads(run);
        if (isfinite(x) &&
            xpb_chart_point(r, s, x, run->throughput, c[nd + 1].lo, c[nd + 1].hi) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    }
    return XPB_OK;
}

xpb_status xpb_report_threads(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "threads", "Throughput against threads");
    xpb_rgroup *groups;
    size_t n;
    if (!s || xpb_rruns_groups(r, &groups, &n, "threads", 2) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    if (n == 0)
        return xpb_report_text(r, s,
                               "No thread sweep: no two finished runs of one file differ "
                               "only in their threads.");
    const char *headers[9 + 4];
    size_t nd = xpb_rrun_desc_headers(r, headers, DESC);
    headers[nd] = "threads";
    headers[nd + 1] = "samples/s";
    headers[nd + 2] = "speedup over the fewest ×";
    headers[nd + 3] = "efficiency %";
    xpb_report_table *t =
        xpb_report_table_new(r, s, "table", "Throughput against threads", headers, nd + 4);
    xpb_chart *c =
        t ? xpb_report_chart_new(r, s, XPB_CHART_XY, "chart", "Throughput against threads") : NULL;
    if (!c)
        return XPB_OUT_OF_MEMORY;
    t->note = "speedup over the run with the fewest threads (Welch 95% interval on the repeats); "
              "efficiency = speedup / thread ratio (auto: the threads the backend used)";
    c->x_label = "threads";
    c->y_label = "samples/s";
    c->x_unit = XPB_UNIT_COUNT;
    c->y_unit = XPB_UNIT_RATE;
    c->y_zero = 1;
    for (size_t i = 0; i < n; i++)
        if (group_rows(r, t, c, &groups[i], (int)i) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    return XPB_OK;
}
