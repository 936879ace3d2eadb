/* Comparisons of runs (docs/results.md, "Comparisons"): the speedups a results document lists,
 * derived from its runs, and the speedup of any two runs with its 95% interval (interval.h),
 * for the report and `xpubench compare`. */
#ifndef XPB_CORE_RESULTS_COMPARISONS_H
#define XPB_CORE_RESULTS_COMPARISONS_H

#include <stddef.h>

#include <jansson.h>

#include "base/errmsg.h"
#include "results/interval.h"
#include "results/view.h"

/* Replaces doc's "comparisons" by those derived from its finished runs (status "ok" with a
 * throughput median > 0): every ordered pair of runs whose configs differ in exactly one of
 * backend / fusion / precision and agree on every other config key ("extra" aside) gives one
 * comparison when the baseline is the run on the document's baseline backend (kind
 * "backend": scenario.baseline when the scenario named one, else the fastest run on a CPU
 * device among the runs that differ only in their backend, else for documents whose devices
 * do not say their kind "cpu_ref"), the unfused run of a backend that fuses (kind "fusion")
 * or the fp32 run (kind "precision"). Speedup = geometric mean of the candidate's repeat
 * throughputs / the baseline's, with a Welch 95% interval (interval.h) and whether it excludes
 * 1 (version-2 documents). Order: by candidate, then by baseline, in run order. Idempotent.
 * Returns XPB_INVALID_ARGUMENT when doc has no "runs" array, XPB_OUT_OF_MEMORY, else XPB_OK. */
xpb_status xpb_results_add_comparisons(json_t *doc);

/* Most repeats a run's metrics are read for. */
#define XPB_RESULTS_MAX_REPEATS 1024

/* The positive per-repeat throughputs of a run (metrics.repeats[].throughput) into out[0..cap),
 * in order; returns how many. */
size_t xpb_results_repeat_throughputs(double *out, size_t cap, const struct xpb_results_run *run);

/* How many times faster `candidate` ran than `baseline` (runs of one document or of two): the
 * ratio of the geometric means of their repeat throughputs with its Welch 95% interval
 * (interval.h), or of their medians without an interval when a run lists no repeats.
 * Returns 0, or -1 when a run has no throughput. */
int xpb_results_speedup(xpb_interval *out, const struct xpb_results_run *baseline,
                        const struct xpb_results_run *candidate);

#endif
