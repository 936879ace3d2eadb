/* The record of time-to-accuracy runs (tta.h): each run's accuracy curve and outcome, and the
 * "tta" object of the results (docs/results.md, "Time to accuracy"), scored by tta_score.h. */
#ifndef XPB_CORE_TTA_RECORD_H
#define XPB_CORE_TTA_RECORD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "data/dataset.h"
#include "scenario/run_config.h"

/* One evaluation: after `epochs` epochs, `seconds` into the timed region; `loss` is the training
 * loss of the step just before it as read (NaN or infinite when it was not finite: null in the
 * results). */
typedef struct xpb_tta_point {
    double epochs, seconds, accuracy, loss;
} xpb_tta_point;

typedef struct xpb_tta_run {
    uint64_t seed;
    int converged;
    /* Why the run stopped before the target and max_epochs: "diverged" (its training loss
     * stopped being finite), "stalled" (chance accuracy and the loss of a constant output for
     * XPB_TTA_STALL_EPOCHS, tta_stop.h), NULL when it did not; static. */
    const char *stopped_early;
    double seconds, epochs; /* at the evaluation that reached the target (NaN otherwise) */
    uint64_t steps, samples;
    double joules;             /* over the timed region of a converged run; NaN: not measured */
    const char *energy_source; /* "backend", "rapl", NULL; static */
    double init_seconds;       /* building, compiling, initial values: before the clock */
    double data_wait_seconds;  /* the steps' waits for the input pipeline */
    xpb_tta_point *curve;
    size_t n_curve, cap_curve;
} xpb_tta_run;

typedef struct xpb_tta_result {
    const xpb_run_config *cfg; /* borrowed */
    const char *dataset;
    double mean, std; /* the dataset's normalisation */
    uint32_t train_samples, test_samples;
    xpb_tta_run *runs;
    size_t n_runs;
} xpb_tta_result;

void xpb_tta_result_init(xpb_tta_result *res, const xpb_run_config *cfg, const xpb_dataset *ds);

/* A new run at the end (zeroed; seconds and epochs NaN), owned by res; NULL when out of memory. */
xpb_tta_run *xpb_tta_result_add(xpb_tta_result *res);

/* Forgets the last run (one interrupted before it ended), freeing its curve. */
void xpb_tta_result_drop_last(xpb_tta_result *res);

/* Appends an evaluation to r's curve. XPB_OUT_OF_MEMORY or XPB_OK. */
int xpb_tta_run_point(xpb_tta_run *r, double epochs, double seconds, double accuracy, double loss);

/* The "tta" object: settings, every run, the Olympic score of time and energy, the reference
 * check. A new reference owned by the caller; NULL when out of memory. */
json_t *xpb_tta_result_json(const xpb_tta_result *res);

void xpb_tta_result_free(xpb_tta_result *res);

#endif
