/* SOFTMAX over the last axis with a scale, an optional additive mask [Sq, Sk] broadcast over the
 * leading dims and an optional causal mask (key j hidden from query i when j > i), and its
 * backward (docs/ops.md). Each row is computed in double: z = scale * x + mask, the row maximum
 * subtracted before exp, so that huge inputs neither overflow nor lose the answer. A row whose
 * every entry is -inf gives NaN, as PyTorch's softmax does. */
#include <math.h>

#include "ref.h"

/* SOFTMAX(x, mask[Sq, Sk] opt) -> y = softmax(scale * x + mask (+ causal), dim=-1) */
xpb_status ref_softmax(const ref_op_args *a)
{
    const xpb_tensor_desc *x = a->in_desc[0];
    const float *in = a->in[0];
    const float *mask = a->op->n_inputs > 1 ? a->in[1] : NULL;
    float *y = a->out[0];
    int64_t sk = x->dims[x->ndim - 1], sq = x->ndim > 1 ? x->dims[x->ndim - 2] : 1;
    int64_t rows = xpb_tensor_numel(x) / sk;
    double scale = a->op->attrs.scale;
    int causal = a->op->causal != 0;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = in + r * sk;
        float *yr = y + r * sk;
        int64_t q = r % sq; /* the query of this row: the second-to-last index */
        const float *mr = mask ? mask + q * sk : NULL;
        /* keys beyond `visible` are hidden by the causal mask */
        int64_t visible = causal && q + 1 < sk ? q + 1 : sk;
        double m = -INFINITY;
        for (int64_t j = 0; j < visible; j++) {
            double z = scale * xr[j] + (mr ? mr[j] : 0.0);
            if (z > m)
                m = z;
        }
        double sum = 0.0;
        for (int64_t j = 0; j < visible; j++)
            sum += exp(scale * xr[j] + (mr ? mr[j] : 0.0) - m);
        for (int64_t j = 0; j < sk; j++) {
            if (m == -INFINITY || m != m) { /* every key hidden, or NaN: NaN as PyTorch */
                yr[j] = NAN;
                continue;
            }
            yr[j] = j < visible ? (float)(exp(scale * xr[j] + (mr ? mr[j] : 0.0) - m) / sum) : 0.0f;
        }
    }
    return XPB_OK;
}

/* SOFTMAX_BWD(dy, y) -> dx = scale * y * (dy - sum(dy * y, -1)), the sum in double */
xpb_status ref_softmax_bwd(const ref_op_args *a)
{
    const xpb_tensor_desc *d = a->in_desc[0];
    const float *dy = a->in[0], *y = a->in[1];
    float *dx = a->out[0];
    int64_t sk = d->dims[d->ndim - 1], rows = xpb_tensor_numel(d) / sk;
    double scale = a->op->attrs.scale;
    for (int64_t r = 0; r < rows; r++) {
        const float *dyr = dy + r * sk, *yr = y + r * sk;
        double dot = 0.0;
        for (int64_t j = 0; j < sk; j++)
            dot += (double)dyr[j] * yr[j];
        for (int64_t j = 0; j < sk; j++)
            dx[r * sk + j] = (float)(scale * yr[j] * (dyr[j] - dot));
    }
    return XPB_OK;
}
