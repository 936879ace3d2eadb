/* The numbers of a run by name: each with its JSON path relative to the run
 * ("metrics.throughput.median"), so that a reader that shows where a number came from (the
 * report's data-src attributes) or names it in a message (the leaderboard's plausibility
 * bounds) takes both from one place instead of spelling the path next to the member. */
#ifndef XPB_CORE_RESULTS_VIEW_FIELDS_H
#define XPB_CORE_RESULTS_VIEW_FIELDS_H

#include "results/view.h"

enum xpb_results_field {
    XPB_RF_BATCH,
    XPB_RF_THREADS,
    XPB_RF_WORLD_SIZE,
    XPB_RF_DEVICE_THREADS,
    XPB_RF_TIMED_STEPS,
    XPB_RF_THROUGHPUT_MEDIAN,
    XPB_RF_THROUGHPUT_MIN,
    XPB_RF_THROUGHPUT_MAX,
    XPB_RF_THROUGHPUT_CI95_LOW,
    XPB_RF_THROUGHPUT_CI95_HIGH,
    XPB_RF_STEP_MEAN,
    XPB_RF_STEP_P50,
    XPB_RF_STEP_P95,
    XPB_RF_STEP_P99,
    XPB_RF_STEP_CV,
    XPB_RF_FLOPS_PER_S,
    XPB_RF_PEAK_FRACTION,
    XPB_RF_HOST_PEAK_RSS,
    XPB_RF_DEVICE_BYTES_IN_USE,
    XPB_RF_DEVICE_PEAK,
    XPB_RF_HOST_RUN_PEAK,
    XPB_RF_ENERGY_JOULES,
    XPB_RF_SAMPLES_PER_JOULE,
    XPB_RF_WATTS,
    XPB_RF_ENERGY_PACKAGE,
    XPB_RF_ENERGY_DRAM,
    XPB_RF_LOSS_FIRST,
    XPB_RF_LOSS_LAST,
    XPB_RF_HOST_OVERHEAD,
    XPB_RF_OTHER_CPU_SHARE,
    XPB_RF_STEAL_SHARE,
    XPB_RF_LOAD_1M,
    XPB_RF_SCALING_EFFICIENCY,
    XPB_RF_COMM_SHARE,
    XPB_RF_BYTES_PER_S,        /* v3 */
    XPB_RF_BANDWIDTH_FRACTION, /* v3 */
    XPB_RF_TOKENS_PER_S,       /* v3 */
    XPB_RF_MEMORY_BANDWIDTH,   /* v3: device.memory_bandwidth */
    XPB_RF_BYTES_PER_SAMPLE,   /* v3: model.bytes_per_sample */
    XPB_RF_TOKENS_PER_SAMPLE,  /* v3 */
    /* time to accuracy (version 3): the run object tta and its scores */
    XPB_RF_TTA_TARGET,
    XPB_RF_TTA_EVAL_EVERY,
    XPB_RF_TTA_MAX_EPOCHS,
    XPB_RF_TTA_REFERENCE_EPOCHS,
    XPB_RF_TTA_SECONDS_MEAN,
    XPB_RF_TTA_SECONDS_MIN,
    XPB_RF_TTA_SECONDS_MAX,
    XPB_RF_TTA_SECONDS_STDEV,
    XPB_RF_TTA_SECONDS_USED,
    XPB_RF_TTA_SECONDS_CONVERGED,
    XPB_RF_TTA_SECONDS_RUNS,
    XPB_RF_TTA_JOULES_MEAN,
    XPB_RF_TTA_JOULES_MIN,
    XPB_RF_TTA_JOULES_MAX,
    XPB_RF_TTA_JOULES_STDEV,
    XPB_RF_TTA_JOULES_USED,
    XPB_RF_TTA_JOULES_CONVERGED,
    XPB_RF_TTA_JOULES_RUNS,
    XPB_RF_COUNT
};

/* The field's path below the run, "metrics.step_time_s.p50" (static); "" for an unknown one. */
const char *xpb_results_field_path(enum xpb_results_field f);

/* The field's value in `run` as a double (integers converted); NaN when the run does not have
 * it. */
double xpb_results_field(const struct xpb_results_run *run, enum xpb_results_field f);

#endif
