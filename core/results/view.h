/* The typed view of a results document: every field of docs/results.md, versions 1 and 2, in C
 * structs, read from the JSON once by one function (xpb_results_view) so that the table, the
 * report, `compare`, the leaderboard's extraction and its pages read members instead of
 * spelling keys. What a document does not have is explicit:
 *   strings   NULL                  (absent, null, or not a string)
 *   numbers   NaN                   (absent, null, or not a number)
 *   integers  XPB_RESULTS_NO_INT    (absent, null, or not an integer; every integer of the
 *                                    schema is >= 0, so this never is a value)
 *   booleans  XPB_RESULTS_NO_BOOL   (absent or null; else 1 or 0)
 *   objects   has_<name> == 0       (the object is absent or not an object; its members are
 *                                    then all absent)
 * The reading never trusts the document: a document that did not validate reads too, its
 * missing or mistyped fields absent, so that `xpubench show` and the runner's own table print
 * whatever there is. Strings are borrowed from the document, which must outlive the view;
 * arrays live in the view's arena (xpb_results_view_free). */
#ifndef XPB_CORE_RESULTS_VIEW_H
#define XPB_CORE_RESULTS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/errmsg.h"

#define XPB_RESULTS_NO_INT INT64_MIN
#define XPB_RESULTS_NO_BOOL (-1)

/* A key of a map with string values (environment.libraries, config.params,
 * device.precisions), in the document's order. */
struct xpb_results_pair {
    const char *key, *value;
};

/* A key of a map with number values (device.peak_flops), in the document's order. */
struct xpb_results_number {
    const char *key;
    double value;
};

struct xpb_results_optimizer {
    const char *kind; /* "sgd", "adam" or "adamw" */
    double lr, momentum, weight_decay, beta1, beta2, eps;
    double clip_grad_norm; /* the global gradient norm clipped to; NaN: no clipping */
};

/* config: everything needed to repeat the run. */
struct xpb_results_config {
    const char *model, *variant, *mode, *precision, *backend, *data, *transfer;
    int fusion; /* 1, 0 or XPB_RESULTS_NO_BOOL */
    int64_t batch, threads, device, warmup, min_steps, max_steps, repeats, seed;
    double min_time_s;
    int has_optimizer; /* only for training runs whose model was built */
    struct xpb_results_optimizer optimizer;
    int has_params;
    size_t n_params;
    const struct xpb_results_pair *params;
    int allow_emulated;   /* v2; XPB_RESULTS_NO_BOOL in a version-1 document */
    const char *parallel; /* v2, optional: NULL means "none" */
    int64_t world_size;   /* v2, optional: XPB_RESULTS_NO_INT means 1 */
    int has_extra;        /* config.extra: free-form, never compared */
};

/* model: counted by the host on the program it built. */
struct xpb_results_model {
    int64_t parameters, flops_per_sample_forward, flops_per_sample_train, layers;
    int64_t bytes_per_sample;                               /* v3 */
    int64_t tokens_per_sample;                              /* v3, sequence models */
    int64_t flops_per_token_forward, flops_per_token_train; /* v3, sequence models */
};

/* device: what the backend said of the device it opened. */
struct xpb_results_device {
    const char *name, *driver, *libraries;
    const char *kind; /* v2: "cpu", "gpu", "accelerator", "unknown"; NULL in version 1 */
    int64_t threads;
    size_t n_peak_flops;
    const struct xpb_results_number *peak_flops; /* precision -> FLOP/s */
    size_t n_precisions;
    const struct xpb_results_pair *precisions; /* v2: precision -> "native" or "emulated" */
    int has_capabilities;                      /* v2 */
    size_t n_capabilities;
    const char *const *capabilities;
    /* v3: the device's limits and where they come from */
    const char *peak_flops_source, *memory_bandwidth_source;
    double memory_bandwidth, datasheet_bandwidth; /* bytes/s */
    size_t n_datasheet_peak_flops;
    const struct xpb_results_number *datasheet_peak_flops; /* precision -> FLOP/s */
};

struct xpb_results_repeat {
    int64_t steps;
    double seconds, throughput;
};

struct xpb_results_loss_point {
    int64_t step;
    double loss;
};

struct xpb_results_rank {
    int64_t rank, local_rank, device_index, threads;
    const char *host, *device;
    double throughput, step_p50_s;
};

/* metrics.parallel: a run over several ranks (v2). */
struct xpb_results_parallel {
    int64_t world_size, hosts;
    size_t n_ranks;
    const struct xpb_results_rank *ranks;
    struct {
        int64_t all_reduces, bytes_per_step;
        double seconds_per_step, share;
    } communication;
    struct {
        double throughput;
        const char *source, *file, *reason;
    } baseline;
    double scaling_efficiency;
};

struct xpb_results_metrics {
    int64_t timed_steps;
    struct {
        double median, min, max;
        double ci95_low, ci95_high; /* v2; NaN with fewer than two repeats */
        const char *unit;
    } throughput;
    size_t n_repeats;
    const struct xpb_results_repeat *repeats;
    struct {
        double mean, p50, p95, p99, cv;
    } step_time_s;
    double flops_per_s, peak_fraction;
    double bytes_per_s, bandwidth_fraction; /* v3 */
    double tokens_per_s;                    /* v3, sequence models */
    struct {
        int64_t host_peak_rss_bytes, device_bytes_in_use, device_peak_bytes;
        int64_t host_run_peak_bytes; /* v2 */
    } memory;
    struct {
        int measured;
        const char *source;
        double joules, samples_per_joule;
        double watts;       /* v2 */
        const char *reason; /* v2 */
        int has_domains;    /* v2, RAPL only */
        double package, dram;
    } energy;
    struct {
        double first, last;
        size_t n_series; /* v2 */
        const struct xpb_results_loss_point *series;
    } loss;
    double host_overhead_fraction;
    int has_interference; /* v2 */
    struct {
        double other_cpu_share, steal_share, load_1m;
        int flagged;
    } interference;
    int has_parallel; /* v2: runs over several ranks */
    struct xpb_results_parallel parallel;
};

struct xpb_results_verification {
    int requested, verified; /* verified: XPB_RESULTS_NO_BOOL when null */
    const char *reference, *message;
    double max_rel_error;
};

struct xpb_results_profile_entry {
    const char *op, *layer;
    int64_t calls;
    double seconds;
    const char *fused_into; /* NULL when not fused */
    int64_t flops, bytes;   /* v3: per call */
};

/* tta: a time-to-accuracy run (version 3, docs/results.md "Time to accuracy"). */
struct xpb_results_tta_point {
    double epochs, seconds, accuracy, loss; /* loss: NaN when null or absent */
};

struct xpb_results_tta_run {
    int64_t seed, steps, samples;
    int converged, outside_reference; /* 1, 0 or XPB_RESULTS_NO_BOOL */
    const char *stopped_early;        /* "diverged", "stalled"; NULL: null or absent */
    double seconds, epochs, joules;   /* to the target: NaN when it did not converge */
    double init_seconds, data_wait_seconds, final_accuracy;
    const char *energy_source;
    size_t n_curve;
    const struct xpb_results_tta_point *curve;
};

/* tta.seconds and tta.joules: the Olympic mean and the spread of the converged runs. */
struct xpb_results_tta_score {
    double mean, min, max, stdev;
    int64_t used, converged, runs;
};

struct xpb_results_tta {
    const char *dataset;
    int64_t train_samples, test_samples, max_epochs;
    double target, eval_every, reference_epochs;
    double norm_mean, norm_std;
    size_t n_runs;
    const struct xpb_results_tta_run *runs;
    struct xpb_results_tta_score seconds, joules;
};

struct xpb_results_run {
    size_t index; /* in the document's runs */
    const char *id, *status, *error;
    int ok; /* status "ok" */
    int has_config;
    struct xpb_results_config config;
    int has_model;
    struct xpb_results_model model;
    int has_device;
    struct xpb_results_device device;
    int has_metrics;
    struct xpb_results_metrics metrics;
    int has_verification;
    struct xpb_results_verification verification;
    int has_profile;
    size_t n_profile;
    const struct xpb_results_profile_entry *profile;
    int has_tta; /* v3, mode "tta" */
    struct xpb_results_tta tta;
};

struct xpb_results_comparison {
    size_t index; /* in the document's comparisons */
    const char *kind, *baseline, *candidate, *metric;
    double speedup;
    double ci95_low, ci95_high; /* v2 */
    int significant;            /* v2; XPB_RESULTS_NO_BOOL in version 1 */
    /* The runs the ids name, NULL when the document has no run with that id. */
    const struct xpb_results_run *base_run, *cand_run;
};

struct xpb_results_accelerator {
    const char *name, *driver;
};

struct xpb_results_plugin {
    const char *name, *kind, *version, *abi, *path;
};

struct xpb_results_environment {
    const char *os, *kernel, *compiler;
    struct {
        const char *model;
        int64_t cores, logical_cpus;
        size_t n_flags;
        const char *const *flags;
    } cpu;
    int64_t memory_bytes;
    size_t n_libraries;
    const struct xpb_results_pair *libraries;
    size_t n_accelerators;
    const struct xpb_results_accelerator *accelerators;
    size_t n_plugins;
    const struct xpb_results_plugin *plugins;
};

struct xpb_results_scenario {
    const char *path, *name, *sha256;
    size_t n_overrides;
    const char *const *overrides;
    int has_baseline;     /* v2: the key is there (its value may be null) */
    const char *baseline; /* the named baseline backend; NULL when null or absent */
};

/* A whole document. */
struct xpb_results_doc {
    int64_t schema_version;
    const char *created, *tool_name, *tool_version;
    int interrupted; /* 1: the invocation did not finish every run (stopped, killed, crashed or
                        still running); 0 or absent: complete */
    struct xpb_results_scenario scenario;
    struct xpb_results_environment environment;
    int has_runs; /* "runs" is an array */
    size_t n_runs;
    const struct xpb_results_run *runs;
    int has_comparisons;
    size_t n_comparisons;
    const struct xpb_results_comparison *comparisons;
    xpb_arena arena; /* the arrays above */
};

/* Reads `doc` (a results document of schema version 1 to 3, normally loaded and validated by
 * xpb_results_load; any JSON value reads, with what it lacks absent) into *out, which the
 * caller releases with xpb_results_view_free even on failure. Strings in *out are borrowed
 * from doc. XPB_OUT_OF_MEMORY or XPB_OK. */
xpb_status xpb_results_view(struct xpb_results_doc *out, const json_t *doc);

/* Reads one run object (of a document of schema `version`) into *out, its arrays allocated
 * from `arena` (the caller's, released with xpb_arena_free); what xpb_results_view does for
 * each run, for a run that is not in a document yet (the runner's newest). index is 0.
 * XPB_OUT_OF_MEMORY or XPB_OK. */
xpb_status xpb_results_view_run(struct xpb_results_run *out, xpb_arena *arena, const json_t *run,
                                int64_t version);

void xpb_results_view_free(struct xpb_results_doc *v);

/* The run of `v` with id `id`, borrowed from v; NULL when there is none. */
const struct xpb_results_run *xpb_results_find_run(const struct xpb_results_doc *v, const char *id);

/* The value of map `pairs` at `key`, borrowed from the document the map was read from (valid
 * as long as it); NULL when the map has no such key or its value is not a string. */
const char *xpb_results_pair_get(const struct xpb_results_pair *pairs, size_t n, const char *key);

/* Whether the run's device says its backend fuses: 1 when device.capabilities lists "fusion",
 * 0 when it lists others but not that one, -1 when the document does not say (version 1, or a
 * run that never opened a device). */
int xpb_results_run_fuses(const struct xpb_results_run *run);

/* Whether the run's precision is one its device only emulates (device.precisions). */
int xpb_results_run_emulated(const struct xpb_results_run *run);

/* Whether the run finished with a throughput: status "ok" and a median throughput > 0. */
int xpb_results_run_finished(const struct xpb_results_run *run);

/* The run's ranks: config.world_size, 1 when the document does not say. */
int64_t xpb_results_run_world_size(const struct xpb_results_run *run);

#endif
