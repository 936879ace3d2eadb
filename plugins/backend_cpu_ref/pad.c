/* Reflection padding (PyTorch's ReflectionPad2d) and its backward op. The edge is not
 * repeated: row -i maps to row i and row H-1+i to row H-1-i. Compile's validation (the SDK's
 * shape rules) has checked that the padding is smaller than the input (pad < H, pad < W). */
#include <string.h>

#include "ref.h"

/* The source index of padded position i (may be negative) in a dimension of `size`. */
static int64_t reflect(int64_t i, int64_t size)
{
    if (i < 0)
        return -i;
    if (i >= size)
        return 2 * (size - 1) - i;
    return i;
}

/* REFLECTION_PAD(x[N,C,H,W]) -> y[N,C,H+2ph,W+2pw] */
xpb_status ref_reflection_pad(const ref_op_args *a)
{
    const xpb_tensor_desc *in = a->in_desc[0], *out = a->out_desc[0];
    int64_t planes = in->dims[0] * in->dims[1], h = in->dims[2], w = in->dims[3];
    int64_t oh = out->dims[2], ow = out->dims[3];
    int64_t ph = a->op->attrs.pad[0], pw = a->op->attrs.pad[1];
    const float *x = a->in[0];
    float *y = a->out[0];
    for (int64_t p = 0; p < planes; p++)
        for (int64_t i = 0; i < oh; i++) {
            const float *src = x + (p * h + reflect(i - ph, h)) * w;
            float *dst = y + (p * oh + i) * ow;
            for (int64_t j = 0; j < ow; j++)
                dst[j] = src[reflect(j - pw, w)];
        }
    return XPB_OK;
}

/* REFLECTION_PAD_BWD(dy[N,C,H+2ph,W+2pw]) -> dx[N,C,H,W]: each padded position adds its
 * gradient to the input element it was copied from. */
xpb_status ref_reflection_pad_bwd(const ref_op_args *a)
{
    const xpb_tensor_desc *in = a->in_desc[0], *out = a->out_desc[0];
    int64_t planes = out->dims[0] * out->dims[1], h = out->dims[2], w = out->dims[3];
    int64_t oh = in->dims[2], ow = in->dims[3];
    int64_t ph = a->op->attrs.pad[0], pw = a->op->attrs.pad[1];
    const float *dy = a->in[0];
    float *dx = a->out[0];
    memset(dx, 0, (size_t)(planes * h * w) * sizeof *dx);
    for (int64_t p = 0; p < planes; p++)
        for (int64_t i = 0; i < oh; i++) {
            const float *src = dy + (p * oh + i) * ow;
            float *dst = dx + (p * h + reflect(i - ph, h)) * w;
            for (int64_t j = 0; j < ow; j++)
                dst[reflect(j - pw, w)] += src[j];
        }
    return XPB_OK;
}
