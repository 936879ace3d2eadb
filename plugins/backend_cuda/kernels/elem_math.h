/* Per-element maths of the cuda backend's own kernels, as inline functions that compile as C
 * (the host tests, tests/test_cuda_math.c, compare them with cpu_ref's kernels) and as CUDA C++
 * (__host__ __device__, called by the kernels in k_*.cu). Every formula is docs/ops.md's, in
 * the order of operations cpu_ref uses, so that the same inputs give the same (or, where the
 * reference sums in double, nearly the same) numbers. No state, no memory access beyond the
 * arguments. */
#ifndef XPB_CUX_ELEM_MATH_H
#define XPB_CUX_ELEM_MATH_H

#include <stdint.h>

#ifdef __CUDACC__
#define CUX_HD static inline __host__ __device__
#else
#include <math.h>
#define CUX_HD static inline
#endif

/* Activation kinds (also the fused-epilogue activations of convolutions and matmuls). */
enum { CUX_ACT_NONE = 0, CUX_ACT_RELU = 1, CUX_ACT_LEAKY = 2, CUX_ACT_TANH = 3 };

/* ---- activations: forward from x, backward from the forward output y (ops.md) ---- */

/* y = act(x); `alpha` is LeakyReLU's negative slope. */
CUX_HD float cux_act_fwd(int act, float alpha, float x)
{
    switch (act) {
    case CUX_ACT_RELU:
        return x > 0.0f ? x : 0.0f;
    case CUX_ACT_LEAKY:
        return x > 0.0f ? x : alpha * x;
    case CUX_ACT_TANH:
        return tanhf(x);
    default:
        return x;
    }
}

/* dx from dy and the forward output y: RELU_BWD, LEAKY_RELU_BWD, TANH_BWD. */
CUX_HD float cux_act_bwd(int act, float alpha, float dy, float y)
{
    switch (act) {
    case CUX_ACT_RELU:
        return y > 0.0f ? dy : 0.0f;
    case CUX_ACT_LEAKY:
        return y > 0.0f ? dy : alpha * dy;
    case CUX_ACT_TANH:
        return dy * (1.0f - y * y);
    default:
        return dy;
    }
}

/* ---- GELU (ops.md "GELU, GELU_BWD"; op set 3) ----
 * The erf form (approximate 0) and PyTorch's tanh form (XPB_GELU_TANH), in fp32. cpu_ref
 * (gelu.c) evaluates the textbook forms in double and rounds once; in fp32 those forms cancel
 * for negative x, where 1 + erf(z) and 1 + tanh(u) lose every digit as they approach 0. These
 * are the same functions written without the cancellation: 1 + erf(z) = erfc(-z), and with
 * s = 1 / (1 + exp(-2u)), 1 + tanh(u) = 2 s and 1 - tanh(u)^2 = 4 s (1 - s). Their error is
 * the rounding of the fp32 argument carried through the function: (4 + cond(x)) ulps at most,
 * cond(x) = x^2 for the erf form (tests/test_cuda_math.c states and checks the bound). */
#define CUX_GELU_SQRT_2_OVER_PI 0.7978845608028654f /* sqrt(2 / pi) */
#define CUX_GELU_INV_SQRT_2 0.7071067811865476f     /* 1 / sqrt(2) */
#define CUX_GELU_INV_SQRT_2PI 0.3989422804014327f   /* 1 / sqrt(2 pi) */
#define CUX_GELU_C 0.044715f

/* The tanh form's s = (1 + tanh(u)) / 2 and its complement sc = 1 - s = (1 - tanh(u)) / 2,
 * u = sqrt(2/pi) (x + 0.044715 x^3), each from exp(-2 |u|) <= 1 so that neither cancels nor
 * overflows (|u| = inf gives 1 and 0; a NaN x gives NaN). */
CUX_HD void cux_gelu_tanh_halves(float x, float *s, float *sc)
{
    float u = CUX_GELU_SQRT_2_OVER_PI * (x + CUX_GELU_C * x * x * x);
    float e = expf(-2.0f * fabsf(u));
    float big = 1.0f / (1.0f + e), small = e * big;
    *s = u >= 0.0f ? big : small;
    *sc = u >= 0.0f ? small : big;
}

/* GELU(x): 0.5 x (1 + erf(x / sqrt(2))), or 0.5 x (1 + tanh(u)) = x s with tanh_approx. */
CUX_HD float cux_gelu(float x, int tanh_approx)
{
    if (tanh_approx) {
        float s, sc;
        cux_gelu_tanh_halves(x, &s, &sc);
        return x * s;
    }
    return 0.5f * x * erfcf(-x * CUX_GELU_INV_SQRT_2);
}

/* GELU's derivative: Phi(x) + x phi(x) (erf form), or 0.5 (1 + t) + 0.5 x (1 - t^2)
 * sqrt(2/pi) (1 + 3 * 0.044715 x^2) = s + 2 x s sc sqrt(2/pi) (1 + 3 * 0.044715 x^2) (tanh form;
 * the second term is 0 where s sc is, which keeps a huge x from making 0 * inf). */
CUX_HD float cux_gelu_grad(float x, int tanh_approx)
{
    if (tanh_approx) {
        float s, sc;
        cux_gelu_tanh_halves(x, &s, &sc);
        float p = s * sc;
        if (!(p > 0.0f))
            return s;
        return s + 2.0f * x * p * CUX_GELU_SQRT_2_OVER_PI * (1.0f + 3.0f * CUX_GELU_C * x * x);
    }
    return 0.5f * erfcf(-x * CUX_GELU_INV_SQRT_2) + x * CUX_GELU_INV_SQRT_2PI * expf(-0.5f * x * x);
}

/* GELU_BWD: dx = dy * GELU'(x), x the forward's input. */
CUX_HD float cux_gelu_bwd(float dy, float x, int tanh_approx)
{
    return dy * cux_gelu_grad(x, tanh_approx);
}

/* ---- dropout: the mask stream of docs/ops.md is program.h's xpb_dropout_stream and
 * xpb_dropout_factor, which compile for the device too (XPB_HOST_DEVICE). ---- */

/* ---- losses (ops.md "Losses"; f is the op's factor, computed by the caller in double) ---- */

/* MSE_LOSS_BWD: dx = f * (x - t), f = 2 * scale / numel, evaluated in double like cpu_ref. */
CUX_HD float cux_mse_bwd(double f, float x, float t)
{
    return (float)(f * ((double)x - (double)t));
}

/* L1_LOSS_BWD: dx = f * sign(x - t), sign(0) = 0, f = (float)(scale / numel). */
CUX_HD float cux_l1_bwd(float f, float x, float t)
{
    return x > t ? f : x < t ? -f : 0.0f;
}

/* SOFTMAX_XENT_BWD: dz = f * (prob - onehot), f = scale / N, in double like cpu_ref. */
CUX_HD float cux_xent_bwd(double f, float prob, int is_label)
{
    return (float)(f * ((double)prob - (is_label ? 1.0 : 0.0)));
}

/* ---- normalisation ----
 * The statistics are doubles; the per-element work is float with the mean split in two floats
 * (hi + lo = mean to double precision), so that x - mean stays exact where x is close to the
 * mean even when |mean| is much larger than the spread (deep in a CycleGAN generator). */

/* Forward coefficients of one channel (or one (n, c) for instance norm):
 * c[0], c[1] = the mean as hi + lo, c[2] = gamma * invstd, c[3] = beta. */
CUX_HD void cux_norm_coeffs(double mean, double var, double eps, double gamma, double beta,
                            float c[4])
{
    double invstd = 1.0 / sqrt(var + eps);
    c[0] = (float)mean;
    c[1] = (float)(mean - (double)c[0]);
    c[2] = (float)(gamma * invstd);
    c[3] = (float)beta;
}

/* y = (x - mean) * invstd * gamma + beta (ops.md BATCHNORM_*, INSTANCENORM with gamma 1,
 * beta 0), from cux_norm_coeffs. */
CUX_HD float cux_norm_apply(float x, const float c[4])
{
    return ((x - c[0]) - c[1]) * c[2] + c[3];
}

/* Backward coefficients from the statistics and the two sums of the backward reduction
 * (sum_dy = sum dy, sum_dyc = sum dy * (x - mean)) over `count` values:
 * dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)) =
 *      c[2] * (dy - c[3]) - c[4] * (x - mean), mean = c[0] + c[1]. Also gives dgamma and
 * dbeta (batch norm). */
CUX_HD void cux_norm_bwd_coeffs(double mean, double var, double eps, double gamma, double sum_dy,
                                double sum_dyc, double count, float c[5], float *dgamma,
                                float *dbeta)
{
    double invstd = 1.0 / sqrt(var + eps);
    double dg = sum_dyc * invstd; /* sum dy * xhat */
    c[0] = (float)mean;
    c[1] = (float)(mean - (double)c[0]);
    c[2] = (float)(gamma * invstd);
    c[3] = (float)(sum_dy / count);
    c[4] = (float)(gamma * invstd * invstd * (dg / count));
    *dgamma = (float)dg;
    *dbeta = (float)sum_dy;
}

CUX_HD float cux_norm_bwd_apply(float dy, float x, const float c[5])
{
    return c[2] * (dy - c[3]) - c[4] * ((x - c[0]) - c[1]);
}

/* BATCHNORM_TRAIN's running statistics (in place), `count` = N*H*W > 1. */
CUX_HD void cux_bn_running(float *rm, float *rv, double mean, double var, double momentum,
                           double count)
{
    *rm = (float)((1.0 - momentum) * (double)*rm + momentum * mean);
    *rv = (float)((1.0 - momentum) * (double)*rv + momentum * var * count / (count - 1.0));
}

/* Mean and biased variance from sums taken around a shift K (the "shifted data" algorithm:
 * s1 = sum(x - K), s2 = sum((x - K)^2) over `count` values), which keeps the subtraction
 * well conditioned when |mean| is large next to the spread. */
CUX_HD void cux_shifted_stats(double shift, double s1, double s2, double count, double *mean,
                              double *var)
{
    double m1 = s1 / count;
    double v = s2 / count - m1 * m1;
    *mean = shift + m1;
    *var = v > 0.0 ? v : 0.0;
}

/* ---- optimizers (ops.md "Optimizer updates"; per-element fp32 like cpu_ref) ---- */

/* SGD_UPDATE on one element; buf is NULL without a momentum buffer. Returns the new param. */
CUX_HD float cux_sgd(float param, float grad, float *buf, float lr, float momentum, float wd)
{
    float g = grad + wd * param;
    if (buf) {
        *buf = momentum * *buf + g;
        g = *buf;
    }
    return param - lr * g;
}

/* Adam's per-step scalars for step t (1-based), in double like cpu_ref and PyTorch. */
CUX_HD void cux_adam_coeffs(double lr, double beta1, double beta2, double t, float *step_size,
                            float *bc2_sqrt)
{
    double bc1 = 1.0 - pow(beta1, t);
    double bc2 = 1.0 - pow(beta2, t);
    *step_size = (float)(lr / bc1);
    *bc2_sqrt = (float)sqrt(bc2);
}

/* ADAM_UPDATE on one element (m, v in place). Returns the new param. */
CUX_HD float cux_adam(float param, float grad, float *m, float *v, float b1, float b2, float eps,
                      float wd, float step_size, float bc2_sqrt)
{
    float g = grad + wd * param;
    *m = b1 * *m + (1.0f - b1) * g;
    *v = b2 * *v + (1.0f - b2) * g * g;
    float denom = sqrtf(*v) / bc2_sqrt + eps;
    return param - step_size * *m / denom;
}

/* ---- op set 3: AdamW, and the cross-entropy's backward with label smoothing ---- */

/* ADAMW_UPDATE's decay factor 1 - lr * weight_decay, in double and rounded to fp32 as cpu_ref
 * (ref_adamw_update) and PyTorch's Python code. */
CUX_HD float cux_adamw_decay(float lr, float wd)
{
    return (float)(1.0 - (double)lr * (double)wd);
}

/* ADAMW_UPDATE on one element (m, v in place): the parameter decays first (decoupled: the
 * gradient is not changed), then Adam's step on the gradient; `decay` from cux_adamw_decay,
 * step_size and bc2_sqrt from cux_adam_coeffs. Returns the new param. */
CUX_HD float cux_adamw(float param, float grad, float *m, float *v, float b1, float b2, float eps,
                       float decay, float step_size, float bc2_sqrt)
{
    float p = param * decay;
    *m = b1 * *m + (1.0f - b1) * grad;
    *v = b2 * *v + (1.0f - b2) * grad * grad;
    float denom = sqrtf(*v) / bc2_sqrt + eps;
    return p - step_size * *m / denom;
}

/* SOFTMAX_XENT_BWD with label smoothing eps (op set 3): dz = f * (prob - target), target =
 * (1 - eps) onehot + off, off = eps / K, f = scale / N_valid; in double like cpu_ref. With
 * eps = off = 0 this is cux_xent_bwd's number exactly. */
CUX_HD float cux_xent_bwd_smooth(double f, float prob, int is_label, double eps, double off)
{
    double target = (is_label ? 1.0 - eps : 0.0) + off;
    return (float)(f * ((double)prob - target));
}

/* ---- dynamic loss scaling (fp16-mixed; docs/backend-cuda.md) ---- */

/* The scaler after a step: halve and restart the count on overflow, double after `interval`
 * clean steps in a row (interval 0: never grow). PyTorch's GradScaler defaults: 2^16, 2000. */
CUX_HD void cux_scaler_next(float *scale, uint32_t *good, int overflow, uint32_t interval)
{
    if (overflow) {
        *scale = *scale * 0.5f > 1.0f ? *scale * 0.5f : 1.0f;
        *good = 0;
        return;
    }
    if (interval == 0)
        return;
    if (++*good >= interval) {
        *scale = *scale * 2.0f < 16777216.0f ? *scale * 2.0f : 16777216.0f;
        *good = 0;
    }
}

#endif
