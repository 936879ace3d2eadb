/* The parameters a model declares (model.h: variant, image_size, ...): checking the values a
 * scenario or a command line gives them, and the value each takes after defaults. */
#ifndef XPB_CORE_MODEL_PARAMS_H
#define XPB_CORE_MODEL_PARAMS_H

#include <stddef.h>

#include <xpubench/model.h>

#include "base/errmsg.h"
#include "program/program_options.h"

/* Checks `params` (and `variant`, when not NULL) against the model's declarations: unknown
 * names and values of the wrong type or outside `allowed` are errors naming the model, the
 * parameter and what is allowed. */
xpb_status xpb_model_params_check(const xpb_model_api *model, const char *model_name,
                                  const char *variant, const xpb_kv *params, size_t n_params,
                                  xpb_err *err);

/* The effective value of parameter `name` (variant or params, else the default); NULL when
 * the model does not declare it. The string is owned by `model` or `params`. */
const char *xpb_model_param_effective(const xpb_model_api *model, const char *variant,
                                      const xpb_kv *params, size_t n_params, const char *name);

/* The declaration of parameter `name`, or NULL; owned by the model. */
const xpb_model_param *xpb_model_param_decl(const xpb_model_api *model, const char *name);

/* Parses a parameter value as the model.h types do: 1 when `s` is one, else 0. */
int xpb_model_param_bool(int *out, const char *s);
int xpb_model_param_int(int64_t *out, const char *s);
int xpb_model_param_float(double *out, const char *s);

#endif
