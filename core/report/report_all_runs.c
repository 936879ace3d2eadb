/* Every run (see report_sections.h): the table `xpubench show` prints, with intervals, and the
 * runs that did not finish with their errors. */
#include <string.h>

#include "report/report_runs.h"
#include "report/report_sections.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_BATCH | XPB_COL_PRECISION |             \
     XPB_COL_BACKEND | XPB_COL_FUSED | XPB_COL_THREADS)
#define N_METRICS 9

static const struct {
    const char *header, *path;
    xpb_unit unit;
} metrics[N_METRICS] = {
    {"samples/s", NULL, XPB_UNIT_RATE},
    {"p50 ms", "metrics.step_time_s.p50", XPB_UNIT_MS},
    {"p95 ms", "metrics.step_time_s.p95", XPB_UNIT_MS},
    {"cv %", "metrics.step_time_s.cv", XPB_UNIT_PERCENT},
    {"GFLOP/s", "metrics.flops_per_s", XPB_UNIT_GFLOPS},
    {"memory MiB", NULL, XPB_UNIT_MIB},
    {"loss first", "metrics.loss.first", XPB_UNIT_NONE},
    {"loss last", "metrics.loss.last", XPB_UNIT_NONE},
    {"others %", "metrics.interference.other_cpu_share", XPB_UNIT_PERCENT},
};

static xpb_status runs_table(xpb_report *r, xpb_report_section *s)
{
    const char *headers[1 + 9 + N_METRICS] = {"id"};
    size_t nd = 1 + xpb_rrun_desc_headers(r, headers + 1, DESC);
    for (size_t m = 0; m < N_METRICS; m++)
        headers[nd + m] = metrics[m].header;
    xpb_report_table *t = xpb_report_table_new(r, s, "table", "Every run", headers, nd + N_METRICS);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = "samples/s: median over repeats with the 95% interval of the geometric mean (the "
              "status of a run that did not finish); memory: the backend's peak, else the run's "
              "own host memory; others: CPU share of other processes, ! when the run was "
              "disturbed";
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_cell_text(&c[0], run->id);
        xpb_rrun_desc_cells(r, &c[1], run, DESC);
        c += nd;
        for (size_t m = 0; m < N_METRICS; m++) {
            if (metrics[m].path)
                xpb_rrun_cell(r, &c[m], run, metrics[m].path, metrics[m].unit);
        }
        xpb_rrun_throughput_cell(r, &c[0], run);
        if (strcmp(run->status, "ok") != 0) /* no throughput: say why (errors are below) */
            xpb_cell_text(&c[0], run->status);
        const char *mem = NULL;
        xpb_rrun_memory(run, &mem);
        if (mem)
            xpb_rrun_cell(r, &c[5], run, mem, XPB_UNIT_MIB);
        if (run->flagged)
            c[8].flags |= XPB_CELL_FLAGGED;
    }
    return XPB_OK;
}

static xpb_status unfinished_table(xpb_report *r, xpb_report_section *s)
{
    static const char *const headers[] = {"file", "id", "status", "error"};
    size_t skip = r->n_docs > 1 ? 0 : 1;
    xpb_report_table *t = NULL;
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        if (strcmp(run->status, "ok") == 0)
            continue;
        if (!t && !(t = xpb_report_table_new(r, s, "unfinished", "Runs that did not finish",
                                             headers + skip, 4 - skip)))
            return XPB_OUT_OF_MEMORY;
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        if (!skip)
            xpb_cell_text(c++, r->names[run->doc]);
        xpb_cell_text(&c[0], run->id);
        xpb_cell_text(&c[1], run->status);
        xpb_cell_text(&c[2], json_string_value(json_object_get(run->run, "error")));
    }
    return XPB_OK;
}

xpb_status xpb_report_all_runs(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "runs", "Every run");
    if (!s)
        return XPB_OUT_OF_MEMORY;
    xpb_status st = runs_table(r, s);
    return st == XPB_OK ? unfinished_table(r, s) : st;
}
