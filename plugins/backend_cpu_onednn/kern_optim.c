/* SGD_UPDATE, ADAM_UPDATE and ADAMW_UPDATE (op set 3) as own OpenMP kernels, in place on the
 * parameter's storage (whatever blocked layout its forward primitive chose: the gradient and the
 * optimizer state are brought to the same layout, so the update is element by element over the
 * whole buffer; zero padding stays zero). Under bf16-mixed the fp32 master is updated and its bf16
 * shadow, which the compute primitives read, is rewritten in the same pass. Per-element maths is
 * fp32 and the per-step scalars double, as the reference and PyTorch do. */
#include <math.h>

#include "odn.h"

/* o: param, grad, buf (p[1]: present), shadow (p[2]: present); p[0] elements incl. padding. */
static xpb_status sgd_kernel(odn_step *s)
{
    float *param = s->o[0].ptr, *buf = s->p[1] ? s->o[2].ptr : NULL;
    const float *grad = s->o[1].ptr;
    uint16_t *shadow = s->p[2] ? s->o[s->p[1] ? 3 : 2].ptr : NULL;
    float lr = s->f[0], momentum = s->f[1], wd = s->f[2];
    int64_t n = s->p[0];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float g = grad[i] + wd * param[i];
        if (buf) {
            buf[i] = momentum * buf[i] + g;
            g = buf[i];
        }
        param[i] -= lr * g;
        if (shadow)
            shadow[i] = odn_f32_to_bf16(param[i]);
    }
    return XPB_OK;
}

/* o: param, grad, m, v, step, shadow (p[2]: present); p[3]: step is int32; p[4]: AdamW (the
 * decay decoupled: param *= 1 - lr * weight_decay, in double as PyTorch's Python code, and the
 * gradient left alone), else Adam's L2 decay added to the gradient. */
static xpb_status adam_kernel(odn_step *s)
{
    float *param = s->o[0].ptr, *m = s->o[2].ptr, *v = s->o[3].ptr;
    const float *grad = s->o[1].ptr;
    uint16_t *shadow = s->p[2] ? s->o[5].ptr : NULL;
    double t;
    if (s->p[3]) {
        int32_t *step = s->o[4].ptr;
        t = (double)++step[0];
    } else {
        float *step = s->o[4].ptr;
        t = (double)(step[0] += 1.0f);
    }
    float lr = s->f[0], wd = s->f[2], b1 = s->f[3], b2 = s->f[4], eps = s->f[5];
    double bc1 = 1.0 - pow((double)b1, t), bc2 = 1.0 - pow((double)b2, t);
    float step_size = (float)((double)lr / bc1);
    float bc2_sqrt = (float)sqrt(bc2);
    int decoupled = s->p[4] != 0;
    float decay = decoupled ? (float)(1.0 - (double)lr * (double)wd) : 1.0f;
    int64_t n = s->p[0];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        if (decoupled)
            param[i] *= decay;
        float g = decoupled ? grad[i] : grad[i] + wd * param[i];
        m[i] = b1 * m[i] + (1.0f - b1) * g;
        v[i] = b2 * v[i] + (1.0f - b2) * g * g;
        float denom = sqrtf(v[i]) / bc2_sqrt + eps;
        param[i] -= step_size * m[i] / denom;
        if (shadow)
            shadow[i] = odn_f32_to_bf16(param[i]);
    }
    return XPB_OK;
}

xpb_status odn_compile_optim(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    int adam = op->kind == XPB_OP_ADAM_UPDATE || op->kind == XPB_OP_ADAMW_UPDATE;
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    if (op->n_inputs < (adam ? 5u : 2u))
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: expects %s", label,
                        adam ? "param, grad, m, v, step" : "param, grad[, momentum_buf]");
    uint32_t param = op->inputs[0];
    const xpb_tensor_desc *tp = xpb_program_tensor(exe->prog, param);
    int64_t numel = xpb_tensor_numel(tp);
    for (uint32_t k = 1; k < (adam ? 4u : op->n_inputs); k++) {
        const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, op->inputs[k]);
        if (xpb_tensor_numel(t) != numel || t->dtype != XPB_DTYPE_F32 || t->ndim != tp->ndim)
            return odn_fail(exe, XPB_INVALID_ARGUMENT,
                            "%s: parameter, gradient and state must have one shape (f32)", label);
    }
    if (tp->dtype != XPB_DTYPE_F32)
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: the parameter must be f32", label);
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = adam ? adam_kernel : sgd_kernel;
    /* the parameter as stored (an fp32 master); everything else follows its layout */
    xpb_status st = odn_inout(exe, &s, 0, param, NULL);
    if (st != XPB_OK)
        return st;
    dnnl_memory_desc_t md = s.o[0].md;
    if (md.data_type != dnnl_f32)
        return odn_fail(exe, XPB_INTERNAL, "%s: parameter not stored in fp32", label);
    if ((st = odn_in(exe, &s, 1, op->inputs[1], &md)) != XPB_OK)
        return st;
    uint32_t n_state = adam ? 2u : (op->n_inputs > 2 ? 1u : 0u);
    for (uint32_t k = 0; k < n_state; k++)
        if ((st = odn_inout(exe, &s, 2 + (int)k, op->inputs[2 + k], &md)) != XPB_OK)
            return st;
    if (adam) {
        const xpb_tensor_desc *ts = xpb_program_tensor(exe->prog, op->inputs[4]);
        if (xpb_tensor_numel(ts) != 1)
            return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: step must be a [1] tensor", label);
        dnnl_memory_desc_t smd;
        odn_md_plain(&smd, ts, ts->dtype == XPB_DTYPE_I32 ? dnnl_s32 : dnnl_f32);
        if ((st = odn_inout(exe, &s, 4, op->inputs[4], &smd)) != XPB_OK)
            return st;
        s.p[3] = ts->dtype == XPB_DTYPE_I32;
    }
    const odn_tensor *t = &exe->t[param];
    if (t->shadow_buf != ODN_NONE) {
        odn_buf_operand(&s, (int)s.n, t->shadow_buf, &t->shadow_md);
        s.p[2] = 1;
    }
    s.p[0] = (int64_t)(dnnl_memory_desc_get_size(&md) / sizeof(float));
    s.p[1] = n_state > 0;
    s.p[4] = op->kind == XPB_OP_ADAMW_UPDATE;
    s.f[0] = op->attrs.lr;
    s.f[1] = op->attrs.momentum;
    s.f[2] = op->attrs.weight_decay;
    s.f[3] = op->attrs.beta1;
    s.f[4] = op->attrs.beta2;
    s.f[5] = op->attrs.eps;
    return odn_commit(exe, &s);
}
