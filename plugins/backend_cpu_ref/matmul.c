/* Matrix products of op set 3 (docs/ops.md): MATMUL (2-D, transpose flags, an optional bias
 * added to every row: torch.addmm) and BATCHED_MATMUL (3-D or 4-D operands whose batch dims
 * broadcast as torch.matmul's), with their backward ops. Every product is one ref_gemm call
 * (fp32 accumulation, as LINEAR and PyTorch's CPU matmul); sums over rows (the bias gradient)
 * and over broadcast batch dims are accumulated in double. */
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* One operand of a product as ref_gemm sees it: held as [rows, cols] with row stride cols;
 * `t` says it holds op(x)^T. */
struct mat {
    int64_t rows, cols;
    int t;
};

static struct mat mat_of(const xpb_tensor_desc *d, int transposed)
{
    struct mat m = {d->dims[d->ndim - 2], d->dims[d->ndim - 1], transposed};
    return m;
}

/* op(m)'s rows and columns. */
static int64_t op_rows(struct mat m)
{
    return m.t ? m.cols : m.rows;
}

static int64_t op_cols(struct mat m)
{
    return m.t ? m.rows : m.cols;
}

/* The gradients da, db of y = op(A) op(B) for one matrix of each, from dy[M, N], written as
 * each operand is held (NULL: not wanted): d op(A) = dy op(B)^T, d op(B) = op(A)^T dy. */
static void matmul_grads(float *da, float *db, struct mat ma, struct mat mb, const float *dy,
                         const float *pa, const float *pb)
{
    int64_t m = op_rows(ma), k = op_cols(ma), n = op_cols(mb);
    if (da && !ma.t) /* da[M,K] = dy[M,N] op(B)^T */
        ref_gemm(0, !mb.t, m, k, n, 1.0f, dy, n, pb, mb.cols, 0.0f, da, k);
    else if (da) /* da[K,M] = op(B)[K,N] dy^T */
        ref_gemm(mb.t, 1, k, m, n, 1.0f, pb, mb.cols, dy, n, 0.0f, da, m);
    if (db && !mb.t) /* db[K,N] = op(A)^T dy */
        ref_gemm(!ma.t, 0, k, n, m, 1.0f, pa, ma.cols, dy, n, 0.0f, db, n);
    else if (db) /* db[N,K] = dy^T op(A) */
        ref_gemm(1, ma.t, n, k, m, 1.0f, dy, n, pa, ma.cols, 0.0f, db, k);
}

/* MATMUL(a, b, bias[N] opt) -> y[M,N] = op(a) op(b) + bias */
xpb_status ref_matmul(const ref_op_args *a)
{
    uint32_t tr = a->op->transpose;
    struct mat ma = mat_of(a->in_desc[0], (tr & XPB_TRANSPOSE_A) != 0);
    struct mat mb = mat_of(a->in_desc[1], (tr & XPB_TRANSPOSE_B) != 0);
    int64_t m = op_rows(ma), k = op_cols(ma), n = op_cols(mb);
    float *y = a->out[0];
    ref_gemm(ma.t, mb.t, m, n, k, 1.0f, a->in[0], ma.cols, a->in[1], mb.cols, 0.0f, y, n);
    if (a->op->n_inputs > 2 && a->in[2])
        ref_add_bias_rows(y, m, n, a->in[2]);
    return XPB_OK;
}

/* MATMUL_BWD(dy[M,N], a, b) -> da opt, db opt, dbias[N] opt */
xpb_status ref_matmul_bwd(const ref_op_args *a)
{
    uint32_t tr = a->op->transpose;
    struct mat ma = mat_of(a->in_desc[1], (tr & XPB_TRANSPOSE_A) != 0);
    struct mat mb = mat_of(a->in_desc[2], (tr & XPB_TRANSPOSE_B) != 0);
    const float *dy = a->in[0];
    matmul_grads(a->out[0], a->op->n_outputs > 1 ? a->out[1] : NULL, ma, mb, dy, a->in[1],
                 a->in[2]);
    if (a->op->n_outputs > 2 && a->out[2])
        ref_sum_rows(a->out[2], dy, op_rows(ma), op_cols(mb));
    return XPB_OK;
}

/* The batch dims of a batched product: y's (the broadcast of a's and b's), and per operand the
 * matrix offset (in elements) of every batch dim, 0 along a dim it is broadcast over. */
struct batch {
    uint32_t nd;                /* y's batch dims (1 or 2) */
    int64_t dims[XPB_MAX_DIMS]; /* their sizes */
    int64_t count;              /* their product: matrices of y */
    int64_t stride[2][XPB_MAX_DIMS];
};

static void batch_of(struct batch *bt, const xpb_tensor_desc *y, const xpb_tensor_desc *pa,
                     const xpb_tensor_desc *pb)
{
    const xpb_tensor_desc *ops[2] = {pa, pb};
    bt->nd = y->ndim - 2;
    bt->count = 1;
    for (uint32_t k = 0; k < bt->nd; k++) {
        bt->dims[k] = y->dims[k];
        bt->count *= y->dims[k];
    }
    for (int o = 0; o < 2; o++) {
        /* the operand's batch dims alone, then scaled by its matrix size */
        xpb_tensor_desc lead = *ops[o];
        lead.ndim = ops[o]->ndim - 2;
        ref_bcast_strides(bt->stride[o], &lead, bt->nd, bt->dims);
        int64_t msize = ops[o]->dims[ops[o]->ndim - 2] * ops[o]->dims[ops[o]->ndim - 1];
        for (uint32_t k = 0; k < bt->nd; k++)
            bt->stride[o][k] *= msize;
    }
}

/* Element offset of operand o's matrix for y's batch index `i` (row-major over bt->dims). */
static int64_t batch_offset(const struct batch *bt, int o, int64_t i)
{
    int64_t off = 0;
    for (uint32_t k = bt->nd; k-- > 0;) {
        off += (i % bt->dims[k]) * bt->stride[o][k];
        i /= bt->dims[k];
    }
    return off;
}

/* BATCHED_MATMUL(a[.., M, K], b[.., K, N]) -> y[.., M, N] = torch.matmul(op(a), op(b)) */
xpb_status ref_batched_matmul(const ref_op_args *a)
{
    uint32_t tr = a->op->transpose;
    struct mat ma = mat_of(a->in_desc[0], (tr & XPB_TRANSPOSE_A) != 0);
    struct mat mb = mat_of(a->in_desc[1], (tr & XPB_TRANSPOSE_B) != 0);
    int64_t m = op_rows(ma), k = op_cols(ma), n = op_cols(mb);
    struct batch bt;
    batch_of(&bt, a->out_desc[0], a->in_desc[0], a->in_desc[1]);
    for (int64_t i = 0; i < bt.count; i++)
        ref_gemm(ma.t, mb.t, m, n, k, 1.0f, a->in[0] + batch_offset(&bt, 0, i), ma.cols,
                 a->in[1] + batch_offset(&bt, 1, i), mb.cols, 0.0f, a->out[0] + i * m * n, n);
    return XPB_OK;
}

/* The gradient `out` of one operand (o: 0 for a, 1 for b) of a batched product, as it is held:
 * each of y's matrices gives one gradient matrix (in `tmp`), added in double (in `acc`) into
 * the operand's matrix it was read from. */
static void batched_grad(float *out, const ref_op_args *a, const struct batch *bt, struct mat ma,
                         struct mat mb, int o, float *tmp, double *acc)
{
    const xpb_tensor_desc *d = a->in_desc[1 + o];
    int64_t size = d->dims[d->ndim - 2] * d->dims[d->ndim - 1], n_el = xpb_tensor_numel(d);
    int64_t m = op_rows(ma), n = op_cols(mb);
    memset(acc, 0, (size_t)n_el * sizeof *acc);
    for (int64_t i = 0; i < bt->count; i++) {
        const float *dy = a->in[0] + i * m * n;
        const float *pa = a->in[1] + batch_offset(bt, 0, i),
                    *pb = a->in[2] + batch_offset(bt, 1, i);
        matmul_grads(o == 0 ? tmp : NULL, o == 1 ? tmp : NULL, ma, mb, dy, pa, pb);
        double *dst = acc + batch_offset(bt, o, i);
        for (int64_t j = 0; j < size; j++)
            dst[j] += tmp[j];
    }
    for (int64_t j = 0; j < n_el; j++)
        out[j] = (float)acc[j];
}

/* BATCHED_MATMUL_BWD(dy, a, b) -> da opt, db opt: per matrix as MATMUL_BWD, summed over the
 * batch dims each operand was broadcast along. */
xpb_status ref_batched_matmul_bwd(const ref_op_args *a)
{
    uint32_t tr = a->op->transpose;
    struct mat ma = mat_of(a->in_desc[1], (tr & XPB_TRANSPOSE_A) != 0);
    struct mat mb = mat_of(a->in_desc[2], (tr & XPB_TRANSPOSE_B) != 0);
    struct batch bt;
    batch_of(&bt, a->in_desc[0], a->in_desc[1], a->in_desc[2]);
    int64_t na = xpb_tensor_numel(a->in_desc[1]), nb = xpb_tensor_numel(a->in_desc[2]);
    int64_t most = na > nb ? na : nb;
    float *tmp = malloc(
        (size_t)(ma.rows * ma.cols > mb.rows * mb.cols ? ma.rows * ma.cols : mb.rows * mb.cols) *
        sizeof *tmp);
    double *acc = malloc((size_t)most * sizeof *acc);
    xpb_status st = XPB_OK;
    if (!tmp || !acc) {
        st = ref_fail(a, XPB_OUT_OF_MEMORY, "out of memory for the batch sums");
        goto free_buffers;
    }
    if (a->out[0])
        batched_grad(a->out[0], a, &bt, ma, mb, 0, tmp, acc);
    if (a->op->n_outputs > 1 && a->out[1])
        batched_grad(a->out[1], a, &bt, ma, mb, 1, tmp, acc);
free_buffers:
    free(tmp);
    free(acc);
    return st;
}
