/* Energy (see report_sections.h): the study's table (samples/s, W and samples/J = samples/s/W
 * at batch 1 and 128 per configuration), every run whose energy was measured with its joules
 * and RAPL domains, and why energy was not measured where it was not. */
#include <stdio.h>
#include <string.h>

#include "report/report_describe.h"
#include "report/report_sections.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_PRECISION | XPB_COL_BACKEND |           \
     XPB_COL_FUSION | XPB_COL_THREADS)
#define MAX_REASONS 16

static const long study_batches[2] = {1, 128};

/* The run of group g at batch b (borrowed from the report's index), or NULL. */
static const xpb_rrun *at_batch(const xpb_rgroup *g, long b)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->runs[i]->batch == b)
            return g->runs[i];
    return NULL;
}

/* samples/s, W, samples/J of `run` into c[0..3). */
static void energy_cells(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run)
{
    if (!run)
        return;
    xpb_rrun_throughput_cell(r, &c[0], run);
    if (run->v->metrics.energy.measured != 1) {
        xpb_cell_text(&c[1], "not measured");
        xpb_cell_text(&c[2], "not measured");
        return;
    }
    xpb_rrun_cell(r, &c[1], run, XPB_RF_WATTS, XPB_UNIT_WATTS);
    xpb_rrun_cell(r, &c[2], run, XPB_RF_SAMPLES_PER_JOULE, XPB_UNIT_PER_JOULE);
}

static xpb_status study_table(xpb_report *r, xpb_report_section *s)
{
    xpb_rgroup *groups;
    size_t n, rows = 0;
    if (xpb_rruns_groups(r, &groups, &n, "batch", 1) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    const char *headers[9 + 6];
    size_t nd = xpb_rrun_desc_headers(r, headers, DESC);
    static const char *const more[] = {"b1 samples/s",   "b1 W",   "b1 samples/J",
                                       "b128 samples/s", "b128 W", "b128 samples/J"};
    memcpy(headers + nd, more, sizeof more);
    xpb_report_table *t =
        xpb_report_table_new(r, s, "study", "Energy at batch 1 and 128", headers, nd + 6);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = "samples/J (samples per joule) is samples/s per W; W = joules over the timed steps "
              "/ their wall time";
    for (size_t i = 0; i < n; i++) {
        const xpb_rrun *b1 = at_batch(&groups[i], study_batches[0]);
        const xpb_rrun *b128 = at_batch(&groups[i], study_batches[1]);
        if (!b1 && !b128)
            continue;
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_rrun_desc_cells(r, c, b1 ? b1 : b128, DESC);
        energy_cells(r, &c[nd], b1);
        energy_cells(r, &c[nd + 3], b128);
        rows++;
    }
    if (rows == 0 && xpb_report_text(r, s,
                                     "No finished run at batch 1 or 128, the batches of the "
                                     "study's energy table.") != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    return XPB_OK;
}

static xpb_status measured_table(xpb_report *r, xpb_report_section *s)
{
    const char *headers[9 + 6];
    unsigned desc = DESC | XPB_COL_BATCH;
    size_t nd = xpb_rrun_desc_headers(r, headers, desc);
    static const char *const more[] = {"source", "J", "W", "samples/J", "package J", "DRAM J"};
    memcpy(headers + nd, more, sizeof more);
    xpb_report_table *t = NULL;
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        if (run->v->metrics.energy.measured != 1)
            continue;
        if (!t && !(t = xpb_report_table_new(r, s, "runs", "Energy of every measured run", headers,
                                             nd + 6)))
            return XPB_OUT_OF_MEMORY;
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_rrun_desc_cells(r, c, run, desc);
        xpb_cell_text(&c[nd], run->v->metrics.energy.source);
        xpb_rrun_cell(r, &c[nd + 1], run, XPB_RF_ENERGY_JOULES, XPB_UNIT_JOULES);
        xpb_rrun_cell(r, &c[nd + 2], run, XPB_RF_WATTS, XPB_UNIT_WATTS);
        xpb_rrun_cell(r, &c[nd + 3], run, XPB_RF_SAMPLES_PER_JOULE, XPB_UNIT_PER_JOULE);
        xpb_rrun_cell(r, &c[nd + 4], run, XPB_RF_ENERGY_PACKAGE, XPB_UNIT_JOULES);
        xpb_rrun_cell(r, &c[nd + 5], run, XPB_RF_ENERGY_DRAM, XPB_UNIT_JOULES);
    }
    return XPB_OK;
}

/* One paragraph per distinct reason energy was not measured, with how many runs it concerns. */
static xpb_status reasons(xpb_report *r, xpb_report_section *s)
{
    const char *reason[MAX_REASONS];
    size_t count[MAX_REASONS], n = 0, other = 0;
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        const char *why = run->v->metrics.energy.reason;
        if (!run->v->has_metrics || run->v->metrics.energy.measured == 1)
            continue;
        why = why ? why : "no reason recorded (version-1 file)";
        size_t k = 0;
        while (k < n && strcmp(reason[k], why) != 0)
            k++;
        if (k == n && n == MAX_REASONS) {
            other++;
            continue;
        }
        if (k == n) {
            reason[n] = why;
            count[n++] = 0;
        }
        count[k]++;
    }
    for (size_t k = 0; k < n; k++)
        if (xpb_report_text(r, s, "Not measured for %zu run%s: %s", count[k],
                            count[k] == 1 ? "" : "s", reason[k]) != XPB_OK)
            return XPB_OUT_OF_MEMORY;
    if (other && xpb_report_text(r, s, "Not measured for %zu more runs, for other reasons.",
                                 other) != XPB_OK)
        return XPB_OUT_OF_MEMORY;
    return XPB_OK;
}

xpb_status xpb_report_energy(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "energy", "Energy");
    if (!s)
        return XPB_OUT_OF_MEMORY;
    xpb_status st = study_table(r, s);
    if (st == XPB_OK)
        st = measured_table(r, s);
    if (st == XPB_OK)
        st = reasons(r, s);
    return st;
}
