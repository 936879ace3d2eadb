/* FLOPs and bytes of an op (see op_cost.h). */
#include "program/op_cost.h"

/* 2 x M x N x K of a (batched) matmul whose operands are a and b (held as the op's transpose
 * attribute says) and whose product has `out_elems` elements (M x N x batch). */
static int64_t matmul_flops(const xpb_program *p, const xpb_op *op, uint32_t a, int64_t out_elems)
{
    const xpb_tensor_desc *ta = xpb_program_tensor(p, a);
    int64_t k = (op->transpose & XPB_TRANSPOSE_A) ? ta->dims[ta->ndim - 2] : ta->dims[ta->ndim - 1];
    return 2 * out_elems * k;
}

/* FLOPs of op set 3's matmuls and LSTM: the forward product's, once per gradient a backward
 * op produces (LSTM: x[T,B,I] against 4H gates of I + H inputs each step). */
static int64_t flops3(const xpb_program *p, const xpb_op *op)
{
    int64_t y;
    switch (op->kind) {
    case XPB_OP_MATMUL:
    case XPB_OP_BATCHED_MATMUL:
        return matmul_flops(p, op, op->inputs[0],
                            xpb_tensor_numel(xpb_program_tensor(p, op->outputs[0])));
    case XPB_OP_MATMUL_BWD:
    case XPB_OP_BATCHED_MATMUL_BWD:
        y = matmul_flops(p, op, op->inputs[1],
                         xpb_tensor_numel(xpb_program_tensor(p, op->inputs[0])));
        return y * ((op->outputs[0] != XPB_NO_TENSOR) +
                    (op->n_outputs > 1 && op->outputs[1] != XPB_NO_TENSOR));
    case XPB_OP_LSTM:
    case XPB_OP_LSTM_BWD: {
        const xpb_tensor_desc *x =
            xpb_program_tensor(p, xpb_op_input(p, op, op->kind == XPB_OP_LSTM ? 0 : 3));
        const xpb_tensor_desc *whh =
            xpb_program_tensor(p, xpb_op_input(p, op, op->kind == XPB_OP_LSTM ? 2 : 5));
        int64_t step = 2 * x->dims[0] * x->dims[1] * whh->dims[0] * (x->dims[2] + whh->dims[1]);
        return op->kind == XPB_OP_LSTM ? step : 2 * step; /* data and weight gradients */
    }
    default:
        return 0;
    }
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
        return flops3(p, op);
    }
}

/* Whether input i of op `kind` is updated in place (marked * in XPB_OP_MAP). */
static int in_place(uint32_t kind, uint32_t i)
{
    switch (kind) {
    case XPB_OP_BATCHNORM_TRAIN:
        return i == 3 || i == 4;
    case XPB_OP_SGD_UPDATE:
        return i == 0 || i == 2;
    case XPB_OP_ADAM_UPDATE:
    case XPB_OP_ADAMW_UPDATE:
        return i != 1;
    case XPB_OP_ALL_REDUCE:
    case XPB_OP_CLIP_GRAD_NORM:
        return 1;
    default:
        return 0;
    }
}

int64_t xpb_op_bytes(const xpb_program *p, const xpb_op *op)
{
    if (op->kind == XPB_OP_RESHAPE)
        return 0;
    int64_t bytes = 0;
    uint32_t n = op->n_inputs + op->n_outputs;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t t =
            k < op->n_inputs ? xpb_op_input(p, op, k) : xpb_op_output(p, op, k - op->n_inputs);
        if (t == XPB_NO_TENSOR || t >= p->n_tensors)
            continue;
        int seen = 0; /* a tensor given twice (x * x) is moved once */
        for (uint32_t j = 0; j < k && !seen; j++)
            seen = (j < op->n_inputs ? xpb_op_input(p, op, j)
                                     : xpb_op_output(p, op, j - op->n_inputs)) == t;
        if (seen)
            continue;
        int64_t b = (int64_t)xpb_tensor_bytes(xpb_program_tensor(p, t));
        bytes += k < op->n_inputs && in_place(op->kind, k) ? 2 * b : b;
    }
    return bytes;
}
