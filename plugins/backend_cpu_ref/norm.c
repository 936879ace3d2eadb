/* Normalisation kernels: batch norm (training, inference, backward) and instance norm (no
 * affine, no running statistics) with its backward. PyTorch's maths: biased variance in the
 * forward pass, unbiased variance in the running-variance update. Sums are accumulated in
 * double, as PyTorch's CPU kernels do, so that the reference is the most accurate oracle. */
#include <math.h>
#include <stdio.h>

#include "ref.h"

/* Splits a [N,C,...] tensor into batch N, channels C and the spatial size S (the product of
 * the remaining dims; 1 for [N,C]). */
static void split_nc(const xpb_tensor_desc *d, int64_t *n, int64_t *c, int64_t *s)
{
    *n = d->dims[0];
    *c = d->ndim > 1 ? d->dims[1] : 1;
    *s = 1;
    for (uint32_t i = 2; i < d->ndim; i++)
        *s *= d->dims[i];
}

/* Mean and biased variance of the `count` planes of `s` elements at x + plane * stride,
 * plane = 0..count-1 (two passes, in double). */
static void plane_stats(const float *x, int64_t count, int64_t stride, int64_t s, double *mean,
                        double *var)
{
    double sum = 0.0;
    for (int64_t p = 0; p < count; p++)
        for (int64_t i = 0; i < s; i++)
            sum += x[p * stride + i];
    double m = sum / (double)(count * s);
    double sq = 0.0;
    for (int64_t p = 0; p < count; p++)
        for (int64_t i = 0; i < s; i++) {
            double d = x[p * stride + i] - m;
            sq += d * d;
        }
    *mean = m;
    *var = sq / (double)(count * s);
}

xpb_status ref_batchnorm_train(const ref_op_args *a)
{
    const xpb_op_attrs *at = &a->op->attrs;
    const float *x = a->in[0], *gamma = a->in[1], *beta = a->in[2];
    float *rm = a->in[3], *rv = a->in[4];
    float *y = a->out[0], *ws_mean = a->out[1], *ws_var = a->out[2];
    int64_t n, c, s;
    split_nc(a->in_desc[0], &n, &c, &s);
    int64_t count = n * s;
    if (count < 2) {
        snprintf(a->err, a->err_size,
                 "BATCHNORM_TRAIN (layer '%s'): needs more than 1 value per channel (N*H*W is "
                 "%lld), as PyTorch does",
                 a->op->layer ? a->op->layer : "?", (long long)count);
        return XPB_INVALID_ARGUMENT;
    }
    double mom = at->momentum;
    for (int64_t ch = 0; ch < c; ch++) {
        double mean, var;
        plane_stats(x + ch * s, n, c * s, s, &mean, &var);
        double invstd = 1.0 / sqrt(var + (double)at->eps);
        double g = gamma[ch], b = beta[ch];
        for (int64_t i = 0; i < n; i++) {
            const float *xp = x + (i * c + ch) * s;
            float *yp = y + (i * c + ch) * s;
            for (int64_t j = 0; j < s; j++)
                yp[j] = (float)((xp[j] - mean) * invstd * g + b);
        }
        if (ws_mean)
            ws_mean[ch] = (float)mean;
        if (ws_var)
            ws_var[ch] = (float)var;
        rm[ch] = (float)((1.0 - mom) * rm[ch] + mom * mean);
        rv[ch] = (float)((1.0 - mom) * rv[ch] + mom * var * (double)count / (double)(count - 1));
    }
    return XPB_OK;
}

xpb_status ref_batchnorm_infer(const ref_op_args *a)
{
    const float *x = a->in[0], *gamma = a->in[1], *beta = a->in[2];
    const float *rm = a->in[3], *rv = a->in[4];
    float *y = a->out[0];
    int64_t n, c, s;
    split_nc(a->in_desc[0], &n, &c, &s);
    for (int64_t ch = 0; ch < c; ch++) {
        double invstd = 1.0 / sqrt((double)rv[ch] + (double)a->op->attrs.eps);
        double mean = rm[ch], g = gamma[ch], b = beta[ch];
        for (int64_t i = 0; i < n; i++) {
            const float *xp = x + (i * c + ch) * s;
            float *yp = y + (i * c + ch) * s;
            for (int64_t j = 0; j < s; j++)
                yp[j] = (float)((xp[j] - mean) * invstd * g + b);
        }
    }
    return XPB_OK;
}

/* The gradient of y = (x - mean) * invstd through mean and variance computed from the same
 * `count` planes: dx = invstd * (dy - mean(dy) - xhat * mean(dy * xhat)), times `scale`.
 * Also returns sum(dy) and sum(dy * xhat). dx may be NULL (only the sums are wanted). */
static void norm_backward(const float *dy, const float *x, float *dx, int64_t count, int64_t stride,
                          int64_t s, double mean, double invstd, double scale, double *sum_dy_out,
                          double *sum_dy_xhat_out)
{
    double sum_dy = 0.0, sum_dy_xhat = 0.0;
    for (int64_t p = 0; p < count; p++)
        for (int64_t i = 0; i < s; i++) {
            int64_t k = p * stride + i;
            sum_dy += dy[k];
            sum_dy_xhat += dy[k] * (x[k] - mean) * invstd;
        }
    if (dx) {
        double m = (double)(count * s);
        double mean_dy = sum_dy / m, mean_dy_xhat = sum_dy_xhat / m;
        for (int64_t p = 0; p < count; p++)
            for (int64_t i = 0; i < s; i++) {
                int64_t k = p * stride + i;
                double xhat = (x[k] - mean) * invstd;
                dx[k] = (float)(scale * invstd * (dy[k] - mean_dy - xhat * mean_dy_xhat));
            }
    }
    *sum_dy_out = sum_dy;
    *sum_dy_xhat_out = sum_dy_xhat;
}

xpb_status ref_batchnorm_bwd(const ref_op_args *a)
{
    const float *dy = a->in[0], *x = a->in[1], *gamma = a->in[2];
    const float *ws_mean = a->in[3], *ws_var = a->in[4];
    float *dx = a->out[0], *dgamma = a->out[1], *dbeta = a->out[2];
    int64_t n, c, s;
    split_nc(a->in_desc[1], &n, &c, &s);
    for (int64_t ch = 0; ch < c; ch++) {
        double invstd = 1.0 / sqrt((double)ws_var[ch] + (double)a->op->attrs.eps);
        double sum_dy, sum_dy_xhat;
        /* dx[.., ch, ..] starts at offset ch * s like x and dy. */
        norm_backward(dy + ch * s, x + ch * s, dx ? dx + ch * s : NULL, n, c * s, s, ws_mean[ch],
                      invstd, gamma[ch], &sum_dy, &sum_dy_xhat);
        if (dgamma)
            dgamma[ch] = (float)sum_dy_xhat;
        if (dbeta)
            dbeta[ch] = (float)sum_dy;
    }
    return XPB_OK;
}

xpb_status ref_instancenorm(const ref_op_args *a)
{
    const float *x = a->in[0];
    float *y = a->out[0], *ws_mean = a->out[1], *ws_var = a->out[2];
    int64_t n, c, s;
    split_nc(a->in_desc[0], &n, &c, &s);
    for (int64_t p = 0; p < n * c; p++) {
        double mean, var;
        plane_stats(x + p * s, 1, s, s, &mean, &var);
        double invstd = 1.0 / sqrt(var + (double)a->op->attrs.eps);
        for (int64_t j = 0; j < s; j++)
            y[p * s + j] = (float)((x[p * s + j] - mean) * invstd);
        if (ws_mean)
            ws_mean[p] = (float)mean;
        if (ws_var)
            ws_var[p] = (float)var;
    }
    return XPB_OK;
}

xpb_status ref_instancenorm_bwd(const ref_op_args *a)
{
    const float *dy = a->in[0], *x = a->in[1], *ws_mean = a->in[2], *ws_var = a->in[3];
    float *dx = a->out[0];
    int64_t n, c, s;
    split_nc(a->in_desc[1], &n, &c, &s);
    for (int64_t p = 0; p < n * c; p++) {
        double invstd = 1.0 / sqrt((double)ws_var[p] + (double)a->op->attrs.eps);
        double sum_dy, sum_dy_xhat;
        norm_backward(dy + p * s, x + p * s, dx + p * s, 1, s, s, ws_mean[p], invstd, 1.0, &sum_dy,
                      &sum_dy_xhat);
    }
    return XPB_OK;
}
