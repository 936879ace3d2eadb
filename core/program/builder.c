/* The builder table model plugins call (include/xpubench/model.h), over an xpb_graph: the
 * table and the build of a whole graph. The functions live in the builder's parts:
 * builder_values.c (inputs, parameters, constants), builder_ops.c (ops, reshapes, outputs),
 * builder_phases.c (groups, phases, losses); model_params.c checks declared parameters. */
#include "program/builder.h"

#include <stdio.h>
#include <string.h>

#include "program/builder_state.h"
#include "program/model_params.h"
#include "program/plugin_calls.h"

static const char *b_last_error(const xpb_builder *b)
{
    return b->err.msg;
}

static uint32_t b_batch_size(const xpb_builder *b)
{
    return b->g->batch;
}

static xpb_status lookup(const char **value, const xpb_model_param **decl, const xpb_builder *b,
                         const char *name, uint32_t type)
{
    xpb_builder *mb = (xpb_builder *)b; /* the error buffer is the builder's mutable part */
    *decl = name ? xpb_model_param_decl(b->model, name) : NULL;
    if (!*decl)
        return xpb_builder_fail(mb, XPB_NOT_FOUND, "asked for undeclared parameter '%s'",
                                name ? name : "(null)");
    if ((*decl)->type != type)
        return xpb_builder_fail(mb, XPB_INVALID_ARGUMENT,
                                "parameter '%s' asked with the wrong type", name);
    *value = xpb_model_param_effective(b->model, b->variant, b->params, b->n_params, name);
    return XPB_OK;
}

static xpb_status b_param_string(const char **out, const xpb_builder *b, const char *name)
{
    const xpb_model_param *d;
    return lookup(out, &d, b, name, XPB_MPARAM_STRING);
}

static xpb_status b_param_int(int64_t *out, const xpb_builder *b, const char *name)
{
    const xpb_model_param *d;
    const char *v = NULL;
    xpb_status st = lookup(&v, &d, b, name, XPB_MPARAM_INT);
    if (st)
        return st;
    return xpb_model_param_int(out, v)
               ? XPB_OK
               : xpb_builder_fail((xpb_builder *)b, XPB_INVALID_ARGUMENT,
                                  "parameter '%s': '%s' is not an integer", name, v);
}

static xpb_status b_param_float(double *out, const xpb_builder *b, const char *name)
{
    const xpb_model_param *d;
    const char *v = NULL;
    xpb_status st = lookup(&v, &d, b, name, XPB_MPARAM_FLOAT);
    if (st)
        return st;
    return xpb_model_param_float(out, v)
               ? XPB_OK
               : xpb_builder_fail((xpb_builder *)b, XPB_INVALID_ARGUMENT,
                                  "parameter '%s': '%s' is not a number", name, v);
}

static xpb_status b_param_bool(int *out, const xpb_builder *b, const char *name)
{
    const xpb_model_param *d;
    const char *v = NULL;
    xpb_status st = lookup(&v, &d, b, name, XPB_MPARAM_BOOL);
    if (st)
        return st;
    return xpb_model_param_bool(out, v)
               ? XPB_OK
               : xpb_builder_fail((xpb_builder *)b, XPB_INVALID_ARGUMENT,
                                  "parameter '%s': '%s' is not a boolean", name, v);
}

/* A refusal in the model's own words (model.h, ABI 1.1). */
static xpb_status b_fail(xpb_builder *b, xpb_status status, const char *message)
{
    if (status == XPB_OK) /* a refusal must fail: make it an invalid argument */
        status = XPB_INVALID_ARGUMENT;
    return xpb_builder_fail(b, status, "%s", message ? message : "refused the build (no message)");
}

static const xpb_builder_api builder_api = {
    .struct_size = sizeof(xpb_builder_api),
    .last_error = b_last_error,
    .batch_size = b_batch_size,
    .param_string = b_param_string,
    .param_int = b_param_int,
    .param_float = b_param_float,
    .param_bool = b_param_bool,
    .input = xpb_builder_input,
    .parameter = xpb_builder_parameter,
    .constant = xpb_builder_constant,
    .op = xpb_builder_op,
    .reshape = xpb_builder_reshape,
    .stop_gradient = xpb_builder_stop_gradient,
    .output = xpb_builder_output,
    .group = xpb_builder_group,
    .phase = xpb_builder_phase,
    .loss = xpb_builder_loss,
    .fail = b_fail,
    .op3 = xpb_builder_op3,
    .constant_data = xpb_builder_constant_data,
    .clip_grad_norm = xpb_builder_clip_grad_norm,
};

xpb_status xpb_build_graph(xpb_graph **out, const xpb_model_api *model, const char *model_name,
                           uint32_t batch, const char *variant, const xpb_kv *params,
                           size_t n_params, xpb_err *err)
{
    xpb_status st;
    if ((st = xpb_model_params_check(model, model_name, variant, params, n_params, err)))
        return st;
    xpb_builder b = {.model = model,
                     .model_name = model_name,
                     .variant = variant,
                     .params = params,
                     .n_params = n_params};
    if ((st = xpb_graph_new(&b.g, batch)))
        return xpb_err_set(err, st, "out of memory");
    xpb_program_calling(model, "build");
    st = model->build(&b, &builder_api);
    xpb_program_called(model);
    if (st != XPB_OK) {
        if (!b.err.msg[0])
            xpb_err_set(&b.err, st, "model '%s': build failed: %s", model_name, xpb_strerror(st));
        goto free_graph;
    }
    if (b.g->n_phases == 0 || b.g->phases[0].n_losses == 0) {
        st = xpb_builder_fail(&b, XPB_INVALID_ARGUMENT, "declares no loss");
        goto free_graph;
    }
    for (size_t i = 0; i < b.g->n_phases; i++)
        if (b.g->phases[i].n_losses == 0) {
            st = xpb_builder_fail(&b, XPB_INVALID_ARGUMENT, "phase '%s' has no loss",
                                  b.g->phases[i].name);
            goto free_graph;
        }
    *out = b.g;
    return XPB_OK;
free_graph:
    xpb_graph_free(b.g);
    return xpb_err_set(err, st, "%s", b.err.msg);
}
