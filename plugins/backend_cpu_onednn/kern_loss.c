/* Losses as own OpenMP kernels on dense fp32 tensors (logits, discriminator maps): softmax
 * cross-entropy with int32 labels (max-shifted log-sum-exp, softmax kept as the workspace; op
 * set 3's ignore_index and label smoothing), mean squared error and mean absolute error, and
 * their backward ops scaled by the loss weight. Sums run in double, as the reference does; the
 * exponentials are vecmath.h's (a language model's logits are 10,000 to 50,257 wide: with the
 * C library's exp, two calls per logit in double, the loss of lstm-ptb-medium-train took 15% of
 * its bf16 step). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* vecmath.h: its loops vectorize only so */
#endif

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "odn.h"
#include "vecmath.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

/* ---- kernels; p[0] = N (rows), p[1] = K (classes) or element count ---- */

/* Cross-entropy: p[2] rows with label p[3] are ignored (op set 3's ignore_index); f[1] label
 * smoothing. */
static int ignored(const odn_step *s, int32_t label)
{
    return s->p[2] && label == s->p[3];
}

/* The rows not ignored into *n_valid; 0 when a label that is not ignored lies outside [0, K),
 * with the message naming it (in the executable's kernel_err, the step's ctx). */
static int labels_ok(odn_step *s, const int32_t *labels, int64_t *n_valid)
{
    int64_t n = s->p[0], k = s->p[1];
    *n_valid = 0;
    for (int64_t i = 0; i < n; i++) {
        if (ignored(s, labels[i]))
            continue;
        if (labels[i] < 0 || labels[i] >= k) {
            snprintf(s->ctx, ODN_ERR_SIZE,
                     "sample %lld has label %d, outside the %lld classes [0, %lld)", (long long)i,
                     (int)labels[i], (long long)k, (long long)k);
            s->why = s->ctx;
            return 0;
        }
        (*n_valid)++;
    }
    return 1;
}

/* One row's loss with label smoothing eps (the target (1 - eps) onehot + eps / k): the op-set-1
 * row nll = lse - z[label] (as xpb_softmax_xent_row computes it, max-shifted, the sum in
 * double; softmax(z) into prob when not NULL), then (1 - eps) nll + eps (lse - mean z) =
 * nll + eps (z[label] - mean z), the difference taken in double so that huge logits cancel
 * exactly. A NaN logit makes the loss NaN. */
ODN_VEC_CLONES static double smoothed_loss(const float *z, int64_t k, int32_t label, double eps,
                                           float *prob)
{
    float m = z[0];
#pragma omp simd reduction(max : m)
    for (int64_t j = 1; j < k; j++)
        m = z[j] > m ? z[j] : m;
    double sum = 0.0;
    if (prob) {
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < k; j++) {
            float e = odn_fast_exp(z[j] - m);
            prob[j] = e;
            sum += e;
        }
        float inv = (float)(1.0 / sum);
#pragma omp simd
        for (int64_t j = 0; j < k; j++)
            prob[j] *= inv;
    } else {
#pragma omp simd reduction(+ : sum)
        for (int64_t j = 0; j < k; j++)
            sum += odn_fast_exp(z[j] - m);
    }
    double nll = log(sum) - ((double)z[label] - m), gap = 0.0; /* sum (z[label] - z) */
    if (eps == 0.0)
        return nll;
#pragma omp simd reduction(+ : gap)
    for (int64_t j = 0; j < k; j++)
        gap += (double)z[label] - z[j];
    return nll + eps * gap / (double)k;
}

static xpb_status xent_kernel(odn_step *s)
{
    const float *z = s->o[0].ptr;
    const int32_t *labels = s->o[1].ptr;
    float *loss = s->o[2].ptr, *prob = s->n > 3 ? s->o[3].ptr : NULL;
    int64_t n = s->p[0], k = s->p[1], n_valid;
    double eps = s->f[1];
    if (!labels_ok(s, labels, &n_valid))
        return XPB_INVALID_ARGUMENT;
    double total = 0.0;
#pragma omp parallel for reduction(+ : total) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float *p = prob ? prob + i * k : NULL;
        if (ignored(s, labels[i])) {
            if (p) /* never read back: the backward writes zeros for the row */
                memset(p, 0, (size_t)k * sizeof *p);
            continue;
        }
        total += smoothed_loss(z + i * k, k, labels[i], eps, p); /* eps 0: op set 1's row */
    }
    loss[0] = (float)(total / (double)n_valid); /* every row ignored: 0 / 0, NaN as PyTorch */
    return XPB_OK;
}

static xpb_status xent_bwd_kernel(odn_step *s)
{
    const float *prob = s->o[0].ptr;
    const int32_t *labels = s->o[1].ptr;
    float *dz = s->o[2].ptr;
    int64_t n = s->p[0], k = s->p[1], n_valid;
    if (!labels_ok(s, labels, &n_valid))
        return XPB_INVALID_ARGUMENT;
    double eps = s->f[1], f = (double)s->f[0] / (double)n_valid, off = eps / (double)k;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        int skip = ignored(s, labels[i]);
        for (int64_t j = 0; j < k; j++) {
            double target = (j == labels[i] ? 1.0 - eps : 0.0) + off;
            dz[i * k + j] = skip ? 0.0f : (float)(f * (prob[i * k + j] - target));
        }
    }
    return XPB_OK;
}

static xpb_status mse_kernel(odn_step *s)
{
    const float *x = s->o[0].ptr, *t = s->o[1].ptr;
    int64_t n = s->p[1];
    double sum = 0.0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        double d = (double)x[i] - t[i];
        sum += d * d;
    }
    ((float *)s->o[2].ptr)[0] = (float)(sum / (double)n);
    return XPB_OK;
}

static xpb_status mse_bwd_kernel(odn_step *s)
{
    const float *x = s->o[0].ptr, *t = s->o[1].ptr;
    float *dx = s->o[2].ptr;
    int64_t n = s->p[1];
    double f = 2.0 * (double)s->f[0] / (double)n;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        dx[i] = (float)(f * ((double)x[i] - t[i]));
    return XPB_OK;
}

static xpb_status l1_kernel(odn_step *s)
{
    const float *x = s->o[0].ptr, *t = s->o[1].ptr;
    int64_t n = s->p[1];
    double sum = 0.0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (int64_t i = 0; i < n; i++)
        sum += fabs((double)x[i] - t[i]);
    ((float *)s->o[2].ptr)[0] = (float)(sum / (double)n);
    return XPB_OK;
}

static xpb_status l1_bwd_kernel(odn_step *s)
{
    const float *x = s->o[0].ptr, *t = s->o[1].ptr;
    float *dx = s->o[2].ptr;
    int64_t n = s->p[1];
    float f = (float)((double)s->f[0] / (double)n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        dx[i] = x[i] > t[i] ? f : x[i] < t[i] ? -f : 0.0f; /* sign(0) = 0 */
    return XPB_OK;
}

/* ---- compile ---- */

static xpb_status bad(xpb_executable *exe, const char *what)
{
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: %s", label, what);
}

/* Operand in dense row-major fp32 (or int32 for labels). */
static xpb_status plain_in(xpb_executable *exe, odn_step *s, int slot, uint32_t tid)
{
    const xpb_tensor_desc *t = T(exe, tid);
    dnnl_memory_desc_t md;
    odn_md_plain(&md, t, t->dtype == XPB_DTYPE_I32 ? dnnl_s32 : dnnl_f32);
    return odn_in(exe, s, slot, tid, &md);
}

static xpb_status plain_out(xpb_executable *exe, odn_step *s, int slot, uint32_t tid)
{
    dnnl_memory_desc_t md;
    odn_md_plain(&md, T(exe, tid), dnnl_f32);
    return odn_out(exe, s, slot, tid, &md);
}

xpb_status odn_compile_loss(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    int xent = op->kind == XPB_OP_SOFTMAX_XENT || op->kind == XPB_OP_SOFTMAX_XENT_BWD;
    int backward = op->kind == XPB_OP_SOFTMAX_XENT_BWD || op->kind == XPB_OP_MSE_LOSS_BWD ||
                   op->kind == XPB_OP_L1_LOSS_BWD;
    if (op->n_inputs < 2 || op->n_outputs < 1)
        return bad(exe, "missing inputs or outputs");
    const xpb_tensor_desc *a = T(exe, op->inputs[0]), *b = T(exe, op->inputs[1]);
    if (xent) {
        if (a->ndim != 2 || b->dtype != XPB_DTYPE_I32 || xpb_tensor_numel(b) != a->dims[0] ||
            a->dtype != XPB_DTYPE_F32)
            return bad(exe, "expects logits f32 [N,K] and labels i32 [N]");
    } else if (xpb_tensor_numel(a) != xpb_tensor_numel(b) || a->dtype != XPB_DTYPE_F32 ||
               b->dtype != XPB_DTYPE_F32) {
        return bad(exe, "expects x and target of one size (f32)");
    }
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    switch (op->kind) {
    case XPB_OP_SOFTMAX_XENT:
        s.fn = xent_kernel;
        break;
    case XPB_OP_SOFTMAX_XENT_BWD:
        s.fn = xent_bwd_kernel;
        break;
    case XPB_OP_MSE_LOSS:
        s.fn = mse_kernel;
        break;
    case XPB_OP_MSE_LOSS_BWD:
        s.fn = mse_bwd_kernel;
        break;
    case XPB_OP_L1_LOSS:
        s.fn = l1_kernel;
        break;
    default:
        s.fn = l1_bwd_kernel;
        break;
    }
    s.p[0] = a->dims[0];
    s.p[1] = xent ? a->dims[1] : xpb_tensor_numel(a);
    s.f[0] = op->attrs.scale;
    s.ctx = exe->kernel_err;
    if (xent && XPB_OP_HAS(exe->prog, reserved3_)) { /* op set 3's attributes */
        s.p[2] = (op->index_flags & XPB_INDEX_IGNORE) != 0;
        s.p[3] = op->ignore_index;
        s.f[1] = op->label_smoothing;
    }
    xpb_status st;
    if ((st = plain_in(exe, &s, 0, op->inputs[0])) != XPB_OK ||
        (st = plain_in(exe, &s, 1, op->inputs[1])) != XPB_OK ||
        (st = plain_out(exe, &s, 2, op->outputs[0])) != XPB_OK)
        return st;
    if (xent && !backward && op->n_outputs > 1 && op->outputs[1] != XPB_NO_TENSOR &&
        (st = plain_out(exe, &s, 3, op->outputs[1])) != XPB_OK)
        return st;
    return odn_commit(exe, &s);
}
