/* Dropout with a mask stream that every backend can reproduce bit for bit: element i of the
 * op's call c keeps its value iff u >= p, where u comes from splitmix64 (docs/ops.md). The
 * mask tensor holds the factor each element was multiplied by (0 or 1/(1-p)). */
#include "ref.h"

xpb_status ref_dropout(const ref_op_args *a)
{
    const xpb_op_attrs *at = &a->op->attrs;
    const float *x = a->in[0];
    float *y = a->out[0], *mask = a->out[1];
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    float p = at->dropout_p;
    uint64_t h = xpb_dropout_stream(at->seed, (uint64_t)a->call_index);
    for (int64_t i = 0; i < n; i++) {
        float m = xpb_dropout_factor(h, i, p);
        y[i] = x[i] * m;
        if (mask)
            mask[i] = m;
    }
    return XPB_OK;
}

xpb_status ref_dropout_bwd(const ref_op_args *a)
{
    const float *dy = a->in[0], *mask = a->in[1];
    float *dx = a->out[0];
    int64_t n = xpb_tensor_numel(a->out_desc[0]);
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] * mask[i];
    return XPB_OK;
}
