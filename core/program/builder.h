/* Builds a model's forward graph: runs the model plugin's build() against the host's builder
 * table, after checking the scenario's model parameters against the model's declarations. */
#ifndef XPB_CORE_BUILDER_H
#define XPB_CORE_BUILDER_H

#include <xpubench/model.h>

#include "program/graph.h"
#include "program/program_options.h"

/* The value of one declared model parameter after defaults and overrides. */
typedef struct xpb_model_param_value {
    const xpb_model_param *decl; /* owned by the plugin */
    const char *value;           /* owned by the caller's kv array or the declaration */
} xpb_model_param_value;

/* Checks `params` (and `variant`, when not NULL) against the model's declarations: unknown
 * names and values of the wrong type or outside `allowed` are errors naming the model, the
 * parameter and what is allowed. */
xpb_status xpb_model_params_check(const xpb_model_api *model, const char *model_name,
                                  const char *variant, const xpb_kv *params, size_t n_params,
                                  xpb_err *err);

/* Builds the graph of `model` at `batch` with the given variant/params. *out is owned by the
 * caller (xpb_graph_free). Errors name the model and, where it applies, the layer. */
xpb_status xpb_build_graph(xpb_graph **out, const xpb_model_api *model, const char *model_name,
                           uint32_t batch, const char *variant, const xpb_kv *params,
                           size_t n_params, xpb_err *err);

/* The effective value of parameter `name` (variant or params, else the default); NULL when
 * the model does not declare it. The string is owned by `model` or `params`. */
const char *xpb_model_param_effective(const xpb_model_api *model, const char *variant,
                                      const xpb_kv *params, size_t n_params, const char *name);

#endif
