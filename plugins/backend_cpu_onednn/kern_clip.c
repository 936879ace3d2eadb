/* CLIP_GRAD_NORM (op set 3): torch.nn.utils.clip_grad_norm_ of PyTorch 1.13 over any number of
 * gradients, as 2N + 1 small kernel steps that share a 16-byte accumulator buffer: one step
 * per gradient adds its sum of squares (in double, OpenMP reduction), one step takes the
 * square root (rounded to fp32, as PyTorch's norm) into total_norm and the coefficient
 * max_norm / (total + 1e-6) (fp32), and one step per gradient multiplies it in place when the
 * coefficient is below 1 (a NaN total makes every gradient NaN, as PyTorch's default).
 * Gradients are summed and scaled in whatever layout they are stored in (fp32; the zero
 * padding of a blocked layout adds nothing and stays zero). */
#include <math.h>

#include "odn.h"

/* The accumulator: the running sum of squares, then the coefficient. */
struct clip_acc {
    double sum_sq;
    float coef;
};

/* ---- kernels ---- */

/* o: gradient (p[0] floats), accumulator; p[1]: the first gradient (resets the sum) */
static xpb_status sum_sq_kernel(odn_step *s)
{
    const float *g = s->o[0].ptr;
    struct clip_acc *acc = s->o[1].ptr;
    int64_t n = s->p[0];
    double sq = 0.0;
#pragma omp parallel for simd reduction(+ : sq) schedule(static)
    for (int64_t i = 0; i < n; i++)
        sq += (double)g[i] * g[i];
    acc->sum_sq = (s->p[1] ? 0.0 : acc->sum_sq) + sq;
    return XPB_OK;
}

/* o: accumulator, total_norm[1]; f[0] max_norm */
static xpb_status norm_kernel(odn_step *s)
{
    struct clip_acc *acc = s->o[0].ptr;
    float total = (float)sqrt(acc->sum_sq);
    ((float *)s->o[1].ptr)[0] = total;
    acc->coef = s->f[0] / (total + 1e-6f);
    return XPB_OK;
}

/* o: gradient (p[0] floats, in place), accumulator */
static xpb_status scale_kernel(odn_step *s)
{
    float *g = s->o[0].ptr;
    const struct clip_acc *acc = s->o[1].ptr;
    float coef = acc->coef;
    int64_t n = s->p[0];
    if (coef >= 1.0f) /* false for a NaN coefficient: the gradients become NaN */
        return XPB_OK;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++)
        g[i] *= coef;
    return XPB_OK;
}

/* ---- compile ---- */

/* How gradient `tid` is read and scaled: fp32 as it is stored, or dense row-major fp32 when it
 * is not decided yet (or stored in another type). */
static void grad_md(const xpb_executable *exe, uint32_t tid, dnnl_memory_desc_t *md)
{
    const dnnl_memory_desc_t *have = odn_tensor_md(exe, tid);
    if (have && have->data_type == dnnl_f32)
        *md = *have;
    else
        odn_md_plain(md, xpb_program_tensor(exe->prog, tid), dnnl_f32);
}

/* One kernel step over gradient `k` of the op (in place when `scale`). */
static xpb_status grad_step(xpb_executable *exe, const xpb_op *op, uint32_t k, uint32_t acc,
                            const dnnl_memory_desc_t *acc_md, int scale)
{
    uint32_t g = xpb_op_input(exe->prog, op, k);
    dnnl_memory_desc_t md;
    grad_md(exe, g, &md);
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = scale ? scale_kernel : sum_sq_kernel;
    s.p[0] = (int64_t)(dnnl_memory_desc_get_size(&md) / sizeof(float));
    s.p[1] = k == 0;
    xpb_status st = scale ? odn_inout(exe, &s, 0, g, &md) : odn_in(exe, &s, 0, g, &md);
    if (st != XPB_OK)
        return st;
    odn_buf_operand(&s, 1, acc, acc_md);
    return odn_commit(exe, &s);
}

xpb_status odn_compile_clip(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    dnnl_memory_desc_t acc_md, total_md;
    int64_t words = sizeof(struct clip_acc) / sizeof(float);
    odn_md_tag(&acc_md, 1, &words, dnnl_f32, dnnl_a);
    uint32_t acc = ODN_NONE;
    xpb_status st = odn_buf_new(&acc, exe, sizeof(struct clip_acc), 0);
    for (uint32_t k = 0; k < op->n_inputs && st == XPB_OK; k++)
        st = grad_step(exe, op, k, acc, &acc_md, 0);
    if (st != XPB_OK)
        return st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_KERNEL);
    s.fn = norm_kernel;
    s.f[0] = op->max_norm;
    odn_buf_operand(&s, 0, acc, &acc_md);
    odn_md_plain(&total_md, xpb_program_tensor(exe->prog, op->outputs[0]), dnnl_f32);
    if ((st = odn_out_as(exe, &s, 1, op->outputs[0], &total_md, NULL)) != XPB_OK ||
        (st = odn_commit(exe, &s)) != XPB_OK)
        return st;
    for (uint32_t k = 0; k < op->n_inputs && st == XPB_OK; k++)
        st = grad_step(exe, op, k, acc, &acc_md, 1);
    return st;
}
