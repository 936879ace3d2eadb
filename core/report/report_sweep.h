/* What one batch sweep gives: memory and step time against batch size with their fits
 * (report_batch.c analyses the sweeps and builds the tables, report_batch_chart.c draws the
 * charts). */
#ifndef XPB_CORE_REPORT_SWEEP_H
#define XPB_CORE_REPORT_SWEEP_H

#include "report/report_fit.h"
#include "report/report_runs.h"

/* Batches the fit is searched up to for the largest batch that fits (the scenario's limit). */
#define XPB_BATCH_LIMIT 65536L

typedef struct xpb_batch_sweep {
    const xpb_rgroup *group;           /* the runs, sorted by batch */
    const char *label;                 /* the configuration they share */
    size_t n;                          /* points: one per run */
    double *batch, *memory, *step;     /* bytes (NaN: none), p50 seconds */
    enum xpb_results_field memory_key; /* XPB_RF_DEVICE_PEAK or XPB_RF_HOST_RUN_PEAK, the same
                                          for every run; XPB_RF_COUNT: no memory fit */
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

#endif
