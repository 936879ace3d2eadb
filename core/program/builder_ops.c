/* The ops a model applies: forward ops with their inferred shapes, reshapes, stop-gradients
 * and named outputs (builder_state.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/builder_state.h"

/* Defaults a model may leave at zero: stride/dilation 1 for convolutions, stride = kernel
 * for pooling (PyTorch's defaults). */
static void normalise_attrs(uint32_t kind, xpb_op_attrs *a)
{
    for (int d = 0; d < 2; d++) {
        if (a->dilation[d] == 0)
            a->dilation[d] = 1;
        if (a->stride[d] == 0)
            a->stride[d] = (kind == XPB_OP_MAXPOOL || kind == XPB_OP_AVGPOOL) ? a->kernel[d] : 1;
    }
}

static xpb_status add_node(xpb_value *out, xpb_builder *b, xpb_gnode *n)
{
    xpb_status st;
    xpb_gvalue v = {.kind = XPB_VALUE_NODE, .name = n->layer};
    if ((st = xpb_infer_shape(&v.ndim, v.dims, &v.dtype, b->g, n, &b->err))) {
        xpb_err_prefix(&b->err, "model '%s'", b->model_name);
        return st;
    }
    v.node = (uint32_t)b->g->n_nodes;
    uint32_t vid;
    if ((st = xpb_graph_add_value(&vid, b->g, &v)))
        return xpb_builder_fail(b, st, "out of memory");
    n->output = vid;
    uint32_t nid;
    if ((st = xpb_graph_add_node(&nid, b->g, n)))
        return xpb_builder_fail(b, st, "out of memory");
    *out = vid;
    return XPB_OK;
}

static int is_model_forward_op(uint32_t kind)
{
    switch (kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
    case XPB_OP_LINEAR:
    case XPB_OP_BATCHNORM_TRAIN:
    case XPB_OP_INSTANCENORM:
    case XPB_OP_RELU:
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_TANH:
    case XPB_OP_MAXPOOL:
    case XPB_OP_AVGPOOL:
    case XPB_OP_GLOBAL_AVGPOOL:
    case XPB_OP_ADD:
    case XPB_OP_REFLECTION_PAD:
    case XPB_OP_SOFTMAX_XENT:
    case XPB_OP_MSE_LOSS:
    case XPB_OP_L1_LOSS:
    case XPB_OP_DROPOUT:
        return 1;
    default:
        return 0;
    }
}

xpb_status xpb_builder_op(xpb_value *out, xpb_builder *b, const char *layer, uint32_t kind,
                          const xpb_value *inputs, uint32_t n_inputs, const xpb_op_attrs *attrs)
{
    if (!out || !layer || !layer[0])
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT,
                                "op %s without a layer name or output pointer", xpb_op_name(kind));
    if (!is_model_forward_op(kind))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT,
                                "layer '%s': op %s (%u) is not a forward op", layer,
                                xpb_op_name(kind), kind);
    if (n_inputs > XPB_MAX_OP_INPUTS || (n_inputs && !inputs))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "layer '%s': %u inputs", layer, n_inputs);
    xpb_gnode n = {.kind = kind, .layer = (char *)layer, .n_inputs = n_inputs};
    for (uint32_t i = 0; i < n_inputs; i++) {
        if (!xpb_builder_value_ok(b, inputs[i]))
            return xpb_builder_fail(b, XPB_INVALID_ARGUMENT,
                                    "layer '%s': input %u is not a value (%u)", layer, i,
                                    inputs[i]);
        const xpb_gvalue *iv = &b->g->values[inputs[i]];
        if (iv->kind == XPB_VALUE_NODE && xpb_op_is_loss(b->g->nodes[iv->node].kind))
            return xpb_builder_fail(
                b, XPB_INVALID_ARGUMENT,
                "layer '%s': input %u is the loss '%s'; a loss may only be passed to "
                "loss()",
                layer, i, iv->name);
        n.inputs[i] = inputs[i];
    }
    if (attrs)
        n.attrs = *attrs;
    normalise_attrs(kind, &n.attrs);
    return add_node(out, b, &n);
}

xpb_status xpb_builder_reshape(xpb_value *out, xpb_builder *b, const char *layer, xpb_value x,
                               uint32_t ndim, const int64_t *dims)
{
    xpb_status st;
    if (!out || !layer || !xpb_builder_value_ok(b, x) || !dims)
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "reshape: bad arguments");
    if ((st = xpb_builder_check_dims(b, "reshape", layer, ndim, dims)))
        return st;
    const xpb_gvalue *xv = &b->g->values[x];
    int64_t before = 1, after = 1;
    for (uint32_t d = 0; d < xv->ndim; d++)
        before *= xv->dims[d];
    for (uint32_t d = 0; d < ndim; d++)
        after *= dims[d];
    if (before != after) {
        char s1[96], s2[96];
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT,
                                "layer '%s' (RESHAPE): %s has %lld elements, target %s has %lld",
                                layer, xpb_shape_str(s1, sizeof s1, xv->ndim, xv->dims),
                                (long long)before, xpb_shape_str(s2, sizeof s2, ndim, dims),
                                (long long)after);
    }
    xpb_gnode n = {.kind = XPB_OP_RESHAPE, .layer = (char *)layer, .n_inputs = 1, .inputs = {x}};
    xpb_gvalue v = {.kind = XPB_VALUE_NODE,
                    .name = (char *)layer,
                    .dtype = xv->dtype,
                    .ndim = ndim,
                    .node = (uint32_t)b->g->n_nodes};
    for (uint32_t d = 0; d < XPB_MAX_DIMS; d++)
        v.dims[d] = d < ndim ? dims[d] : 1;
    uint32_t vid, nid;
    if ((st = xpb_graph_add_value(&vid, b->g, &v)))
        return xpb_builder_fail(b, st, "out of memory");
    n.output = vid;
    if ((st = xpb_graph_add_node(&nid, b->g, &n)))
        return xpb_builder_fail(b, st, "out of memory");
    *out = vid;
    return XPB_OK;
}

xpb_status xpb_builder_stop_gradient(xpb_value *out, xpb_builder *b, xpb_value x)
{
    if (!out || !xpb_builder_value_ok(b, x))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "stop_gradient: bad arguments");
    char layer[256];
    snprintf(layer, sizeof layer, "%s.detach", b->g->values[x].name ? b->g->values[x].name : "");
    xpb_gnode n = {.kind = XPB_GNODE_STOP_GRADIENT, .layer = layer, .n_inputs = 1, .inputs = {x}};
    return add_node(out, b, &n);
}

xpb_status xpb_builder_output(xpb_builder *b, const char *name, xpb_value v)
{
    if (!name || !xpb_builder_value_ok(b, v))
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT, "output: bad arguments");
    xpb_goutput *grown = realloc(b->g->outputs, (b->g->n_outputs + 1) * sizeof *grown);
    if (!grown)
        return xpb_builder_fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    b->g->outputs = grown;
    grown[b->g->n_outputs].name = strdup(name);
    grown[b->g->n_outputs].value = v;
    if (!grown[b->g->n_outputs].name)
        return xpb_builder_fail(b, XPB_OUT_OF_MEMORY, "out of memory");
    b->g->n_outputs++;
    return XPB_OK;
}
