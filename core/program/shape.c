/* Shape inference for forward ops, with errors that name the layer and say what was expected
 * and what was found. The rules are PyTorch's (docs/ops.md). */
#include <stdio.h>
#include <string.h>

#include "graph.h"

const char *xpb_shape_str(char *buf, size_t size, uint32_t ndim, const int64_t *dims)
{
    size_t used = 0;
    used += (size_t)snprintf(buf, size, "[");
    for (uint32_t d = 0; d < ndim && used < size; d++)
        used +=
            (size_t)snprintf(buf + used, size - used, d ? ", %lld" : "%lld", (long long)dims[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

static const xpb_gvalue *in_value(const xpb_graph *g, const xpb_gnode *n, uint32_t i)
{
    return &g->values[n->inputs[i]];
}

static xpb_status expect_rank(const xpb_gnode *n, const xpb_gvalue *v, const char *what,
                              uint32_t rank, xpb_err *err)
{
    char s[96];
    if (v->ndim == rank && v->dtype == XPB_DTYPE_F32)
        return XPB_OK;
    return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                       "layer '%s' (%s): %s: expected a %u-D f32 tensor, found %s %s", n->layer,
                       xpb_op_name(n->kind), what, rank, v->dtype == XPB_DTYPE_I32 ? "i32" : "f32",
                       xpb_shape_str(s, sizeof s, v->ndim, v->dims));
}

static int same_shape(const xpb_gvalue *a, const xpb_gvalue *b)
{
    if (a->ndim != b->ndim || a->dtype != b->dtype)
        return 0;
    for (uint32_t d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    return 1;
}

static xpb_status expect_vector(const xpb_gnode *n, const xpb_gvalue *v, const char *what,
                                int64_t len, xpb_err *err)
{
    char s[96];
    if (v->ndim == 1 && v->dims[0] == len && v->dtype == XPB_DTYPE_F32)
        return XPB_OK;
    return xpb_err_set(err, XPB_INVALID_ARGUMENT, "layer '%s' (%s): %s: expected [%lld], found %s",
                       n->layer, xpb_op_name(n->kind), what, (long long)len,
                       xpb_shape_str(s, sizeof s, v->ndim, v->dims));
}

static xpb_status bad_size(const xpb_gnode *n, const char *what, long long found, xpb_err *err)
{
    return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                       "layer '%s' (%s): %s: expected a size >= 1, found %lld", n->layer,
                       xpb_op_name(n->kind), what, found);
}

static xpb_status expect_inputs(const xpb_gnode *n, uint32_t lo, uint32_t hi, xpb_err *err)
{
    if (n->n_inputs >= lo && n->n_inputs <= hi)
        return XPB_OK;
    return xpb_err_set(
        err, XPB_INVALID_ARGUMENT, "layer '%s' (%s): expected %u%s%u inputs, found %u", n->layer,
        xpb_op_name(n->kind), lo, lo == hi ? "" : " to ", lo == hi ? 0u : hi, n->n_inputs);
}

static xpb_status infer_conv(int64_t *dims, const xpb_graph *g, const xpb_gnode *n, int transposed,
                             xpb_err *err)
{
    xpb_status st;
    char s1[96], s2[96];
    const xpb_gvalue *x = in_value(g, n, 0), *w = in_value(g, n, 1);
    if ((st = expect_inputs(n, 2, 3, err)) || (st = expect_rank(n, x, "input", 4, err)) ||
        (st = expect_rank(n, w, "weight", 4, err)))
        return st;
    int64_t w_in = transposed ? w->dims[0] : w->dims[1];
    int64_t w_out = transposed ? w->dims[1] : w->dims[0];
    if (w_in != x->dims[1])
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "layer '%s' (%s): weight %s expects %lld input channels, input %s has "
                           "%lld",
                           n->layer, xpb_op_name(n->kind),
                           xpb_shape_str(s1, sizeof s1, w->ndim, w->dims), (long long)w_in,
                           xpb_shape_str(s2, sizeof s2, x->ndim, x->dims), (long long)x->dims[1]);
    if (n->n_inputs == 3 && (st = expect_vector(n, in_value(g, n, 2), "bias", w_out, err)))
        return st;
    const xpb_op_attrs *a = &n->attrs;
    dims[0] = x->dims[0];
    dims[1] = w_out;
    for (int d = 0; d < 2; d++) {
        int64_t in = x->dims[2 + d], k = w->dims[2 + d];
        if (a->pad[d] < 0)
            return bad_size(n, "padding", a->pad[d], err);
        if (transposed) {
            if (a->output_padding[d] < 0 ||
                (a->output_padding[d] >= a->stride[d] && a->output_padding[d] >= a->dilation[d]))
                return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                                   "layer '%s' (%s): output_padding %d must be smaller than "
                                   "stride %d or dilation %d",
                                   n->layer, xpb_op_name(n->kind), a->output_padding[d],
                                   a->stride[d], a->dilation[d]);
            dims[2 + d] = (in - 1) * a->stride[d] - 2 * a->pad[d] + a->dilation[d] * (k - 1) +
                          a->output_padding[d] + 1;
        } else {
            dims[2 + d] = (in + 2 * a->pad[d] - a->dilation[d] * (k - 1) - 1) / a->stride[d] + 1;
            if (in + 2 * a->pad[d] < a->dilation[d] * (k - 1) + 1)
                dims[2 + d] = 0;
        }
        if (dims[2 + d] < 1)
            return xpb_err_set(
                err, XPB_INVALID_ARGUMENT,
                "layer '%s' (%s): kernel %lldx%lld does not fit input %s with "
                "padding %d (output size %lld)",
                n->layer, xpb_op_name(n->kind), (long long)w->dims[2], (long long)w->dims[3],
                xpb_shape_str(s1, sizeof s1, x->ndim, x->dims), a->pad[d], (long long)dims[2 + d]);
    }
    return XPB_OK;
}

static xpb_status infer_pool(int64_t *dims, const xpb_graph *g, const xpb_gnode *n, xpb_err *err)
{
    xpb_status st;
    char s[96];
    const xpb_gvalue *x = in_value(g, n, 0);
    const xpb_op_attrs *a = &n->attrs;
    if ((st = expect_inputs(n, 1, 1, err)) || (st = expect_rank(n, x, "input", 4, err)))
        return st;
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int d = 0; d < 2; d++) {
        if (a->kernel[d] < 1)
            return bad_size(n, "kernel", a->kernel[d], err);
        if (a->pad[d] < 0 || a->pad[d] > a->kernel[d] / 2)
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "layer '%s' (%s): padding %d must be between 0 and half the "
                               "kernel (%d)",
                               n->layer, xpb_op_name(n->kind), a->pad[d], a->kernel[d] / 2);
        int64_t span = x->dims[2 + d] + 2 * a->pad[d] - a->kernel[d];
        if (span < 0)
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "layer '%s' (%s): window %dx%d does not fit input %s", n->layer,
                               xpb_op_name(n->kind), a->kernel[0], a->kernel[1],
                               xpb_shape_str(s, sizeof s, x->ndim, x->dims));
        dims[2 + d] = span / a->stride[d] + 1;
    }
    return XPB_OK;
}

static void copy_shape(uint32_t *ndim, int64_t *dims, const xpb_gvalue *v)
{
    *ndim = v->ndim;
    memcpy(dims, v->dims, sizeof v->dims);
}

xpb_status xpb_infer_shape(uint32_t *ndim, int64_t *dims, uint32_t *dtype, const xpb_graph *g,
                           const xpb_gnode *n, xpb_err *err)
{
    xpb_status st;
    char s1[96], s2[96];
    for (uint32_t d = 0; d < XPB_MAX_DIMS; d++)
        dims[d] = 1;
    *dtype = XPB_DTYPE_F32;
    if (n->n_inputs == 0)
        return xpb_err_set(err, XPB_INVALID_ARGUMENT, "layer '%s' (%s): no inputs", n->layer,
                           xpb_op_name(n->kind));
    const xpb_gvalue *x = in_value(g, n, 0);
    switch (n->kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
        *ndim = 4;
        return infer_conv(dims, g, n, n->kind == XPB_OP_CONV_T2D, err);
    case XPB_OP_LINEAR: {
        const xpb_gvalue *w = in_value(g, n, 1);
        if ((st = expect_inputs(n, 2, 3, err)) || (st = expect_rank(n, x, "input", 2, err)) ||
            (st = expect_rank(n, w, "weight", 2, err)))
            return st;
        if (w->dims[1] != x->dims[1])
            return xpb_err_set(
                err, XPB_INVALID_ARGUMENT,
                "layer '%s' (LINEAR): weight %s expects %lld input features, "
                "input %s has %lld",
                n->layer, xpb_shape_str(s1, sizeof s1, w->ndim, w->dims), (long long)w->dims[1],
                xpb_shape_str(s2, sizeof s2, x->ndim, x->dims), (long long)x->dims[1]);
        if (n->n_inputs == 3 && (st = expect_vector(n, in_value(g, n, 2), "bias", w->dims[0], err)))
            return st;
        *ndim = 2;
        dims[0] = x->dims[0];
        dims[1] = w->dims[0];
        return XPB_OK;
    }
    case XPB_OP_BATCHNORM_TRAIN:
        if ((st = expect_inputs(n, 5, 5, err)))
            return st;
        if (x->ndim != 2 && (st = expect_rank(n, x, "input", 4, err)))
            return st;
        for (uint32_t i = 1; i < 5; i++) {
            static const char *const what[5] = {"", "weight", "bias", "running_mean",
                                                "running_var"};
            if ((st = expect_vector(n, in_value(g, n, i), what[i], x->dims[1], err)))
                return st;
        }
        copy_shape(ndim, dims, x);
        return XPB_OK;
    case XPB_OP_INSTANCENORM:
        if ((st = expect_inputs(n, 1, 1, err)) || (st = expect_rank(n, x, "input", 4, err)))
            return st;
        copy_shape(ndim, dims, x);
        return XPB_OK;
    case XPB_OP_RELU:
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_TANH:
    case XPB_OP_DROPOUT:
    case XPB_GNODE_STOP_GRADIENT:
        if ((st = expect_inputs(n, 1, 1, err)))
            return st;
        if (x->dtype != XPB_DTYPE_F32)
            return expect_rank(n, x, "input", x->ndim, err);
        if (n->kind == XPB_OP_DROPOUT && !(n->attrs.dropout_p >= 0 && n->attrs.dropout_p < 1))
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "layer '%s' (DROPOUT): probability: expected 0 <= p < 1, found %g",
                               n->layer, n->attrs.dropout_p);
        copy_shape(ndim, dims, x);
        return XPB_OK;
    case XPB_OP_MAXPOOL:
    case XPB_OP_AVGPOOL:
        *ndim = 4;
        return infer_pool(dims, g, n, err);
    case XPB_OP_GLOBAL_AVGPOOL:
        if ((st = expect_inputs(n, 1, 1, err)) || (st = expect_rank(n, x, "input", 4, err)))
            return st;
        *ndim = 4;
        dims[0] = x->dims[0];
        dims[1] = x->dims[1];
        return XPB_OK;
    case XPB_OP_ADD:
    case XPB_OP_MSE_LOSS:
    case XPB_OP_L1_LOSS: {
        if ((st = expect_inputs(n, 2, 2, err)))
            return st;
        const xpb_gvalue *y = in_value(g, n, 1);
        if (!same_shape(x, y) || x->dtype != XPB_DTYPE_F32)
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "layer '%s' (%s): expected two f32 tensors of one shape, found %s "
                               "and %s",
                               n->layer, xpb_op_name(n->kind),
                               xpb_shape_str(s1, sizeof s1, x->ndim, x->dims),
                               xpb_shape_str(s2, sizeof s2, y->ndim, y->dims));
        if (n->kind == XPB_OP_ADD) {
            copy_shape(ndim, dims, x);
        } else {
            *ndim = 1;
        }
        return XPB_OK;
    }
    case XPB_OP_REFLECTION_PAD:
        if ((st = expect_inputs(n, 1, 1, err)) || (st = expect_rank(n, x, "input", 4, err)))
            return st;
        for (int d = 0; d < 2; d++)
            if (n->attrs.pad[d] < 0 || n->attrs.pad[d] >= x->dims[2 + d])
                return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                                   "layer '%s' (REFLECTION_PAD): padding %d must be >= 0 and "
                                   "smaller than the input size %lld",
                                   n->layer, n->attrs.pad[d], (long long)x->dims[2 + d]);
        *ndim = 4;
        dims[0] = x->dims[0];
        dims[1] = x->dims[1];
        dims[2] = x->dims[2] + 2 * n->attrs.pad[0];
        dims[3] = x->dims[3] + 2 * n->attrs.pad[1];
        return XPB_OK;
    case XPB_OP_SOFTMAX_XENT: {
        if ((st = expect_inputs(n, 2, 2, err)) || (st = expect_rank(n, x, "logits", 2, err)))
            return st;
        const xpb_gvalue *y = in_value(g, n, 1);
        if (y->dtype != XPB_DTYPE_I32 || y->ndim != 1 || y->dims[0] != x->dims[0])
            return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                               "layer '%s' (SOFTMAX_XENT): labels: expected i32 [%lld], found %s "
                               "%s",
                               n->layer, (long long)x->dims[0],
                               y->dtype == XPB_DTYPE_I32 ? "i32" : "f32",
                               xpb_shape_str(s1, sizeof s1, y->ndim, y->dims));
        *ndim = 1;
        return XPB_OK;
    }
    default:
        return xpb_err_set(err, XPB_INVALID_ARGUMENT,
                           "layer '%s': op %s (%u) is not a forward op a model may use", n->layer,
                           xpb_op_name(n->kind), n->kind);
    }
}
