/* Loss kernels: softmax cross-entropy with integer labels (op set 3: rows with an ignored label
 * and label smoothing), mean squared error and mean absolute error, each with the backward op
 * the autodiff emits (scaled by attrs.scale, the loss weight). Forward sums are accumulated in
 * double. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ref.h"

/* The op's layer name for messages; never NULL, static or owned by the program. */
static const char *layer_of(const ref_op_args *a)
{
    return a->op->layer ? a->op->layer : "?";
}

/* Whether row label `label` is ignored (op set 3: XPB_INDEX_IGNORE with ignore_index). */
static int ignored(const ref_op_args *a, int32_t label)
{
    return (a->op->index_flags & XPB_INDEX_IGNORE) && label == a->op->ignore_index;
}

/* XPB_OK when every label lies in [0, k) or is ignored; otherwise a message naming the layer,
 * the sample and the label. *n_valid gets the number of rows not ignored. */
static xpb_status check_labels(const ref_op_args *a, const int32_t *labels, int64_t n, int64_t k,
                               int64_t *n_valid)
{
    *n_valid = 0;
    for (int64_t i = 0; i < n; i++) {
        if (ignored(a, labels[i]))
            continue;
        if (labels[i] < 0 || labels[i] >= k) {
            snprintf(
                a->err, a->err_size,
                "%s (layer '%s'): sample %lld has label %d, outside the %lld classes [0, %lld)",
                xpb_op_name(a->op->kind), layer_of(a), (long long)i, (int)labels[i], (long long)k,
                (long long)k);
            return XPB_INVALID_ARGUMENT;
        }
        (*n_valid)++;
    }
    return XPB_OK;
}

/* One row's loss with label smoothing eps over logits z[0..k): (1 - eps) (lse - z[label]) +
 * (eps / k) sum_j (lse - z[j]), with lse = m + log sum exp(z - m), m = max z, each term taken
 * relative to m so that huge logits cancel exactly; softmax(z) into prob when not NULL. */
static double smoothed_row(const float *z, int64_t k, int32_t label, double eps, float *prob)
{
    double m = z[0];
    for (int64_t j = 1; j < k; j++)
        if (z[j] > m)
            m = z[j];
    double sum = 0.0, below = 0.0; /* sum exp(z - m), sum (m - z) */
    for (int64_t j = 0; j < k; j++) {
        sum += exp(z[j] - m);
        below += m - z[j];
    }
    double log_sum = log(sum);
    if (prob)
        for (int64_t j = 0; j < k; j++)
            prob[j] = (float)exp(z[j] - m - log_sum);
    double nll = log_sum - (z[label] - m);
    return (1.0 - eps) * nll + eps / (double)k * ((double)k * log_sum + below);
}

/* loss = mean over the rows not ignored of the (smoothed) negative log-likelihood; op set 1's
 * op (no attribute) is the mean of logsumexp(z_n) - z_n[label_n] over every row. All rows
 * ignored gives NaN (0 / 0), as PyTorch. */
xpb_status ref_softmax_xent(const ref_op_args *a)
{
    const float *z = a->in[0];
    const int32_t *labels = (const int32_t *)(const void *)a->in[1];
    float *loss = a->out[0], *prob = a->op->n_outputs > 1 ? a->out[1] : NULL;
    int64_t n = a->in_desc[0]->dims[0], k = a->in_desc[0]->dims[1], n_valid;
    xpb_status st = check_labels(a, labels, n, k, &n_valid);
    if (st != XPB_OK)
        return st;
    double eps = a->op->label_smoothing, total = 0.0;
    for (int64_t i = 0; i < n; i++) {
        float *p = prob ? prob + i * k : NULL;
        if (ignored(a, labels[i])) {
            if (p) /* the workspace row is never read back: the backward writes zeros */
                memset(p, 0, (size_t)k * sizeof *p);
            continue;
        }
        total += eps > 0.0 ? smoothed_row(z + i * k, k, labels[i], eps, p)
                           : xpb_softmax_xent_row(z + i * k, k, labels[i], p);
    }
    loss[0] = (float)(total / (double)n_valid);
    return XPB_OK;
}

/* dlogits = scale * (prob - (1 - eps) onehot - eps / k) / n_valid for the rows not ignored, 0
 * for the ignored ones. */
xpb_status ref_softmax_xent_bwd(const ref_op_args *a)
{
    const float *prob = a->in[0];
    const int32_t *labels = (const int32_t *)(const void *)a->in[1];
    float *dz = a->out[0];
    int64_t n = a->in_desc[0]->dims[0], k = a->in_desc[0]->dims[1], n_valid;
    xpb_status st = check_labels(a, labels, n, k, &n_valid);
    if (st != XPB_OK)
        return st;
    double eps = a->op->label_smoothing;
    double f = (double)a->op->attrs.scale / (double)n_valid, off = eps / (double)k;
    for (int64_t i = 0; i < n; i++) {
        int skip = ignored(a, labels[i]);
        for (int64_t j = 0; j < k; j++) {
            double target = (j == labels[i] ? 1.0 - eps : 0.0) + off;
            dz[i * k + j] = skip ? 0.0f : (float)(f * (prob[i * k + j] - target));
        }
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
