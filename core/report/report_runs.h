/* The runs of a report: every run of every document, from the documents' typed views
 * (results/view.h), with what the sections ask of every run read once, and the cells that show
 * a run's numbers with their sources. The index lives in the report's arena; the views it
 * points into live as long as the report. */
#ifndef XPB_CORE_REPORT_RUNS_H
#define XPB_CORE_REPORT_RUNS_H

#include "report/report_model.h"
#include "results/view_fields.h"

typedef struct xpb_rrun {
    const struct xpb_results_run *v; /* the run's view */
    size_t doc, index;               /* document, and position in its "runs" */
    const char *id, *status, *model, *variant, *mode, *precision, *backend; /* "" when absent */
    long batch, threads;                                                    /* -1 when absent */
    int fusion;        /* config.fusion: 1, 0, or -1 when absent */
    int fuses;         /* device.capabilities has "fusion": 1, 0, or -1 when it does not say */
    int emulated;      /* device.precisions[precision] is "emulated" */
    int ok;            /* status "ok" with a median throughput > 0 */
    int flagged;       /* metrics.interference.flagged */
    double throughput; /* metrics.throughput.median, NaN when absent */
} xpb_rrun;

typedef struct xpb_rruns {
    size_t n;
    xpb_rrun *items; /* in document order, then run order */
} xpb_rruns;

/* Indexes every run of r's documents (r->views) into r->runs. XPB_OUT_OF_MEMORY or XPB_OK. */
xpb_status xpb_rruns_build(xpb_report *r);

/* The run of document `doc` with id `id`; NULL when there is none. Borrowed from r. */
const xpb_rrun *xpb_rruns_find(const xpb_report *r, size_t doc, const char *id);

/* "f<doc>:runs[<index>].<path>": where a run's value is in the input. Arena string, NULL when
 * out of memory. */
const char *xpb_rrun_src(xpb_report *r, const xpb_rrun *run, const char *path);

/* A cell with the run's number `field` and its source; empty when the run does not have it. */
void xpb_rrun_cell(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run,
                   enum xpb_results_field field, xpb_unit unit);

/* The median throughput with the file's 95% interval of the run (ci95_low/high, absent in
 * version-1 files), flagged when other processes disturbed the run. */
void xpb_rrun_throughput_cell(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run);

/* The run's peak memory for the memory-against-batch fit: metrics.memory.device_peak_bytes
 * when the backend reports it, else host_run_peak_bytes; NaN when neither. *field (may be
 * NULL) receives the one used, XPB_RF_COUNT for none. */
double xpb_rrun_memory(const xpb_rrun *run, enum xpb_results_field *field);

/* Whether two runs' configs are equal in every key but the n_keys listed ones and "extra". */
int xpb_rrun_same_except(const xpb_rrun *a, const xpb_rrun *b, const char *const *keys,
                         size_t n_keys);

/* Groups of finished runs (ok) of one document whose configs differ only in `key` (and
 * "extra"), with at least min_values distinct values of key, in order of their first run.
 * Each group's runs are sorted by key (an integer key: batch, threads), ties in run order.
 * *groups (arena) receives n_groups groups. XPB_OUT_OF_MEMORY or XPB_OK. */
typedef struct xpb_rgroup {
    size_t n;
    const xpb_rrun **runs;
    size_t distinct; /* distinct values of the key */
} xpb_rgroup;
xpb_status xpb_rruns_groups(xpb_report *r, xpb_rgroup **groups, size_t *n_groups, const char *key,
                            size_t min_values);

#endif
