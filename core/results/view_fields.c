/* The numbers of a run by name (see view_fields.h): one table of paths and members. */
#include "results/view_fields.h"

#include <math.h>
#include <stddef.h>

static const struct {
    const char *path;
    size_t offset; /* of the member in struct xpb_results_run */
    int is_int;    /* an int64_t member (absent: XPB_RESULTS_NO_INT), else a double */
} fields[XPB_RF_COUNT] = {
#define INT(f, path, member) [f] = {path, offsetof(struct xpb_results_run, member), 1}
#define NUM(f, path, member) [f] = {path, offsetof(struct xpb_results_run, member), 0}
    INT(XPB_RF_BATCH, "config.batch", config.batch),
    INT(XPB_RF_THREADS, "config.threads", config.threads),
    INT(XPB_RF_WORLD_SIZE, "config.world_size", config.world_size),
    INT(XPB_RF_DEVICE_THREADS, "device.threads", device.threads),
    INT(XPB_RF_TIMED_STEPS, "metrics.timed_steps", metrics.timed_steps),
    NUM(XPB_RF_THROUGHPUT_MEDIAN, "metrics.throughput.median", metrics.throughput.median),
    NUM(XPB_RF_THROUGHPUT_MIN, "metrics.throughput.min", metrics.throughput.min),
    NUM(XPB_RF_THROUGHPUT_MAX, "metrics.throughput.max", metrics.throughput.max),
    NUM(XPB_RF_THROUGHPUT_CI95_LOW, "metrics.throughput.ci95_low", metrics.throughput.ci95_low),
    NUM(XPB_RF_THROUGHPUT_CI95_HIGH, "metrics.throughput.ci95_high", metrics.throughput.ci95_high),
    NUM(XPB_RF_STEP_MEAN, "metrics.step_time_s.mean", metrics.step_time_s.mean),
    NUM(XPB_RF_STEP_P50, "metrics.step_time_s.p50", metrics.step_time_s.p50),
    NUM(XPB_RF_STEP_P95, "metrics.step_time_s.p95", metrics.step_time_s.p95),
    NUM(XPB_RF_STEP_P99, "metrics.step_time_s.p99", metrics.step_time_s.p99),
    NUM(XPB_RF_STEP_CV, "metrics.step_time_s.cv", metrics.step_time_s.cv),
    NUM(XPB_RF_FLOPS_PER_S, "metrics.flops_per_s", metrics.flops_per_s),
    NUM(XPB_RF_PEAK_FRACTION, "metrics.peak_fraction", metrics.peak_fraction),
    INT(XPB_RF_HOST_PEAK_RSS, "metrics.memory.host_peak_rss_bytes",
        metrics.memory.host_peak_rss_bytes),
    INT(XPB_RF_DEVICE_BYTES_IN_USE, "metrics.memory.device_bytes_in_use",
        metrics.memory.device_bytes_in_use),
    INT(XPB_RF_DEVICE_PEAK, "metrics.memory.device_peak_bytes", metrics.memory.device_peak_bytes),
    INT(XPB_RF_HOST_RUN_PEAK, "metrics.memory.host_run_peak_bytes",
        metrics.memory.host_run_peak_bytes),
    NUM(XPB_RF_ENERGY_JOULES, "metrics.energy.joules", metrics.energy.joules),
    NUM(XPB_RF_SAMPLES_PER_JOULE, "metrics.energy.samples_per_joule",
        metrics.energy.samples_per_joule),
    NUM(XPB_RF_WATTS, "metrics.energy.watts", metrics.energy.watts),
    NUM(XPB_RF_ENERGY_PACKAGE, "metrics.energy.domains.package", metrics.energy.package),
    NUM(XPB_RF_ENERGY_DRAM, "metrics.energy.domains.dram", metrics.energy.dram),
    NUM(XPB_RF_LOSS_FIRST, "metrics.loss.first", metrics.loss.first),
    NUM(XPB_RF_LOSS_LAST, "metrics.loss.last", metrics.loss.last),
    NUM(XPB_RF_HOST_OVERHEAD, "metrics.host_overhead_fraction", metrics.host_overhead_fraction),
    NUM(XPB_RF_OTHER_CPU_SHARE, "metrics.interference.other_cpu_share",
        metrics.interference.other_cpu_share),
    NUM(XPB_RF_STEAL_SHARE, "metrics.interference.steal_share", metrics.interference.steal_share),
    NUM(XPB_RF_LOAD_1M, "metrics.interference.load_1m", metrics.interference.load_1m),
    NUM(XPB_RF_SCALING_EFFICIENCY, "metrics.parallel.scaling_efficiency",
        metrics.parallel.scaling_efficiency),
    NUM(XPB_RF_COMM_SHARE, "metrics.parallel.communication.share",
        metrics.parallel.communication.share),
    NUM(XPB_RF_BYTES_PER_S, "metrics.bytes_per_s", metrics.bytes_per_s),
    NUM(XPB_RF_BANDWIDTH_FRACTION, "metrics.bandwidth_fraction", metrics.bandwidth_fraction),
    NUM(XPB_RF_TOKENS_PER_S, "metrics.tokens_per_s", metrics.tokens_per_s),
    NUM(XPB_RF_MEMORY_BANDWIDTH, "device.memory_bandwidth", device.memory_bandwidth),
    INT(XPB_RF_BYTES_PER_SAMPLE, "model.bytes_per_sample", model.bytes_per_sample),
    INT(XPB_RF_TOKENS_PER_SAMPLE, "model.tokens_per_sample", model.tokens_per_sample),
    NUM(XPB_RF_TTA_TARGET, "tta.target", tta.target),
    NUM(XPB_RF_TTA_EVAL_EVERY, "tta.eval_every", tta.eval_every),
    INT(XPB_RF_TTA_MAX_EPOCHS, "tta.max_epochs", tta.max_epochs),
    NUM(XPB_RF_TTA_REFERENCE_EPOCHS, "tta.reference_epochs", tta.reference_epochs),
    NUM(XPB_RF_TTA_SECONDS_MEAN, "tta.seconds.mean", tta.seconds.mean),
    NUM(XPB_RF_TTA_SECONDS_MIN, "tta.seconds.min", tta.seconds.min),
    NUM(XPB_RF_TTA_SECONDS_MAX, "tta.seconds.max", tta.seconds.max),
    NUM(XPB_RF_TTA_SECONDS_STDEV, "tta.seconds.stdev", tta.seconds.stdev),
    INT(XPB_RF_TTA_SECONDS_USED, "tta.seconds.used", tta.seconds.used),
    INT(XPB_RF_TTA_SECONDS_CONVERGED, "tta.seconds.converged", tta.seconds.converged),
    INT(XPB_RF_TTA_SECONDS_RUNS, "tta.seconds.runs", tta.seconds.runs),
    NUM(XPB_RF_TTA_JOULES_MEAN, "tta.joules.mean", tta.joules.mean),
    NUM(XPB_RF_TTA_JOULES_MIN, "tta.joules.min", tta.joules.min),
    NUM(XPB_RF_TTA_JOULES_MAX, "tta.joules.max", tta.joules.max),
    NUM(XPB_RF_TTA_JOULES_STDEV, "tta.joules.stdev", tta.joules.stdev),
    INT(XPB_RF_TTA_JOULES_USED, "tta.joules.used", tta.joules.used),
    INT(XPB_RF_TTA_JOULES_CONVERGED, "tta.joules.converged", tta.joules.converged),
    INT(XPB_RF_TTA_JOULES_RUNS, "tta.joules.runs", tta.joules.runs),
#undef INT
#undef NUM
};

const char *xpb_results_field_path(enum xpb_results_field f)
{
    return (unsigned)f < XPB_RF_COUNT ? fields[f].path : "";
}

double xpb_results_field(const struct xpb_results_run *run, enum xpb_results_field f)
{
    if ((unsigned)f >= XPB_RF_COUNT)
        return NAN;
    const char *at = (const char *)run + fields[f].offset;
    if (!fields[f].is_int)
        return *(const double *)at;
    int64_t v = *(const int64_t *)at;
    return v == XPB_RESULTS_NO_INT ? NAN : (double)v;
}
