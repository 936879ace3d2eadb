/* What one batch sweep gives: memory and step time against batch size with their fits
 * (report_batch_fit.c analyses a sweep, report_batch.c builds its tables, report_batch_chart.c
 * draws its charts). Memory comes twice where the file has it: the backend's plan
 * (device_peak_bytes) and the process's growth during the run (host_run_peak_bytes, which
 * holds the plan of a CPU backend and what the allocator and the libraries add); the largest
 * batch that fits comes from the one that allows the fewest, and says which. */
#ifndef XPB_CORE_REPORT_SWEEP_H
#define XPB_CORE_REPORT_SWEEP_H

#include "report/report_fit.h"
#include "report/report_runs.h"

/* Batches the fit is searched up to for the largest batch that fits (the scenario's limit). */
#define XPB_BATCH_LIMIT 65536L
/* Projections go up to this many times the largest measured batch (tables and charts). */
#define XPB_BATCH_PROJECTION 4L

/* One memory against batch. */
typedef struct xpb_sweep_memory {
    enum xpb_results_field key; /* XPB_RF_DEVICE_PEAK or XPB_RF_HOST_RUN_PEAK */
    const char *name;           /* "backend plan", "process" (static) */
    int have;                   /* fitted: every run has it (but the one left out) */
    double *y;                  /* bytes per point (arena); NaN: none, or left out */
    long left_out;              /* the batch of the point left out (the first run of its
                                   backend in the file, which also pays the process's one-time
                                   costs), 0: none */
    xpb_fit fit;
    /* the fit without the largest batch, and its prediction there */
    int have_holdout;
    long holdout_batch;
    double holdout_predicted, holdout_measured; /* bytes; measured: mean over its runs */
    long largest, largest_lo, largest_hi; /* the largest batch that fits the budget by the fit,
                                             by its band's high and low edges; -1: none */
    const char *no_conclusion;            /* why there is no largest batch (static), or NULL */
} xpb_sweep_memory;

typedef struct xpb_batch_sweep {
    const xpb_rgroup *group;         /* the runs, sorted by batch */
    const char *label;               /* the configuration they share */
    size_t n;                        /* points: one per run */
    double *batch, *step;            /* p50 seconds */
    xpb_sweep_memory plan, process;  /* the backend's plan, the process's growth */
    const xpb_sweep_memory *decides; /* the one the largest batch that fits comes from; NULL:
                                        no conclusion */
    double budget;                   /* bytes, 0: none */
    size_t disturbed;                /* runs other processes disturbed */
    int have_step;
    xpb_fit step_fit;
    int have_saturation; /* where throughput saturates, concluded */
    xpb_saturation saturation;
    const char *no_conclusion; /* why the step fit concludes nothing (arena), or NULL */
    long lo, hi;               /* measured batches */
} xpb_batch_sweep;

/* Analyses group g (finished runs of one file that differ only in batch, sorted by batch) into
 * *w, in r's arena. XPB_OUT_OF_MEMORY or XPB_OK. */
xpb_status xpb_batch_sweep_analyse(xpb_report *r, xpb_batch_sweep *w, const xpb_rgroup *g);

#endif
