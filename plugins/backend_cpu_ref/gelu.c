/* GELU, exact (x Phi(x), with erf) or PyTorch's tanh approximation, and its backward from the
 * forward input (docs/ops.md). Each element is computed in double and rounded once. */
#include <math.h>

#include "ref.h"

#define SQRT_2_OVER_PI 0.7978845608028654 /* sqrt(2 / pi) */
#define INV_SQRT_2 0.7071067811865476     /* 1 / sqrt(2) */
#define INV_SQRT_2PI 0.3989422804014327   /* 1 / sqrt(2 pi) */
#define GELU_C 0.044715

static double gelu(double x, int tanh_approx)
{
    if (tanh_approx)
        return 0.5 * x * (1.0 + tanh(SQRT_2_OVER_PI * (x + GELU_C * x * x * x)));
    return 0.5 * x * (1.0 + erf(x * INV_SQRT_2));
}

/* dy/dx: exact Phi(x) + x phi(x); tanh 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3c x^2). */
static double gelu_grad(double x, int tanh_approx)
{
    if (tanh_approx) {
        double t = tanh(SQRT_2_OVER_PI * (x + GELU_C * x * x * x));
        return 0.5 * (1.0 + t) +
               0.5 * x * (1.0 - t * t) * SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_C * x * x);
    }
    return 0.5 * (1.0 + erf(x * INV_SQRT_2)) + x * INV_SQRT_2PI * exp(-0.5 * x * x);
}

/* GELU(x) -> y */
xpb_status ref_gelu(const ref_op_args *a)
{
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    int tanh_approx = a->op->approximate == XPB_GELU_TANH;
    for (int64_t i = 0; i < n; i++)
        a->out[0][i] = (float)gelu(a->in[0][i], tanh_approx);
    return XPB_OK;
}

/* GELU_BWD(dy, x) -> dx = dy * gelu'(x) */
xpb_status ref_gelu_bwd(const ref_op_args *a)
{
    int64_t n = xpb_tensor_numel(a->in_desc[0]);
    int tanh_approx = a->op->approximate == XPB_GELU_TANH;
    for (int64_t i = 0; i < n; i++)
        a->out[0][i] = (float)((double)a->in[0][i] * gelu_grad(a->in[1][i], tanh_approx));
    return XPB_OK;
}
