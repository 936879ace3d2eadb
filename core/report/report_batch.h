/* Memory and step time against batch size (report_batch.c builds the tables, report_batch_chart.c
 * the charts): what one batch sweep gives. */
#ifndef XPB_CORE_REPORT_BATCH_H
#define XPB_CORE_REPORT_BATCH_H

#include "report/report_fit.h"
#include "report/report_runs.h"

/* Batches the fit is searched up to for the largest batch that fits (the scenario's limit). */
#define XPB_BATCH_LIMIT 65536L

typedef struct xpb_batch_sweep {
    const xpb_rgroup *group;       /* the runs, sorted by batch */
    const char *label;             /* the configuration they share */
    size_t n;                      /* points: one per run */
    double *batch, *memory, *step; /* bytes (NaN: none), p50 seconds */
    const char *memory_key; /* "metrics.memory.device_peak_bytes" or "...host_run_peak_bytes",
                               the same for every run; NULL: no memory fit */
    int have_memory, have_step;
    xpb_fit memory_fit, step_fit;
    /* the memory fit without the largest batch, and its prediction there */
    int have_holdout;
    long holdout_batch;
    double holdout_predicted, holdout_measured; /* bytes; measured: mean over its runs */
    double budget;                              /* bytes, 0: none */
    long largest; /* the largest batch whose fitted memory fits the budget (-1: no budget) */
    int have_saturation;
    xpb_saturation saturation;
    long lo, hi; /* measured batches */
} xpb_batch_sweep;

/* The two charts of a sweep (memory with its fit, projection and budget; step time with its
 * fit and projection) appended to s. XPB_OUT_OF_MEMORY or XPB_OK. */
xpb_status xpb_batch_charts(xpb_report *r, xpb_report_section *s, const xpb_batch_sweep *w,
                            size_t index);

#endif
