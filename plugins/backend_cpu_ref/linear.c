/* Fully connected kernels (PyTorch's Linear): y = x w^T + b with x[N,I], w[O,I], b[O], and
 * the two backward ops, each one ref_gemm call. Compile's validation (the SDK's shape rules)
 * has checked the shapes. */
#include "ref.h"

/* LINEAR(x[N,I], w[O,I], b[O] opt) -> y[N,O] */
xpb_status ref_linear(const ref_op_args *a)
{
    int64_t n = a->in_desc[0]->dims[0], in_f = a->in_desc[0]->dims[1];
    int64_t out_f = a->in_desc[1]->dims[0];
    const float *x = a->in[0], *w = a->in[1];
    float *y = a->out[0];
    ref_gemm(0, 1, n, out_f, in_f, 1.0f, x, in_f, w, in_f, 0.0f, y, out_f);
    if (a->op->n_inputs > 2)
        ref_add_bias_rows(y, n, out_f, a->in[2]);
    return XPB_OK;
}

/* LINEAR_BWD_DATA(dy[N,O], w[O,I]) -> dx[N,I] = dy w */
xpb_status ref_linear_bwd_data(const ref_op_args *a)
{
    int64_t n = a->in_desc[0]->dims[0], out_f = a->in_desc[0]->dims[1];
    int64_t in_f = a->in_desc[1]->dims[1];
    ref_gemm(0, 0, n, in_f, out_f, 1.0f, a->in[0], out_f, a->in[1], in_f, 0.0f, a->out[0], in_f);
    return XPB_OK;
}

/* LINEAR_BWD_WEIGHTS(dy[N,O], x[N,I]) -> dw[O,I] = dy^T x, db[O] opt = sum_n dy (in double) */
xpb_status ref_linear_bwd_weights(const ref_op_args *a)
{
    int64_t n = a->in_desc[0]->dims[0], out_f = a->in_desc[0]->dims[1];
    int64_t in_f = a->in_desc[1]->dims[1];
    const float *dy = a->in[0];
    ref_gemm(1, 0, out_f, in_f, n, 1.0f, dy, out_f, a->in[1], in_f, 0.0f, a->out[0], in_f);
    if (a->op->n_outputs > 1 && a->out[1])
        ref_sum_rows(a->out[1], dy, n, out_f);
    return XPB_OK;
}
