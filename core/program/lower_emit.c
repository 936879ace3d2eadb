/* Tensors and ops of the program being lowered, and the forward form of each graph node
 * (see lowering.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/lowering.h"

xpb_status xpb_lower_oom(lowering *L)
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
char *xpb_lower_unique_name(const xpb_model_program *mp, const char *base)
{
    char buf[600];
    snprintf(buf, sizeof buf, "%.500s", base);
    for (int k = 2; name_exists(mp, buf); k++)
        snprintf(buf, sizeof buf, "%.500s#%d", base, k);
    return strdup(buf);
}

xpb_status xpb_lower_new_tensor(uint32_t *out, lowering *L, const char *name, const char *layer,
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
            return xpb_lower_oom(L);
        mp->tensor_value = tv;
        L->cap_tensors = cap;
    }
    xpb_tensor_desc *t = &mp->tensors[mp->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = xpb_lower_unique_name(mp, name);
    t->layer = strdup(layer ? layer : "");
    if (!t->name || !t->layer) {
        free((char *)t->name);
        free((char *)t->layer);
        return xpb_lower_oom(L);
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
xpb_status xpb_lower_tensor_like(uint32_t *out, lowering *L, uint32_t like, const char *suffix,
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
    xpb_status st = xpb_lower_new_tensor(out, L, name, layer, dtype, role, ndim, dims, 0);
    if (st == XPB_OK && (role == XPB_ROLE_GRAD || role == XPB_ROLE_ACTIVATION_GRAD))
        L->mp->tensors[*out].grad_of = like;
    return st;
}

/* A copy of n operand ids for inputs_all / outputs_all, or NULL when they fit inline (n <=
 * `inline_n`); *failed on a failed allocation. Owned by the program. */
static const uint32_t *operand_array(const uint32_t *ids, uint32_t n, uint32_t inline_n,
                                     int *failed)
{
    if (n <= inline_n)
        return NULL;
    uint32_t *copy = malloc(n * sizeof *copy);
    if (!copy) {
        *failed = 1;
        return NULL;
    }
    memcpy(copy, ids, n * sizeof *copy);
    return copy;
}

xpb_status xpb_lower_emit(lowering *L, uint32_t kind, const char *layer, const uint32_t *in,
                          uint32_t n_in, const uint32_t *out, uint32_t n_out, const xpb_op_attrs *a)
{
    return xpb_lower_emit3(L, kind, layer, in, n_in, out, n_out, a, NULL);
}

xpb_status xpb_lower_emit3(lowering *L, uint32_t kind, const char *layer, const uint32_t *in,
                           uint32_t n_in, const uint32_t *out, uint32_t n_out,
                           const xpb_op_attrs *a, const xpb_op_attrs3 *a3)
{
    xpb_model_program *mp = L->mp;
    if (mp->n_ops == L->cap_ops) {
        size_t cap = L->cap_ops ? 2 * L->cap_ops : 64;
        xpb_op *ops = realloc(mp->ops, cap * sizeof *ops);
        if (!ops)
            return xpb_lower_oom(L);
        mp->ops = ops;
        L->cap_ops = cap;
    }
    xpb_op *op = &mp->ops[mp->n_ops];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->layer = strdup(layer ? layer : "");
    if (!op->layer)
        return xpb_lower_oom(L);
    op->n_inputs = n_in;
    op->n_outputs = n_out;
    for (uint32_t i = 0; i < XPB_MAX_OP_INPUTS; i++)
        op->inputs[i] = i < n_in ? in[i] : XPB_NO_TENSOR;
    for (uint32_t i = 0; i < XPB_MAX_OP_OUTPUTS; i++)
        op->outputs[i] = i < n_out ? out[i] : XPB_NO_TENSOR;
    if (a)
        op->attrs = *a;
    xpb_op_apply_attrs3(op, a3);
    int failed = 0;
    op->inputs_all = operand_array(in, n_in, XPB_MAX_OP_INPUTS, &failed);
    op->outputs_all = operand_array(out, n_out, XPB_MAX_OP_OUTPUTS, &failed);
    mp->n_ops++; /* counted even on failure: the program frees what the op holds */
    return failed ? xpb_lower_oom(L) : XPB_OK;
}

uint64_t xpb_lower_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- forward lowering ---- */

/* LAYER_NORM's saved statistics (out[1], out[2]): x's shape without its last dim. */
static xpb_status layer_norm_stats(lowering *L, const xpb_gnode *n, const xpb_tensor_desc *x,
                                   uint32_t *out)
{
    int64_t dims[XPB_MAX_DIMS] = {1, 1, 1, 1};
    uint32_t nd = x->ndim > 1 ? x->ndim - 1 : 1;
    for (uint32_t k = 0; k + 1 < x->ndim; k++)
        dims[k] = x->dims[k];
    static const char *const suffix[2] = {".ws_mean", ".ws_rstd"};
    for (int k = 0; k < 2; k++) {
        char name[512];
        snprintf(name, sizeof name, "%s%s", n->layer, suffix[k]);
        xpb_status st = xpb_lower_new_tensor(&out[1 + k], L, name, n->layer, XPB_DTYPE_F32,
                                             XPB_ROLE_WORKSPACE, nd, dims, 0);
        if (st)
            return st;
    }
    return XPB_OK;
}

xpb_status xpb_lower_forward(lowering *L, uint32_t nid)
{
    const xpb_gnode *n = &L->g->nodes[nid];
    const xpb_gvalue *v = &L->g->values[n->output];
    xpb_status st;
    uint32_t in[XPB_GNODE_MAX_INPUTS], out[XPB_MAX_OP_OUTPUTS], y;
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
    if ((st = xpb_lower_new_tensor(&y, L, v->name, n->layer, v->dtype, role, v->ndim, v->dims,
                                   n->output)))
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
        if ((st = xpb_lower_new_tensor(&out[1], L, name, n->layer, XPB_DTYPE_F32,
                                       XPB_ROLE_WORKSPACE, 1, dims, 0)))
            return st;
        snprintf(name, sizeof name, "%s.ws_var", n->layer);
        if ((st = xpb_lower_new_tensor(&out[2], L, name, n->layer, XPB_DTYPE_F32,
                                       XPB_ROLE_WORKSPACE, 1, dims, 0)))
            return st;
        n_out = 3;
        break;
    case XPB_OP_INSTANCENORM:
        dims[0] = x->dims[0];
        dims[1] = x->dims[1];
        snprintf(name, sizeof name, "%s.ws_mean", n->layer);
        if ((st = xpb_lower_new_tensor(&out[1], L, name, n->layer, XPB_DTYPE_F32,
                                       XPB_ROLE_WORKSPACE, 2, dims, 0)))
            return st;
        snprintf(name, sizeof name, "%s.ws_var", n->layer);
        if ((st = xpb_lower_new_tensor(&out[2], L, name, n->layer, XPB_DTYPE_F32,
                                       XPB_ROLE_WORKSPACE, 2, dims, 0)))
            return st;
        n_out = 3;
        break;
    case XPB_OP_MAXPOOL:
        snprintf(name, sizeof name, "%s.ws_index", n->layer);
        if ((st = xpb_lower_new_tensor(&out[1], L, name, n->layer, XPB_DTYPE_I32,
                                       XPB_ROLE_WORKSPACE, v->ndim, v->dims, 0)))
            return st;
        n_out = 2;
        break;
    case XPB_OP_SOFTMAX_XENT:
        snprintf(name, sizeof name, "%s.ws_prob", n->layer);
        if ((st = xpb_lower_new_tensor(&out[1], L, name, n->layer, XPB_DTYPE_F32,
                                       XPB_ROLE_WORKSPACE, x->ndim, x->dims, 0)))
            return st;
        n_out = 2;
        break;
    case XPB_OP_DROPOUT:
        snprintf(name, sizeof name, "%s.ws_mask", n->layer);
        if ((st = xpb_lower_new_tensor(&out[1], L, name, n->layer, XPB_DTYPE_F32,
                                       XPB_ROLE_WORKSPACE, v->ndim, v->dims, 0)))
            return st;
        n_out = 2;
        a.seed = xpb_lower_mix64(L->cfg->seed ^ xpb_lower_mix64(nid));
        break;
    case XPB_OP_LAYER_NORM: /* mean and rstd, x's shape without its last dim */
        if (!training)
            break;
        if ((st = layer_norm_stats(L, n, x, out)))
            return st;
        n_out = 3;
        break;
    case XPB_OP_LSTM: /* h_n, c_n not wanted; the workspace [T, B, 5H] for backward */
        if (!training)
            break;
        out[1] = out[2] = XPB_NO_TENSOR;
        dims[0] = v->dims[0];
        dims[1] = v->dims[1];
        dims[2] = 5 * v->dims[2];
        snprintf(name, sizeof name, "%s.ws", n->layer);
        if ((st = xpb_lower_new_tensor(&out[3], L, name, n->layer, XPB_DTYPE_F32,
                                       XPB_ROLE_WORKSPACE, 3, dims, 0)))
            return st;
        n_out = 4;
        L->ws_of[nid] = out[3];
        break;
    default:
        break;
    }
    if (n_out > 1 && n->kind != XPB_OP_LSTM)
        L->ws_of[nid] = out[1];
    return xpb_lower_emit3(L, kind, n->layer, in, n->n_inputs, out, n_out, &a, &n->attrs3);
}
