/* A model turned into a program (program_data.h): building it from a model plugin and the
 * options of a run, freeing it, and the FLOPs of its ops. */
#ifndef XPB_CORE_MODEL_PROGRAM_H
#define XPB_CORE_MODEL_PROGRAM_H

#include <xpubench/backend.h>
#include <xpubench/model.h>

#include "program/program_data.h"
#include "program/program_options.h"

/* Builds `model` as `opt` says (variant, params, batch, mode, optimizer overrides) and derives
 * its program: for opt->world_size above 1 with average_gradients, a program of one rank that
 * averages its gradients over the ranks (ALL_REDUCE ops, bucketed by opt->bucket_mb), drawing
 * shard opt->rank of the global batch. *out is owned by the caller: xpb_model_program_free. */
xpb_status xpb_model_program_create(xpb_model_program **out, const xpb_model_api *model,
                                    const xpb_program_options *opt, xpb_err *err);
void xpb_model_program_free(xpb_model_program *mp);

#endif
