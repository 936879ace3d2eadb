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

/* The forward kinds a model may apply: op set 1's through op(), those and op set 3's through
 * op3(). */
static int is_model_forward_op(uint32_t kind, int op3)
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
    case XPB_OP_MATMUL:
    case XPB_OP_BATCHED_MATMUL:
    case XPB_OP_PERMUTE:
    case XPB_OP_ADD_BROADCAST:
    case XPB_OP_MUL:
    case XPB_OP_SCALE:
    case XPB_OP_SOFTMAX:
    case XPB_OP_LAYER_NORM:
    case XPB_OP_GELU:
    case XPB_OP_EMBEDDING:
    case XPB_OP_LSTM:
        return op3;
    default:
        return 0;
    }
}

/* A reshape node of value x, named layer + suffix: a step of the lowerings below. */
static xpb_status reshape_to(xpb_value *out, xpb_builder *b, const char *layer, const char *suffix,
                             xpb_value x, uint32_t ndim, const int64_t *dims)
{
    char name[300];
    snprintf(name, sizeof name, "%s%s", layer, suffix);
    return xpb_builder_reshape(out, b, name, x, ndim, dims);
}

/* Adds the node; LINEAR on x[B, S, I] and SOFTMAX_XENT on logits [B, S, V] with labels [B, S]
 * become the rank-2 op between reshapes (docs/ops.md, op set 3), so that backends see op set 1's
 * ops on [B*S, ...]. */
static xpb_status add_forward(xpb_value *out, xpb_builder *b, xpb_gnode *n)
{
    const xpb_gvalue *x = &b->g->values[n->inputs[0]]; /* values[0] when there is none */
    xpb_status st;
    if (n->kind == XPB_OP_LINEAR && n->n_inputs >= 2 && x->ndim == 3) {
        const int64_t rows[2] = {x->dims[0] * x->dims[1], x->dims[2]};
        int64_t bs = x->dims[0], s = x->dims[1];
        xpb_value flat = XPB_NO_VALUE, y = XPB_NO_VALUE;
        if ((st = reshape_to(&flat, b, n->layer, ".rows", n->inputs[0], 2, rows)))
            return st;
        n->inputs[0] = flat;
        if ((st = add_node(&y, b, n)))
            return st;
        const int64_t seq[3] = {bs, s, b->g->values[y].dims[1]};
        return reshape_to(out, b, n->layer, ".seq", y, 3, seq);
    }
    if (n->kind == XPB_OP_SOFTMAX_XENT && n->n_inputs == 2 && x->ndim == 3 &&
        b->g->values[n->inputs[1]].ndim == 2) {
        const int64_t rows[2] = {x->dims[0] * x->dims[1], x->dims[2]};
        const int64_t labels[1] = {x->dims[0] * x->dims[1]};
        xpb_value flat = XPB_NO_VALUE, flat_labels = XPB_NO_VALUE;
        if ((st = reshape_to(&flat, b, n->layer, ".rows", n->inputs[0], 2, rows)) ||
            (st = reshape_to(&flat_labels, b, n->layer, ".labels", n->inputs[1], 1, labels)))
            return st;
        n->inputs[0] = flat;
        n->inputs[1] = flat_labels;
    }
    return add_node(out, b, n);
}

/* op() and op3(): the checks both make, then the node. */
static xpb_status apply_op(xpb_value *out, xpb_builder *b, const char *layer, uint32_t kind,
                           const xpb_value *inputs, uint32_t n_inputs, const xpb_op_attrs *attrs,
                           const xpb_op_attrs3 *attrs3, int op3)
{
    if (!out || !layer || !layer[0])
        return xpb_builder_fail(b, XPB_INVALID_ARGUMENT,
                                "op %s without a layer name or output pointer", xpb_op_name(kind));
    if (!is_model_forward_op(kind, op3))
        return xpb_builder_fail(
            b, XPB_INVALID_ARGUMENT, "layer '%s': op %s (%u) is not a forward op%s", layer,
            xpb_op_name(kind), kind,
            !op3 && is_model_forward_op(kind, 1) ? " of op set 1 (apply op set 3's ops with op3)"
                                                 : "");
    if (n_inputs > XPB_GNODE_MAX_INPUTS || (n_inputs && !inputs))
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
    if (attrs3 && attrs3->struct_size) {
        size_t size = attrs3->struct_size < sizeof n.attrs3 ? attrs3->struct_size : sizeof n.attrs3;
        memcpy(&n.attrs3, attrs3, size);
        n.attrs3.struct_size = size;
    }
    normalise_attrs(kind, &n.attrs);
    return add_forward(out, b, &n);
}

xpb_status xpb_builder_op(xpb_value *out, xpb_builder *b, const char *layer, uint32_t kind,
                          const xpb_value *inputs, uint32_t n_inputs, const xpb_op_attrs *attrs)
{
    return apply_op(out, b, layer, kind, inputs, n_inputs, attrs, NULL, 0);
}

xpb_status xpb_builder_op3(xpb_value *out, xpb_builder *b, const char *layer, uint32_t kind,
                           const xpb_value *inputs, uint32_t n_inputs, const xpb_op_attrs *attrs,
                           const xpb_op_attrs3 *attrs3)
{
    return apply_op(out, b, layer, kind, inputs, n_inputs, attrs, attrs3, 1);
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
