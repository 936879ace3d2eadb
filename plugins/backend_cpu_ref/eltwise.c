/* Elementwise kernels: activations and their backward ops (which take the forward output y,
 * not x, so that the forward input need not be kept), add, and the data-movement ops reshape,
 * fill and copy. */
#include <math.h>
#include <string.h>

#include "ref.h"

xpb_status ref_relu(const ref_op_args *a)
{
    const float *x = a->in[0];
    float *y = a->out[0];
    int64_t n = xpb_tensor_numel(a->out_desc[0]);
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    return XPB_OK;
}

xpb_status ref_relu_bwd(const ref_op_args *a)
{
    const float *dy = a->in[0], *y = a->in[1];
    float *dx = a->out[0];
    int64_t n = xpb_tensor_numel(a->out_desc[0]);
    for (int64_t i = 0; i < n; i++)
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    return XPB_OK;
}

xpb_status ref_leaky_relu(const ref_op_args *a)
{
    const float *x = a->in[0];
    float *y = a->out[0];
    float slope = a->op->attrs.negative_slope;
    int64_t n = xpb_tensor_numel(a->out_desc[0]);
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
    return XPB_OK;
}

/* Decides on y > 0, which equals x > 0 for a positive slope (the only kind PyTorch's
 * in-place-safe LeakyReLU backward accepts). */
xpb_status ref_leaky_relu_bwd(const ref_op_args *a)
{
    const float *dy = a->in[0], *y = a->in[1];
    float *dx = a->out[0];
    float slope = a->op->attrs.negative_slope;
    int64_t n = xpb_tensor_numel(a->out_desc[0]);
    for (int64_t i = 0; i < n; i++)
        dx[i] = y[i] > 0.0f ? dy[i] : slope * dy[i];
    return XPB_OK;
}

xpb_status ref_tanh(const ref_op_args *a)
{
    const float *x = a->in[0];
    float *y = a->out[0];
    int64_t n = xpb_tensor_numel(a->out_desc[0]);
    for (int64_t i = 0; i < n; i++)
        y[i] = tanhf(x[i]);
    return XPB_OK;
}

xpb_status ref_tanh_bwd(const ref_op_args *a)
{
    const float *dy = a->in[0], *y = a->in[1];
    float *dx = a->out[0];
    int64_t n = xpb_tensor_numel(a->out_desc[0]);
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] * (1.0f - y[i] * y[i]);
    return XPB_OK;
}

xpb_status ref_add(const ref_op_args *a)
{
    const float *x = a->in[0], *b = a->in[1];
    float *y = a->out[0];
    int64_t n = xpb_tensor_numel(a->out_desc[0]);
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] + b[i];
    return XPB_OK;
}

/* Same bytes, new shape. memmove: a backend (or a future reference) may alias x and y. */
xpb_status ref_reshape(const ref_op_args *a)
{
    if (a->out[0] != a->in[0])
        memmove(a->out[0], a->in[0], xpb_tensor_bytes(a->out_desc[0]));
    return XPB_OK;
}

/* An I32 output gets the value truncated toward zero, as torch.full with an int dtype. */
xpb_status ref_fill(const ref_op_args *a)
{
    float v = a->op->attrs.value;
    int64_t n = xpb_tensor_numel(a->out_desc[0]);
    if (a->out_desc[0]->dtype == XPB_DTYPE_I32) {
        int32_t *yi = (int32_t *)(void *)a->out[0];
        for (int64_t i = 0; i < n; i++)
            yi[i] = (int32_t)v;
        return XPB_OK;
    }
    float *y = a->out[0];
    for (int64_t i = 0; i < n; i++)
        y[i] = v;
    return XPB_OK;
}

/* Copies bytes, so I32 tensors copy exactly too. */
xpb_status ref_copy(const ref_op_args *a)
{
    if (a->out[0] != a->in[0])
        memmove(a->out[0], a->in[0], xpb_tensor_bytes(a->out_desc[0]));
    return XPB_OK;
}
