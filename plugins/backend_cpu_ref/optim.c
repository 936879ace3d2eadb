/* Optimizer update kernels, in place on PERSISTENT tensors: SGD with momentum and weight
 * decay (torch.optim.SGD, dampening 0, nesterov off), Adam (torch.optim.Adam, amsgrad off,
 * L2 weight decay added to the gradient), AdamW (decoupled weight decay) and gradient clipping
 * by global norm. Per-element maths is fp32 like PyTorch's; the per-step scalars (bias
 * corrections) are computed in double like PyTorch's Python code. */
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

/* Advances the step counter of an Adam update (input 4, F32 as PyTorch's state["step"] or I32)
 * and returns the new step t. */
static double next_step(const ref_op_args *a)
{
    if (a->in_desc[4]->dtype == XPB_DTYPE_I32) {
        int32_t *step = (int32_t *)(void *)a->in[4];
        return (double)++step[0];
    }
    float *step = a->in[4];
    return (double)(step[0] += 1.0f);
}

/* The scalars of step t of Adam and AdamW (betas, the bias-corrected step size, the square root
 * of the second bias correction, eps): computed in double, used in fp32. */
struct adam_step {
    float b1, b2, step_size, bc2_sqrt, eps;
};

static struct adam_step adam_step_of(const xpb_op_attrs *at, double t)
{
    struct adam_step s = {at->beta1, at->beta2, 0.0f, 0.0f, at->eps};
    s.step_size = (float)((double)at->lr / (1.0 - pow((double)at->beta1, t)));
    s.bc2_sqrt = (float)sqrt(1.0 - pow((double)at->beta2, t));
    return s;
}

/* Updates one element's moments *m, *v for its gradient g (fp32) and returns what Adam subtracts
 * from the parameter. */
static float adam_delta(const struct adam_step *s, float g, float *m, float *v)
{
    *m = s->b1 * *m + (1.0f - s->b1) * g;
    *v = s->b2 * *v + (1.0f - s->b2) * g * g;
    float denom = sqrtf(*v) / s->bc2_sqrt + s->eps;
    return s->step_size * *m / denom;
}

/* ADAM_UPDATE(param*, grad, m*, v*, step*[1]): L2 weight decay added to the gradient. */
xpb_status ref_adam_update(const ref_op_args *a)
{
    const xpb_op_attrs *at = &a->op->attrs;
    float *param = a->in[0], *m = a->in[2], *v = a->in[3];
    const float *grad = a->in[1];
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    struct adam_step s = adam_step_of(at, next_step(a));
    for (int64_t i = 0; i < n; i++) {
        float g = grad[i] + at->weight_decay * param[i];
        param[i] -= adam_delta(&s, g, &m[i], &v[i]);
    }
    return XPB_OK;
}

/* ADAMW_UPDATE(param*, grad, m*, v*, step*[1]): torch.optim.AdamW, the decay decoupled from the
 * gradient: param *= 1 - lr * weight_decay (that factor in double, as PyTorch's Python code),
 * then Adam's step on the unchanged gradient. */
xpb_status ref_adamw_update(const ref_op_args *a)
{
    const xpb_op_attrs *at = &a->op->attrs;
    float *param = a->in[0], *m = a->in[2], *v = a->in[3];
    const float *grad = a->in[1];
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    struct adam_step s = adam_step_of(at, next_step(a));
    float decay = (float)(1.0 - (double)at->lr * (double)at->weight_decay);
    for (int64_t i = 0; i < n; i++) {
        param[i] *= decay;
        param[i] -= adam_delta(&s, grad[i], &m[i], &v[i]);
    }
    return XPB_OK;
}

/* CLIP_GRAD_NORM(g1*, ..., gN*) -> total_norm[1]: torch.nn.utils.clip_grad_norm_ of PyTorch
 * 1.13. total = sqrt(sum of every g^2) (in double, rounded to fp32 as PyTorch's norm), coef =
 * max_norm / (total + 1e-6) in fp32, and every gradient multiplied by coef unless coef >= 1
 * (PyTorch multiplies by min(coef, 1); a NaN total gives NaN gradients there and here). */
xpb_status ref_clip_grad_norm(const ref_op_args *a)
{
    double sq = 0.0;
    for (uint32_t k = 0; k < a->op->n_inputs; k++) {
        const float *g = a->in[k];
        int64_t n = xpb_tensor_numel(a->in_desc[k]);
        for (int64_t i = 0; i < n; i++)
            sq += (double)g[i] * g[i];
    }
    float total = (float)sqrt(sq);
    a->out[0][0] = total;
    float coef = a->op->max_norm / (total + 1e-6f);
    if (coef >= 1.0f)
        return XPB_OK;
    for (uint32_t k = 0; k < a->op->n_inputs; k++) {
        float *g = a->in[k];
        int64_t n = xpb_tensor_numel(a->in_desc[k]);
        for (int64_t i = 0; i < n; i++)
            g[i] *= coef;
    }
    return XPB_OK;
}
