/* One fully expanded run of a scenario: every sweep axis resolved to one value, defaults and
 * --set overrides applied. Produced by scenario.c, consumed by the runner and the results. */
#ifndef XPB_CORE_RUN_CONFIG_H
#define XPB_CORE_RUN_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/backend.h> /* xpb_precision, xpb_transfer */

#include "base/names.h"              /* xpb_mode */
#include "program/program_options.h" /* xpb_kv */

/* How a run launched as several processes ("ranks") uses them (docs/distributed.md). */
typedef enum xpb_parallel_mode {
    XPB_PARALLEL_AUTO = 0, /* data when launched with more than one rank, else none */
    XPB_PARALLEL_NONE = 1, /* every rank trains its own replica; nothing is averaged */
    XPB_PARALLEL_DATA = 2, /* one model: gradients averaged over the ranks every step */
} xpb_parallel_mode;

typedef struct xpb_run_config {
    char *id; /* "conv6-train-b64-fp32-cpu_ref-fused-t2" or the run's `name` plus axes */
    char *model;
    char *variant; /* NULL: the model's default */
    uint32_t mode; /* xpb_mode */
    uint32_t batch;
    uint32_t precision; /* xpb_precision (backend.h) */
    char *backend;
    uint32_t fusion;  /* 0/1 */
    uint32_t threads; /* 0: backend default */
    uint32_t device;
    uint32_t warmup;    /* untimed steps */
    uint32_t min_steps; /* timed steps per repeat: at least this many ... */
    double min_time;    /* ... and at least this many seconds */
    uint32_t max_steps; /* hard cap per repeat (0 = none) */
    uint32_t repeats;
    uint64_t seed;
    char *data;        /* "synthetic", "fashion-mnist" */
    char *data_dir;    /* a real dataset's folder (scenario's data_dir), NULL: its package's */
    double target;     /* tta: test accuracy to reach */
    double eval_every; /* tta: epochs between evaluations */
    uint32_t max_epochs;
    uint32_t tta_runs;                 /* tta: independent runs, Olympic-scored */
    uint32_t transfer;                 /* xpb_transfer */
    double lr, momentum, weight_decay; /* NaN: the model's default optimizer setting */
    uint32_t verify;                   /* 1: check the first step against cpu_ref before timing */
    uint32_t profile;                  /* 1: ask the backend for per-op times */
    uint32_t allow_emulated;           /* 1: run a precision the device only emulates */
    uint32_t allow_unsupported;        /* 1: an unsupported run is expected (no exit status 6) */
    uint32_t parallel;                 /* xpb_parallel_mode */
    double bucket_mb;       /* data-parallel: MiB of gradients per all-reduce bucket; 0: one each */
    char *scaling_baseline; /* results file holding the one-rank run; NULL: measure it here */
    xpb_kv *params;         /* model parameters (besides variant) */
    size_t n_params;
    char *file; /* scenario file and the line of the run, for messages */
    int line;
    /* Set by the runner, not by scenarios (0 reads as 1 and 0): the ranks the program is built
     * for (ALL_REDUCE ops when above 1, with parallel data) and this process's rank, whose
     * shard of the global batch the synthetic data draws. */
    uint32_t world_size;
    uint32_t rank;
} xpb_run_config;

/* The options the program room builds this run's model program from. The result points into
 * `cfg` (model, variant, params): valid while cfg is. */
xpb_program_options xpb_run_config_program(const xpb_run_config *cfg);

#endif
