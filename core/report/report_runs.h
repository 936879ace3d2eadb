/* The runs of a report: every run of every document, with the fields the sections use read
 * once, and helpers that turn a run's fields into table cells with their sources. Runs are
 * borrowed from the documents the report holds; the index lives in the report's arena. */
#ifndef XPB_CORE_REPORT_RUNS_H
#define XPB_CORE_REPORT_RUNS_H

#include "report/report_model.h"

typedef struct xpb_rrun {
    const json_t *run, *config, *metrics;
    size_t doc, index; /* document, and position in its "runs" */
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

/* Indexes every run of r's documents into r->runs. XPB_OUT_OF_MEMORY or XPB_OK. */
xpb_status xpb_rruns_build(xpb_report *r);

/* The run of document `doc` with id `id`; NULL when there is none. Borrowed from r. */
const xpb_rrun *xpb_rruns_find(const xpb_report *r, size_t doc, const char *id);

/* The value at a dotted path under obj ("metrics.throughput.median"); NULL when a step is
 * missing. Borrowed from obj. */
const json_t *xpb_json_at(const json_t *obj, const char *dotted);

/* "f<doc>:runs[<index>].<path>": where a run's value is in the input. Arena string, NULL when
 * out of memory. */
const char *xpb_rrun_src(xpb_report *r, const xpb_rrun *run, const char *path);

/* A cell with the number at run.<path> and its source; empty when it is not a number. */
void xpb_rrun_cell(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run, const char *path,
                   xpb_unit unit);

/* The median throughput with the file's 95% interval of the run (ci95_low/high, absent in
 * version-1 files), flagged when other processes disturbed the run. */
void xpb_rrun_throughput_cell(xpb_report *r, xpb_report_cell *c, const xpb_rrun *run);

/* The run's peak memory for the memory-against-batch fit: metrics.memory.device_peak_bytes
 * when the backend reports it, else host_run_peak_bytes; NaN when neither. *path (may be NULL)
 * receives the key used, relative to the run (static). */
double xpb_rrun_memory(const xpb_rrun *run, const char **path);

/* Whether two runs' configs are equal in every key but the n_keys listed ones and "extra". */
int xpb_rrun_same_except(const xpb_rrun *a, const xpb_rrun *b, const char *const *keys,
                         size_t n_keys);

/* The columns that describe a run in the tables. */
enum {
    XPB_COL_FILE = 1u << 0, /* only added when the report has several documents */
    XPB_COL_MODEL = 1u << 1,
    XPB_COL_MODE = 1u << 2,
    XPB_COL_BATCH = 1u << 3,
    XPB_COL_PRECISION = 1u << 4,
    XPB_COL_BACKEND = 1u << 5,
    XPB_COL_FUSED = 1u << 6,
    XPB_COL_THREADS = 1u << 7,
    XPB_COL_FUSION = 1u << 8, /* the fusion setting, "on" or "off", whatever the backend does */
};

/* The headers of the description columns `cols` into headers[] (at most 9); returns how many.
 * XPB_COL_FILE counts only when r has more than one document. */
size_t xpb_rrun_desc_headers(const xpb_report *r, const char **headers, unsigned cols);

/* Fills the description cells of `run` for `cols` (as many as xpb_rrun_desc_headers said):
 * the file's name, "model/variant", mode, batch, precision ("bf16-mixed (emulated)"), backend,
 * fused ("yes", "no", "n/a" for a backend that does not fuse), threads ("auto" for 0), fusion
 * ("on", "off"). */
void xpb_rrun_desc_cells(xpb_report *r, xpb_report_cell *cells, const xpb_rrun *run, unsigned cols);

/* A short label of the run for chart legends: the values of the columns `cols` joined by
 * spaces ("conv6/cifar train b16 fp32 cpu_onednn fused t2"). Arena string or NULL. */
const char *xpb_rrun_label(xpb_report *r, const xpb_rrun *run, unsigned cols);

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

/* A comparison of a document (results "comparisons") with its two runs. */
typedef struct xpb_rcmp {
    size_t doc, index; /* comparisons[index] of document doc */
    const json_t *cmp;
    const xpb_rrun *base, *cand;
} xpb_rcmp;

/* The comparisons of `kind` ("backend", "fusion", "precision") of every document whose two
 * runs exist, in document then file order; *out (arena) receives *n of them.
 * XPB_OUT_OF_MEMORY or XPB_OK. */
xpb_status xpb_rcmps_of(xpb_report *r, const char *kind, xpb_rcmp **out, size_t *n);

/* The comparison's speedup with its 95% interval and significance, as the file says; for a
 * comparison without an interval in the file (version 1) the speedup and its interval are
 * computed from the two runs' repeats the way version 2 does (xpb_results_speedup), flagged
 * XPB_CELL_RECOMPUTED with no source. Flagged when either run was disturbed. */
void xpb_rcmp_speedup_cell(xpb_report *r, xpb_report_cell *c, const xpb_rcmp *k);

#endif
