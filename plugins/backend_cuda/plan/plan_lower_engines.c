/* Lowering of the ops that run on a library engine (plan_lower.h): convolutions and transposed
 * convolutions as cuDNN operation graphs (CUX_ENG_CONV; the transposed ones as the adjoint
 * modes: forward = backward-data, backward-data = forward, weights = backward-filter with x and
 * dy swapped), with the batch norm folded into an inference convolution (prep steps recompute
 * the folded weights); linear layers as cuBLASLt matmuls (CUX_ENG_MATMUL); and the bias
 * gradients of both, an own reduction. cuDNN reads its operands in the policy's type and the
 * 4-D layout; cuBLASLt in the policy's type, row-major, and writes fp32 or the policy's type. */
#include <string.h>

#include "plan/plan_error.h"
#include "plan/plan_lower_engines.h"
#include "plan/plan_step.h"
#include "plan/plan_tensor.h"

xpb_status cux_lower_bias_grad(cux_plan *plan, uint32_t i, uint32_t dy, uint32_t db)
{
    cux_view v;
    xpb_status st = cux_stored(plan, dy, &v);
    return st != XPB_OK ? st : cux_lower_bias_grad_of(plan, i, v, db);
}

xpb_status cux_lower_bias_grad_of(cux_plan *plan, uint32_t i, cux_view dy, uint32_t db)
{
    cux_step s = cux_new_step(plan, i, CUX_ENG_KERNEL, CUX_K_BIAS_GRAD);
    s.n_in = s.n_out = 1;
    s.in[0] = dy;
    xpb_status st = cux_produce(plan, db, CUX_F32, CUX_PLAIN, &s.out[0]);
    if (st != XPB_OK)
        return st;
    cux_view *v = &s.in[0];
    if (v->ndim == 3) { /* a linear layer's [B, S, F], the LSTM's [T, B, 4H]: matrix rows */
        v->dims[0] *= v->dims[1];
        v->dims[1] = v->dims[2];
        v->dims[2] = 1;
        v->ndim = 2;
    }
    int64_t n = v->dims[0], c = v->ndim > 1 ? v->dims[1] : 1;
    s.scratch = cux_norm_scratch(n, c, (v->dims[2] * v->dims[3]));
    return cux_commit(plan, &s);
}

/* Inference: private buffers for the weights and bias of convolution `i` with batch norm
 * `bn` folded in, and the prep step that computes them from the masters. */
static xpb_status fold_buffers(cux_plan *plan, uint32_t i, cux_view *w, cux_view *b)
{
    const xpb_op *conv = cux_op(plan, i);
    uint32_t bn = plan->fuse[i].bn_op;
    const xpb_op *norm = cux_op(plan, bn);
    const xpb_tensor_desc *wt = cux_tensor(plan, conv->inputs[1]);
    uint32_t wbuf, bbuf;
    uint64_t wbytes = (uint64_t)xpb_tensor_numel(wt) * cux_type_size(plan->act_type);
    uint64_t bbytes = (uint64_t)wt->dims[0] * cux_type_size(plan->act_type);
    xpb_status st;
    if ((st = cux_buf_new(&wbuf, plan, wbytes, CUX_BUF_FOLD, CUX_NONE, 1)) != XPB_OK ||
        (st = cux_buf_new(&bbuf, plan, bbytes, CUX_BUF_FOLD, CUX_NONE, 1)) != XPB_OK)
        return st;
    *w = cux_make_view(plan, wbuf, conv->inputs[1], plan->act_type, plan->layout4d);
    w->tensor = CUX_NONE; /* not the parameter's value: the folded one */
    *b = cux_no_view();
    b->buf = bbuf;
    b->type = plan->act_type;
    b->layout = CUX_PLAIN;
    b->ndim = 1;
    b->dims[0] = wt->dims[0];
    b->dims[1] = b->dims[2] = b->dims[3] = 1;
    /* prep: BN_FOLD(w, b [opt], gamma, beta, rm, rv) -> w', b' with the norm's eps */
    cux_step s = cux_new_step(plan, bn, CUX_ENG_KERNEL, CUX_K_BN_FOLD);
    s.phase = CUX_NONE;
    s.n_in = 6;
    s.n_out = 2;
    if ((st = cux_stored(plan, conv->inputs[1], &s.in[0])) != XPB_OK ||
        (st = cux_stored_opt(plan, conv->n_inputs > 2 ? conv->inputs[2] : XPB_NO_TENSOR,
                             &s.in[1])) != XPB_OK)
        return st;
    for (uint32_t k = 1; k < 5; k++)
        if ((st = cux_stored(plan, norm->inputs[k], &s.in[k + 1])) != XPB_OK)
            return st;
    s.out[0] = *w;
    s.out[1] = *b;
    return cux_push_step(&plan->prep, &plan->n_prep, &plan->cap_prep, plan, &s);
}

/* ---- convolutions ---- */

xpb_status cux_lower_conv(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = cux_op(plan, i);
    const cux_fuse *f = &plan->fuse[i];
    int A = plan->act_type, L = plan->layout4d;
    cux_step s = cux_new_step(plan, i, CUX_ENG_CONV, 0);
    s.n_in = op->n_inputs < 2 ? op->n_inputs : 2;
    s.n_out = 1;
    xpb_status st;
    switch (op->kind) {
    case XPB_OP_CONV2D:
    case XPB_OP_CONV_T2D:
        s.conv = op->kind == XPB_OP_CONV2D ? CUX_CONV_FWD : CUX_CONV_BWD_DATA;
        if ((st = cux_want(plan, op->inputs[0], A, L, &s.in[0])) != XPB_OK)
            return st;
        if (f->bn_op != CUX_NONE) {
            if ((st = fold_buffers(plan, i, &s.in[1], &s.bias)) != XPB_OK)
                return st;
        } else {
            if ((st = cux_want(plan, op->inputs[1], A, L, &s.in[1])) != XPB_OK)
                return st;
            if (op->n_inputs > 2 &&
                (st = cux_want(plan, op->inputs[2], A, CUX_PLAIN, &s.bias)) != XPB_OK)
                return st;
        }
        if (f->add_op != CUX_NONE && (st = cux_want(plan, f->add_other, A, L, &s.resid)) != XPB_OK)
            return st;
        cux_fused_act(plan, i, &s);
        if ((st = cux_produce(plan, f->out_tensor, A, L, &s.out[0])) != XPB_OK)
            return st;
        return cux_commit(plan, &s);
    case XPB_OP_CONV2D_BWD_DATA:
    case XPB_OP_CONV_T2D_BWD_DATA:
        s.conv = op->kind == XPB_OP_CONV2D_BWD_DATA ? CUX_CONV_BWD_DATA : CUX_CONV_FWD;
        if ((st = cux_want(plan, op->inputs[0], A, L, &s.in[0])) != XPB_OK ||
            (st = cux_want(plan, op->inputs[1], A, L, &s.in[1])) != XPB_OK ||
            (st = cux_produce(plan, op->outputs[0], A, L, &s.out[0])) != XPB_OK)
            return st;
        return cux_commit(plan, &s);
    case XPB_OP_CONV2D_BWD_WEIGHTS:
    case XPB_OP_CONV_T2D_BWD_WEIGHTS:
        s.conv = CUX_CONV_BWD_FILTER;
        if ((st = cux_want(plan, op->inputs[0], A, L, &s.in[0])) != XPB_OK ||
            (st = cux_want(plan, op->inputs[1], A, L, &s.in[1])) != XPB_OK ||
            (st = cux_produce(plan, op->outputs[0], A, L, &s.out[0])) != XPB_OK ||
            (st = cux_commit(plan, &s)) != XPB_OK)
            return st;
        if (op->n_outputs > 1 && op->outputs[1] != XPB_NO_TENSOR)
            return cux_lower_bias_grad(plan, i, op->inputs[0], op->outputs[1]);
        return XPB_OK;
    default:
        return cux_fail(plan, XPB_INTERNAL, "lower_conv: op %u is not a convolution", i);
    }
}

/* ---- linear layers: cuBLASLt reads A-typed row-major operands and writes fp32 or A ---- */

/* The rows of the row-major matrix a view holds (every dim but the last: a rank-3 linear input
 * [B, S, F] is the matrix [B*S, F]) and its columns (the last dim). */
static int64_t matrix_rows(const cux_view *v)
{
    int64_t r = 1;
    for (uint32_t d = 0; d + 1 < v->ndim; d++)
        r *= v->dims[d];
    return r;
}

static int64_t matrix_cols(const cux_view *v)
{
    return v->dims[v->ndim ? v->ndim - 1 : 0];
}

/* The product of a linear-layer op over its operands p = in[0], q = in[1]:
 *   LINEAR              y[N,O]  = x[N,I] w[O,I]^T     (p = x, q = w)
 *   LINEAR_BWD_DATA     dx[N,I] = dy[N,O] w[O,I]      (p = dy, q = w)
 *   LINEAR_BWD_WEIGHTS  dw[O,I] = dy[N,O]^T x[N,I]    (p = dy, q = x) */
static cux_mm_form linear_form(uint32_t kind, const cux_view *p, const cux_view *q)
{
    cux_mm_form f;
    memset(&f, 0, sizeof f);
    f.batch = 1;
    f.lda = matrix_cols(p);
    f.ldb = matrix_cols(q);
    switch (kind) {
    case XPB_OP_LINEAR:
        f.tb = 1;
        f.m = matrix_rows(p), f.k = matrix_cols(p), f.n = q->dims[0];
        break;
    case XPB_OP_LINEAR_BWD_DATA:
        f.m = matrix_rows(p), f.k = matrix_cols(p), f.n = matrix_cols(q);
        break;
    default: /* LINEAR_BWD_WEIGHTS */
        f.ta = 1;
        f.m = matrix_cols(p), f.k = matrix_rows(p), f.n = matrix_cols(q);
        break;
    }
    f.ldd = f.n;
    return f;
}

xpb_status cux_lower_linear(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = cux_op(plan, i);
    const cux_fuse *f = &plan->fuse[i];
    int A = plan->act_type;
    cux_step s = cux_new_step(plan, i, CUX_ENG_MATMUL, 0);
    s.n_in = 2;
    s.n_out = 1;
    xpb_status st;
    if ((st = cux_want(plan, op->inputs[0], A, CUX_PLAIN, &s.in[0])) != XPB_OK ||
        (st = cux_want(plan, op->inputs[1], A, CUX_PLAIN, &s.in[1])) != XPB_OK)
        return st;
    s.mm = linear_form(op->kind, &s.in[0], &s.in[1]);
    uint32_t y = op->kind == XPB_OP_LINEAR ? f->out_tensor : op->outputs[0];
    int ytype = plan->store[y].type; /* F32 or A: cuBLASLt writes either */
    if (op->kind == XPB_OP_LINEAR) {
        if (op->n_inputs > 2 &&
            (st = cux_want(plan, op->inputs[2], ytype, CUX_PLAIN, &s.bias)) != XPB_OK)
            return st;
        cux_fused_act(plan, i, &s);
    }
    if ((st = cux_produce(plan, y, ytype, CUX_PLAIN, &s.out[0])) != XPB_OK ||
        (st = cux_commit(plan, &s)) != XPB_OK)
        return st;
    if (op->kind == XPB_OP_LINEAR_BWD_WEIGHTS && op->n_outputs > 1 &&
        op->outputs[1] != XPB_NO_TENSOR)
        return cux_lower_bias_grad(plan, i, op->inputs[0], op->outputs[1]);
    return XPB_OK;
}
