/* Optimizer update kernels, in place on PERSISTENT tensors: SGD with momentum and weight
 * decay (torch.optim.SGD, dampening 0, nesterov off) and Adam (torch.optim.Adam, amsgrad off,
 * L2 weight decay added to the gradient). Per-element maths is fp32 like PyTorch's; the
 * per-step scalars (bias corrections) are computed in double like PyTorch's Python code. */
#include <math.h>

#include "ref.h"

/* SGD_UPDATE(param*, grad, momentum_buf*): g = grad + wd * param; buf = momentum * buf + g;
 * param -= lr * buf. Without a buffer (n_inputs == 2) the step is param -= lr * g, which is
 * what PyTorch does with momentum 0. */
xpb_status ref_sgd_update(const ref_op_args *a)
{
    const xpb_op_attrs *at = &a->op->attrs;
    float *param = a->in[0];
    const float *grad = a->in[1];
    float *buf = a->op->n_inputs > 2 ? a->in[2] : NULL;
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    for (int64_t i = 0; i < n; i++) {
        float g = grad[i] + at->weight_decay * param[i];
        if (buf) {
            buf[i] = at->momentum * buf[i] + g;
            g = buf[i];
        }
        param[i] -= at->lr * g;
    }
    return XPB_OK;
}

/* ADAM_UPDATE(param*, grad, m*, v*, step*[1]); step is f32 (as PyTorch's state["step"]) or
 * i32, counting completed steps. */
xpb_status ref_adam_update(const ref_op_args *a)
{
    const xpb_op_attrs *at = &a->op->attrs;
    float *param = a->in[0], *m = a->in[2], *v = a->in[3];
    const float *grad = a->in[1];
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    double t;
    if (a->in_desc[4]->dtype == XPB_DTYPE_I32) {
        int32_t *step = (int32_t *)(void *)a->in[4];
        t = (double)++step[0];
    } else {
        float *step = a->in[4];
        t = (double)(step[0] += 1.0f);
    }
    double bc1 = 1.0 - pow((double)at->beta1, t);
    double bc2 = 1.0 - pow((double)at->beta2, t);
    float step_size = (float)((double)at->lr / bc1);
    float bc2_sqrt = (float)sqrt(bc2);
    float b1 = at->beta1, b2 = at->beta2;
    for (int64_t i = 0; i < n; i++) {
        float g = grad[i] + at->weight_decay * param[i];
        m[i] = b1 * m[i] + (1.0f - b1) * g;
        v[i] = b2 * v[i] + (1.0f - b2) * g * g;
        float denom = sqrtf(v[i]) / bc2_sqrt + at->eps;
        param[i] -= step_size * m[i] / denom;
    }
    return XPB_OK;
}
