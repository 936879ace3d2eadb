/* Data movement and broadcasting of op set 3 (docs/ops.md): PERMUTE (any permutation of up to
 * four axes, F32 or I32), ADD_BROADCAST and MUL with numpy's broadcasting, SUM_TO (the
 * reduction that undoes a broadcast, summed in double) and SCALE. Every loop walks the output
 * in row-major order with one operand offset per dim (ref_bcast_strides). */
#include <stdlib.h>
#include <string.h>

#include "ref.h"

void ref_bcast_strides(int64_t *strides, const xpb_tensor_desc *t, uint32_t nd, const int64_t *dims)
{
    int64_t s = 1;
    for (uint32_t k = nd; k-- > 0;) {
        uint32_t from_end = nd - 1 - k;
        if (from_end >= t->ndim) {
            strides[k] = 0; /* a leading dim t lacks */
            continue;
        }
        int64_t d = t->dims[t->ndim - 1 - from_end];
        strides[k] = d == 1 && dims[k] != 1 ? 0 : s;
        s *= d;
    }
}

/* The multi-index walk of a row-major [dims] (nd <= XPB_MAX_DIMS): advances idx by one
 * element and every offset off[o] by its strides st[o]; returns 0 after the last element. */
static int next_index(int64_t *idx, uint32_t nd, const int64_t *dims, int n_off, int64_t *off,
                      int64_t (*st)[XPB_MAX_DIMS])
{
    for (uint32_t k = nd; k-- > 0;) {
        for (int o = 0; o < n_off; o++)
            off[o] += st[o][k];
        if (++idx[k] < dims[k])
            return 1;
        for (int o = 0; o < n_off; o++)
            off[o] -= st[o][k] * dims[k];
        idx[k] = 0;
    }
    return 0;
}

/* PERMUTE(x) -> y = x.permute(perm): y dim d is x dim perm[d]. Copies 4-byte words, so F32
 * and I32 alike keep their bits. */
xpb_status ref_permute(const ref_op_args *a)
{
    const xpb_tensor_desc *x = a->in_desc[0], *y = a->out_desc[0];
    const uint32_t *src = (const uint32_t *)(const void *)a->in[0];
    uint32_t *dst = (uint32_t *)(void *)a->out[0];
    int64_t xs[XPB_MAX_DIMS], st[1][XPB_MAX_DIMS], idx[XPB_MAX_DIMS] = {0}, off = 0;
    xs[x->ndim - 1] = 1;
    for (uint32_t k = x->ndim - 1; k-- > 0;)
        xs[k] = xs[k + 1] * x->dims[k + 1];
    for (uint32_t d = 0; d < y->ndim; d++)
        st[0][d] = xs[a->op->perm[d]];
    int64_t i = 0;
    do
        dst[i++] = src[off];
    while (next_index(idx, y->ndim, y->dims, 1, &off, st));
    return XPB_OK;
}

/* y = a (op) b over the broadcast shape of y; mul selects a * b, else a + b (fp32, as
 * PyTorch's elementwise kernels). */
static xpb_status binary(const ref_op_args *a, int mul)
{
    const xpb_tensor_desc *y = a->out_desc[0];
    const float *pa = a->in[0], *pb = a->in[1];
    float *out = a->out[0];
    int64_t st[2][XPB_MAX_DIMS], idx[XPB_MAX_DIMS] = {0}, off[2] = {0, 0};
    ref_bcast_strides(st[0], a->in_desc[0], y->ndim, y->dims);
    ref_bcast_strides(st[1], a->in_desc[1], y->ndim, y->dims);
    int64_t i = 0;
    do {
        float u = pa[off[0]], v = pb[off[1]];
        out[i++] = mul ? u * v : u + v;
    } while (next_index(idx, y->ndim, y->dims, 2, off, st));
    return XPB_OK;
}

xpb_status ref_add_broadcast(const ref_op_args *a)
{
    return binary(a, 0);
}

xpb_status ref_mul(const ref_op_args *a)
{
    return binary(a, 1);
}

/* SUM_TO(x) -> y = x.sum_to_size(y.shape): every element of x added (in double) to the
 * element of y it was broadcast from. */
xpb_status ref_sum_to(const ref_op_args *a)
{
    const xpb_tensor_desc *x = a->in_desc[0], *y = a->out_desc[0];
    int64_t ny = xpb_tensor_numel(y);
    double *acc = calloc((size_t)ny, sizeof *acc);
    if (!acc)
        return ref_fail(a, XPB_OUT_OF_MEMORY, "out of memory for %lld sums", (long long)ny);
    const float *src = a->in[0];
    int64_t st[1][XPB_MAX_DIMS], idx[XPB_MAX_DIMS] = {0}, off = 0, i = 0;
    ref_bcast_strides(st[0], y, x->ndim, x->dims);
    do
        acc[off] += src[i++];
    while (next_index(idx, x->ndim, x->dims, 1, &off, st));
    for (int64_t j = 0; j < ny; j++)
        a->out[0][j] = (float)acc[j];
    free(acc);
    return XPB_OK;
}

/* SCALE(x) -> y = value * x (fp32, as PyTorch's multiplication by a Python number). */
xpb_status ref_scale(const ref_op_args *a)
{
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    float v = a->op->attrs.value;
    for (int64_t i = 0; i < n; i++)
        a->out[0][i] = v * a->in[0][i];
    return XPB_OK;
}
