/* The language that builds a conformance case by hand (see conformance_case.h). */
#include "check/conformance_case.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/program_abi.h"

void xpb_ct_list_free(xpb_ct_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

xpb_ct_case *xpb_ct_new(xpb_ct_list *l, const char *name, int training, const char *fmt, ...)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        xpb_ct_case *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->oom = 1;
            return NULL;
        }
        l->v = v;
        l->cap = cap;
    }
    xpb_ct_case *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->shape, sizeof c->shape, fmt, ap);
    va_end(ap);
    c->prog.training = (uint32_t)training;
    c->runs = 1;
    return c;
}

uint32_t xpb_ct_tensor(xpb_ct_case *c, const char *name, uint32_t role, uint32_t init, int read,
                       uint32_t ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    if (c->n_t == XPB_CT_MAX_TENSORS) {
        c->overflow = 1;
        return 0;
    }
    uint32_t i = c->n_t++;
    xpb_tensor_desc *t = &c->t[i];
    snprintf(c->tname[i], sizeof c->tname[i], "%s", name);
    t->name = c->tname[i];
    t->layer = "case";
    t->dtype = init == XPB_CT_INIT_LABELS ? XPB_DTYPE_I32 : XPB_DTYPE_F32;
    t->role = role;
    t->ndim = ndim;
    int64_t d[4] = {d0, d1, d2, d3};
    for (uint32_t k = 0; k < 4; k++)
        t->dims[k] = k < ndim ? d[k] : 1;
    t->grad_of = XPB_NO_TENSOR;
    if (role == XPB_ROLE_INPUT)
        t->flags |= XPB_TENSOR_HOST_WRITE;
    if (role == XPB_ROLE_PARAM || role == XPB_ROLE_STATE)
        t->flags |= XPB_TENSOR_HOST_WRITE | XPB_TENSOR_PERSISTENT;
    if (read)
        t->flags |= XPB_TENSOR_HOST_READ;
    c->init[i] = (t->flags & XPB_TENSOR_HOST_WRITE) ? init : XPB_CT_INIT_NONE;
    return i;
}

uint32_t xpb_ct_in(xpb_ct_case *c, const char *n, uint32_t nd, int64_t a, int64_t b, int64_t cc,
                   int64_t d)
{
    return xpb_ct_tensor(c, n, XPB_ROLE_INPUT, XPB_CT_INIT_UNIFORM, 0, nd, a, b, cc, d);
}

uint32_t xpb_ct_param(xpb_ct_case *c, const char *n, uint32_t nd, int64_t a, int64_t b, int64_t cc,
                      int64_t d)
{
    return xpb_ct_tensor(c, n, XPB_ROLE_PARAM, nd >= 2 ? XPB_CT_INIT_FANIN : XPB_CT_INIT_UNIFORM, 0,
                         nd, a, b, cc, d);
}

uint32_t xpb_ct_mid(xpb_ct_case *c, const char *n, uint32_t nd, int64_t a, int64_t b, int64_t cc,
                    int64_t d)
{
    return xpb_ct_tensor(c, n, XPB_ROLE_ACTIVATION, XPB_CT_INIT_NONE, 0, nd, a, b, cc, d);
}

uint32_t xpb_ct_out(xpb_ct_case *c, const char *n, uint32_t nd, int64_t a, int64_t b, int64_t cc,
                    int64_t d)
{
    return xpb_ct_tensor(c, n, XPB_ROLE_OUTPUT, XPB_CT_INIT_NONE, 1, nd, a, b, cc, d);
}

uint32_t xpb_ct_ws(xpb_ct_case *c, const char *n, uint32_t dtype, uint32_t nd, int64_t a, int64_t b,
                   int64_t cc, int64_t d)
{
    uint32_t i = xpb_ct_tensor(c, n, XPB_ROLE_WORKSPACE, XPB_CT_INIT_NONE, 0, nd, a, b, cc, d);
    c->t[i].dtype = dtype;
    return i;
}

xpb_op *xpb_ct_op(xpb_ct_case *c, uint32_t kind, uint32_t n_in, const uint32_t *in, uint32_t n_out,
                  const uint32_t *out)
{
    if (c->n_ops == XPB_CT_MAX_OPS) {
        /* the case is broken (and never runs); the last op absorbs the caller's writes */
        c->overflow = 1;
        return &c->ops[XPB_CT_MAX_OPS - 1];
    }
    if (n_in > XPB_CT_MAX_OPERANDS || n_out > XPB_CT_MAX_OPERANDS) {
        c->overflow = 1;
        n_in = n_in > XPB_CT_MAX_OPERANDS ? XPB_CT_MAX_OPERANDS : n_in;
        n_out = n_out > XPB_CT_MAX_OPERANDS ? XPB_CT_MAX_OPERANDS : n_out;
    }
    uint32_t i = c->n_ops++;
    xpb_op *op = &c->ops[i];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->n_inputs = n_in;
    op->n_outputs = n_out;
    for (uint32_t k = 0; k < XPB_CT_MAX_OPERANDS; k++) {
        c->all_in[i][k] = k < n_in ? in[k] : XPB_NO_TENSOR;
        c->all_out[i][k] = k < n_out ? out[k] : XPB_NO_TENSOR;
    }
    for (uint32_t k = 0; k < XPB_MAX_OP_INPUTS; k++)
        op->inputs[k] = c->all_in[i][k];
    for (uint32_t k = 0; k < XPB_MAX_OP_OUTPUTS; k++)
        op->outputs[k] = c->all_out[i][k];
    op->layer = "case";
    return op;
}

/* first_op / last_op of every tensor from the ops that touch it. */
static void lifetimes(xpb_ct_case *c)
{
    uint32_t last = c->n_ops ? c->n_ops - 1 : 0;
    for (uint32_t t = 0; t < c->n_t; t++) {
        c->t[t].first_op = UINT32_MAX;
        c->t[t].last_op = 0;
    }
    for (uint32_t i = 0; i < c->n_ops; i++) {
        const xpb_op *op = &c->ops[i];
        for (uint32_t k = 0; k < op->n_inputs + op->n_outputs; k++) {
            uint32_t t = k < op->n_inputs ? c->all_in[i][k] : c->all_out[i][k - op->n_inputs];
            if (t == XPB_NO_TENSOR)
                continue;
            if (c->t[t].first_op == UINT32_MAX)
                c->t[t].first_op = i;
            c->t[t].last_op = i;
        }
    }
    /* host-visible tensors (and any no op touches) live through the whole phase */
    for (uint32_t t = 0; t < c->n_t; t++)
        if (c->t[t].flags || c->t[t].first_op == UINT32_MAX) {
            c->t[t].first_op = 0;
            c->t[t].last_op = last;
        }
}

void xpb_ct_finish(xpb_ct_case *c)
{
    lifetimes(c);
    c->phase.name = "case";
    c->phase.first_op = 0;
    c->phase.n_ops = c->n_ops;
    c->prog.struct_size = sizeof c->prog;
    c->prog.opset = XPB_OPSET_VERSION;
    c->prog.n_tensors = c->n_t;
    c->prog.n_ops = c->n_ops;
    c->prog.n_phases = 1;
    c->prog.tensor_stride = sizeof(xpb_tensor_desc);
    c->prog.op_stride = sizeof(xpb_op);
}

void xpb_ct_bind(xpb_ct_case *c)
{
    for (uint32_t t = 0; t < c->n_t; t++) {
        c->t[t].name = c->tname[t];
        c->t[t].layer = "case";
    }
    for (uint32_t i = 0; i < c->n_ops; i++) {
        xpb_op *op = &c->ops[i];
        op->inputs_all = op->n_inputs > XPB_MAX_OP_INPUTS ? c->all_in[i] : NULL;
        op->outputs_all = op->n_outputs > XPB_MAX_OP_OUTPUTS ? c->all_out[i] : NULL;
    }
    c->prog.tensors = c->t;
    c->prog.ops = c->ops;
    c->prog.phases = &c->phase;
    xpb_program_seal(&c->prog, c->ops);
}
