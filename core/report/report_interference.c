/* Interference (see report_sections.h): the runs during which other processes took more than
 * a few percent of what they needed of their own CPUs (metrics.interference.flagged), whose
 * numbers are not their own. */
#include <math.h>
#include <string.h>

#include "report/report_describe.h"
#include "report/report_sections.h"

#define DESC                                                                                       \
    (XPB_COL_FILE | XPB_COL_MODEL | XPB_COL_MODE | XPB_COL_BATCH | XPB_COL_PRECISION |             \
     XPB_COL_BACKEND | XPB_COL_FUSION | XPB_COL_THREADS)

static xpb_status flagged_table(xpb_report *r, xpb_report_section *s)
{
    const char *headers[1 + 9 + 3] = {"id"};
    size_t nd = xpb_rrun_desc_headers(r, headers + 1, DESC);
    headers[nd + 1] = "others %";
    headers[nd + 2] = "steal %";
    headers[nd + 3] = "load 1m";
    xpb_report_table *t = xpb_report_table_new(r, s, "flagged", "Disturbed runs", headers, nd + 4);
    if (!t)
        return XPB_OUT_OF_MEMORY;
    t->note = "others = CPU time other processes took during the timed steps of what the run "
              "needed of its own CPUs (its affinity set, as many CPUs as it has threads; "
              "flagged above 5%); steal = the part a hypervisor gave to other guests";
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        if (!run->flagged)
            continue;
        xpb_report_cell *c = xpb_report_row(r, t);
        if (!c)
            return XPB_OUT_OF_MEMORY;
        xpb_cell_text(&c[0], run->id);
        xpb_rrun_desc_cells(r, &c[1], run, DESC);
        xpb_rrun_cell(r, &c[nd + 1], run, XPB_RF_OTHER_CPU_SHARE, XPB_UNIT_PERCENT);
        xpb_rrun_cell(r, &c[nd + 2], run, XPB_RF_STEAL_SHARE, XPB_UNIT_PERCENT);
        xpb_rrun_cell(r, &c[nd + 3], run, XPB_RF_LOAD_1M, XPB_UNIT_NONE);
    }
    return XPB_OK;
}

xpb_status xpb_report_interference(xpb_report *r)
{
    xpb_report_section *s = xpb_report_section_new(r, "interference", "Interference");
    if (!s)
        return XPB_OUT_OF_MEMORY;
    size_t flagged = 0, recorded = 0, measured = 0;
    double most = NAN;
    for (size_t i = 0; i < r->runs->n; i++) {
        const xpb_rrun *run = &r->runs->items[i];
        double share = run->v->metrics.interference.other_cpu_share;
        flagged += (size_t)run->flagged;
        recorded += (size_t)run->v->metrics.has_interference;
        if (!isnan(share)) {
            measured++;
            most = isnan(most) || share > most ? share : most;
        }
    }
    xpb_status st;
    char most_text[48];
    xpb_report_format_value(most_text, sizeof most_text, measured ? most : 0, XPB_UNIT_PERCENT);
    size_t old_docs = 0;
    for (size_t d = 0; d < r->n_docs; d++)
        old_docs += r->views[d].schema_version < 2;
    if (recorded == 0 && old_docs == r->n_docs)
        st = xpb_report_text(r, s,
                             "Not recorded: the files are older than schema version 2, "
                             "which records what other processes did during each run.");
    else if (recorded == 0)
        st = xpb_report_text(r, s,
                             "Not recorded: no run of the files timed steps whose interference "
                             "was measured (runs that did not finish, time-to-accuracy runs, "
                             "and runs of files older than schema version 2 do not record it).");
    else if (flagged == 0)
        st = xpb_report_text(r, s,
                             "No run was disturbed: other processes took at most %s%% of what a "
                             "run needed of its CPUs during its timed steps (%zu runs measured).",
                             most_text, measured);
    else
        st = xpb_report_text(r, s,
                             "%zu of %zu runs were disturbed by other processes (marked ! next to "
                             "their throughputs and speedups): their numbers are not their own; "
                             "run them again on a quiet machine before publishing them.",
                             flagged, r->runs->n);
    return st == XPB_OK && flagged ? flagged_table(r, s) : st;
}
