/* Scoring time-to-accuracy runs as MLPerf scores them: the Olympic mean (the fastest and the
 * slowest run dropped, the rest averaged), a run that did not converge counted as infinitely
 * slow, with the spread of the converged runs; and the check of each run against a reference
 * convergence point (how many epochs the reference needs to reach the target), which flags a run
 * far outside it. Pure functions over numbers, tested on constructed runs. */
#ifndef XPB_CORE_TTA_SCORE_H
#define XPB_CORE_TTA_SCORE_H

#include <stddef.h>

typedef struct xpb_tta_score {
    double mean; /* Olympic mean; NaN when it includes a run that did not converge */
    size_t used; /* runs averaged */
    size_t converged, runs;
    double min, max, stdev; /* over the converged runs (NaN without any; stdev needs two) */
} xpb_tta_score;

/* Scores values[0..n) (seconds or joules of each run; INFINITY for a run that did not converge;
 * NaN for a value that was not measured, which makes the mean NaN). With 3 runs or more the
 * smallest and the largest are dropped; with fewer all are averaged. */
void xpb_tta_olympic(xpb_tta_score *out, const double *values, size_t n);

/* The reference number of epochs model `model` needs to reach test accuracy `target` on dataset
 * `data` with its shipped hyperparameters (docs/results.md), or 0 when none is known. */
double xpb_tta_reference_epochs(const char *model, const char *data, double target);

/* Whether a run that converged after `epochs` lies far outside the reference `ref` (fewer than
 * half of them, or more than twice): MLPerf's reference-convergence check. 0 without a
 * reference. */
int xpb_tta_outside_reference(double epochs, double ref);

#endif
