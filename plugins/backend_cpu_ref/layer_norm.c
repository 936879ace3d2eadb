/* LAYER_NORM over the last axis (biased variance, eps, affine: F.layer_norm) and its backward
 * (docs/ops.md). Statistics and the backward's row sums are computed in double; the reference's
 * workspace holds each row's mean and 1 / sqrt(var + eps). */
#include <math.h>
#include <stdlib.h>

#include "ref.h"

/* LAYER_NORM(x[.., D], gamma[D], beta[D]) -> y, ws_mean opt, ws_rstd opt */
xpb_status ref_layer_norm(const ref_op_args *a)
{
    const xpb_tensor_desc *xd = a->in_desc[0];
    const float *x = a->in[0], *gamma = a->in[1], *beta = a->in[2];
    float *y = a->out[0];
    float *ws_mean = a->op->n_outputs > 1 ? a->out[1] : NULL;
    float *ws_rstd = a->op->n_outputs > 2 ? a->out[2] : NULL;
    int64_t d = xd->dims[xd->ndim - 1], rows = xpb_tensor_numel(xd) / d;
    double eps = a->op->attrs.eps;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * d;
        double sum = 0.0, sq = 0.0;
        for (int64_t j = 0; j < d; j++)
            sum += xr[j];
        double mean = sum / (double)d;
        for (int64_t j = 0; j < d; j++) {
            double c = xr[j] - mean;
            sq += c * c;
        }
        double rstd = 1.0 / sqrt(sq / (double)d + eps);
        for (int64_t j = 0; j < d; j++)
            y[r * d + j] = (float)((xr[j] - mean) * rstd * gamma[j] + beta[j]);
        if (ws_mean)
            ws_mean[r] = (float)mean;
        if (ws_rstd)
            ws_rstd[r] = (float)rstd;
    }
    return XPB_OK;
}

/* LAYER_NORM_BWD(dy, x, gamma, ws_mean, ws_rstd) -> dx opt, dgamma opt, dbeta opt, with
 * xhat = (x - mean) * rstd and g = dy * gamma: dx = rstd * (g - mean(g) - xhat * mean(g xhat)),
 * dgamma = sum over the rows of dy * xhat, dbeta = sum of dy. */
xpb_status ref_layer_norm_bwd(const ref_op_args *a)
{
    const xpb_tensor_desc *xd = a->in_desc[1];
    const float *dy = a->in[0], *x = a->in[1], *gamma = a->in[2];
    const float *mean = a->in[3], *rstd = a->in[4];
    float *dx = a->out[0];
    float *dgamma = a->op->n_outputs > 1 ? a->out[1] : NULL;
    float *dbeta = a->op->n_outputs > 2 ? a->out[2] : NULL;
    int64_t d = xd->dims[xd->ndim - 1], rows = xpb_tensor_numel(xd) / d;
    double *acc = calloc((size_t)(2 * d), sizeof *acc); /* dgamma, dbeta */
    if (!acc)
        return ref_fail(a, XPB_OUT_OF_MEMORY, "out of memory for %lld sums", (long long)(2 * d));
    for (int64_t r = 0; r < rows; r++) {
        const float *dyr = dy + r * d, *xr = x + r * d;
        double mu = mean[r], rs = rstd[r], sum_g = 0.0, sum_gx = 0.0;
        for (int64_t j = 0; j < d; j++) {
            double xhat = (xr[j] - mu) * rs, g = (double)dyr[j] * gamma[j];
            sum_g += g;
            sum_gx += g * xhat;
            acc[j] += dyr[j] * xhat;
            acc[d + j] += dyr[j];
        }
        if (!dx)
            continue;
        double mean_g = sum_g / (double)d, mean_gx = sum_gx / (double)d;
        for (int64_t j = 0; j < d; j++) {
            double xhat = (xr[j] - mu) * rs, g = (double)dyr[j] * gamma[j];
            dx[r * d + j] = (float)(rs * (g - mean_g - xhat * mean_gx));
        }
    }
    for (int64_t j = 0; j < d; j++) {
        if (dgamma)
            dgamma[j] = (float)acc[j];
        if (dbeta)
            dbeta[j] = (float)acc[d + j];
    }
    free(acc);
    return XPB_OK;
}
