/* Lowering of the matrix products of op set 3 (plan_lower_matmul.h) onto cuBLASLt, each product
 * one CUX_ENG_MATMUL step described by a cux_mm_form (glue/matmul.c runs it), and of
 * CLIP_GRAD_NORM onto own kernels.
 *
 * Operands are read in the policy's type, row-major (plan_tensor.c keeps the tensors of op-set-3
 * ops row-major), and a product writes fp32 or the policy's type. A batched product runs as one
 * strided-batched call over y's batch dims: an operand whose batch dims equal y's advances one
 * matrix per product, one with a single matrix is read by every product (stride 0), and one
 * broadcast along some batch dims only is first copied to y's batch shape (EXPAND). Backward,
 * the gradient of an operand that was broadcast is computed per product into an fp32 scratch
 * and summed down to the operand's shape (SUM_TO), since cuBLASLt cannot accumulate products
 * into one matrix in one call:
 *
 *   y  = op(A) op(B)                  (MATMUL adds its bias to every row: a cuBLASLt epilogue)
 *   dA = dy op(B)^T, or op(B) dy^T when A holds op(A)^T
 *   dB = op(A)^T dy, or dy^T op(A) when B holds op(B)^T
 *   dbias = the column sums of dy (the own bias-gradient kernel)
 *
 * CLIP_GRAD_NORM(g1, ..., gN) is 2N + 1 own-kernel steps: the sum of squares of every gradient
 * into one double, its square root into total_norm, then every gradient scaled in place. */
#include "plan/plan_error.h"
#include "plan/plan_lower_engines.h"
#include "plan/plan_lower_matmul.h"
#include "plan/plan_step.h"

#include "kernels/seq_math.h"

/* The batch dims of a product: y's dims before its matrix (none for MATMUL). */
typedef struct batch {
    uint32_t nd;
    int64_t dims[2];
    int64_t count;
} batch;

/* One operand of a product: its view as the engine reads it, whether it holds op(X)^T, its
 * stored matrix, the elements between the matrices of consecutive products, and whether each
 * product has a matrix of its own (so that a gradient needs no batch sum). */
typedef struct operand {
    cux_view v;
    int t;
    int64_t rows, cols, stride;
    int full;
} operand;

static void batch_of(batch *b, const xpb_tensor_desc *y, int batched)
{
    b->nd = batched ? y->ndim - 2 : 0;
    b->count = 1;
    for (uint32_t k = 0; k < b->nd; k++) {
        b->dims[k] = y->dims[k];
        b->count *= y->dims[k];
    }
}

/* How operand `x` advances through the products of `b`: its matrix size when its batch dims
 * (aligned at the right, missing ones 1) equal y's, 0 when it has one matrix, -1 otherwise. */
static int64_t uniform_stride(const xpb_tensor_desc *x, const batch *b)
{
    uint32_t nx = x->ndim - 2;
    int64_t numel = 1, msize = x->dims[x->ndim - 2] * x->dims[x->ndim - 1];
    for (uint32_t k = 0; k < nx; k++)
        numel *= x->dims[k];
    if (numel == 1)
        return 0;
    for (uint32_t k = 0; k < b->nd; k++) {
        uint32_t from_end = b->nd - 1 - k;
        int64_t d = from_end < nx ? x->dims[nx - 1 - from_end] : 1;
        if (d != b->dims[k])
            return -1;
    }
    return msize;
}

/* Operand tensor `tid` (holding op(X)^T when `t`) as the products of `b` read it: in the policy's
 * type, copied to y's batch shape first when it is broadcast along some batch dims only. */
static xpb_status read_operand(cux_plan *plan, uint32_t i, uint32_t tid, int t, const batch *b,
                               operand *o)
{
    const xpb_tensor_desc *x = cux_tensor(plan, tid);
    o->t = t;
    o->rows = x->dims[x->ndim - 2];
    o->cols = x->dims[x->ndim - 1];
    o->stride = 0;
    o->full = 1;
    xpb_status st = cux_want(plan, tid, plan->act_type, CUX_PLAIN, &o->v);
    if (st != XPB_OK || b->nd == 0)
        return st;
    int64_t s = uniform_stride(x, b);
    o->full = s > 0 || b->count == 1;
    if (s >= 0) {
        o->stride = s;
        return XPB_OK;
    }
    int64_t dims[XPB_MAX_DIMS] = {b->dims[0], b->dims[1], 0, 0};
    dims[b->nd] = o->rows;
    dims[b->nd + 1] = o->cols;
    cux_step e = cux_new_step(plan, i, CUX_ENG_KERNEL, CUX_K_EXPAND);
    e.n_in = e.n_out = 1;
    e.in[0] = o->v;
    if ((st = cux_temp(plan, plan->act_type, b->nd + 2, dims, &e.out[0])) != XPB_OK ||
        (st = cux_commit(plan, &e)) != XPB_OK)
        return st;
    o->v = e.out[0];
    o->stride = o->rows * o->cols;
    return XPB_OK;
}

/* The step D = op(a) op(b) over `count` products (D's matrices stride_d apart), with an
 * optional bias added to every row of D. */
static xpb_status product(cux_plan *plan, uint32_t i, const operand *a, const operand *b,
                          const cux_view *d, int64_t stride_d, int64_t count, const cux_view *bias)
{
    cux_step s = cux_new_step(plan, i, CUX_ENG_MATMUL, 0);
    s.n_in = 2;
    s.n_out = 1;
    s.in[0] = a->v;
    s.in[1] = b->v;
    s.out[0] = *d;
    if (bias)
        s.bias = *bias;
    cux_mm_form *f = &s.mm;
    f->ta = (uint8_t)a->t;
    f->tb = (uint8_t)b->t;
    f->m = a->t ? a->cols : a->rows;
    f->k = a->t ? a->rows : a->cols;
    f->n = b->t ? b->rows : b->cols;
    f->lda = a->cols;
    f->ldb = b->cols;
    f->ldd = f->n;
    f->batch = count;
    f->stride_a = a->stride;
    f->stride_b = b->stride;
    f->stride_d = count > 1 ? stride_d : 0;
    if ((b->t ? b->cols : b->rows) != f->k)
        return cux_fail(plan, XPB_INTERNAL, "lower_matmul: op %u: inner dims %lld and %lld differ",
                        i, (long long)f->k, (long long)(b->t ? b->cols : b->rows));
    return cux_commit(plan, &s);
}

/* The type a product writes tensor `tid` in: its storage type when cuBLASLt can write it (fp32
 * or the policy's type), else fp32 (converted after the step). */
static int product_type(const cux_plan *plan, uint32_t tid)
{
    int t = plan->store[tid].type;
    return t == CUX_F32 || t == plan->act_type ? t : CUX_F32;
}

static xpb_status lower_forward(cux_plan *plan, uint32_t i, const xpb_op *op, int batched)
{
    uint32_t tr = XPB_OP_HAS(plan->prog, transpose) ? op->transpose : 0;
    uint32_t y = op->outputs[0];
    batch b;
    batch_of(&b, cux_tensor(plan, y), batched);
    operand pa, pb;
    cux_view bias = cux_no_view(), d;
    int yt = product_type(plan, y);
    xpb_status st;
    if ((st = read_operand(plan, i, op->inputs[0], (tr & XPB_TRANSPOSE_A) != 0, &b, &pa)) !=
            XPB_OK ||
        (st = read_operand(plan, i, op->inputs[1], (tr & XPB_TRANSPOSE_B) != 0, &b, &pb)) != XPB_OK)
        return st;
    if (!batched && op->n_inputs > 2 && op->inputs[2] != XPB_NO_TENSOR &&
        (st = cux_want(plan, op->inputs[2], yt, CUX_PLAIN, &bias)) != XPB_OK)
        return st;
    if ((st = cux_produce(plan, y, yt, CUX_PLAIN, &d)) != XPB_OK)
        return st;
    int64_t m = pa.t ? pa.cols : pa.rows, n = pb.t ? pb.rows : pb.cols;
    return product(plan, i, &pa, &pb, &d, m * n, b.count, bias.buf != CUX_NONE ? &bias : NULL);
}

/* The gradient of operand `which` (0: a, 1: b) into tensor `out`. */
static xpb_status lower_grad(cux_plan *plan, uint32_t i, int which, const operand *dy,
                             const operand *a, const operand *b, const batch *bt, uint32_t out)
{
    operand p, q;
    if (which == 0 && !a->t) { /* dA[M,K] = dy op(B)^T */
        p = *dy;
        q = *b;
        q.t = !b->t;
    } else if (which == 0) { /* dA held as [K,M] = op(B) dy^T */
        p = *b;
        q = *dy;
        q.t = 1;
    } else if (!b->t) { /* dB[K,N] = op(A)^T dy */
        p = *a;
        p.t = !a->t;
        q = *dy;
    } else { /* dB held as [N,K] = dy^T op(A) */
        p = *dy;
        p.t = 1;
        q = *a;
    }
    const operand *target = which ? b : a;
    int64_t msize = target->rows * target->cols;
    xpb_status st;
    cux_invalidate(plan, out);
    if (target->full) {
        cux_view d;
        if ((st = cux_produce(plan, out, product_type(plan, out), CUX_PLAIN, &d)) != XPB_OK)
            return st;
        return product(plan, i, &p, &q, &d, msize, bt->count, NULL);
    }
    /* broadcast operand: one gradient per product, then their sum down to its shape */
    int64_t dims[XPB_MAX_DIMS] = {bt->dims[0], bt->dims[1], 0, 0};
    dims[bt->nd] = target->rows;
    dims[bt->nd + 1] = target->cols;
    cux_view per;
    if ((st = cux_temp(plan, CUX_F32, bt->nd + 2, dims, &per)) != XPB_OK ||
        (st = product(plan, i, &p, &q, &per, msize, bt->count, NULL)) != XPB_OK)
        return st;
    cux_step s = cux_new_step(plan, i, CUX_ENG_KERNEL, CUX_K_SUM_TO);
    s.n_in = s.n_out = 1;
    s.in[0] = per;
    if ((st = cux_stored(plan, out, &s.out[0])) != XPB_OK)
        return st;
    return cux_commit(plan, &s);
}

static uint32_t output_or_none(const xpb_op *op, uint32_t k)
{
    return k < op->n_outputs ? op->outputs[k] : XPB_NO_TENSOR;
}

static xpb_status lower_backward(cux_plan *plan, uint32_t i, const xpb_op *op, int batched)
{
    uint32_t tr = XPB_OP_HAS(plan->prog, transpose) ? op->transpose : 0;
    batch bt;
    batch_of(&bt, cux_tensor(plan, op->inputs[0]), batched);
    operand dy, pa, pb;
    xpb_status st;
    if ((st = read_operand(plan, i, op->inputs[0], 0, &bt, &dy)) != XPB_OK ||
        (st = read_operand(plan, i, op->inputs[1], (tr & XPB_TRANSPOSE_A) != 0, &bt, &pa)) !=
            XPB_OK ||
        (st = read_operand(plan, i, op->inputs[2], (tr & XPB_TRANSPOSE_B) != 0, &bt, &pb)) !=
            XPB_OK)
        return st;
    for (int which = 0; which < 2; which++) {
        uint32_t out = output_or_none(op, (uint32_t)which);
        if (out != XPB_NO_TENSOR &&
            (st = lower_grad(plan, i, which, &dy, &pa, &pb, &bt, out)) != XPB_OK)
            return st;
    }
    uint32_t dbias = output_or_none(op, 2);
    if (!batched && dbias != XPB_NO_TENSOR)
        return cux_lower_bias_grad(plan, i, op->inputs[0], dbias);
    return XPB_OK;
}

xpb_status cux_lower_matmul(cux_plan *plan, uint32_t i)
{
    const xpb_op *op = cux_op(plan, i);
    switch (op->kind) {
    case XPB_OP_MATMUL:
        return lower_forward(plan, i, op, 0);
    case XPB_OP_BATCHED_MATMUL:
        return lower_forward(plan, i, op, 1);
    case XPB_OP_MATMUL_BWD:
        return lower_backward(plan, i, op, 0);
    case XPB_OP_BATCHED_MATMUL_BWD:
        return lower_backward(plan, i, op, 1);
    default:
        return cux_fail(plan, XPB_INTERNAL, "lower_matmul: op %u is not a matrix product", i);
    }
}

/* ---- gradient clipping ---- */

xpb_status cux_lower_clip(cux_plan *plan, uint32_t i)
{
    const xpb_program *p = plan->prog;
    const xpb_op *op = cux_op(plan, i);
    const int64_t acc_dims[1] = {2}; /* one double in two fp32 slots */
    cux_view acc, norm;
    xpb_status st = cux_temp(plan, CUX_F32, 1, acc_dims, &acc);
    for (uint32_t k = 0; st == XPB_OK && k < op->n_inputs; k++) {
        uint32_t g = xpb_op_input(p, op, k);
        cux_step s = cux_new_step(plan, i, CUX_ENG_KERNEL, CUX_K_CLIP_SUMSQ);
        s.n_in = s.n_out = 1;
        s.index = k;
        s.out[0] = acc;
        s.scratch = cux_clip_scratch(xpb_tensor_numel(cux_tensor(plan, g)));
        if ((st = cux_stored(plan, g, &s.in[0])) == XPB_OK)
            st = cux_commit(plan, &s);
    }
    uint32_t total = xpb_op_output(p, op, 0);
    if (st != XPB_OK)
        return st;
    cux_invalidate(plan, total);
    cux_step s = cux_new_step(plan, i, CUX_ENG_KERNEL, CUX_K_CLIP_NORM);
    s.n_in = s.n_out = 1;
    s.in[0] = acc;
    if ((st = cux_stored(plan, total, &norm)) != XPB_OK)
        return st;
    s.out[0] = norm;
    if ((st = cux_commit(plan, &s)) != XPB_OK)
        return st;
    for (uint32_t k = 0; k < op->n_inputs; k++) {
        uint32_t g = xpb_op_input(p, op, k);
        cux_invalidate(plan, g);
        cux_step a = cux_new_step(plan, i, CUX_ENG_KERNEL, CUX_K_CLIP_APPLY);
        a.n_in = 2;
        a.n_out = 1;
        a.in[1] = norm;
        if ((st = cux_stored(plan, g, &a.in[0])) != XPB_OK)
            return st;
        a.out[0] = a.in[0]; /* in place */
        if ((st = cux_commit(plan, &a)) != XPB_OK)
            return st;
    }
    return XPB_OK;
}
