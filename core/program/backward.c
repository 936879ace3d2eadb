/* Graph-level automatic differentiation (see lowering.h): the backward ops of each forward
 * node, and the sum of a value's gradient contributions when it has several consumers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/lowering.h"

static xpb_status add_contrib(lowering *L, uint32_t value, uint32_t tensor, int alias)
{
    contrib *c = &L->grads[value];
    uint32_t *t = realloc(c->tensors, (c->n + 1) * sizeof *t);
    if (!t)
        return xpb_lower_oom(L);
    c->tensors = t;
    uint8_t *a = realloc(c->alias, c->n + 1);
    if (!a)
        return xpb_lower_oom(L);
    c->alias = a;
    c->tensors[c->n] = tensor;
    c->alias[c->n] = (uint8_t)alias;
    c->n++;
    return XPB_OK;
}

static void rename_tensor(lowering *L, uint32_t t, const char *name)
{
    char *fresh = xpb_lower_unique_name(L->mp, name);
    if (fresh) {
        free((char *)L->mp->tensors[t].name);
        L->mp->tensors[t].name = fresh;
    }
}

/* Sums the contributions of `value` into one gradient tensor (*out; XPB_NO_TENSOR when none).
 * A parameter's gradient becomes a GRAD tensor named "<param>.grad" of its own. */
xpb_status xpb_lower_finalize_grad(uint32_t *out, lowering *L, uint32_t value)
{
    contrib *c = &L->grads[value];
    xpb_status st;
    const xpb_gvalue *v = &L->g->values[value];
    int is_param = v->kind == XPB_VALUE_PARAM;
    uint32_t fwd = L->tensor_of[value];
    *out = XPB_NO_TENSOR;
    if (c->n == 0)
        return XPB_OK;
    char base[512];
    snprintf(base, sizeof base, "%s.grad", L->mp->tensors[fwd].name);
    uint32_t acc = c->tensors[0];
    int acc_alias = c->alias[0];
    if (c->n > 1) {
        for (size_t i = 0; i < c->n; i++) {
            if (c->alias[i])
                continue;
            char part[600];
            snprintf(part, sizeof part, "%s.part%zu", base, i + 1);
            rename_tensor(L, c->tensors[i], part);
        }
        for (size_t i = 1; i < c->n; i++) {
            uint32_t sum, pair[2] = {acc, c->tensors[i]};
            if ((st = xpb_lower_tensor_like(&sum, L, fwd, i + 1 == c->n ? ".grad" : ".grad.acc",
                                            XPB_ROLE_ACTIVATION_GRAD)))
                return st;
            if ((st = xpb_lower_emit(L, XPB_OP_ADD, L->mp->tensors[fwd].layer, pair, 2, &sum, 1,
                                     NULL)))
                return st;
            acc = sum;
        }
        acc_alias = 0;
    }
    if (is_param) {
        if (acc_alias) { /* shared with another value: give the parameter its own copy */
            uint32_t copy;
            if ((st = xpb_lower_tensor_like(&copy, L, fwd, ".grad", XPB_ROLE_GRAD)))
                return st;
            if ((st = xpb_lower_emit(L, XPB_OP_COPY, L->mp->tensors[fwd].layer, &acc, 1, &copy, 1,
                                     NULL)))
                return st;
            acc = copy;
        } else if (strcmp(L->mp->tensors[acc].name, base) != 0) {
            rename_tensor(L, acc, base);
        }
        L->mp->tensors[acc].role = XPB_ROLE_GRAD;
        L->mp->tensors[acc].grad_of = fwd;
    }
    *out = acc;
    return XPB_OK;
}

/* A fresh gradient tensor for graph value `value` (shaped like its forward tensor). */
static xpb_status grad_tensor(uint32_t *out, lowering *L, uint32_t value)
{
    return xpb_lower_tensor_like(out, L, L->tensor_of[value], ".grad", XPB_ROLE_ACTIVATION_GRAD);
}

/* Convolution, transposed convolution, linear: the data gradient and the weight (and bias)
 * gradients, each only when something needs it. */
static xpb_status bwd_weighted(lowering *L, const xpb_gnode *n, uint32_t dy, const uint8_t *rg)
{
    static const uint32_t bwd[][2] = {[0] = {XPB_OP_CONV2D_BWD_DATA, XPB_OP_CONV2D_BWD_WEIGHTS},
                                      [1] = {XPB_OP_CONV_T2D_BWD_DATA, XPB_OP_CONV_T2D_BWD_WEIGHTS},
                                      [2] = {XPB_OP_LINEAR_BWD_DATA, XPB_OP_LINEAR_BWD_WEIGHTS}};
    int fam = n->kind == XPB_OP_CONV2D ? 0 : n->kind == XPB_OP_CONV_T2D ? 1 : 2;
    uint32_t x = n->inputs[0], w = n->inputs[1], b = n->n_inputs == 3 ? n->inputs[2] : 0;
    uint32_t dx, in[2], out[2];
    xpb_status st;
    if (rg[x]) {
        in[0] = dy;
        in[1] = L->tensor_of[w];
        if ((st = grad_tensor(&dx, L, x)) ||
            (st = xpb_lower_emit(L, bwd[fam][0], n->layer, in, 2, &dx, 1, &n->attrs)) ||
            (st = add_contrib(L, x, dx, 0)))
            return st;
    }
    if (!rg[w] && !(b && rg[b]))
        return XPB_OK;
    uint32_t n_out = 1;
    if ((st = grad_tensor(&out[0], L, w)))
        return st;
    if (b) {
        if ((st = grad_tensor(&out[1], L, b)))
            return st;
        n_out = 2;
    }
    in[0] = dy;
    in[1] = L->tensor_of[x];
    if ((st = xpb_lower_emit(L, bwd[fam][1], n->layer, in, 2, out, n_out, &n->attrs)))
        return st;
    if (rg[w] && (st = add_contrib(L, w, out[0], 0)))
        return st;
    if (b && rg[b] && (st = add_contrib(L, b, out[1], 0)))
        return st;
    return XPB_OK;
}

/* ---- op set 3 ---- */

/* A gradient tensor for `value` shaped like tensor `like` (the op's output), for a product
 * that SUM_TO then reduces to the value's own shape. */
static xpb_status grad_like(uint32_t *out, lowering *L, uint32_t value, uint32_t like)
{
    char name[512];
    const xpb_tensor_desc *t = &L->mp->tensors[like];
    snprintf(name, sizeof name, "%s.grad.full", L->mp->tensors[L->tensor_of[value]].name);
    xpb_status st = xpb_lower_new_tensor(out, L, name, t->layer, t->dtype, XPB_ROLE_ACTIVATION_GRAD,
                                         t->ndim, t->dims, 0);
    if (st == XPB_OK)
        L->mp->tensors[*out].grad_of = L->tensor_of[value];
    return st;
}

static int same_shape(const xpb_tensor_desc *a, const xpb_tensor_desc *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (uint32_t d = 0; d < a->ndim; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    return 1;
}

/* Contributes `full` (shaped like the op's output) to `value`'s gradient, summed down to the
 * value's shape when broadcasting widened it. `alias`: full is shared with another value. */
static xpb_status contribute_summed(lowering *L, const xpb_gnode *n, uint32_t value, uint32_t full,
                                    int alias)
{
    uint32_t fwd = L->tensor_of[value], dv;
    if (same_shape(&L->mp->tensors[fwd], &L->mp->tensors[full]))
        return add_contrib(L, value, full, alias);
    xpb_status st;
    if ((st = grad_tensor(&dv, L, value)) ||
        (st = xpb_lower_emit(L, XPB_OP_SUM_TO, n->layer, &full, 1, &dv, 1, NULL)))
        return st;
    return add_contrib(L, value, dv, 0);
}

/* MATMUL (bias optional) and BATCHED_MATMUL: one backward op for every gradient needed, the
 * unneeded ones "not wanted". */
static xpb_status bwd_matmul(lowering *L, const xpb_gnode *n, uint32_t dy, const uint8_t *rg)
{
    int batched = n->kind == XPB_OP_BATCHED_MATMUL;
    uint32_t a = n->inputs[0], b = n->inputs[1],
             bias = !batched && n->n_inputs == 3 ? n->inputs[2] : 0;
    uint32_t out[3] = {XPB_NO_TENSOR, XPB_NO_TENSOR, XPB_NO_TENSOR}, n_out = bias ? 3 : 2;
    xpb_status st;
    if (!rg[a] && !rg[b] && !(bias && rg[bias]))
        return XPB_OK;
    if ((rg[a] && (st = grad_tensor(&out[0], L, a))) ||
        (rg[b] && (st = grad_tensor(&out[1], L, b))) ||
        (bias && rg[bias] && (st = grad_tensor(&out[2], L, bias))))
        return st;
    uint32_t in[3] = {dy, L->tensor_of[a], L->tensor_of[b]};
    uint32_t kind = batched ? XPB_OP_BATCHED_MATMUL_BWD : XPB_OP_MATMUL_BWD;
    if ((st = xpb_lower_emit3(L, kind, n->layer, in, 3, out, n_out, &n->attrs, &n->attrs3)))
        return st;
    if (rg[a] && (st = add_contrib(L, a, out[0], 0)))
        return st;
    if (rg[b] && (st = add_contrib(L, b, out[1], 0)))
        return st;
    return bias && rg[bias] ? add_contrib(L, bias, out[2], 0) : XPB_OK;
}

/* PERMUTE: the gradient goes back through the inverse permutation. */
static xpb_status bwd_permute(lowering *L, const xpb_gnode *n, uint32_t dy, const uint8_t *rg)
{
    uint32_t x = n->inputs[0], dx;
    if (!rg[x])
        return XPB_OK;
    xpb_op_attrs3 inv = n->attrs3;
    uint32_t nd = L->mp->tensors[L->tensor_of[x]].ndim;
    for (uint32_t d = 0; d < nd && d < 4; d++)
        inv.perm[n->attrs3.perm[d] < 4 ? n->attrs3.perm[d] : 0] = (uint8_t)d;
    xpb_status st;
    if ((st = grad_tensor(&dx, L, x)) ||
        (st = xpb_lower_emit3(L, XPB_OP_PERMUTE, n->layer, &dy, 1, &dx, 1, NULL, &inv)))
        return st;
    return add_contrib(L, x, dx, 0);
}

/* ADD_BROADCAST: dy itself for an operand of y's shape (shared, as ADD's), else summed down;
 * MUL: dy times the other operand, summed down to each operand's shape. */
static xpb_status bwd_broadcast(lowering *L, const xpb_gnode *n, uint32_t dy, const uint8_t *rg)
{
    xpb_status st;
    for (uint32_t i = 0; i < 2; i++) {
        uint32_t v = n->inputs[i];
        if (!rg[v])
            continue;
        if (n->kind == XPB_OP_ADD_BROADCAST) {
            if ((st = contribute_summed(L, n, v, dy, 1)))
                return st;
            continue;
        }
        uint32_t full, pair[2] = {dy, L->tensor_of[n->inputs[1 - i]]};
        if ((st = grad_like(&full, L, v, dy)) ||
            (st = xpb_lower_emit(L, XPB_OP_MUL, n->layer, pair, 2, &full, 1, NULL)) ||
            (st = contribute_summed(L, n, v, full, 0)))
            return st;
    }
    return XPB_OK;
}

/* LAYER_NORM: one op for the gradients of x, gamma and beta (the unneeded ones not wanted). */
static xpb_status bwd_layer_norm(lowering *L, uint32_t nid, uint32_t dy, const uint8_t *rg)
{
    const xpb_gnode *n = &L->g->nodes[nid];
    uint32_t x = n->inputs[0], gamma = n->inputs[1], beta = n->inputs[2], ws = L->ws_of[nid];
    uint32_t out[3] = {XPB_NO_TENSOR, XPB_NO_TENSOR, XPB_NO_TENSOR};
    const uint32_t v[3] = {x, gamma, beta};
    xpb_status st;
    for (int k = 0; k < 3; k++)
        if (rg[v[k]] && (st = grad_tensor(&out[k], L, v[k])))
            return st;
    uint32_t in[5] = {dy, L->tensor_of[x], L->tensor_of[gamma], ws, ws + 1};
    if ((st = xpb_lower_emit(L, XPB_OP_LAYER_NORM_BWD, n->layer, in, 5, out, 3, &n->attrs)))
        return st;
    for (int k = 0; k < 3; k++)
        if (rg[v[k]] && (st = add_contrib(L, v[k], out[k], 0)))
            return st;
    return XPB_OK;
}

/* EMBEDDING: the scatter-add into the table's gradient (indices get none). */
static xpb_status bwd_embedding(lowering *L, const xpb_gnode *n, uint32_t dy, const uint8_t *rg)
{
    uint32_t idx = n->inputs[0], w = n->inputs[1], dw;
    if (!rg[w])
        return XPB_OK;
    uint32_t in[2] = {dy, L->tensor_of[idx]};
    xpb_status st;
    if ((st = grad_tensor(&dw, L, w)) ||
        (st = xpb_lower_emit3(L, XPB_OP_EMBEDDING_BWD, n->layer, in, 2, &dw, 1, NULL, &n->attrs3)))
        return st;
    return add_contrib(L, w, dw, 0);
}

/* LSTM: backpropagation through time in one op; the weights' and biases' gradients are
 * always produced, x's and the initial states' when needed. */
static xpb_status bwd_lstm(lowering *L, uint32_t nid, uint32_t dy, const uint8_t *rg)
{
    const xpb_gnode *n = &L->g->nodes[nid];
    int states = n->n_inputs == 7;
    uint32_t in[10] = {dy,
                       XPB_NO_TENSOR,
                       XPB_NO_TENSOR,
                       L->tensor_of[n->inputs[0]],
                       L->tensor_of[n->inputs[1]],
                       L->tensor_of[n->inputs[2]],
                       L->tensor_of[n->output],
                       L->ws_of[nid],
                       states ? L->tensor_of[n->inputs[5]] : XPB_NO_TENSOR,
                       states ? L->tensor_of[n->inputs[6]] : XPB_NO_TENSOR};
    /* outputs: dx, dw_ih, dw_hh, db_ih, db_hh, dh0, dc0 <- inputs 0, 1, 2, 3, 4, 5, 6 */
    uint32_t out[7];
    uint32_t n_out = states ? 7 : 5;
    xpb_status st;
    for (uint32_t k = 0; k < n_out; k++) {
        uint32_t v = n->inputs[k];
        out[k] = XPB_NO_TENSOR;
        if ((k >= 1 && k <= 4) || rg[v])
            if ((st = grad_tensor(&out[k], L, v)))
                return st;
    }
    if ((st = xpb_lower_emit3(L, XPB_OP_LSTM_BWD, n->layer, in, states ? 10 : 8, out, n_out,
                              &n->attrs, &n->attrs3)))
        return st;
    for (uint32_t k = 0; k < n_out; k++)
        if (rg[n->inputs[k]] && (st = add_contrib(L, n->inputs[k], out[k], 0)))
            return st;
    return XPB_OK;
}

/* Batch norm in training form: one op for the gradients of x, gamma and beta. */
static xpb_status bwd_batchnorm(lowering *L, uint32_t nid, uint32_t dy, const uint8_t *rg)
{
    const xpb_gnode *n = &L->g->nodes[nid];
    uint32_t x = n->inputs[0], gamma = n->inputs[1], beta = n->inputs[2];
    uint32_t out[3], ws = L->ws_of[nid];
    xpb_status st;
    if ((st = grad_tensor(&out[0], L, x)) || (st = grad_tensor(&out[1], L, gamma)) ||
        (st = grad_tensor(&out[2], L, beta)))
        return st;
    uint32_t in[5] = {dy, L->tensor_of[x], L->tensor_of[gamma], ws, ws + 1};
    if ((st = xpb_lower_emit(L, XPB_OP_BATCHNORM_BWD, n->layer, in, 5, out, 3, &n->attrs)))
        return st;
    if (rg[x] && (st = add_contrib(L, x, out[0], 0)))
        return st;
    if (rg[gamma] && (st = add_contrib(L, gamma, out[1], 0)))
        return st;
    if (rg[beta] && (st = add_contrib(L, beta, out[2], 0)))
        return st;
    return XPB_OK;
}

/* A loss: its backward op, scaled by the loss's weight in the phase's objective. */
static xpb_status bwd_loss(lowering *L, uint32_t nid, double scale, const uint8_t *rg)
{
    const xpb_gnode *n = &L->g->nodes[nid];
    uint32_t x = n->inputs[0], dx, in[2];
    xpb_status st;
    if (n->kind != XPB_OP_SOFTMAX_XENT && rg[n->inputs[1]])
        return xpb_err_set(L->err, XPB_UNSUPPORTED,
                           "layer '%s' (%s): the target needs a gradient; a loss target must be "
                           "data, a constant or detached",
                           n->layer, xpb_op_name(n->kind));
    if (!rg[x])
        return XPB_OK;
    xpb_op_attrs a = n->attrs;
    a.scale = (float)scale;
    if ((st = grad_tensor(&dx, L, x)))
        return st;
    uint32_t kind = n->kind == XPB_OP_SOFTMAX_XENT ? XPB_OP_SOFTMAX_XENT_BWD
                    : n->kind == XPB_OP_MSE_LOSS   ? XPB_OP_MSE_LOSS_BWD
                                                   : XPB_OP_L1_LOSS_BWD;
    /* cross-entropy's backward reads the saved probabilities, the others the prediction */
    in[0] = n->kind == XPB_OP_SOFTMAX_XENT ? L->ws_of[nid] : L->tensor_of[x];
    in[1] = L->tensor_of[n->inputs[1]];
    if ((st = xpb_lower_emit3(L, kind, n->layer, in, 2, &dx, 1, &a, &n->attrs3)))
        return st;
    return add_contrib(L, x, dx, 0);
}

/* Single-input ops: dx from dy and what the op's backward reads (y, x or the workspace). */
static xpb_status bwd_unary(lowering *L, uint32_t nid, uint32_t dy, const uint8_t *rg)
{
    const xpb_gnode *n = &L->g->nodes[nid];
    uint32_t x = n->inputs[0], dx, in[4] = {dy}, kind, n_in = 1;
    xpb_status st;
    if (!rg[x])
        return XPB_OK;
    switch (n->kind) {
    case XPB_OP_INSTANCENORM:
        kind = XPB_OP_INSTANCENORM_BWD;
        in[1] = L->tensor_of[x];
        in[2] = L->ws_of[nid];
        in[3] = L->ws_of[nid] + 1;
        n_in = 4;
        break;
    case XPB_OP_RELU:
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_TANH:
        kind = n->kind + 1; /* *_BWD follows its forward op in the op table */
        in[1] = L->tensor_of[n->output];
        n_in = 2;
        break;
    case XPB_OP_MAXPOOL:
    case XPB_OP_DROPOUT:
        kind = n->kind + 1;
        in[1] = L->ws_of[nid];
        n_in = 2;
        break;
    case XPB_OP_AVGPOOL:
    case XPB_OP_GLOBAL_AVGPOOL:
    case XPB_OP_REFLECTION_PAD:
        kind = n->kind + 1;
        break;
    case XPB_OP_RESHAPE:
    case XPB_OP_SCALE:
        kind = n->kind; /* reshaped back; scaled by the same value */
        break;
    case XPB_OP_SOFTMAX:
        if (n->n_inputs > 1 && rg[n->inputs[1]])
            return xpb_err_set(L->err, XPB_UNSUPPORTED,
                               "layer '%s' (SOFTMAX): the mask needs a gradient; a mask must be "
                               "data, a constant or detached",
                               n->layer);
        kind = XPB_OP_SOFTMAX_BWD;
        in[1] = L->tensor_of[n->output];
        n_in = 2;
        break;
    case XPB_OP_GELU:
        kind = XPB_OP_GELU_BWD;
        in[1] = L->tensor_of[x]; /* GELU's backward reads the input, not the output */
        n_in = 2;
        break;
    default:
        return xpb_err_set(L->err, XPB_INTERNAL, "layer '%s': no backward rule for %s", n->layer,
                           xpb_op_name(n->kind));
    }
    if ((st = grad_tensor(&dx, L, x)) ||
        (st = xpb_lower_emit3(L, kind, n->layer, in, n_in, &dx, 1, &n->attrs, &n->attrs3)))
        return st;
    return add_contrib(L, x, dx, 0);
}

xpb_status xpb_lower_backward(lowering *L, uint32_t nid, uint32_t dy, double scale,
                              const uint8_t *rg)
{
    const xpb_gnode *n = &L->g->nodes[nid];
    xpb_status st;
    switch (n->kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
    case XPB_OP_LINEAR:
        return bwd_weighted(L, n, dy, rg);
    case XPB_OP_BATCHNORM_TRAIN:
        return bwd_batchnorm(L, nid, dy, rg);
    case XPB_OP_ADD: /* dy flows to both inputs unchanged: shared, not copied */
        for (uint32_t i = 0; i < 2; i++)
            if (rg[n->inputs[i]] && (st = add_contrib(L, n->inputs[i], dy, 1)))
                return st;
        return XPB_OK;
    case XPB_GNODE_STOP_GRADIENT:
        return XPB_OK;
    case XPB_OP_MATMUL:
    case XPB_OP_BATCHED_MATMUL:
        return bwd_matmul(L, n, dy, rg);
    case XPB_OP_PERMUTE:
        return bwd_permute(L, n, dy, rg);
    case XPB_OP_ADD_BROADCAST:
    case XPB_OP_MUL:
        return bwd_broadcast(L, n, dy, rg);
    case XPB_OP_LAYER_NORM:
        return bwd_layer_norm(L, nid, dy, rg);
    case XPB_OP_EMBEDDING:
        return bwd_embedding(L, n, dy, rg);
    case XPB_OP_LSTM:
        return bwd_lstm(L, nid, dy, rg);
    case XPB_OP_MSE_LOSS:
    case XPB_OP_L1_LOSS:
    case XPB_OP_SOFTMAX_XENT:
        return bwd_loss(L, nid, scale, rg);
    default:
        return bwd_unary(L, nid, dy, rg);
    }
}
