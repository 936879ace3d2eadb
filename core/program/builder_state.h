/* Inside the builder (builder.c and its parts): the state behind the opaque xpb_builder a
 * model's build() receives, and the checks every builder function shares. */
#ifndef XPB_CORE_BUILDER_STATE_H
#define XPB_CORE_BUILDER_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <xpubench/model.h>

#include "base/errmsg.h"
#include "program/graph.h"
#include "program/program_options.h"

struct xpb_builder {
    xpb_graph *g;
    const xpb_model_api *model;
    const char *model_name;
    const char *variant;
    const xpb_kv *params;
    size_t n_params;
    xpb_err err;
};

/* Sets the builder's error "model '<name>': <message>" and returns `st`. */
xpb_status xpb_builder_fail(xpb_builder *b, xpb_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether `v` is a value of the graph. */
int xpb_builder_value_ok(const xpb_builder *b, xpb_value v);

/* 1..XPB_MAX_DIMS dims, each 1..2^31, at most 2^34 elements; else the builder's error naming
 * `what` and `name`. */
xpb_status xpb_builder_check_dims(xpb_builder *b, const char *what, const char *name, uint32_t ndim,
                                  const int64_t *dims);

/* Adds named value *v (input, parameter, constant): a name not taken, sound dims. */
xpb_status xpb_builder_new_named(xpb_value *out, xpb_builder *b, const char *what, xpb_gvalue *v);

/* The builder functions of each part, for builder.c's table. */
xpb_status xpb_builder_input(xpb_value *out, xpb_builder *b, const xpb_input_desc *d);
xpb_status xpb_builder_parameter(xpb_value *out, xpb_builder *b, const xpb_param_desc *d);
xpb_status xpb_builder_constant(xpb_value *out, xpb_builder *b, const char *name, uint32_t ndim,
                                const int64_t *dims, double value);
xpb_status xpb_builder_constant_data(xpb_value *out, xpb_builder *b, const char *name,
                                     uint32_t dtype, uint32_t ndim, const int64_t *dims,
                                     const void *data);
xpb_status xpb_builder_op(xpb_value *out, xpb_builder *b, const char *layer, uint32_t kind,
                          const xpb_value *inputs, uint32_t n_inputs, const xpb_op_attrs *attrs);
xpb_status xpb_builder_op3(xpb_value *out, xpb_builder *b, const char *layer, uint32_t kind,
                           const xpb_value *inputs, uint32_t n_inputs, const xpb_op_attrs *attrs,
                           const xpb_op_attrs3 *attrs3);
xpb_status xpb_builder_reshape(xpb_value *out, xpb_builder *b, const char *layer, xpb_value x,
                               uint32_t ndim, const int64_t *dims);
xpb_status xpb_builder_stop_gradient(xpb_value *out, xpb_builder *b, xpb_value x);
xpb_status xpb_builder_output(xpb_builder *b, const char *name, xpb_value v);
xpb_status xpb_builder_group(uint32_t *out, xpb_builder *b, const char *name);
xpb_status xpb_builder_phase(uint32_t *out, xpb_builder *b, const char *name, uint32_t group,
                             const xpb_optimizer_desc *opt);
xpb_status xpb_builder_loss(xpb_builder *b, uint32_t phase, xpb_value loss, double weight);
xpb_status xpb_builder_clip_grad_norm(xpb_builder *b, uint32_t phase, double max_norm);

#endif
