/* The run configuration seen from the rooms below the scenario (see run_config.h). */
#include "scenario/run_config.h"

xpb_program_options xpb_run_config_program(const xpb_run_config *cfg)
{
    return (xpb_program_options){
        .model = cfg->model,
        .variant = cfg->variant,
        .mode = cfg->mode,
        .batch = cfg->batch,
        .params = cfg->params,
        .n_params = cfg->n_params,
        .seed = cfg->seed,
        .lr = cfg->lr,
        .momentum = cfg->momentum,
        .weight_decay = cfg->weight_decay,
        .world_size = cfg->world_size,
        .rank = cfg->rank,
        .average_gradients = cfg->parallel != XPB_PARALLEL_NONE,
        .bucket_mb = cfg->bucket_mb,
    };
}
