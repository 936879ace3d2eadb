/* Derives a model's program from its forward graph: lowering of forward nodes to program ops
 * (training or evaluation form), graph-level automatic differentiation per phase (backward
 * ops, gradient accumulation, stop-gradient, loss weights), optimizer updates of the phase's
 * parameter group, tensor lifetimes and FLOP counts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "model_program.h"
#include "program_abi.h"

/* Gradient contributions collected for one value before they are summed. */
typedef struct contrib {
    uint32_t *tensors;
    uint8_t *alias; /* 1: the tensor is shared with another value (ADD passes dy through) */
    size_t n;
} contrib;

typedef struct lowering {
    xpb_model_program *mp;
    const xpb_graph *g;
    const xpb_run_config *cfg;
    size_t cap_tensors, cap_ops;
    uint32_t *tensor_of; /* per graph value: its forward tensor, XPB_NO_TENSOR if none */
    uint32_t *ws_of;     /* per node: first workspace output tensor (ws_*), XPB_NO_TENSOR */
    uint8_t *computed;   /* per node: emitted in an earlier phase */
    contrib *grads;      /* per value */
    double *loss_weight; /* per value */
    xpb_err *err;
} lowering;

static xpb_status oom(lowering *L)
{
    return xpb_err_set(L->err, XPB_OUT_OF_MEMORY, "out of memory while deriving the program");
}

static int name_exists(const xpb_model_program *mp, const char *name)
{
    for (uint32_t i = 0; i < mp->n_tensors; i++)
        if (strcmp(mp->tensors[i].name, name) == 0)
            return 1;
    return 0;
}

/* A unique copy of `base` ("x", then "x#2", "x#3" ...). Owned by the program. */
static char *unique_name(const xpb_model_program *mp, const char *base)
{
    char buf[600];
    snprintf(buf, sizeof buf, "%.500s", base);
    for (int k = 2; name_exists(mp, buf); k++)
        snprintf(buf, sizeof buf, "%.500s#%d", base, k);
    return strdup(buf);
}

static xpb_status new_tensor(uint32_t *out, lowering *L, const char *name, const char *layer,
                             uint32_t dtype, uint32_t role, uint32_t ndim, const int64_t *dims,
                             uint32_t value)
{
    xpb_model_program *mp = L->mp;
    if (mp->n_tensors == L->cap_tensors) {
        size_t cap = L->cap_tensors ? 2 * L->cap_tensors : 64;
        xpb_tensor_desc *t = realloc(mp->tensors, cap * sizeof *t);
        uint32_t *tv = t ? realloc(mp->tensor_value, cap * sizeof *tv) : NULL;
        if (t)
            mp->tensors = t;
        if (!t || !tv)
            return oom(L);
        mp->tensor_value = tv;
        L->cap_tensors = cap;
    }
    xpb_tensor_desc *t = &mp->tensors[mp->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = unique_name(mp, name);
    t->layer = strdup(layer ? layer : "");
    if (!t->name || !t->layer) {
        free((char *)t->name);
        free((char *)t->layer);
        return oom(L);
    }
    t->dtype = dtype;
    t->role = role;
    t->ndim = ndim;
    for (uint32_t d = 0; d < XPB_MAX_DIMS; d++)
        t->dims[d] = d < ndim ? dims[d] : 1;
    t->grad_of = XPB_NO_TENSOR;
    switch (role) {
    case XPB_ROLE_PARAM:
    case XPB_ROLE_STATE:
        t->flags = XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE | XPB_TENSOR_HOST_READ;
        break;
    case XPB_ROLE_INPUT:
        t->flags = XPB_TENSOR_HOST_WRITE;
        break;
    case XPB_ROLE_LOSS:
    case XPB_ROLE_OUTPUT:
        t->flags = XPB_TENSOR_HOST_READ;
        break;
    default:
        break;
    }
    mp->tensor_value[mp->n_tensors] = value;
    *out = mp->n_tensors++;
    return XPB_OK;
}

/* A tensor shaped like tensor `like`. */
static xpb_status tensor_like(uint32_t *out, lowering *L, uint32_t like, const char *suffix,
                              uint32_t role)
{
    char name[512];
    const xpb_tensor_desc *t = &L->mp->tensors[like];
    snprintf(name, sizeof name, "%s%s", t->name, suffix);
    char layer[256];
    snprintf(layer, sizeof layer, "%s", t->layer);
    uint32_t dtype = t->dtype, ndim = t->ndim;
    int64_t dims[XPB_MAX_DIMS];
    memcpy(dims, t->dims, sizeof dims);
    xpb_status st = new_tensor(out, L, name, layer, dtype, role, ndim, dims, 0);
    if (st == XPB_OK && (role == XPB_ROLE_GRAD || role == XPB_ROLE_ACTIVATION_GRAD))
        L->mp->tensors[*out].grad_of = like;
    return st;
}

static xpb_status emit(lowering *L, uint32_t kind, const char *layer, const uint32_t *in,
                       uint32_t n_in, const uint32_t *out, uint32_t n_out, const xpb_op_attrs *a)
{
    xpb_model_program *mp = L->mp;
    if (mp->n_ops == L->cap_ops) {
        size_t cap = L->cap_ops ? 2 * L->cap_ops : 64;
        xpb_op *ops = realloc(mp->ops, cap * sizeof *ops);
        if (!ops)
            return oom(L);
        mp->ops = ops;
        L->cap_ops = cap;
    }
    xpb_op *op = &mp->ops[mp->n_ops];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->layer = strdup(layer ? layer : "");
    if (!op->layer)
        return oom(L);
    op->n_inputs = n_in;
    op->n_outputs = n_out;
    for (uint32_t i = 0; i < XPB_MAX_OP_INPUTS; i++)
        op->inputs[i] = i < n_in ? in[i] : XPB_NO_TENSOR;
    for (uint32_t i = 0; i < XPB_MAX_OP_OUTPUTS; i++)
        op->outputs[i] = i < n_out ? out[i] : XPB_NO_TENSOR;
    if (a)
        op->attrs = *a;
    mp->n_ops++;
    return XPB_OK;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- forward lowering ---- */

static xpb_status emit_forward(lowering *L, uint32_t nid)
{
    const xpb_gnode *n = &L->g->nodes[nid];
    const xpb_gvalue *v = &L->g->values[n->output];
    xpb_status st;
    uint32_t in[XPB_MAX_OP_INPUTS], out[XPB_MAX_OP_OUTPUTS], y;
    for (uint32_t i = 0; i < n->n_inputs; i++)
        in[i] = L->tensor_of[n->inputs[i]];
    int training = L->mp->training;

    if (n->kind == XPB_GNODE_STOP_GRADIENT || (!training && n->kind == XPB_OP_DROPOUT)) {
        L->tensor_of[n->output] = in[0]; /* same tensor, no op */
        return XPB_OK;
    }
    uint32_t role = xpb_op_is_loss(n->kind) ? XPB_ROLE_LOSS : XPB_ROLE_ACTIVATION;
    for (size_t o = 0; o < L->g->n_outputs; o++)
        if (L->g->outputs[o].value == n->output)
            role = XPB_ROLE_OUTPUT;
    if ((st = new_tensor(&y, L, v->name, n->layer, v->dtype, role, v->ndim, v->dims, n->output)))
        return st;
    L->tensor_of[n->output] = y;
    out[0] = y;
    uint32_t n_out = 1, kind = n->kind;
    xpb_op_attrs a = n->attrs;
    const xpb_tensor_desc *x = &L->mp->tensors[in[0]];
    int64_t dims[XPB_MAX_DIMS] = {1, 1, 1, 1};
    char name[512];
    switch (n->kind) {
    case XPB_OP_BATCHNORM_TRAIN:
        if (!training) {
            kind = XPB_OP_BATCHNORM_INFER;
            break;
        }
        dims[0] = x->dims[1];
        snprintf(name, sizeof name, "%s.ws_mean", n->layer);
        if ((st = new_tensor(&out[1], L, name, n->layer, XPB_DTYPE_F32, XPB_ROLE_WORKSPACE, 1, dims,
                             0)))
            return st;
        snprintf(name, sizeof name, "%s.ws_var", n->layer);
        if ((st = new_tensor(&out[2], L, name, n->layer, XPB_DTYPE_F32, XPB_ROLE_WORKSPACE, 1, dims,
                             0)))
            return st;
        n_out = 3;
        break;
    case XPB_OP_INSTANCENORM:
        dims[0] = x->dims[0];
        dims[1] = x->dims[1];
        snprintf(name, sizeof name, "%s.ws_mean", n->layer);
        if ((st = new_tensor(&out[1], L, name, n->layer, XPB_DTYPE_F32, XPB_ROLE_WORKSPACE, 2, dims,
                             0)))
            return st;
        snprintf(name, sizeof name, "%s.ws_var", n->layer);
        if ((st = new_tensor(&out[2], L, name, n->layer, XPB_DTYPE_F32, XPB_ROLE_WORKSPACE, 2, dims,
                             0)))
            return st;
        n_out = 3;
        break;
    case XPB_OP_MAXPOOL:
        snprintf(name, sizeof name, "%s.ws_index", n->layer);
        if ((st = new_tensor(&out[1], L, name, n->layer, XPB_DTYPE_I32, XPB_ROLE_WORKSPACE, v->ndim,
                             v->dims, 0)))
            return st;
        n_out = 2;
        break;
    case XPB_OP_SOFTMAX_XENT:
        snprintf(name, sizeof name, "%s.ws_prob", n->layer);
        if ((st = new_tensor(&out[1], L, name, n->layer, XPB_DTYPE_F32, XPB_ROLE_WORKSPACE, x->ndim,
                             x->dims, 0)))
            return st;
        n_out = 2;
        break;
    case XPB_OP_DROPOUT:
        snprintf(name, sizeof name, "%s.ws_mask", n->layer);
        if ((st = new_tensor(&out[1], L, name, n->layer, XPB_DTYPE_F32, XPB_ROLE_WORKSPACE, v->ndim,
                             v->dims, 0)))
            return st;
        n_out = 2;
        a.seed = mix64(L->cfg->seed ^ mix64(nid));
        break;
    default:
        break;
    }
    if (n_out > 1)
        L->ws_of[nid] = out[1];
    return emit(L, kind, n->layer, in, n->n_inputs, out, n_out, &a);
}

/* ---- backward ---- */

static xpb_status add_contrib(lowering *L, uint32_t value, uint32_t tensor, int alias)
{
    contrib *c = &L->grads[value];
    uint32_t *t = realloc(c->tensors, (c->n + 1) * sizeof *t);
    if (!t)
        return oom(L);
    c->tensors = t;
    uint8_t *a = realloc(c->alias, c->n + 1);
    if (!a)
        return oom(L);
    c->alias = a;
    c->tensors[c->n] = tensor;
    c->alias[c->n] = (uint8_t)alias;
    c->n++;
    return XPB_OK;
}

static void rename_tensor(lowering *L, uint32_t t, const char *name)
{
    char *fresh = unique_name(L->mp, name);
    if (fresh) {
        free((char *)L->mp->tensors[t].name);
        L->mp->tensors[t].name = fresh;
    }
}

/* Sums the contributions of `value` into one gradient tensor (*out; XPB_NO_TENSOR when none).
 * A parameter's gradient becomes a GRAD tensor named "<param>.grad" of its own. */
static xpb_status finalize_grad(uint32_t *out, lowering *L, uint32_t value)
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
            if ((st = tensor_like(&sum, L, fwd, i + 1 == c->n ? ".grad" : ".grad.acc",
                                  XPB_ROLE_ACTIVATION_GRAD)))
                return st;
            if ((st = emit(L, XPB_OP_ADD, L->mp->tensors[fwd].layer, pair, 2, &sum, 1, NULL)))
                return st;
            acc = sum;
        }
        acc_alias = 0;
    }
    if (is_param) {
        if (acc_alias) { /* shared with another value: give the parameter its own copy */
            uint32_t copy;
            if ((st = tensor_like(&copy, L, fwd, ".grad", XPB_ROLE_GRAD)))
                return st;
            if ((st = emit(L, XPB_OP_COPY, L->mp->tensors[fwd].layer, &acc, 1, &copy, 1, NULL)))
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
    return tensor_like(out, L, L->tensor_of[value], ".grad", XPB_ROLE_ACTIVATION_GRAD);
}

static xpb_status emit_backward(lowering *L, uint32_t nid, uint32_t dy, double scale,
                                const uint8_t *rg)
{
    const xpb_gnode *n = &L->g->nodes[nid];
    xpb_status st;
    uint32_t x = n->inputs[0];
    uint32_t tx = L->tensor_of[x], ty = L->tensor_of[n->output];
    uint32_t dx, in[XPB_MAX_OP_INPUTS], out[XPB_MAX_OP_OUTPUTS];
    xpb_op_attrs a = n->attrs;
    const char *layer = n->layer;

    switch (n->kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
    case XPB_OP_LINEAR: {
        static const uint32_t bwd[][2] = {
            [0] = {XPB_OP_CONV2D_BWD_DATA, XPB_OP_CONV2D_BWD_WEIGHTS},
            [1] = {XPB_OP_CONV_T2D_BWD_DATA, XPB_OP_CONV_T2D_BWD_WEIGHTS},
            [2] = {XPB_OP_LINEAR_BWD_DATA, XPB_OP_LINEAR_BWD_WEIGHTS}};
        int fam = n->kind == XPB_OP_CONV2D ? 0 : n->kind == XPB_OP_CONV_T2D ? 1 : 2;
        uint32_t w = n->inputs[1], b = n->n_inputs == 3 ? n->inputs[2] : 0;
        if (rg[x]) {
            if ((st = grad_tensor(&dx, L, x)))
                return st;
            in[0] = dy;
            in[1] = L->tensor_of[w];
            if ((st = emit(L, bwd[fam][0], layer, in, 2, &dx, 1, &a)) ||
                (st = add_contrib(L, x, dx, 0)))
                return st;
        }
        if (rg[w] || (b && rg[b])) {
            uint32_t n_out = 1;
            if ((st = grad_tensor(&out[0], L, w)))
                return st;
            if (b) {
                if ((st = grad_tensor(&out[1], L, b)))
                    return st;
                n_out = 2;
            }
            in[0] = dy;
            in[1] = tx;
            if ((st = emit(L, bwd[fam][1], layer, in, 2, out, n_out, &a)))
                return st;
            if (rg[w] && (st = add_contrib(L, w, out[0], 0)))
                return st;
            if (b && rg[b] && (st = add_contrib(L, b, out[1], 0)))
                return st;
        }
        return XPB_OK;
    }
    case XPB_OP_BATCHNORM_TRAIN: {
        uint32_t gamma = n->inputs[1], beta = n->inputs[2];
        if ((st = grad_tensor(&out[0], L, x)) || (st = grad_tensor(&out[1], L, gamma)) ||
            (st = grad_tensor(&out[2], L, beta)))
            return st;
        uint32_t ws = L->ws_of[nid];
        in[0] = dy;
        in[1] = tx;
        in[2] = L->tensor_of[gamma];
        in[3] = ws;
        in[4] = ws + 1;
        if ((st = emit(L, XPB_OP_BATCHNORM_BWD, layer, in, 5, out, 3, &a)))
            return st;
        if (rg[x] && (st = add_contrib(L, x, out[0], 0)))
            return st;
        if (rg[gamma] && (st = add_contrib(L, gamma, out[1], 0)))
            return st;
        if (rg[beta] && (st = add_contrib(L, beta, out[2], 0)))
            return st;
        return XPB_OK;
    }
    case XPB_OP_ADD:
        for (uint32_t i = 0; i < 2; i++)
            if (rg[n->inputs[i]] && (st = add_contrib(L, n->inputs[i], dy, 1)))
                return st;
        return XPB_OK;
    case XPB_GNODE_STOP_GRADIENT:
        return XPB_OK;
    case XPB_OP_MSE_LOSS:
    case XPB_OP_L1_LOSS:
    case XPB_OP_SOFTMAX_XENT:
        if (n->kind != XPB_OP_SOFTMAX_XENT && rg[n->inputs[1]])
            return xpb_err_set(L->err, XPB_UNSUPPORTED,
                               "layer '%s' (%s): the target needs a gradient; a loss target "
                               "must be data, a constant or detached",
                               layer, xpb_op_name(n->kind));
        if (!rg[x])
            return XPB_OK;
        a.scale = (float)scale;
        if ((st = grad_tensor(&dx, L, x)))
            return st;
        if (n->kind == XPB_OP_SOFTMAX_XENT) {
            in[0] = L->ws_of[nid];
            in[1] = L->tensor_of[n->inputs[1]];
            st = emit(L, XPB_OP_SOFTMAX_XENT_BWD, layer, in, 2, &dx, 1, &a);
        } else {
            in[0] = tx;
            in[1] = L->tensor_of[n->inputs[1]];
            st = emit(L, n->kind == XPB_OP_MSE_LOSS ? XPB_OP_MSE_LOSS_BWD : XPB_OP_L1_LOSS_BWD,
                      layer, in, 2, &dx, 1, &a);
        }
        return st ? st : add_contrib(L, x, dx, 0);
    default:
        break;
    }

    /* Single-input ops: dx from dy (and y, x or the workspace). */
    if (!rg[x])
        return XPB_OK;
    uint32_t kind, n_in = 1;
    in[0] = dy;
    switch (n->kind) {
    case XPB_OP_INSTANCENORM:
        kind = XPB_OP_INSTANCENORM_BWD;
        in[1] = tx;
        in[2] = L->ws_of[nid];
        in[3] = L->ws_of[nid] + 1;
        n_in = 4;
        break;
    case XPB_OP_RELU:
    case XPB_OP_LEAKY_RELU:
    case XPB_OP_TANH:
        kind = n->kind + 1; /* *_BWD follows its forward op in the op table */
        in[1] = ty;
        n_in = 2;
        break;
    case XPB_OP_MAXPOOL:
        kind = XPB_OP_MAXPOOL_BWD;
        in[1] = L->ws_of[nid];
        n_in = 2;
        break;
    case XPB_OP_DROPOUT:
        kind = XPB_OP_DROPOUT_BWD;
        in[1] = L->ws_of[nid];
        n_in = 2;
        break;
    case XPB_OP_AVGPOOL:
    case XPB_OP_GLOBAL_AVGPOOL:
    case XPB_OP_REFLECTION_PAD:
        kind = n->kind + 1;
        break;
    case XPB_OP_RESHAPE:
        kind = XPB_OP_RESHAPE;
        break;
    default:
        return xpb_err_set(L->err, XPB_INTERNAL, "layer '%s': no backward rule for %s", layer,
                           xpb_op_name(n->kind));
    }
    if ((st = grad_tensor(&dx, L, x)) || (st = emit(L, kind, layer, in, n_in, &dx, 1, &a)))
        return st;
    return add_contrib(L, x, dx, 0);
}

/* Marks the nodes `value` depends on. */
static void mark_ancestors(const xpb_graph *g, uint32_t value, uint8_t *need)
{
    const xpb_gvalue *v = &g->values[value];
    if (v->kind != XPB_VALUE_NODE || need[v->node])
        return;
    need[v->node] = 1;
    const xpb_gnode *n = &g->nodes[v->node];
    for (uint32_t i = 0; i < n->n_inputs; i++)
        mark_ancestors(g, n->inputs[i], need);
}

static xpb_status emit_optimizer(lowering *L, uint32_t phase, uint32_t param, uint32_t grad)
{
    const xpb_optimizer_desc *o = &L->mp->optimizers[phase];
    uint32_t tp = L->tensor_of[param], in[5] = {tp, grad};
    xpb_status st;
    xpb_op_attrs a = {0};
    a.lr = (float)o->lr;
    a.weight_decay = (float)o->weight_decay;
    const char *layer = L->mp->tensors[tp].layer;
    if (o->kind == XPB_OPTIMIZER_SGD) {
        a.momentum = (float)o->momentum;
        if ((st = tensor_like(&in[2], L, tp, ".momentum_buf", XPB_ROLE_STATE)))
            return st;
        return emit(L, XPB_OP_SGD_UPDATE, layer, in, 3, NULL, 0, &a);
    }
    a.beta1 = (float)o->beta1;
    a.beta2 = (float)o->beta2;
    a.eps = (float)o->eps;
    int64_t one = 1;
    char name[512];
    snprintf(name, sizeof name, "%s.adam_step", L->mp->tensors[tp].name);
    if ((st = tensor_like(&in[2], L, tp, ".adam_m", XPB_ROLE_STATE)) ||
        (st = tensor_like(&in[3], L, tp, ".adam_v", XPB_ROLE_STATE)) ||
        (st = new_tensor(&in[4], L, name, layer, XPB_DTYPE_F32, XPB_ROLE_STATE, 1, &one, 0)))
        return st;
    return emit(L, XPB_OP_ADAM_UPDATE, layer, in, 5, NULL, 0, &a);
}

static xpb_status lower_training_phase(lowering *L, uint32_t p)
{
    const xpb_graph *g = L->g;
    const xpb_gphase *ph = &g->phases[p];
    xpb_status st = XPB_OK;
    uint8_t *need = calloc(g->n_nodes, 1), *rg = calloc(g->n_values, 1);
    if (!need || !rg) {
        st = oom(L);
        goto free_marks;
    }
    for (size_t i = 0; i < ph->n_losses; i++)
        mark_ancestors(g, ph->losses[i].value, need);
    for (uint32_t nid = 1; nid < g->n_nodes; nid++)
        if (need[nid] && !L->computed[nid]) {
            if ((st = emit_forward(L, nid)))
                goto free_marks;
            L->computed[nid] = 1;
        }

    /* Which values need a gradient: trainable parameters of the phase's group and what
     * depends on them, except through stop-gradient. */
    for (uint32_t v = 1; v < g->n_values; v++) {
        const xpb_gvalue *gv = &g->values[v];
        if (gv->kind == XPB_VALUE_PARAM)
            rg[v] = gv->trainable && gv->group == ph->group;
    }
    for (uint32_t nid = 1; nid < g->n_nodes; nid++) {
        const xpb_gnode *n = &g->nodes[nid];
        if (!need[nid] || n->kind == XPB_GNODE_STOP_GRADIENT)
            continue;
        for (uint32_t i = 0; i < n->n_inputs; i++)
            if (rg[n->inputs[i]])
                rg[n->output] = 1;
    }
    for (uint32_t v = 0; v < g->n_values; v++) {
        L->grads[v].n = 0;
        L->loss_weight[v] = 0;
    }
    for (size_t i = 0; i < ph->n_losses; i++)
        L->loss_weight[ph->losses[i].value] += ph->losses[i].weight;

    for (uint32_t nid = (uint32_t)g->n_nodes - 1; nid >= 1; nid--) {
        const xpb_gnode *n = &g->nodes[nid];
        if (!need[nid] || !rg[n->output])
            continue;
        uint32_t dy = XPB_NO_TENSOR;
        double scale = 0;
        if (xpb_op_is_loss(n->kind)) {
            scale = L->loss_weight[n->output];
            if (scale == 0)
                continue;
        } else {
            if ((st = finalize_grad(&dy, L, n->output)))
                goto free_marks;
            if (dy == XPB_NO_TENSOR)
                continue;
        }
        if ((st = emit_backward(L, nid, dy, scale, rg)))
            goto free_marks;
    }
    for (uint32_t v = 1; v < g->n_values; v++) {
        const xpb_gvalue *gv = &g->values[v];
        if (gv->kind != XPB_VALUE_PARAM || !rg[v])
            continue;
        uint32_t grad;
        if ((st = finalize_grad(&grad, L, v)))
            goto free_marks;
        if (grad != XPB_NO_TENSOR && (st = emit_optimizer(L, p, v, grad)))
            goto free_marks;
    }
free_marks:
    free(need);
    free(rg);
    return st;
}

static xpb_status lower_inference(lowering *L)
{
    const xpb_graph *g = L->g;
    xpb_status st = XPB_OK;
    uint8_t *need = calloc(g->n_nodes, 1), *extra = calloc(g->n_nodes, 1);
    if (!need || !extra) {
        st = oom(L);
        goto free_marks;
    }
    for (size_t o = 0; o < g->n_outputs; o++)
        mark_ancestors(g, g->outputs[o].value, need);
    if (g->n_outputs == 0)
        for (size_t i = 0; i < g->phases[0].n_losses; i++)
            mark_ancestors(g, g->phases[0].losses[i].value, need);
    /* A loss is computed too when it needs nothing beyond the outputs but itself (a
     * classifier's cross-entropy): a cheap sanity value for the results. */
    for (size_t p = 0; p < g->n_phases; p++)
        for (size_t i = 0; i < g->phases[p].n_losses; i++) {
            memset(extra, 0, g->n_nodes);
            uint32_t lv = g->phases[p].losses[i].value;
            mark_ancestors(g, lv, extra);
            int cheap = 1;
            for (uint32_t nid = 1; nid < g->n_nodes; nid++)
                if (extra[nid] && !need[nid] && nid != g->values[lv].node)
                    cheap = 0;
            if (cheap)
                need[g->values[lv].node] = 1;
        }
    for (uint32_t nid = 1; nid < g->n_nodes; nid++)
        if (need[nid] && (st = emit_forward(L, nid)))
            goto free_marks;
free_marks:
    free(need);
    free(extra);
    return st;
}

int64_t xpb_op_flops(const xpb_program *p, const xpb_op *op)
{
    const xpb_tensor_desc *t0, *t1;
    switch (op->kind) {
    case XPB_OP_CONV2D:
        /* y[N,K,OH,OW] x C*kh*kw */
        t0 = xpb_program_tensor(p, op->outputs[0]);
        t1 = xpb_program_tensor(p, op->inputs[1]);
        return 2 * xpb_tensor_numel(t0) * t1->dims[1] * t1->dims[2] * t1->dims[3];
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_CONV2D_BWD_WEIGHTS:
        t0 = xpb_program_tensor(p, op->inputs[0]); /* dy */
        t1 = xpb_program_tensor(p, op->kind == XPB_OP_CONV2D_BWD_DATA ? op->inputs[1]
                                                                      : op->outputs[0]);
        return 2 * xpb_tensor_numel(t0) * t1->dims[1] * t1->dims[2] * t1->dims[3];
    case XPB_OP_CONV_T2D:
        /* every input element meets K*kh*kw weights */
        t0 = xpb_program_tensor(p, op->inputs[0]);
        t1 = xpb_program_tensor(p, op->inputs[1]);
        return 2 * xpb_tensor_numel(t0) * t1->dims[1] * t1->dims[2] * t1->dims[3];
    case XPB_OP_CONV_T2D_BWD_DATA:
        t0 = xpb_program_tensor(p, op->outputs[0]); /* dx, shaped like x */
        t1 = xpb_program_tensor(p, op->inputs[1]);
        return 2 * xpb_tensor_numel(t0) * t1->dims[1] * t1->dims[2] * t1->dims[3];
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        t0 = xpb_program_tensor(p, op->inputs[1]); /* x */
        t1 = xpb_program_tensor(p, op->outputs[0]);
        return 2 * xpb_tensor_numel(t0) * t1->dims[1] * t1->dims[2] * t1->dims[3];
    case XPB_OP_LINEAR:
    case XPB_OP_LINEAR_BWD_DATA:
    case XPB_OP_LINEAR_BWD_WEIGHTS: {
        const xpb_tensor_desc *w = xpb_program_tensor(
            p, op->kind == XPB_OP_LINEAR_BWD_WEIGHTS ? op->outputs[0] : op->inputs[1]);
        const xpb_tensor_desc *x = xpb_program_tensor(
            p, op->kind == XPB_OP_LINEAR_BWD_DATA ? op->outputs[0]
                                                  : op->inputs[op->kind == XPB_OP_LINEAR ? 0 : 1]);
        return 2 * x->dims[0] * w->dims[0] * w->dims[1];
    }
    default:
        return 0;
    }
}

static void compute_lifetimes(xpb_model_program *mp)
{
    uint32_t last = mp->n_ops ? mp->n_ops - 1 : 0;
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        mp->tensors[t].first_op = UINT32_MAX;
        mp->tensors[t].last_op = 0;
    }
    for (uint32_t i = 0; i < mp->n_ops; i++) {
        const xpb_op *op = &mp->ops[i];
        for (uint32_t k = 0; k < op->n_inputs + op->n_outputs; k++) {
            uint32_t t = k < op->n_inputs ? op->inputs[k] : op->outputs[k - op->n_inputs];
            xpb_tensor_desc *d = &mp->tensors[t];
            if (d->first_op == UINT32_MAX)
                d->first_op = i;
            d->last_op = i;
        }
    }
    for (uint32_t t = 0; t < mp->n_tensors; t++) {
        xpb_tensor_desc *d = &mp->tensors[t];
        if ((d->flags & (XPB_TENSOR_PERSISTENT | XPB_TENSOR_HOST_WRITE | XPB_TENSOR_HOST_READ)) ||
            d->first_op == UINT32_MAX) {
            d->first_op = 0;
            d->last_op = last;
        }
    }
}

static int64_t node_flops(const xpb_graph *g, const xpb_gnode *n)
{
    const xpb_gvalue *y = &g->values[n->output], *x = &g->values[n->inputs[0]];
    const xpb_gvalue *w = n->n_inputs > 1 ? &g->values[n->inputs[1]] : NULL;
    int64_t ny = 1, nx = 1;
    for (uint32_t d = 0; d < y->ndim; d++)
        ny *= y->dims[d];
    for (uint32_t d = 0; d < x->ndim; d++)
        nx *= x->dims[d];
    switch (n->kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
        return 2 * (n->kind == XPB_OP_CONV2D ? ny : nx) * w->dims[1] * w->dims[2] * w->dims[3];
    case XPB_OP_LINEAR:
        return 2 * x->dims[0] * w->dims[0] * w->dims[1];
    default:
        return 0;
    }
}

static void count_model(xpb_model_program *mp, const xpb_graph *g, const uint8_t *in_program)
{
    (void)in_program;
    mp->param_count = xpb_graph_param_count(g);
    int64_t train = 0;
    for (uint32_t i = 0; mp->training && i < mp->n_ops; i++)
        train += xpb_op_flops(&mp->program, &mp->ops[i]);
    mp->flops_train = g->batch ? train / g->batch : 0;
    /* Forward FLOPs: the nodes that produce the model's outputs. */
    uint8_t *need = calloc(g->n_nodes, 1);
    int64_t fwd = 0;
    if (need) {
        for (size_t o = 0; o < g->n_outputs; o++)
            mark_ancestors(g, g->outputs[o].value, need);
        for (uint32_t nid = 1; nid < g->n_nodes; nid++)
            if (need[nid])
                fwd += node_flops(g, &g->nodes[nid]);
        free(need);
    }
    mp->flops_forward = g->batch ? fwd / g->batch : 0;
    mp->layers = 0;
    for (uint32_t nid = 1; nid < g->n_nodes; nid++) {
        uint32_t k = g->nodes[nid].kind;
        if (k == XPB_OP_CONV2D || k == XPB_OP_CONV_T2D || k == XPB_OP_LINEAR ||
            k == XPB_OP_BATCHNORM_TRAIN)
            mp->layers++;
    }
}

static xpb_status resolve_optimizers(xpb_model_program *mp, const xpb_run_config *cfg)
{
    mp->optimizers = calloc(mp->graph->n_phases, sizeof *mp->optimizers);
    if (!mp->optimizers)
        return XPB_OUT_OF_MEMORY;
    for (size_t p = 0; p < mp->graph->n_phases; p++) {
        xpb_optimizer_desc o = mp->graph->phases[p].optimizer;
        if (!isnan(cfg->lr))
            o.lr = cfg->lr;
        if (!isnan(cfg->momentum))
            o.momentum = cfg->momentum;
        if (!isnan(cfg->weight_decay))
            o.weight_decay = cfg->weight_decay;
        if (o.kind == XPB_OPTIMIZER_ADAM && o.eps == 0)
            o.eps = 1e-8;
        mp->optimizers[p] = o;
    }
    return XPB_OK;
}

xpb_status xpb_model_program_create(xpb_model_program **out, const xpb_model_api *model,
                                    const xpb_run_config *cfg, xpb_err *err)
{
    xpb_status st;
    xpb_model_program *mp = calloc(1, sizeof *mp);
    lowering L = {.mp = mp, .cfg = cfg, .err = err};
    if (!mp)
        return xpb_err_set(err, XPB_OUT_OF_MEMORY, "out of memory");
    if ((st = xpb_build_graph(&mp->graph, model, cfg->model, cfg->batch, cfg->variant, cfg->params,
                              cfg->n_params, err)))
        goto free_program;
    const xpb_graph *g = L.g = mp->graph;
    mp->training = cfg->mode == XPB_MODE_TRAIN;
    mp->seed = cfg->seed;
    if ((st = resolve_optimizers(mp, cfg))) {
        xpb_err_set(err, st, "out of memory");
        goto free_program;
    }
    L.tensor_of = malloc(g->n_values * sizeof *L.tensor_of);
    L.ws_of = malloc(g->n_nodes * sizeof *L.ws_of);
    L.computed = calloc(g->n_nodes, 1);
    L.grads = calloc(g->n_values, sizeof *L.grads);
    L.loss_weight = calloc(g->n_values, sizeof *L.loss_weight);
    if (!L.tensor_of || !L.ws_of || !L.computed || !L.grads || !L.loss_weight) {
        st = oom(&L);
        goto free_lowering;
    }
    for (size_t i = 0; i < g->n_values; i++)
        L.tensor_of[i] = XPB_NO_TENSOR;
    for (size_t i = 0; i < g->n_nodes; i++)
        L.ws_of[i] = XPB_NO_TENSOR;

    /* Inputs, parameters, state and constants first, in declaration order. */
    for (uint32_t v = 1; v < g->n_values; v++) {
        const xpb_gvalue *gv = &g->values[v];
        uint32_t role;
        if (gv->kind == XPB_VALUE_INPUT)
            role = XPB_ROLE_INPUT;
        else if (gv->kind == XPB_VALUE_PARAM)
            role = gv->trainable ? XPB_ROLE_PARAM : XPB_ROLE_STATE;
        else if (gv->kind == XPB_VALUE_CONST)
            role = XPB_ROLE_STATE;
        else
            continue;
        if ((st = new_tensor(&L.tensor_of[v], &L, gv->name, "", gv->dtype, role, gv->ndim, gv->dims,
                             v)))
            goto free_lowering;
    }

    mp->n_phases = mp->training ? (uint32_t)g->n_phases : 1;
    mp->phases = calloc(mp->n_phases, sizeof *mp->phases);
    if (!mp->phases) {
        st = oom(&L);
        goto free_lowering;
    }
    for (uint32_t p = 0; p < mp->n_phases; p++) {
        mp->phases[p].name = mp->training ? g->phases[p].name : "inference";
        mp->phases[p].first_op = mp->n_ops;
        if ((st = mp->training ? lower_training_phase(&L, p) : lower_inference(&L)))
            goto free_lowering;
        mp->phases[p].n_ops = mp->n_ops - mp->phases[p].first_op;
        if (mp->phases[p].n_ops == 0) {
            st = xpb_err_set(err, XPB_INVALID_ARGUMENT, "model '%s': phase '%s' has no work",
                             cfg->model, mp->phases[p].name);
            goto free_lowering;
        }
    }
    /* Losses the host reads: every loss value that became a tensor. */
    for (size_t p = 0; p < g->n_phases; p++)
        for (size_t i = 0; i < g->phases[p].n_losses; i++) {
            uint32_t t = L.tensor_of[g->phases[p].losses[i].value];
            if (t == XPB_NO_TENSOR)
                continue;
            xpb_program_loss *grown = realloc(mp->losses, (mp->n_losses + 1) * sizeof *mp->losses);
            if (!grown) {
                st = oom(&L);
                goto free_lowering;
            }
            mp->losses = grown;
            mp->losses[mp->n_losses++] = (xpb_program_loss){t, mp->training ? (uint32_t)p : 0,
                                                            g->phases[p].losses[i].weight};
        }
    compute_lifetimes(mp);
    mp->program = (xpb_program){.training = mp->training,
                                .n_tensors = mp->n_tensors,
                                .n_ops = mp->n_ops,
                                .n_phases = mp->n_phases,
                                .tensors = mp->tensors,
                                .ops = mp->ops,
                                .phases = mp->phases};
    xpb_program_seal(&mp->program, mp->ops);
    count_model(mp, g, NULL);
    st = XPB_OK;
free_lowering:
    free(L.tensor_of);
    free(L.ws_of);
    free(L.computed);
    if (L.grads)
        for (size_t i = 0; i < g->n_values; i++) {
            free(L.grads[i].tensors);
            free(L.grads[i].alias);
        }
    free(L.grads);
    free(L.loss_weight);
    if (st == XPB_OK) {
        *out = mp;
        return XPB_OK;
    }
free_program:
    xpb_model_program_free(mp);
    return st;
}

void xpb_model_program_free(xpb_model_program *mp)
{
    if (!mp)
        return;
    for (uint32_t i = 0; i < mp->n_tensors; i++) {
        free((char *)mp->tensors[i].name);
        free((char *)mp->tensors[i].layer);
    }
    for (uint32_t i = 0; i < mp->n_ops; i++)
        free((char *)mp->ops[i].layer);
    free(mp->tensors);
    free(mp->tensor_value);
    free(mp->ops);
    free(mp->phases);
    free(mp->losses);
    free(mp->optimizers);
    xpb_graph_free(mp->graph);
    free(mp);
}
