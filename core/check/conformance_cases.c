/* The catalogue of conformance cases (see conformance_case.h): every op of op set 1 at several
 * shapes (odd sizes, padding, strides, dilation, unwanted outputs), and small chains that keep
 * data inside the backend (layouts, memory reuse, fusion); then op set 3's
 * (conformance_cases3.c). docs/conformance.md lists them. */
#include "check/conformance_case.h"

#include <stdio.h>

static int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d)
{
    return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

static xpb_op_attrs conv_attrs(int64_t s, int64_t p, int64_t d, int64_t op)
{
    xpb_op_attrs a = {0};
    a.stride[0] = a.stride[1] = (int32_t)s;
    a.pad[0] = a.pad[1] = (int32_t)p;
    a.dilation[0] = a.dilation[1] = (int32_t)d;
    a.output_padding[0] = a.output_padding[1] = (int32_t)op;
    return a;
}

/* Forward, backward-data and backward-weights cases of one (transposed) convolution. */
static void add_conv(xpb_ct_list *l, int transposed, int64_t n, int64_t ci, int64_t h, int64_t w,
                     int64_t co, int64_t k, int64_t s, int64_t p, int64_t d, int64_t op, int bias)
{
    int64_t oh, ow;
    if (transposed) {
        oh = (h - 1) * s - 2 * p + d * (k - 1) + op + 1;
        ow = (w - 1) * s - 2 * p + d * (k - 1) + op + 1;
    } else {
        oh = conv_out(h, k, s, p, d);
        ow = conv_out(w, k, s, p, d);
    }
    xpb_op_attrs a = conv_attrs(s, p, d, op);
    int64_t w0 = transposed ? ci : co, w1 = transposed ? co : ci;
    static const uint32_t kinds[2][3] = {
        {XPB_OP_CONV2D, XPB_OP_CONV2D_BWD_DATA, XPB_OP_CONV2D_BWD_WEIGHTS},
        {XPB_OP_CONV_T2D, XPB_OP_CONV_T2D_BWD_DATA, XPB_OP_CONV_T2D_BWD_WEIGHTS}};
    for (int which = 0; which < 3; which++) {
        xpb_ct_case *c =
            xpb_ct_new(l, xpb_op_name(kinds[transposed][which]), 1,
                       "x%lldx%lldx%lldx%lld k%lld s%lld p%lld d%lld%s%s", (long long)n,
                       (long long)ci, (long long)h, (long long)w, (long long)k, (long long)s,
                       (long long)p, (long long)d, op ? " op1" : "", bias ? " bias" : "");
        if (!c)
            return;
        uint32_t x, wt, b, y, dy, dx, dw, db;
        switch (which) {
        case 0:
            x = xpb_ct_in(c, "x", 4, n, ci, h, w);
            wt = xpb_ct_param(c, "w", 4, w0, w1, k, k);
            y = xpb_ct_out(c, "y", 4, n, co, oh, ow);
            if (bias) {
                b = xpb_ct_param(c, "b", 1, co, 1, 1, 1);
                xpb_ct_op(c, kinds[transposed][0], 3, XPB_CT_T(x, wt, b), 1, XPB_CT_T(y))->attrs =
                    a;
            } else {
                xpb_ct_op(c, kinds[transposed][0], 2, XPB_CT_T(x, wt), 1, XPB_CT_T(y))->attrs = a;
            }
            break;
        case 1:
            dy = xpb_ct_in(c, "dy", 4, n, co, oh, ow);
            wt = xpb_ct_param(c, "w", 4, w0, w1, k, k);
            dx = xpb_ct_out(c, "dx", 4, n, ci, h, w);
            xpb_ct_op(c, kinds[transposed][1], 2, XPB_CT_T(dy, wt), 1, XPB_CT_T(dx))->attrs = a;
            break;
        default:
            dy = xpb_ct_in(c, "dy", 4, n, co, oh, ow);
            x = xpb_ct_in(c, "x", 4, n, ci, h, w);
            dw = xpb_ct_out(c, "dw", 4, w0, w1, k, k);
            if (bias) {
                db = xpb_ct_out(c, "db", 1, co, 1, 1, 1);
                xpb_ct_op(c, kinds[transposed][2], 2, XPB_CT_T(dy, x), 2, XPB_CT_T(dw, db))->attrs =
                    a;
            } else {
                xpb_ct_op(c, kinds[transposed][2], 2, XPB_CT_T(dy, x), 1, XPB_CT_T(dw))->attrs = a;
            }
            break;
        }
        xpb_ct_finish(c);
    }
}

static void add_linear(xpb_ct_list *l, int64_t n, int64_t in, int64_t out, int bias)
{
    for (int which = 0; which < 3; which++) {
        static const uint32_t kinds[3] = {XPB_OP_LINEAR, XPB_OP_LINEAR_BWD_DATA,
                                          XPB_OP_LINEAR_BWD_WEIGHTS};
        xpb_ct_case *c =
            xpb_ct_new(l, xpb_op_name(kinds[which]), 1, "x%lldx%lld o%lld%s", (long long)n,
                       (long long)in, (long long)out, bias ? " bias" : "");
        if (!c)
            return;
        if (which == 0) {
            uint32_t x = xpb_ct_in(c, "x", 2, n, in, 1, 1),
                     w = xpb_ct_param(c, "w", 2, out, in, 1, 1);
            uint32_t y = xpb_ct_out(c, "y", 2, n, out, 1, 1);
            if (bias)
                xpb_ct_op(c, kinds[0], 3, XPB_CT_T(x, w, xpb_ct_param(c, "b", 1, out, 1, 1, 1)), 1,
                          XPB_CT_T(y));
            else
                xpb_ct_op(c, kinds[0], 2, XPB_CT_T(x, w), 1, XPB_CT_T(y));
        } else if (which == 1) {
            uint32_t dy = xpb_ct_in(c, "dy", 2, n, out, 1, 1),
                     w = xpb_ct_param(c, "w", 2, out, in, 1, 1);
            xpb_ct_op(c, kinds[1], 2, XPB_CT_T(dy, w), 1,
                      XPB_CT_T(xpb_ct_out(c, "dx", 2, n, in, 1, 1)));
        } else {
            uint32_t dy = xpb_ct_in(c, "dy", 2, n, out, 1, 1),
                     x = xpb_ct_in(c, "x", 2, n, in, 1, 1);
            uint32_t dw = xpb_ct_out(c, "dw", 2, out, in, 1, 1);
            if (bias)
                xpb_ct_op(c, kinds[2], 2, XPB_CT_T(dy, x), 2,
                          XPB_CT_T(dw, xpb_ct_out(c, "db", 1, out, 1, 1, 1)));
            else
                xpb_ct_op(c, kinds[2], 2, XPB_CT_T(dy, x), 1, XPB_CT_T(dw));
        }
        xpb_ct_finish(c);
    }
}

/* The five inputs of a batch-norm op: x, gamma, beta, running mean and variance (results
 * read back and compared when `stats_read`: a training forward updates them). */
static void bn_inputs(xpb_ct_case *c, uint32_t in[5], int stats_read, uint32_t nd, int64_t n,
                      int64_t ch, int64_t h, int64_t w)
{
    in[0] = xpb_ct_in(c, "x", nd, n, ch, h, w);
    in[1] = xpb_ct_param(c, "gamma", 1, ch, 1, 1, 1);
    in[2] = xpb_ct_param(c, "beta", 1, ch, 1, 1, 1);
    in[3] = xpb_ct_tensor(c, "running_mean", XPB_ROLE_STATE, XPB_CT_INIT_UNIFORM, stats_read, 1, ch,
                          1, 1, 1);
    in[4] = xpb_ct_tensor(c, "running_var", XPB_ROLE_STATE, XPB_CT_INIT_POSITIVE, stats_read, 1, ch,
                          1, 1, 1);
}

/* BATCHNORM_TRAIN with outputs y, ws_mean, ws_var (XPB_NO_TENSOR: not wanted). */
static void bn_train(xpb_ct_case *c, const uint32_t in[5], uint32_t y, uint32_t wm, uint32_t wv)
{
    xpb_op *f = xpb_ct_op(c, XPB_OP_BATCHNORM_TRAIN, 5, in, 3, XPB_CT_T(y, wm, wv));
    f->attrs.eps = 1e-5f;
    f->attrs.momentum = 0.1f;
}

/* BATCHNORM_TRAIN + BATCHNORM_BWD (joined by the workspace), and BATCHNORM_INFER. */
static void add_batchnorm(xpb_ct_list *l, uint32_t nd, int64_t n, int64_t ch, int64_t h, int64_t w)
{
    xpb_ct_case *c = xpb_ct_new(l, "BATCHNORM_TRAIN+BWD", 1, "x%lldx%lld%s", (long long)n,
                                (long long)ch, nd == 4 ? "x..." : "");
    if (!c)
        return;
    if (nd == 4)
        snprintf(c->shape, sizeof c->shape, "x%lldx%lldx%lldx%lld", (long long)n, (long long)ch,
                 (long long)h, (long long)w);
    uint32_t in[5];
    bn_inputs(c, in, 1, nd, n, ch, h, w);
    uint32_t y = xpb_ct_out(c, "y", nd, n, ch, h, w);
    uint32_t wm = xpb_ct_ws(c, "ws_mean", XPB_DTYPE_F32, 1, ch, 1, 1, 1);
    uint32_t wv = xpb_ct_ws(c, "ws_var", XPB_DTYPE_F32, 1, ch, 1, 1, 1);
    bn_train(c, in, y, wm, wv);
    uint32_t dy = xpb_ct_in(c, "dy", nd, n, ch, h, w);
    uint32_t dx = xpb_ct_out(c, "dx", nd, n, ch, h, w),
             dg = xpb_ct_out(c, "dgamma", 1, ch, 1, 1, 1);
    uint32_t db = xpb_ct_out(c, "dbeta", 1, ch, 1, 1, 1);
    xpb_ct_op(c, XPB_OP_BATCHNORM_BWD, 5, XPB_CT_T(dy, in[0], in[1], wm, wv), 3,
              XPB_CT_T(dx, dg, db))
        ->attrs.eps = 1e-5f;
    xpb_ct_finish(c);

    char shape[96];
    snprintf(shape, sizeof shape, "%s", c->shape); /* ct_new may move the cases */

    /* unwanted outputs (XPB_NO_TENSOR): a forward without workspace, a backward with dx only */
    c = xpb_ct_new(l, "BATCHNORM_TRAIN (no ws)", 1, "%s", shape);
    if (!c)
        return;
    bn_inputs(c, in, 1, nd, n, ch, h, w);
    bn_train(c, in, xpb_ct_out(c, "y", nd, n, ch, h, w), XPB_NO_TENSOR, XPB_NO_TENSOR);
    xpb_ct_finish(c);
    c = xpb_ct_new(l, "BATCHNORM_TRAIN+BWD (dx only)", 1, "%s", shape);
    if (!c)
        return;
    bn_inputs(c, in, 0, nd, n, ch, h, w);
    y = xpb_ct_mid(c, "y", nd, n, ch, h, w);
    wm = xpb_ct_ws(c, "ws_mean", XPB_DTYPE_F32, 1, ch, 1, 1, 1);
    wv = xpb_ct_ws(c, "ws_var", XPB_DTYPE_F32, 1, ch, 1, 1, 1);
    bn_train(c, in, y, wm, wv);
    dy = xpb_ct_in(c, "dy", nd, n, ch, h, w);
    dx = xpb_ct_out(c, "dx", nd, n, ch, h, w);
    xpb_ct_op(c, XPB_OP_BATCHNORM_BWD, 5, XPB_CT_T(dy, in[0], in[1], wm, wv), 3,
              XPB_CT_T(dx, XPB_NO_TENSOR, XPB_NO_TENSOR))
        ->attrs.eps = 1e-5f;
    xpb_ct_finish(c);
    c = xpb_ct_new(l, "BATCHNORM_INFER", 0, "%s", shape);
    if (!c)
        return;
    bn_inputs(c, in, 0, nd, n, ch, h, w);
    xpb_ct_op(c, XPB_OP_BATCHNORM_INFER, 5, in, 1, XPB_CT_T(xpb_ct_out(c, "y", nd, n, ch, h, w)))
        ->attrs.eps = 1e-5f;
    xpb_ct_finish(c);
}

static void add_instancenorm(xpb_ct_list *l, int64_t n, int64_t ch, int64_t h, int64_t w)
{
    xpb_ct_case *c = xpb_ct_new(l, "INSTANCENORM+BWD", 1, "x%lldx%lldx%lldx%lld", (long long)n,
                                (long long)ch, (long long)h, (long long)w);
    if (!c)
        return;
    uint32_t x = xpb_ct_in(c, "x", 4, n, ch, h, w), y = xpb_ct_out(c, "y", 4, n, ch, h, w);
    uint32_t wm = xpb_ct_ws(c, "ws_mean", XPB_DTYPE_F32, 2, n, ch, 1, 1);
    uint32_t wv = xpb_ct_ws(c, "ws_var", XPB_DTYPE_F32, 2, n, ch, 1, 1);
    xpb_ct_op(c, XPB_OP_INSTANCENORM, 1, XPB_CT_T(x), 3, XPB_CT_T(y, wm, wv))->attrs.eps = 1e-5f;
    uint32_t dy = xpb_ct_in(c, "dy", 4, n, ch, h, w), dx = xpb_ct_out(c, "dx", 4, n, ch, h, w);
    xpb_ct_op(c, XPB_OP_INSTANCENORM_BWD, 4, XPB_CT_T(dy, x, wm, wv), 1, XPB_CT_T(dx))->attrs.eps =
        1e-5f;
    xpb_ct_finish(c);
    if (!(c = xpb_ct_new(l, "INSTANCENORM (no ws)", 1, "x%lldx%lldx%lldx%lld", (long long)n,
                         (long long)ch, (long long)h, (long long)w)))
        return;
    xpb_ct_op(c, XPB_OP_INSTANCENORM, 1, XPB_CT_T(xpb_ct_in(c, "x", 4, n, ch, h, w)), 3,
              XPB_CT_T(xpb_ct_out(c, "y", 4, n, ch, h, w), XPB_NO_TENSOR, XPB_NO_TENSOR))
        ->attrs.eps = 1e-5f;
    xpb_ct_finish(c);
}

static void add_eltwise(xpb_ct_list *l, int64_t n, int64_t ch, int64_t h, int64_t w)
{
    static const uint32_t kinds[] = {XPB_OP_RELU,           XPB_OP_RELU_BWD, XPB_OP_LEAKY_RELU,
                                     XPB_OP_LEAKY_RELU_BWD, XPB_OP_TANH,     XPB_OP_TANH_BWD};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        int bwd = i % 2 == 1;
        xpb_ct_case *c = xpb_ct_new(l, xpb_op_name(kinds[i]), 1, "x%lldx%lldx%lldx%lld",
                                    (long long)n, (long long)ch, (long long)h, (long long)w);
        if (!c)
            return;
        uint32_t a = xpb_ct_in(c, bwd ? "dy" : "x", 4, n, ch, h, w);
        uint32_t out = xpb_ct_out(c, bwd ? "dx" : "y", 4, n, ch, h, w);
        xpb_op *op;
        if (bwd)
            op = xpb_ct_op(c, kinds[i], 2, XPB_CT_T(a, xpb_ct_in(c, "y", 4, n, ch, h, w)), 1,
                           XPB_CT_T(out));
        else
            op = xpb_ct_op(c, kinds[i], 1, XPB_CT_T(a), 1, XPB_CT_T(out));
        op->attrs.negative_slope = 0.2f;
        xpb_ct_finish(c);
    }
}

static xpb_op_attrs pool_attrs(int64_t k, int64_t s, int64_t p, int cip)
{
    xpb_op_attrs a = {0};
    a.kernel[0] = a.kernel[1] = (int32_t)k;
    a.stride[0] = a.stride[1] = (int32_t)s;
    a.pad[0] = a.pad[1] = (int32_t)p;
    a.count_include_pad = cip;
    return a;
}

static void add_pool(xpb_ct_list *l, int64_t n, int64_t ch, int64_t h, int64_t w, int64_t k,
                     int64_t s, int64_t p)
{
    int64_t oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
    xpb_op_attrs a = pool_attrs(k, s, p, 1);
    xpb_ct_case *c = xpb_ct_new(l, "MAXPOOL+BWD", 1, "x%lldx%lldx%lldx%lld k%lld s%lld p%lld",
                                (long long)n, (long long)ch, (long long)h, (long long)w,
                                (long long)k, (long long)s, (long long)p);
    if (!c)
        return;
    uint32_t x = xpb_ct_in(c, "x", 4, n, ch, h, w), y = xpb_ct_out(c, "y", 4, n, ch, oh, ow);
    uint32_t ws = xpb_ct_ws(c, "ws_index", XPB_DTYPE_I32, 4, n, ch, oh, ow);
    xpb_ct_op(c, XPB_OP_MAXPOOL, 1, XPB_CT_T(x), 2, XPB_CT_T(y, ws))->attrs = a;
    uint32_t dy = xpb_ct_in(c, "dy", 4, n, ch, oh, ow), dx = xpb_ct_out(c, "dx", 4, n, ch, h, w);
    xpb_ct_op(c, XPB_OP_MAXPOOL_BWD, 2, XPB_CT_T(dy, ws), 1, XPB_CT_T(dx))->attrs = a;
    xpb_ct_finish(c);
    if (!(c = xpb_ct_new(l, "MAXPOOL (no ws)", 1, "x%lldx%lldx%lldx%lld k%lld s%lld p%lld",
                         (long long)n, (long long)ch, (long long)h, (long long)w, (long long)k,
                         (long long)s, (long long)p)))
        return;
    xpb_ct_op(c, XPB_OP_MAXPOOL, 1, XPB_CT_T(xpb_ct_in(c, "x", 4, n, ch, h, w)), 2,
              XPB_CT_T(xpb_ct_out(c, "y", 4, n, ch, oh, ow), XPB_NO_TENSOR))
        ->attrs = a;
    xpb_ct_finish(c);
    for (int cip = 0; cip < 2; cip++) {
        if (p == 0 && cip == 0)
            continue; /* identical without padding */
        a = pool_attrs(k, s, p, cip);
        for (int bwd = 0; bwd < 2; bwd++) {
            c = xpb_ct_new(l, bwd ? "AVGPOOL_BWD" : "AVGPOOL", 1,
                           "x%lldx%lldx%lldx%lld k%lld s%lld p%lld%s", (long long)n, (long long)ch,
                           (long long)h, (long long)w, (long long)k, (long long)s, (long long)p,
                           cip ? " incl-pad" : " excl-pad");
            if (!c)
                return;
            if (bwd)
                xpb_ct_op(c, XPB_OP_AVGPOOL_BWD, 1, XPB_CT_T(xpb_ct_in(c, "dy", 4, n, ch, oh, ow)),
                          1, XPB_CT_T(xpb_ct_out(c, "dx", 4, n, ch, h, w)))
                    ->attrs = a;
            else
                xpb_ct_op(c, XPB_OP_AVGPOOL, 1, XPB_CT_T(xpb_ct_in(c, "x", 4, n, ch, h, w)), 1,
                          XPB_CT_T(xpb_ct_out(c, "y", 4, n, ch, oh, ow)))
                    ->attrs = a;
            xpb_ct_finish(c);
        }
    }
}

static void add_global_pool(xpb_ct_list *l, int64_t n, int64_t ch, int64_t h, int64_t w)
{
    for (int bwd = 0; bwd < 2; bwd++) {
        xpb_ct_case *c =
            xpb_ct_new(l, bwd ? "GLOBAL_AVGPOOL_BWD" : "GLOBAL_AVGPOOL", 1, "x%lldx%lldx%lldx%lld",
                       (long long)n, (long long)ch, (long long)h, (long long)w);
        if (!c)
            return;
        if (bwd)
            xpb_ct_op(c, XPB_OP_GLOBAL_AVGPOOL_BWD, 1, XPB_CT_T(xpb_ct_in(c, "dy", 4, n, ch, 1, 1)),
                      1, XPB_CT_T(xpb_ct_out(c, "dx", 4, n, ch, h, w)));
        else
            xpb_ct_op(c, XPB_OP_GLOBAL_AVGPOOL, 1, XPB_CT_T(xpb_ct_in(c, "x", 4, n, ch, h, w)), 1,
                      XPB_CT_T(xpb_ct_out(c, "y", 4, n, ch, 1, 1)));
        xpb_ct_finish(c);
    }
}

static void add_pad(xpb_ct_list *l, int64_t n, int64_t ch, int64_t h, int64_t w, int64_t p)
{
    for (int bwd = 0; bwd < 2; bwd++) {
        xpb_ct_case *c = xpb_ct_new(l, bwd ? "REFLECTION_PAD_BWD" : "REFLECTION_PAD", 1,
                                    "x%lldx%lldx%lldx%lld p%lld", (long long)n, (long long)ch,
                                    (long long)h, (long long)w, (long long)p);
        if (!c)
            return;
        xpb_op *op;
        if (bwd)
            op = xpb_ct_op(c, XPB_OP_REFLECTION_PAD_BWD, 1,
                           XPB_CT_T(xpb_ct_in(c, "dy", 4, n, ch, h + 2 * p, w + 2 * p)), 1,
                           XPB_CT_T(xpb_ct_out(c, "dx", 4, n, ch, h, w)));
        else
            op = xpb_ct_op(c, XPB_OP_REFLECTION_PAD, 1, XPB_CT_T(xpb_ct_in(c, "x", 4, n, ch, h, w)),
                           1, XPB_CT_T(xpb_ct_out(c, "y", 4, n, ch, h + 2 * p, w + 2 * p)));
        op->attrs.pad[0] = op->attrs.pad[1] = (int32_t)p;
        xpb_ct_finish(c);
    }
}

static void add_losses(xpb_ct_list *l, int64_t n, int64_t k)
{
    xpb_ct_case *c =
        xpb_ct_new(l, "SOFTMAX_XENT+BWD", 1, "logits%lldx%lld", (long long)n, (long long)k);
    if (!c)
        return;
    uint32_t z = xpb_ct_in(c, "logits", 2, n, k, 1, 1);
    uint32_t lab = xpb_ct_tensor(c, "labels", XPB_ROLE_INPUT, XPB_CT_INIT_LABELS, 0, 1, n, 1, 1, 1);
    c->labels[lab] = k;
    uint32_t loss = xpb_ct_tensor(c, "loss", XPB_ROLE_LOSS, 0, 1, 1, 1, 1, 1, 1);
    uint32_t prob = xpb_ct_ws(c, "ws_prob", XPB_DTYPE_F32, 2, n, k, 1, 1);
    xpb_ct_op(c, XPB_OP_SOFTMAX_XENT, 2, XPB_CT_T(z, lab), 2, XPB_CT_T(loss, prob));
    uint32_t dz = xpb_ct_out(c, "dlogits", 2, n, k, 1, 1);
    xpb_ct_op(c, XPB_OP_SOFTMAX_XENT_BWD, 2, XPB_CT_T(prob, lab), 1, XPB_CT_T(dz))->attrs.scale =
        0.5f;
    xpb_ct_finish(c);
    static const uint32_t kinds[] = {XPB_OP_MSE_LOSS, XPB_OP_MSE_LOSS_BWD, XPB_OP_L1_LOSS,
                                     XPB_OP_L1_LOSS_BWD};
    for (size_t i = 0; i < 4; i++) {
        c = xpb_ct_new(l, xpb_op_name(kinds[i]), 1, "x%lldx1x%lldx3", (long long)n, (long long)k);
        if (!c)
            return;
        uint32_t x = xpb_ct_in(c, "x", 4, n, 1, k, 3), t = xpb_ct_in(c, "target", 4, n, 1, k, 3);
        uint32_t out = i % 2 ? xpb_ct_out(c, "dx", 4, n, 1, k, 3)
                             : xpb_ct_tensor(c, "loss", XPB_ROLE_LOSS, 0, 1, 1, 1, 1, 1, 1);
        xpb_ct_op(c, kinds[i], 2, XPB_CT_T(x, t), 1, XPB_CT_T(out))->attrs.scale = 10.0f;
        xpb_ct_finish(c);
    }
}

static void add_misc(xpb_ct_list *l, int64_t n, int64_t ch, int64_t h, int64_t w)
{
    xpb_ct_case *c = xpb_ct_new(l, "ADD", 1, "x%lldx%lldx%lldx%lld", (long long)n, (long long)ch,
                                (long long)h, (long long)w);
    if (!c)
        return;
    xpb_ct_op(c, XPB_OP_ADD, 2,
              XPB_CT_T(xpb_ct_in(c, "a", 4, n, ch, h, w), xpb_ct_in(c, "b", 4, n, ch, h, w)), 1,
              XPB_CT_T(xpb_ct_out(c, "y", 4, n, ch, h, w)));
    xpb_ct_finish(c);
    if (!(c = xpb_ct_new(l, "RESHAPE", 1, "x%lldx%lldx%lldx%lld -> %lldx%lld", (long long)n,
                         (long long)ch, (long long)h, (long long)w, (long long)n,
                         (long long)(ch * h * w))))
        return;
    xpb_ct_op(c, XPB_OP_RESHAPE, 1, XPB_CT_T(xpb_ct_in(c, "x", 4, n, ch, h, w)), 1,
              XPB_CT_T(xpb_ct_out(c, "y", 2, n, ch * h * w, 1, 1)));
    xpb_ct_finish(c);
    if (!(c = xpb_ct_new(l, "COPY", 1, "x%lldx%lldx%lldx%lld", (long long)n, (long long)ch,
                         (long long)h, (long long)w)))
        return;
    xpb_ct_op(c, XPB_OP_COPY, 1, XPB_CT_T(xpb_ct_in(c, "x", 4, n, ch, h, w)), 1,
              XPB_CT_T(xpb_ct_out(c, "y", 4, n, ch, h, w)));
    xpb_ct_finish(c);
    if (!(c = xpb_ct_new(l, "FILL", 1, "y%lldx%lldx%lldx%lld", (long long)n, (long long)ch,
                         (long long)h, (long long)w)))
        return;
    xpb_ct_op(c, XPB_OP_FILL, 0, NULL, 1, XPB_CT_T(xpb_ct_out(c, "y", 4, n, ch, h, w)))
        ->attrs.value = 0.75f;
    xpb_ct_finish(c);

    if (!(c = xpb_ct_new(l, "DROPOUT+BWD", 1, "x%lldx%lldx%lldx%lld p0.3 (2nd call)", (long long)n,
                         (long long)ch, (long long)h, (long long)w)))
        return;
    uint32_t x = xpb_ct_in(c, "x", 4, n, ch, h, w), y = xpb_ct_out(c, "y", 4, n, ch, h, w);
    uint32_t mask = xpb_ct_ws(c, "ws_mask", XPB_DTYPE_F32, 4, n, ch, h, w);
    xpb_op *op = xpb_ct_op(c, XPB_OP_DROPOUT, 1, XPB_CT_T(x), 2, XPB_CT_T(y, mask));
    op->attrs.dropout_p = 0.3f;
    op->attrs.seed = 12345;
    uint32_t dy = xpb_ct_in(c, "dy", 4, n, ch, h, w), dx = xpb_ct_out(c, "dx", 4, n, ch, h, w);
    xpb_ct_op(c, XPB_OP_DROPOUT_BWD, 2, XPB_CT_T(dy, mask), 1, XPB_CT_T(dx))->attrs.dropout_p =
        0.3f;
    c->runs = 2;
    xpb_ct_finish(c);
}

static void add_optim(xpb_ct_list *l, int64_t k, int64_t ch, int64_t kh)
{
    xpb_ct_case *c = xpb_ct_new(l, "SGD_UPDATE", 1, "w%lldx%lldx%lldx%lld (2 steps)", (long long)k,
                                (long long)ch, (long long)kh, (long long)kh);
    if (!c)
        return;
    uint32_t p =
        xpb_ct_tensor(c, "param", XPB_ROLE_PARAM, XPB_CT_INIT_UNIFORM, 1, 4, k, ch, kh, kh);
    uint32_t g = xpb_ct_in(c, "grad", 4, k, ch, kh, kh);
    uint32_t b =
        xpb_ct_tensor(c, "momentum_buf", XPB_ROLE_STATE, XPB_CT_INIT_UNIFORM, 1, 4, k, ch, kh, kh);
    xpb_op *op = xpb_ct_op(c, XPB_OP_SGD_UPDATE, 3, XPB_CT_T(p, g, b), 0, NULL);
    op->attrs.lr = 0.1f;
    op->attrs.momentum = 0.9f;
    op->attrs.weight_decay = 1e-2f;
    c->runs = 2;
    xpb_ct_finish(c);
    if (!(c = xpb_ct_new(l, "ADAM_UPDATE", 1, "w%lldx%lldx%lldx%lld (2 steps)", (long long)k,
                         (long long)ch, (long long)kh, (long long)kh)))
        return;
    p = xpb_ct_tensor(c, "param", XPB_ROLE_PARAM, XPB_CT_INIT_UNIFORM, 1, 4, k, ch, kh, kh);
    g = xpb_ct_in(c, "grad", 4, k, ch, kh, kh);
    uint32_t m = xpb_ct_tensor(c, "m", XPB_ROLE_STATE, XPB_CT_INIT_UNIFORM, 1, 4, k, ch, kh, kh);
    uint32_t v = xpb_ct_tensor(c, "v", XPB_ROLE_STATE, XPB_CT_INIT_POSITIVE, 1, 4, k, ch, kh, kh);
    uint32_t st = xpb_ct_tensor(c, "step", XPB_ROLE_STATE, XPB_CT_INIT_STEP, 1, 1, 1, 1, 1, 1);
    op = xpb_ct_op(c, XPB_OP_ADAM_UPDATE, 5, XPB_CT_T(p, g, m, v, st), 0, NULL);
    op->attrs.lr = 2e-3f;
    op->attrs.beta1 = 0.5f;
    op->attrs.beta2 = 0.999f;
    op->attrs.eps = 1e-8f;
    op->attrs.weight_decay = 1e-2f;
    c->runs = 2;
    xpb_ct_finish(c);
}

/* ---- chains: layouts kept between ops, and fusion ---- */

/* conv -> relu -> maxpool -> conv -> tanh (inference) */
static void add_chain_conv_pool(xpb_ct_list *l, int64_t n, int64_t ch, int64_t hw)
{
    xpb_op_attrs c3 = conv_attrs(1, 1, 1, 0), mp = pool_attrs(2, 2, 0, 1);
    int64_t h2 = hw / 2;
    xpb_ct_case *c = xpb_ct_new(l, "chain conv-relu-pool-conv-tanh", 0, "x%lldx3x%lldx%lld c%lld",
                                (long long)n, (long long)hw, (long long)hw, (long long)ch);
    if (!c)
        return;
    uint32_t x = xpb_ct_in(c, "x", 4, n, 3, hw, hw);
    uint32_t w1 = xpb_ct_param(c, "w1", 4, ch, 3, 3, 3), b1 = xpb_ct_param(c, "b1", 1, ch, 1, 1, 1);
    uint32_t a1 = xpb_ct_mid(c, "a1", 4, n, ch, hw, hw), r1 = xpb_ct_mid(c, "r1", 4, n, ch, hw, hw);
    uint32_t p1 = xpb_ct_mid(c, "p1", 4, n, ch, h2, h2);
    uint32_t ws = xpb_ct_ws(c, "ws", XPB_DTYPE_I32, 4, n, ch, h2, h2);
    uint32_t w2 = xpb_ct_param(c, "w2", 4, ch, ch, 3, 3),
             b2 = xpb_ct_param(c, "b2", 1, ch, 1, 1, 1);
    uint32_t a2 = xpb_ct_mid(c, "a2", 4, n, ch, h2, h2), y = xpb_ct_out(c, "y", 4, n, ch, h2, h2);
    xpb_ct_op(c, XPB_OP_CONV2D, 3, XPB_CT_T(x, w1, b1), 1, XPB_CT_T(a1))->attrs = c3;
    xpb_ct_op(c, XPB_OP_RELU, 1, XPB_CT_T(a1), 1, XPB_CT_T(r1));
    xpb_ct_op(c, XPB_OP_MAXPOOL, 1, XPB_CT_T(r1), 2, XPB_CT_T(p1, ws))->attrs = mp;
    xpb_ct_op(c, XPB_OP_CONV2D, 3, XPB_CT_T(p1, w2, b2), 1, XPB_CT_T(a2))->attrs = c3;
    xpb_ct_op(c, XPB_OP_TANH, 1, XPB_CT_T(a2), 1, XPB_CT_T(y));
    xpb_ct_finish(c);
}

/* residual block, inference: conv-bn-relu-conv-bn-add-relu (folding, sum, relu) */
static void add_chain_resblock(xpb_ct_list *l, int64_t n, int64_t ch, int64_t hw)
{
    xpb_op_attrs c3 = conv_attrs(1, 1, 1, 0);
    xpb_ct_case *c;
    if (!(c = xpb_ct_new(l, "chain resblock (inference)", 0, "x%lldx%lldx%lldx%lld", (long long)n,
                         (long long)ch, (long long)hw, (long long)hw)))
        return;
    uint32_t x0 = xpb_ct_in(c, "x0", 4, n, ch, hw, hw), xr = xpb_ct_mid(c, "x", 4, n, ch, hw, hw);
    xpb_ct_op(c, XPB_OP_RELU, 1, XPB_CT_T(x0), 1, XPB_CT_T(xr));
    uint32_t cur = xr;
    for (int i = 0; i < 2; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "w%d", i);
        uint32_t w = xpb_ct_param(c, nm, 4, ch, ch, 3, 3);
        uint32_t g = xpb_ct_param(c, "gamma", 1, ch, 1, 1, 1),
                 bt = xpb_ct_param(c, "beta", 1, ch, 1, 1, 1);
        uint32_t rm =
            xpb_ct_tensor(c, "rm", XPB_ROLE_STATE, XPB_CT_INIT_UNIFORM, 0, 1, ch, 1, 1, 1);
        uint32_t rv =
            xpb_ct_tensor(c, "rv", XPB_ROLE_STATE, XPB_CT_INIT_POSITIVE, 0, 1, ch, 1, 1, 1);
        uint32_t cv = xpb_ct_mid(c, "conv", 4, n, ch, hw, hw),
                 bn = xpb_ct_mid(c, "bn", 4, n, ch, hw, hw);
        xpb_ct_op(c, XPB_OP_CONV2D, 2, XPB_CT_T(cur, w), 1, XPB_CT_T(cv))->attrs = c3;
        xpb_ct_op(c, XPB_OP_BATCHNORM_INFER, 5, XPB_CT_T(cv, g, bt, rm, rv), 1, XPB_CT_T(bn))
            ->attrs.eps = 1e-5f;
        if (i == 0) {
            uint32_t r = xpb_ct_mid(c, "relu", 4, n, ch, hw, hw);
            xpb_ct_op(c, XPB_OP_RELU, 1, XPB_CT_T(bn), 1, XPB_CT_T(r));
            cur = r;
        } else {
            uint32_t s = xpb_ct_mid(c, "sum", 4, n, ch, hw, hw);
            xpb_ct_op(c, XPB_OP_ADD, 2, XPB_CT_T(bn, xr), 1, XPB_CT_T(s));
            xpb_ct_op(c, XPB_OP_RELU, 1, XPB_CT_T(s), 1,
                      XPB_CT_T(xpb_ct_out(c, "y", 4, n, ch, hw, hw)));
        }
    }
    xpb_ct_finish(c);
}

/* CycleGAN-like training slice: pad -> conv -> instance norm -> relu, and its backward.
 * Instance-norm backward amplifies rounding: an fp32 emulation of bf16-mixed's roundings
 * alone misses dw by 7% here, so reduced precision gets twice its tolerance. */
static void add_chain_cyclegan_slice(xpb_ct_list *l, int64_t n, int64_t ch, int64_t hw)
{
    xpb_ct_case *c;
    if (!(c = xpb_ct_new(l, "chain pad-conv-in-relu (train)", 1, "x%lldx%lldx%lldx%lld",
                         (long long)n, (long long)ch, (long long)hw, (long long)hw)))
        return;
    c->bf16_tol_scale = 2.0;
    xpb_op_attrs c3p = conv_attrs(1, 0, 1, 0);
    uint32_t xi = xpb_ct_in(c, "x", 4, n, ch, hw, hw),
             xp = xpb_ct_mid(c, "pad", 4, n, ch, hw + 2, hw + 2);
    uint32_t w = xpb_ct_param(c, "w", 4, ch, ch, 3, 3), b = xpb_ct_param(c, "b", 1, ch, 1, 1, 1);
    uint32_t cv = xpb_ct_mid(c, "conv", 4, n, ch, hw, hw),
             in = xpb_ct_mid(c, "in", 4, n, ch, hw, hw);
    uint32_t wm = xpb_ct_ws(c, "ws_mean", XPB_DTYPE_F32, 2, n, ch, 1, 1);
    uint32_t wv = xpb_ct_ws(c, "ws_var", XPB_DTYPE_F32, 2, n, ch, 1, 1);
    uint32_t y = xpb_ct_out(c, "y", 4, n, ch, hw, hw);
    xpb_ct_op(c, XPB_OP_REFLECTION_PAD, 1, XPB_CT_T(xi), 1, XPB_CT_T(xp))->attrs.pad[0] = 1;
    c->ops[c->n_ops - 1].attrs.pad[1] = 1;
    xpb_ct_op(c, XPB_OP_CONV2D, 3, XPB_CT_T(xp, w, b), 1, XPB_CT_T(cv))->attrs = c3p;
    xpb_ct_op(c, XPB_OP_INSTANCENORM, 1, XPB_CT_T(cv), 3, XPB_CT_T(in, wm, wv))->attrs.eps = 1e-5f;
    xpb_ct_op(c, XPB_OP_RELU, 1, XPB_CT_T(in), 1, XPB_CT_T(y));
    uint32_t dy = xpb_ct_in(c, "dy", 4, n, ch, hw, hw),
             d1 = xpb_ct_mid(c, "d_in", 4, n, ch, hw, hw);
    uint32_t d2 = xpb_ct_mid(c, "d_conv", 4, n, ch, hw, hw);
    uint32_t d3 = xpb_ct_mid(c, "d_pad", 4, n, ch, hw + 2, hw + 2);
    uint32_t dw = xpb_ct_out(c, "dw", 4, ch, ch, 3, 3), db = xpb_ct_out(c, "db", 1, ch, 1, 1, 1);
    uint32_t dx = xpb_ct_out(c, "dx", 4, n, ch, hw, hw);
    xpb_ct_op(c, XPB_OP_RELU_BWD, 2, XPB_CT_T(dy, y), 1, XPB_CT_T(d1));
    xpb_ct_op(c, XPB_OP_INSTANCENORM_BWD, 4, XPB_CT_T(d1, cv, wm, wv), 1, XPB_CT_T(d2))->attrs.eps =
        1e-5f;
    xpb_ct_op(c, XPB_OP_CONV2D_BWD_WEIGHTS, 2, XPB_CT_T(d2, xp), 2, XPB_CT_T(dw, db))->attrs = c3p;
    xpb_ct_op(c, XPB_OP_CONV2D_BWD_DATA, 2, XPB_CT_T(d2, w), 1, XPB_CT_T(d3))->attrs = c3p;
    xpb_ct_op(c, XPB_OP_REFLECTION_PAD_BWD, 1, XPB_CT_T(d3), 1, XPB_CT_T(dx))->attrs.pad[0] = 1;
    c->ops[c->n_ops - 1].attrs.pad[1] = 1;
    xpb_ct_finish(c);
}

/* classifier head, training: linear-relu-linear-xent and backward, SGD on both layers */
static void add_chain_classifier(xpb_ct_list *l, int64_t n, int64_t ch)
{
    int64_t f = ch * 3, k = 10;
    xpb_ct_case *c;
    if (!(c = xpb_ct_new(l, "chain mlp-xent-sgd (train)", 1, "x%lldx%lld h%lld k%lld", (long long)n,
                         (long long)f, (long long)ch, (long long)k)))
        return;
    uint32_t x = xpb_ct_in(c, "x", 2, n, f, 1, 1);
    uint32_t l1w = xpb_ct_tensor(c, "l1.w", XPB_ROLE_PARAM, XPB_CT_INIT_UNIFORM, 1, 2, ch, f, 1, 1);
    uint32_t l1b = xpb_ct_tensor(c, "l1.b", XPB_ROLE_PARAM, XPB_CT_INIT_UNIFORM, 1, 1, ch, 1, 1, 1);
    uint32_t l2w = xpb_ct_tensor(c, "l2.w", XPB_ROLE_PARAM, XPB_CT_INIT_UNIFORM, 1, 2, k, ch, 1, 1);
    uint32_t h = xpb_ct_mid(c, "h", 2, n, ch, 1, 1), hr = xpb_ct_mid(c, "hr", 2, n, ch, 1, 1);
    uint32_t z = xpb_ct_mid(c, "z", 2, n, k, 1, 1);
    uint32_t lab = xpb_ct_tensor(c, "labels", XPB_ROLE_INPUT, XPB_CT_INIT_LABELS, 0, 1, n, 1, 1, 1);
    c->labels[lab] = k;
    uint32_t loss = xpb_ct_tensor(c, "loss", XPB_ROLE_LOSS, 0, 1, 1, 1, 1, 1, 1);
    uint32_t prob = xpb_ct_ws(c, "prob", XPB_DTYPE_F32, 2, n, k, 1, 1);
    xpb_ct_op(c, XPB_OP_LINEAR, 3, XPB_CT_T(x, l1w, l1b), 1, XPB_CT_T(h));
    xpb_ct_op(c, XPB_OP_RELU, 1, XPB_CT_T(h), 1, XPB_CT_T(hr));
    xpb_ct_op(c, XPB_OP_LINEAR, 2, XPB_CT_T(hr, l2w), 1, XPB_CT_T(z));
    xpb_ct_op(c, XPB_OP_SOFTMAX_XENT, 2, XPB_CT_T(z, lab), 2, XPB_CT_T(loss, prob));
    uint32_t dz = xpb_ct_mid(c, "dz", 2, n, k, 1, 1), dhr = xpb_ct_mid(c, "dhr", 2, n, ch, 1, 1);
    uint32_t dh = xpb_ct_mid(c, "dh", 2, n, ch, 1, 1);
    uint32_t g2 = xpb_ct_tensor(c, "l2.w.grad", XPB_ROLE_GRAD, 0, 0, 2, k, ch, 1, 1);
    uint32_t g1 = xpb_ct_tensor(c, "l1.w.grad", XPB_ROLE_GRAD, 0, 0, 2, ch, f, 1, 1);
    uint32_t g1b = xpb_ct_tensor(c, "l1.b.grad", XPB_ROLE_GRAD, 0, 0, 1, ch, 1, 1, 1);
    c->t[g2].grad_of = l2w;
    c->t[g1].grad_of = l1w;
    c->t[g1b].grad_of = l1b;
    xpb_ct_op(c, XPB_OP_SOFTMAX_XENT_BWD, 2, XPB_CT_T(prob, lab), 1, XPB_CT_T(dz))->attrs.scale =
        1.0f;
    xpb_ct_op(c, XPB_OP_LINEAR_BWD_WEIGHTS, 2, XPB_CT_T(dz, hr), 1, XPB_CT_T(g2));
    xpb_ct_op(c, XPB_OP_LINEAR_BWD_DATA, 2, XPB_CT_T(dz, l2w), 1, XPB_CT_T(dhr));
    xpb_ct_op(c, XPB_OP_RELU_BWD, 2, XPB_CT_T(dhr, hr), 1, XPB_CT_T(dh));
    xpb_ct_op(c, XPB_OP_LINEAR_BWD_WEIGHTS, 2, XPB_CT_T(dh, x), 2, XPB_CT_T(g1, g1b));
    uint32_t params[3] = {l1w, l1b, l2w}, grads[3] = {g1, g1b, g2};
    for (int i = 0; i < 3; i++) {
        xpb_op *op = xpb_ct_op(c, XPB_OP_SGD_UPDATE, 2, XPB_CT_T(params[i], grads[i]), 0, NULL);
        op->attrs.lr = 0.5f;
    }
    xpb_ct_finish(c);
}

static void add_chains(xpb_ct_list *l, int64_t n, int64_t ch, int64_t hw)
{
    add_chain_conv_pool(l, n, ch, hw);
    add_chain_resblock(l, n, ch, hw);
    add_chain_cyclegan_slice(l, n, ch, hw);
    add_chain_classifier(l, n, ch);
}

void xpb_ct_catalogue(xpb_ct_list *l, int quick)
{
    /* convolutions: odd sizes, strides, padding, dilation, 1x1, 7x7 stems, PatchGAN 4x4 */
    add_conv(l, 0, 2, 3, 7, 9, 5, 3, 1, 1, 1, 0, 1);
    add_conv(l, 0, 2, 16, 8, 8, 32, 3, 2, 1, 1, 0, 0);
    add_conv(l, 0, 1, 8, 9, 9, 16, 4, 2, 1, 1, 0, 1);
    if (!quick) {
        add_conv(l, 0, 2, 5, 11, 10, 7, 3, 1, 2, 2, 0, 1);
        add_conv(l, 0, 2, 32, 8, 8, 16, 1, 2, 0, 1, 0, 0);
        add_conv(l, 0, 1, 3, 23, 23, 16, 7, 2, 3, 1, 0, 1);
        add_conv(l, 0, 2, 64, 6, 6, 64, 3, 1, 1, 1, 0, 1);
    }
    /* transposed convolutions: CycleGAN's k3 s2 p1 output_padding 1, and others */
    add_conv(l, 1, 1, 16, 5, 5, 8, 3, 2, 1, 1, 1, 1);
    add_conv(l, 1, 2, 3, 4, 6, 5, 3, 1, 1, 1, 0, 0);
    if (!quick)
        add_conv(l, 1, 1, 32, 7, 7, 16, 4, 2, 1, 1, 0, 1);
    add_linear(l, 3, 17, 5, 1);
    add_linear(l, 8, 64, 10, 0);
    if (!quick)
        add_linear(l, 16, 512, 100, 1);
    add_batchnorm(l, 4, 2, 16, 5, 5);
    add_batchnorm(l, 2, 8, 7, 1, 1);
    if (!quick)
        add_batchnorm(l, 4, 3, 5, 7, 3);
    add_instancenorm(l, 2, 16, 6, 6);
    add_instancenorm(l, 1, 3, 5, 7);
    if (!quick)
        add_instancenorm(l, 2, 5, 9, 4);
    add_eltwise(l, 2, 5, 7, 3);
    add_pool(l, 2, 16, 8, 8, 2, 2, 0);
    add_pool(l, 2, 3, 7, 9, 3, 2, 1);
    if (!quick)
        add_pool(l, 1, 5, 9, 9, 3, 1, 1);
    add_global_pool(l, 2, 16, 4, 4);
    add_global_pool(l, 2, 5, 7, 3);
    add_pad(l, 2, 16, 6, 6, 1);
    add_pad(l, 1, 3, 7, 8, 3);
    add_losses(l, 6, 10);
    add_misc(l, 2, 16, 5, 5);
    if (!quick)
        add_misc(l, 3, 5, 7, 3);
    add_optim(l, 16, 8, 3);
    if (!quick)
        add_optim(l, 5, 3, 7);
    add_chains(l, 2, 16, 8);
    if (!quick)
        add_chains(l, 3, 32, 12);
    /* long sums of mixed-magnitude terms (conformance_inputs.c), where accumulation order and
     * precision show: a convolution's weight gradient over 2304 terms, a linear layer's over
     * 256, batch- and instance-norm statistics over 2048 and 1024 */
    add_conv(l, 0, 4, 8, 24, 24, 16, 3, 1, 1, 1, 0, 1);
    add_linear(l, 256, 64, 128, 1);
    add_batchnorm(l, 4, 8, 8, 16, 16);
    add_instancenorm(l, 2, 4, 32, 32);
    xpb_ct_catalogue3(l, quick);
}
