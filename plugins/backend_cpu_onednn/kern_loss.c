/* Losses as own OpenMP kernels on dense fp32 tensors (they are small: logits, discriminator
 * maps): softmax cross-entropy with int32 labels (max-shifted log-sum-exp, softmax kept as the
 * workspace), mean squared error and mean absolute error, and their backward ops scaled by
 * the loss weight. Sums run in double, as the reference does. */
#include <math.h>

#include "odn.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

/* ---- kernels; p[0] = N (rows), p[1] = K (classes) or element count ---- */

static int labels_ok(const int32_t *labels, int64_t n, int64_t k)
{
    for (int64_t i = 0; i < n; i++)
        if (labels[i] < 0 || labels[i] >= k)
            return 0;
    return 1;
}

static xpb_status xent_kernel(odn_step *s)
{
    const float *z = s->o[0].ptr;
    const int32_t *labels = s->o[1].ptr;
    float *loss = s->o[2].ptr, *prob = s->n > 3 ? s->o[3].ptr : NULL;
    int64_t n = s->p[0], k = s->p[1];
    if (!labels_ok(labels, n, k)) {
        s->why = "a label lies outside [0, classes)";
        return XPB_INVALID_ARGUMENT;
    }
    double total = 0.0;
#pragma omp parallel for reduction(+ : total) schedule(static)
    for (int64_t i = 0; i < n; i++)
        total += xpb_softmax_xent_row(z + i * k, k, labels[i], prob ? prob + i * k : NULL);
    loss[0] = (float)(total / (double)n);
    return XPB_OK;
}

static xpb_status xent_bwd_kernel(odn_step *s)
{
    const float *prob = s->o[0].ptr;
    const int32_t *labels = s->o[1].ptr;
    float *dz = s->o[2].ptr;
    int64_t n = s->p[0], k = s->p[1];
    if (!labels_ok(labels, n, k)) {
        s->why = "a label lies outside [0, classes)";
        return XPB_INVALID_ARGUMENT;
    }
    double f = (double)s->f[0] / (double)n;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) {
            double onehot = j == labels[i] ? 1.0 : 0.0;
            dz[i * k + j] = (float)(f * (prob[i * k + j] - onehot));
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
