/* What the program room needs to know to build a model's program: which model, in which form,
 * and the few run settings the lowering reads. The scenario's run configuration is turned into
 * these options (scenario/run_config.h, xpb_run_config_program); tests and tools fill them
 * directly. */
#ifndef XPB_CORE_PROGRAM_OPTIONS_H
#define XPB_CORE_PROGRAM_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "base/names.h" /* xpb_mode */

/* A model parameter as written by a scenario or a command line ("width" = "32"), validated
 * against the model's declaration when the model is built. */
typedef struct xpb_kv {
    char *key;
    char *value;
} xpb_kv;

typedef struct xpb_program_options {
    const char *model;
    const char *variant; /* NULL: the model's default */
    uint32_t mode;       /* xpb_mode (base/names.h) */
    uint32_t batch;      /* samples per rank */
    const xpb_kv *params;
    size_t n_params;
    uint64_t seed;                     /* dropout masks; the data's and weights' seed */
    double lr, momentum, weight_decay; /* NaN: the model's default optimizer setting */
    /* Data-parallel training: with world_size above 1 and average_gradients set, the program
     * of one rank averages its gradients over the ranks (ALL_REDUCE ops in buckets of
     * bucket_mb MiB; 0: one per gradient) and draws shard `rank` of the global batch.
     * 0 reads as 1 rank. */
    uint32_t world_size;
    uint32_t rank;
    uint32_t average_gradients;
    double bucket_mb;
} xpb_program_options;

#endif
