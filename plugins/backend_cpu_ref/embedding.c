/* EMBEDDING (a row of the weight per integer index: F.embedding) and its backward, the
 * scatter-add in which repeated indices accumulate and the flagged padding row gets zeros
 * (docs/ops.md). Indices are checked at run time: one outside [0, V) is refused naming the
 * layer and its position. The backward sums each row's contributions in double, visiting the
 * positions grouped by index (a counting sort), so that no [V, D] double buffer is needed. */
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* XPB_OK when every index lies in [0, v); otherwise a message naming the position. */
static xpb_status check_indices(const ref_op_args *a, const xpb_tensor_desc *id, const int32_t *idx,
                                int64_t v)
{
    int64_t n = xpb_tensor_numel(id);
    for (int64_t p = 0; p < n; p++)
        if (idx[p] < 0 || idx[p] >= v) {
            int64_t pos[XPB_MAX_DIMS], rest = p;
            for (uint32_t k = id->ndim; k-- > 0;) {
                pos[k] = rest % id->dims[k];
                rest /= id->dims[k];
            }
            char where[96], shape[96];
            return ref_fail(a, XPB_INVALID_ARGUMENT,
                            "position %s of the indices %s holds %d, outside the %lld rows "
                            "[0, %lld) of the weight",
                            xpb_shape_str(where, sizeof where, id->ndim, pos),
                            xpb_shape_str(shape, sizeof shape, id->ndim, id->dims), (int)idx[p],
                            (long long)v, (long long)v);
        }
    return XPB_OK;
}

/* EMBEDDING(indices[..] I32, weight[V, D]) -> y[.., D] = weight[indices] */
xpb_status ref_embedding(const ref_op_args *a)
{
    const xpb_tensor_desc *id = a->in_desc[0], *w = a->in_desc[1];
    const int32_t *idx = (const int32_t *)(const void *)a->in[0];
    int64_t v = w->dims[0], d = w->dims[1], n = xpb_tensor_numel(id);
    xpb_status st = check_indices(a, id, idx, v);
    if (st != XPB_OK)
        return st;
    for (int64_t p = 0; p < n; p++)
        memcpy(a->out[0] + p * d, a->in[1] + (int64_t)idx[p] * d, (size_t)d * sizeof(float));
    return XPB_OK;
}

/* EMBEDDING_BWD(dy[.., D], indices) -> dweight[V, D]: dweight[v] = sum of dy[p] over the
 * positions p with indices[p] = v; the padding row (when flagged) and unused rows are 0. */
xpb_status ref_embedding_bwd(const ref_op_args *a)
{
    const xpb_tensor_desc *id = a->in_desc[1], *w = a->out_desc[0];
    const int32_t *idx = (const int32_t *)(const void *)a->in[1];
    const float *dy = a->in[0];
    float *dw = a->out[0];
    int64_t v = w->dims[0], d = w->dims[1], n = xpb_tensor_numel(id);
    xpb_status st = check_indices(a, id, idx, v);
    if (st != XPB_OK)
        return st;
    /* first[r] .. first[r + 1]: the positions of index r in `order` */
    int64_t *first = calloc((size_t)v + 1, sizeof *first);
    int64_t *order = malloc((size_t)n * sizeof *order);
    double *sum = malloc((size_t)d * sizeof *sum);
    if (!first || !order || !sum) {
        st = ref_fail(a, XPB_OUT_OF_MEMORY, "out of memory for the scatter of %lld positions",
                      (long long)n);
        goto free_buffers;
    }
    for (int64_t p = 0; p < n; p++)
        first[idx[p] + 1]++;
    for (int64_t r = 0; r < v; r++)
        first[r + 1] += first[r];
    for (int64_t p = 0; p < n; p++) /* stable: positions of one index in increasing order */
        order[first[idx[p]]++] = p;
    for (int64_t r = v; r > 0; r--) /* first[r] was advanced to first[r + 1]: shift back */
        first[r] = first[r - 1];
    first[0] = 0;
    int padding = (a->op->index_flags & XPB_INDEX_PADDING) != 0;
    for (int64_t r = 0; r < v; r++) {
        float *row = dw + r * d;
        if (padding && r == a->op->padding_idx) {
            memset(row, 0, (size_t)d * sizeof *row);
            continue;
        }
        memset(sum, 0, (size_t)d * sizeof *sum);
        for (int64_t k = first[r]; k < first[r + 1]; k++) {
            const float *src = dy + order[k] * d;
            for (int64_t j = 0; j < d; j++)
                sum[j] += src[j];
        }
        for (int64_t j = 0; j < d; j++)
            row[j] = (float)sum[j];
    }
free_buffers:
    free(first);
    free(order);
    free(sum);
    return st;
}
