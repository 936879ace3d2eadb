/* xpubench public SDK: the shape rules of op sets 1 and 2, one function per family (shapes.h
 * includes it and holds the table; do not include it alone). */
#ifndef XPUBENCH_SHAPES_RULES_H
#define XPUBENCH_SHAPES_RULES_H

#include "shapes_check.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- convolutions and linear ---- */

/* The tensors of a convolution-like op, whatever its direction: `data` is the tensor on the
 * side whose shape fixes the others (x of the forward op, or dx), `weight` the weight (or dw),
 * `result` the tensor on the other side (y, or dy) and `bias` the bias (or db). */
struct xpb_shp_conv_roles {
    int data, weight, result, bias, transposed;
};

static inline struct xpb_shp_conv_roles xpb_shp_conv_roles_of(uint32_t kind)
{
    struct xpb_shp_conv_roles r = {XPB_SHP_IN(0), XPB_SHP_IN(1), XPB_SHP_OUT(0), XPB_SHP_NONE, 0};
    switch (kind) {
    case XPB_OP_CONV_T2D:
        r.transposed = 1;
        /* fall through */
    case XPB_OP_CONV2D:
    case XPB_OP_LINEAR:
        r.bias = XPB_SHP_IN(2); /* x, w, b -> y */
        break;
    case XPB_OP_CONV_T2D_BWD_DATA:
        r.transposed = 1;
        /* fall through */
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_LINEAR_BWD_DATA:
        r.data = XPB_SHP_OUT(0); /* dy, w -> dx */
        r.result = XPB_SHP_IN(0);
        break;
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        r.transposed = 1;
        /* fall through */
    default: /* CONV2D_BWD_WEIGHTS, LINEAR_BWD_WEIGHTS: dy, x -> dw, db */
        r.data = XPB_SHP_IN(1);
        r.weight = XPB_SHP_OUT(0);
        r.result = XPB_SHP_IN(0);
        r.bias = XPB_SHP_OUT(1);
        break;
    }
    return r;
}

/* CONV2D, CONV_T2D and their backward ops (docs/ops.md, "Convolution and linear"). */
static inline xpb_status xpb_shp_conv(const struct xpb_shp_check *c)
{
    const xpb_op_attrs *at = &c->op->attrs;
    struct xpb_shp_conv_roles r = xpb_shp_conv_roles_of(c->op->kind);
    xpb_status st;
    if ((st = xpb_shp_expect_ndim(c, r.data, 4, 4)) != XPB_OK ||
        (st = xpb_shp_expect_ndim(c, r.weight, 4, 4)) != XPB_OK)
        return st;
    const xpb_tensor_desc *x = xpb_shp_desc(c, r.data), *w = xpb_shp_desc(c, r.weight);
    /* weight [K, C, kh, kw] for conv2d, [C, K, kh, kw] for the transposed form */
    int in_dim = r.transposed ? 0 : 1;
    int64_t ch = w->dims[in_dim], k = w->dims[r.transposed ? 1 : 0];
    char lw[160], lx[160], sw[96], sx[96];
    if (ch != x->dims[1])
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "%s %s expects %lld input channels (dim %d), %s %s has %lld",
                            xpb_shp_label(lw, sizeof lw, c, r.weight),
                            xpb_shape_str(sw, sizeof sw, w->ndim, w->dims), (long long)ch, in_dim,
                            xpb_shp_label(lx, sizeof lx, c, r.data),
                            xpb_shape_str(sx, sizeof sx, x->ndim, x->dims), (long long)x->dims[1]);
    if ((st = xpb_shp_expect_pair(c, "stride", at->stride, 1, INT32_MAX)) != XPB_OK ||
        (st = xpb_shp_expect_pair(c, "pad", at->pad, 0, INT32_MAX)) != XPB_OK ||
        (st = xpb_shp_expect_pair(c, "dilation", at->dilation, 1, INT32_MAX)) != XPB_OK)
        return st;
    int64_t size[2];
    for (int d = 0; d < 2; d++) {
        int64_t in = x->dims[2 + d], kk = w->dims[2 + d];
        int64_t s = at->stride[d], p = at->pad[d], dil = at->dilation[d];
        if (r.transposed) {
            /* PyTorch: output padding must be smaller than either the stride or the dilation */
            int32_t op = at->output_padding[d];
            if (op < 0 || (op >= at->stride[d] && op >= at->dilation[d]))
                return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                                    "attribute output_padding (%d, %d) must be >= 0 and smaller "
                                    "than the stride (%d, %d) or the dilation (%d, %d)",
                                    at->output_padding[0], at->output_padding[1], at->stride[0],
                                    at->stride[1], at->dilation[0], at->dilation[1]);
            size[d] = (in - 1) * s - 2 * p + dil * (kk - 1) + op + 1;
        } else {
            int64_t span = in + 2 * p - dil * (kk - 1) - 1;
            size[d] = span < 0 ? -1 : span / s + 1;
        }
        if (size[d] < 1)
            return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                                "a %lldx%lld kernel with stride (%d, %d), pad (%d, %d) and "
                                "dilation (%d, %d) gives no output for %s %s",
                                (long long)w->dims[2], (long long)w->dims[3], at->stride[0],
                                at->stride[1], at->pad[0], at->pad[1], at->dilation[0],
                                at->dilation[1], xpb_shp_label(lx, sizeof lx, c, r.data),
                                xpb_shape_str(sx, sizeof sx, x->ndim, x->dims));
    }
    int64_t want[4] = {x->dims[0], k, size[0], size[1]};
    if ((st = xpb_shp_expect_shape(c, r.result, 4, want)) != XPB_OK)
        return st;
    return xpb_shp_expect_vector(c, r.bias, k);
}

/* LINEAR and its backward ops: x[N,I], w[O,I], b[O], y[N,O]. */
static inline xpb_status xpb_shp_linear(const struct xpb_shp_check *c)
{
    struct xpb_shp_conv_roles r = xpb_shp_conv_roles_of(c->op->kind);
    xpb_status st;
    if ((st = xpb_shp_expect_ndim(c, r.data, 2, 2)) != XPB_OK ||
        (st = xpb_shp_expect_ndim(c, r.weight, 2, 2)) != XPB_OK)
        return st;
    const xpb_tensor_desc *x = xpb_shp_desc(c, r.data), *w = xpb_shp_desc(c, r.weight);
    char lw[160], lx[160], sw[96], sx[96];
    if (w->dims[1] != x->dims[1])
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "%s %s expects %lld input features (dim 1), %s %s has %lld",
                            xpb_shp_label(lw, sizeof lw, c, r.weight),
                            xpb_shape_str(sw, sizeof sw, w->ndim, w->dims), (long long)w->dims[1],
                            xpb_shp_label(lx, sizeof lx, c, r.data),
                            xpb_shape_str(sx, sizeof sx, x->ndim, x->dims), (long long)x->dims[1]);
    int64_t want[2] = {x->dims[0], w->dims[0]};
    if ((st = xpb_shp_expect_shape(c, r.result, 2, want)) != XPB_OK)
        return st;
    return xpb_shp_expect_vector(c, r.bias, w->dims[0]);
}

/* ---- normalisation ---- */

/* BATCHNORM_TRAIN / _INFER (x, gamma, beta, rm, rv -> y [, ws_mean, ws_var]) and
 * BATCHNORM_BWD (dy, x, gamma, ws_mean, ws_var -> dx, dgamma, dbeta): x is [N,C], [N,C,L] or
 * [N,C,H,W]; every per-channel vector is [C]. */
static inline xpb_status xpb_shp_batchnorm(const struct xpb_shp_check *c)
{
    int bwd = c->op->kind == XPB_OP_BATCHNORM_BWD;
    int x = bwd ? XPB_SHP_IN(1) : XPB_SHP_IN(0);
    xpb_status st = xpb_shp_expect_ndim(c, x, 2, 4);
    if (st != XPB_OK || (st = xpb_shp_expect_nonneg(c, "eps", c->op->attrs.eps)) != XPB_OK)
        return st;
    int64_t ch = xpb_shp_desc(c, x)->dims[1];
    const int like_x[3] = {x, XPB_SHP_IN(0), XPB_SHP_OUT(0)};
    if ((st = xpb_shp_expect_all_like(c, like_x, 3)) != XPB_OK)
        return st;
    for (int i = bwd ? 2 : 1; i < 5; i++)
        if ((st = xpb_shp_expect_vector(c, XPB_SHP_IN(i), ch)) != XPB_OK)
            return st;
    for (int j = 1; j < 3; j++)
        if ((st = xpb_shp_expect_vector(c, XPB_SHP_OUT(j), ch)) != XPB_OK)
            return st;
    return XPB_OK;
}

/* INSTANCENORM (x -> y [, ws_mean, ws_var]) and INSTANCENORM_BWD (dy, x, ws_mean, ws_var ->
 * dx): x is [N,C,H,W] or [N,C,L]; the statistics are [N,C]. */
static inline xpb_status xpb_shp_instancenorm(const struct xpb_shp_check *c)
{
    int bwd = c->op->kind == XPB_OP_INSTANCENORM_BWD;
    int x = bwd ? XPB_SHP_IN(1) : XPB_SHP_IN(0);
    xpb_status st = xpb_shp_expect_ndim(c, x, 3, 4);
    if (st != XPB_OK || (st = xpb_shp_expect_nonneg(c, "eps", c->op->attrs.eps)) != XPB_OK)
        return st;
    const int like_x[3] = {x, XPB_SHP_IN(0), XPB_SHP_OUT(0)};
    if ((st = xpb_shp_expect_all_like(c, like_x, 3)) != XPB_OK)
        return st;
    const xpb_tensor_desc *d = xpb_shp_desc(c, x);
    const int64_t nc[2] = {d->dims[0], d->dims[1]};
    const int stats[2] = {bwd ? XPB_SHP_IN(2) : XPB_SHP_OUT(1),
                          bwd ? XPB_SHP_IN(3) : XPB_SHP_OUT(2)};
    for (int i = 0; i < 2; i++)
        if ((st = xpb_shp_expect_shape(c, stats[i], 2, nc)) != XPB_OK)
            return st;
    return XPB_OK;
}

/* ---- elementwise, data movement, losses, optimizers ---- */

/* Every tensor of the op has the shape of input 0, and output 0 its dtype (activations and
 * their backward ops, ADD, COPY, DROPOUT, the loss backward ops, SGD_UPDATE). */
static inline xpb_status xpb_shp_same_shapes(const struct xpb_shp_check *c)
{
    int ts[XPB_SHP_NAMES + XPB_SHP_MAX_OUT];
    int n = 0;
    if (c->n_in > XPB_SHP_NAMES)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%u inputs, at most %d", c->n_in,
                            XPB_SHP_NAMES);
    for (uint32_t i = 0; i < c->n_in; i++)
        ts[n++] = XPB_SHP_IN((int)i);
    for (uint32_t j = 0; j < c->n_out; j++)
        ts[n++] = XPB_SHP_OUT((int)j);
    xpb_status st = xpb_shp_expect_all_like(c, ts, n);
    if (st != XPB_OK || c->n_out == 0)
        return st;
    char l0[160], lx[160], s0[16], sx[16];
    if (c->out[0]->dtype != c->in[0]->dtype)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s must have the dtype of %s (%s), found %s",
                            xpb_shp_label(l0, sizeof l0, c, XPB_SHP_OUT(0)),
                            xpb_shp_label(lx, sizeof lx, c, XPB_SHP_IN(0)),
                            xpb_shp_dtype_str(sx, sizeof sx, c->in[0]->dtype),
                            xpb_shp_dtype_str(s0, sizeof s0, c->out[0]->dtype));
    return XPB_OK;
}

/* LEAKY_RELU_BWD decides on the forward output, which equals deciding on its input only for a
 * slope >= 0 (PyTorch refuses a negative slope there too). */
static inline xpb_status xpb_shp_leaky_relu_bwd(const struct xpb_shp_check *c)
{
    xpb_status st = xpb_shp_expect_nonneg(c, "negative_slope", c->op->attrs.negative_slope);
    return st != XPB_OK ? st : xpb_shp_same_shapes(c);
}

/* DROPOUT and DROPOUT_BWD: p in [0, 1]. */
static inline xpb_status xpb_shp_dropout(const struct xpb_shp_check *c)
{
    float p = c->op->attrs.dropout_p;
    if (!(p >= 0.0f && p <= 1.0f))
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute dropout_p must be in [0, 1], found %g", (double)p);
    return xpb_shp_same_shapes(c);
}

/* RESHAPE: the same element count and dtype. */
static inline xpb_status xpb_shp_reshape(const struct xpb_shp_check *c)
{
    const xpb_tensor_desc *x = c->in[0], *y = c->out[0];
    char lx[160], ly[160], sx[96], sy[96];
    if (xpb_tensor_numel(x) != xpb_tensor_numel(y))
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "%s %s must have as many elements as %s %s (%lld), found %lld",
                            xpb_shp_label(ly, sizeof ly, c, XPB_SHP_OUT(0)),
                            xpb_shape_str(sy, sizeof sy, y->ndim, y->dims),
                            xpb_shp_label(lx, sizeof lx, c, XPB_SHP_IN(0)),
                            xpb_shape_str(sx, sizeof sx, x->ndim, x->dims),
                            (long long)xpb_tensor_numel(x), (long long)xpb_tensor_numel(y));
    if (x->dtype != y->dtype)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT, "%s must have the dtype of %s (%s), found %s",
                            xpb_shp_label(ly, sizeof ly, c, XPB_SHP_OUT(0)),
                            xpb_shp_label(lx, sizeof lx, c, XPB_SHP_IN(0)),
                            xpb_shp_dtype_str(sx, sizeof sx, x->dtype),
                            xpb_shp_dtype_str(sy, sizeof sy, y->dtype));
    return XPB_OK;
}

/* FILL: any shape and dtype; the value is converted. */
static inline xpb_status xpb_shp_fill(const struct xpb_shp_check *c)
{
    (void)c;
    return XPB_OK;
}

/* ALL_REDUCE (x* ->, op set 2): any shape; the counts and the F32 dtype are the table's. */
static inline xpb_status xpb_shp_all_reduce(const struct xpb_shp_check *c)
{
    (void)c;
    return XPB_OK;
}

/* SOFTMAX_XENT (logits[N,K], labels[N] -> loss[1] [, ws_prob[N,K]]) and SOFTMAX_XENT_BWD
 * (ws_prob[N,K], labels[N] -> dlogits[N,K]). */
static inline xpb_status xpb_shp_softmax_xent(const struct xpb_shp_check *c)
{
    xpb_status st = xpb_shp_expect_ndim(c, XPB_SHP_IN(0), 2, 2);
    if (st != XPB_OK || (st = xpb_shp_expect_vector(c, XPB_SHP_IN(1), c->in[0]->dims[0])) != XPB_OK)
        return st;
    if (c->op->kind == XPB_OP_SOFTMAX_XENT_BWD)
        return xpb_shp_expect_like(c, XPB_SHP_OUT(0), XPB_SHP_IN(0));
    if ((st = xpb_shp_expect_vector(c, XPB_SHP_OUT(0), 1)) != XPB_OK)
        return st;
    return xpb_shp_expect_like(c, XPB_SHP_OUT(1), XPB_SHP_IN(0));
}

/* MSE_LOSS, L1_LOSS: x, target of one shape -> loss[1]. */
static inline xpb_status xpb_shp_loss(const struct xpb_shp_check *c)
{
    xpb_status st = xpb_shp_expect_like(c, XPB_SHP_IN(1), XPB_SHP_IN(0));
    return st != XPB_OK ? st : xpb_shp_expect_vector(c, XPB_SHP_OUT(0), 1);
}

/* ADAM_UPDATE: param, grad, m, v of one shape; step [1]. */
static inline xpb_status xpb_shp_adam(const struct xpb_shp_check *c)
{
    const int ts[4] = {XPB_SHP_IN(0), XPB_SHP_IN(1), XPB_SHP_IN(2), XPB_SHP_IN(3)};
    xpb_status st = xpb_shp_expect_all_like(c, ts, 4);
    return st != XPB_OK ? st : xpb_shp_expect_vector(c, XPB_SHP_IN(4), 1);
}

/* ---- pooling and padding ---- */

/* MAXPOOL (x -> y [, ws_index]), MAXPOOL_BWD (dy, ws_index -> dx), AVGPOOL (x -> y),
 * AVGPOOL_BWD (dy -> dx). PyTorch's limits: pad <= kernel / 2, floor mode. */
static inline xpb_status xpb_shp_pool(const struct xpb_shp_check *c)
{
    const xpb_op_attrs *at = &c->op->attrs;
    uint32_t kind = c->op->kind;
    int bwd = kind == XPB_OP_MAXPOOL_BWD || kind == XPB_OP_AVGPOOL_BWD;
    int data = bwd ? XPB_SHP_OUT(0) : XPB_SHP_IN(0), result = bwd ? XPB_SHP_IN(0) : XPB_SHP_OUT(0);
    xpb_status st = xpb_shp_expect_ndim(c, data, 4, 4);
    if (st != XPB_OK)
        return st;
    if ((st = xpb_shp_expect_pair(c, "kernel", at->kernel, 1, INT32_MAX)) != XPB_OK ||
        (st = xpb_shp_expect_pair(c, "stride", at->stride, 1, INT32_MAX)) != XPB_OK ||
        (st = xpb_shp_expect_pair(c, "pad", at->pad, 0, INT32_MAX)) != XPB_OK)
        return st;
    if (at->pad[0] > at->kernel[0] / 2 || at->pad[1] > at->kernel[1] / 2)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute pad (%d, %d) must be at most half the kernel (%d, %d)",
                            at->pad[0], at->pad[1], at->kernel[0], at->kernel[1]);
    if ((kind == XPB_OP_AVGPOOL || kind == XPB_OP_AVGPOOL_BWD) && at->count_include_pad != 0 &&
        at->count_include_pad != 1)
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute count_include_pad must be 0 or 1, found %d",
                            at->count_include_pad);
    const xpb_tensor_desc *x = xpb_shp_desc(c, data);
    int64_t want[4] = {x->dims[0], x->dims[1], 0, 0};
    for (int d = 0; d < 2; d++) {
        int64_t span = x->dims[2 + d] + 2 * (int64_t)at->pad[d] - at->kernel[d];
        char l[160], s[96];
        if (span < 0)
            return xpb_shp_fail(
                c, XPB_INVALID_ARGUMENT, "a %dx%d window with pad (%d, %d) does not fit %s %s",
                at->kernel[0], at->kernel[1], at->pad[0], at->pad[1],
                xpb_shp_label(l, sizeof l, c, data), xpb_shape_str(s, sizeof s, x->ndim, x->dims));
        want[2 + d] = span / at->stride[d] + 1;
    }
    if ((st = xpb_shp_expect_shape(c, result, 4, want)) != XPB_OK)
        return st;
    if (kind == XPB_OP_MAXPOOL)
        return xpb_shp_expect_like(c, XPB_SHP_OUT(1), XPB_SHP_OUT(0));
    if (kind == XPB_OP_MAXPOOL_BWD)
        return xpb_shp_expect_like(c, XPB_SHP_IN(1), XPB_SHP_IN(0));
    return XPB_OK;
}

/* GLOBAL_AVGPOOL (x[N,C,H,W] -> y[N,C,1,1]) and its backward (dy[N,C,1,1] -> dx[N,C,H,W]). */
static inline xpb_status xpb_shp_global_pool(const struct xpb_shp_check *c)
{
    int bwd = c->op->kind == XPB_OP_GLOBAL_AVGPOOL_BWD;
    int data = bwd ? XPB_SHP_OUT(0) : XPB_SHP_IN(0), result = bwd ? XPB_SHP_IN(0) : XPB_SHP_OUT(0);
    xpb_status st = xpb_shp_expect_ndim(c, data, 4, 4);
    if (st != XPB_OK)
        return st;
    const xpb_tensor_desc *x = xpb_shp_desc(c, data);
    int64_t want[4] = {x->dims[0], x->dims[1], 1, 1};
    return xpb_shp_expect_shape(c, result, 4, want);
}

/* REFLECTION_PAD (x[N,C,H,W] -> y[N,C,H+2ph,W+2pw]) and its backward (dy -> dx). */
static inline xpb_status xpb_shp_reflection_pad(const struct xpb_shp_check *c)
{
    const xpb_op_attrs *at = &c->op->attrs;
    int bwd = c->op->kind == XPB_OP_REFLECTION_PAD_BWD;
    int data = bwd ? XPB_SHP_OUT(0) : XPB_SHP_IN(0), result = bwd ? XPB_SHP_IN(0) : XPB_SHP_OUT(0);
    xpb_status st = xpb_shp_expect_ndim(c, data, 4, 4);
    if (st != XPB_OK || (st = xpb_shp_expect_pair(c, "pad", at->pad, 0, INT32_MAX)) != XPB_OK)
        return st;
    const xpb_tensor_desc *x = xpb_shp_desc(c, data);
    char l[160], s[96];
    if (at->pad[0] >= x->dims[2] || at->pad[1] >= x->dims[3])
        return xpb_shp_fail(c, XPB_INVALID_ARGUMENT,
                            "attribute pad (%d, %d) must be smaller than the %lldx%lld plane of "
                            "%s %s",
                            at->pad[0], at->pad[1], (long long)x->dims[2], (long long)x->dims[3],
                            xpb_shp_label(l, sizeof l, c, data),
                            xpb_shape_str(s, sizeof s, x->ndim, x->dims));
    int64_t want[4] = {x->dims[0], x->dims[1], x->dims[2] + 2 * (int64_t)at->pad[0],
                       x->dims[3] + 2 * (int64_t)at->pad[1]};
    return xpb_shp_expect_shape(c, result, 4, want);
}

#ifdef __cplusplus
}
#endif
#endif
