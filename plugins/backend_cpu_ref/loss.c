/* Loss kernels: softmax cross-entropy with integer labels, mean squared error and mean
 * absolute error, each with the backward op the autodiff emits (scaled by attrs.scale, the
 * loss weight). Forward sums are accumulated in double. */
#include <math.h>
#include <stdio.h>

#include "ref.h"

/* The op's layer name for messages; never NULL, static or owned by the program. */
static const char *layer_of(const ref_op_args *a)
{
    return a->op->layer ? a->op->layer : "?";
}

/* XPB_OK when every label lies in [0, k); otherwise a message naming the layer, the sample
 * and the label. */
static xpb_status check_labels(const ref_op_args *a, const int32_t *labels, int64_t n, int64_t k)
{
    for (int64_t i = 0; i < n; i++)
        if (labels[i] < 0 || labels[i] >= k) {
            snprintf(
                a->err, a->err_size,
                "%s (layer '%s'): sample %lld has label %d, outside the %lld classes [0, %lld)",
                xpb_op_name(a->op->kind), layer_of(a), (long long)i, (int)labels[i], (long long)k,
                (long long)k);
            return XPB_INVALID_ARGUMENT;
        }
    return XPB_OK;
}

/* loss = mean_n (logsumexp(z_n) - z_n[label_n]), computed as (m + log sum exp(z - m)) with
 * m = max z_n, so that huge logits neither overflow nor lose the answer. */
xpb_status ref_softmax_xent(const ref_op_args *a)
{
    const float *z = a->in[0];
    const int32_t *labels = (const int32_t *)(const void *)a->in[1];
    float *loss = a->out[0], *prob = a->out[1];
    int64_t n = a->in_desc[0]->dims[0], k = a->in_desc[0]->dims[1];
    xpb_status st = check_labels(a, labels, n, k);
    if (st != XPB_OK)
        return st;
    double total = 0.0;
    for (int64_t i = 0; i < n; i++)
        total += xpb_softmax_xent_row(z + i * k, k, labels[i], prob ? prob + i * k : NULL);
    loss[0] = (float)(total / (double)n);
    return XPB_OK;
}

xpb_status ref_softmax_xent_bwd(const ref_op_args *a)
{
    const float *prob = a->in[0];
    const int32_t *labels = (const int32_t *)(const void *)a->in[1];
    float *dz = a->out[0];
    int64_t n = a->in_desc[0]->dims[0], k = a->in_desc[0]->dims[1];
    xpb_status st = check_labels(a, labels, n, k);
    if (st != XPB_OK)
        return st;
    double f = (double)a->op->attrs.scale / (double)n;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) {
            double onehot = j == labels[i] ? 1.0 : 0.0;
            dz[i * k + j] = (float)(f * (prob[i * k + j] - onehot));
        }
    return XPB_OK;
}

xpb_status ref_mse_loss(const ref_op_args *a)
{
    const float *x = a->in[0], *t = a->in[1];
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)x[i] - t[i];
        sum += d * d;
    }
    a->out[0][0] = (float)(sum / (double)n);
    return XPB_OK;
}

xpb_status ref_mse_loss_bwd(const ref_op_args *a)
{
    const float *x = a->in[0], *t = a->in[1];
    float *dx = a->out[0];
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    double f = 2.0 * (double)a->op->attrs.scale / (double)n;
    for (int64_t i = 0; i < n; i++)
        dx[i] = (float)(f * ((double)x[i] - t[i]));
    return XPB_OK;
}

xpb_status ref_l1_loss(const ref_op_args *a)
{
    const float *x = a->in[0], *t = a->in[1];
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += fabs((double)x[i] - t[i]);
    a->out[0][0] = (float)(sum / (double)n);
    return XPB_OK;
}

/* sign(0) = 0, as torch.sign and PyTorch's l1_loss backward. */
xpb_status ref_l1_loss_bwd(const ref_op_args *a)
{
    const float *x = a->in[0], *t = a->in[1];
    float *dx = a->out[0];
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    float f = (float)((double)a->op->attrs.scale / (double)n);
    for (int64_t i = 0; i < n; i++)
        dx[i] = x[i] > t[i] ? f : x[i] < t[i] ? -f : 0.0f;
    return XPB_OK;
}
