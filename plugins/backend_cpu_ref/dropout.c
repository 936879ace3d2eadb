/* Dropout with a mask stream that every backend can reproduce bit for bit: element i of the
 * op's call c keeps its value iff u >= p, where u comes from splitmix64 (docs/ops.md). The
 * mask tensor holds the factor each element was multiplied by (0 or 1/(1-p)). */
#include "ref.h"

static uint64_t splitmix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

xpb_status ref_dropout(const ref_op_args *a)
{
    const xpb_op_attrs *at = &a->op->attrs;
    const float *x = a->in[0];
    float *y = a->out[0], *mask = a->out[1];
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    float p = at->dropout_p;
    /* p >= 1 drops everything (torch.nn.functional.dropout gives zeros), never 1/0. */
    float keep_scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    uint64_t h = splitmix64(at->seed + 0x9E3779B97F4A7C15ull * (a->call_index + 1));
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(h + (uint64_t)i);
        float u = (float)(r >> 40) * 0x1p-24f; /* 24 bits: exact in float */
        float m = u >= p ? keep_scale : 0.0f;
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
