/* Builds a model's forward graph: runs the model plugin's build() against the host's builder
 * table, after checking the scenario's model parameters against the model's declarations. */
#ifndef XPB_CORE_BUILDER_H
#define XPB_CORE_BUILDER_H

#include <xpubench/model.h>

#include "program/graph.h"
#include "program/model_params.h" /* the declared parameters it checks first */
#include "program/program_options.h"

/* Builds the graph of `model` at `batch` with the given variant/params. *out is owned by the
 * caller (xpb_graph_free). Errors name the model and, where it applies, the layer. */
xpb_status xpb_build_graph(xpb_graph **out, const xpb_model_api *model, const char *model_name,
                           uint32_t batch, const char *variant, const xpb_kv *params,
                           size_t n_params, xpb_err *err);

#endif
