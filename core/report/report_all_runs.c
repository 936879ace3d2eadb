/* Every run (see report_sections.h): the table `xpubench show` prints, with intervals, and the
 * runs that did not finish with their errors. */
#include <string.h>

#include "report/report_describe.h"
#include "report/report_sections.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_BATCH | XPB_COL_PRECISION |             \
     XPB_COL_BACKEND | XPB_COL_FUSED | XPB_COL_THREADS)
#define N_METRICS 9

/* The columns of numbers; XPB_RF_COUNT: filled apart (throughput, memory). */
static const struct {
    const char *header;
    enum xpb_results_field field;
    xpb_unit unit;
} metrics[N_METRICS] = {
    {"samples/s", XPB_RF_COUNT, XPB_UNIT_RATE},
    {"p50 ms", XPB_RF_STEP_P50, XPB_UNIT_MS},
    {"p95 ms", XPB_RF_STEP_P95, XPB_UNIT_MS},
    {"cv %", XPB_RF_STEP_CV, XPB_UNIT_PERCENT},
    {"GFLOP/s", XPB_RF_FLOPS_PER_S, XPB_UNIT_GFLOPS},
    {"memory MiB", XPB_RF_COUNT, XPB_UNIT_MIB},
    {"loss first", XPB_RF_LOSS_FIRST, XPB_UNIT_NONE},
    {"loss last", XPB_RF_LOSS_LAST, XPB_UNIT_NONE},
    {"others %", XPB_RF_OTHER_CPU_SHARE, XPB_UNIT_PERCENT},
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
            if (metrics[m].field != XPB_RF_COUNT)
                xpb_rrun_cell(r, &c[m], run, metrics[m].field, metrics[m].unit);
        }
        xpb_rrun_throughput_cell(r, &c[0], run);
        if (strcmp(run->status, "ok") != 0) /* no throughput: say why (errors are below) */
            xpb_cell_text(&c[0], run->status);
        enum xpb_results_field mem;
        xpb_rrun_memory(run, &mem);
        if (mem != XPB_RF_COUNT)
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
        xpb_cell_text(&c[2], run->v->error);
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
