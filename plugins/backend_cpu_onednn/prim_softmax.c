/* SOFTMAX and SOFTMAX_BWD (op set 3) over the last axis.
 *
 * Forward: oneDNN's softmax (v2, "accurate": max-shifted, fp32 arithmetic) on x itself when
 * the op is a plain softmax (scale 1, no mask, not causal); otherwise an own OpenMP kernel
 * first writes z = scale * x + mask, with -inf for the keys j > i that the causal attribute
 * hides (i, j: the last two indices), into an fp32 temporary, and the softmax runs on z. A
 * hidden key gives exp(-inf) = 0, as in the reference; docs/ops.md's rows that are entirely
 * -inf give NaN on both sides.
 *
 * Backward: dx = scale * y * (dy - sum(dy * y)): oneDNN's softmax backward when scale is 1
 * (attention scales in a SCALE op of its own), else an own kernel whose row sums are in
 * double. Masked keys need nothing: their y is 0, and so is their dx. */
#include <math.h>

#include "odn.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

/* ---- kernels; p[0] rows, p[1] keys (Sk), p[2] queries (Sq), p[3] causal; f[0] scale ---- */

/* o: x, z[, mask] (fp32, dense) */
static xpb_status prep_kernel(odn_step *s)
{
    const float *x = s->o[0].ptr, *mask = s->n > 2 ? s->o[2].ptr : NULL;
    float *z = s->o[1].ptr, scale = s->f[0];
    int64_t rows = s->p[0], sk = s->p[1], sq = s->p[2];
    int causal = s->p[3] != 0;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        int64_t q = r % sq, visible = causal && q + 1 < sk ? q + 1 : sk;
        const float *xr = x + r * sk, *mr = mask ? mask + q * sk : NULL;
        float *zr = z + r * sk;
        if (mr)
            for (int64_t j = 0; j < visible; j++)
                zr[j] = scale * xr[j] + mr[j];
        else
            for (int64_t j = 0; j < visible; j++)
                zr[j] = scale * xr[j];
        for (int64_t j = visible; j < sk; j++)
            zr[j] = -INFINITY;
    }
    return XPB_OK;
}

/* o: dy, y, dx (fp32, dense) */
static xpb_status bwd_kernel(odn_step *s)
{
    const float *dy = s->o[0].ptr, *y = s->o[1].ptr;
    float *dx = s->o[2].ptr;
    int64_t rows = s->p[0], sk = s->p[1];
    double scale = s->f[0];
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        const float *dyr = dy + r * sk, *yr = y + r * sk;
        float *dxr = dx + r * sk;
        double dot = 0.0;
#pragma omp simd reduction(+ : dot)
        for (int64_t j = 0; j < sk; j++)
            dot += (double)dyr[j] * yr[j];
        float sdot = (float)dot, fs = (float)scale;
        for (int64_t j = 0; j < sk; j++)
            dxr[j] = fs * yr[j] * (dyr[j] - sdot);
    }
    return XPB_OK;
}

/* ---- compile ---- */

/* Dense row-major descriptor of tensor `tid` in `dt`. */
static void plain(const xpb_executable *exe, uint32_t tid, dnnl_data_type_t dt,
                  dnnl_memory_desc_t *md)
{
    odn_md_plain(md, T(exe, tid), dt);
}

static xpb_status compile_fwd(xpb_executable *exe, const xpb_op *op)
{
    uint32_t x = op->inputs[0], y = op->outputs[0];
    uint32_t mask = op->n_inputs > 1 ? op->inputs[1] : XPB_NO_TENSOR;
    const xpb_tensor_desc *tx = T(exe, x);
    int axis = (int)tx->ndim - 1;
    int prep = op->attrs.scale != 1.0f || mask != XPB_NO_TENSOR || op->causal;
    dnnl_memory_desc_t src, dst;
    plain(exe, x, prep ? dnnl_f32 : odn_pref_dt(exe, x), &src);
    plain(exe, y, odn_pref_dt(exe, y), &dst);
    xpb_status st;
    uint32_t z = ODN_NONE;
    if (prep) {
        odn_step k;
        odn_step_init(&k, exe, ODN_STEP_KERNEL);
        k.fn = prep_kernel;
        k.p[0] = xpb_tensor_numel(tx) / tx->dims[axis];
        k.p[1] = tx->dims[axis];
        k.p[2] = tx->ndim > 1 ? tx->dims[axis - 1] : 1;
        k.p[3] = op->causal != 0;
        k.f[0] = op->attrs.scale;
        dnnl_memory_desc_t mmd;
        if ((st = odn_in_as(exe, &k, 0, x, &src, NULL)) != XPB_OK ||
            (st = odn_scratch_operand(exe, &k, 1, &src)) != XPB_OK)
            return st;
        if (mask != XPB_NO_TENSOR) {
            plain(exe, mask, dnnl_f32, &mmd);
            if ((st = odn_in_as(exe, &k, 2, mask, &mmd, NULL)) != XPB_OK)
                return st;
        }
        z = k.o[1].buf;
        if ((st = odn_commit(exe, &k)) != XPB_OK)
            return st;
    }
    dnnl_softmax_v2_desc_t d;
    dnnl_prop_kind_t prop = exe->prog->training ? dnnl_forward_training : dnnl_forward_inference;
    ODN_TRY(exe,
            dnnl_softmax_v2_forward_desc_init(&d, prop, dnnl_softmax_accurate, &src, &dst, axis),
            "softmax descriptor");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    if ((st = odn_pd_create(&s.pd, exe, &d, NULL, NULL, "softmax")) != XPB_OK)
        return st;
    if (prep)
        odn_buf_operand(&s, DNNL_ARG_SRC, z, &src);
    else if ((st = odn_in_as(exe, &s, DNNL_ARG_SRC, x, &src, NULL)) != XPB_OK)
        goto fail;
    if ((st = odn_out_as(exe, &s, DNNL_ARG_DST, y, &dst, NULL)) != XPB_OK)
        goto fail;
    return odn_commit(exe, &s);
fail:
    dnnl_primitive_desc_destroy(s.pd);
    return st;
}

/* scale 1: oneDNN's softmax backward (a forward softmax over y's shape is its hint) */
static xpb_status compile_bwd_prim(xpb_executable *exe, const xpb_op *op)
{
    uint32_t dy = op->inputs[0], y = op->inputs[1], dx = op->outputs[0];
    int axis = (int)T(exe, y)->ndim - 1;
    dnnl_memory_desc_t my, mdy, mdx;
    plain(exe, y, odn_pref_dt(exe, y), &my);
    plain(exe, dy, my.data_type, &mdy);
    plain(exe, dx, odn_pref_dt(exe, dx), &mdx);
    dnnl_softmax_v2_desc_t fd, bd;
    ODN_TRY(exe,
            dnnl_softmax_v2_forward_desc_init(&fd, dnnl_forward_training, dnnl_softmax_accurate,
                                              &my, &my, axis),
            "softmax descriptor");
    ODN_TRY(exe,
            dnnl_softmax_v2_backward_desc_init(&bd, dnnl_softmax_accurate, &mdx, &mdy, &my, axis),
            "softmax backward descriptor");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_pd_create_bwd(&s.pd, exe, &fd, &bd, "softmax backward");
    if (st != XPB_OK)
        return st;
    if ((st = odn_in_as(exe, &s, DNNL_ARG_DIFF_DST, dy, &mdy, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_DST, y, &my, NULL)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DIFF_SRC, dx, &mdx, NULL)) != XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

static xpb_status compile_bwd(xpb_executable *exe, const xpb_op *op)
{
    if (op->attrs.scale == 1.0f)
        return compile_bwd_prim(exe, op);
    uint32_t dy = op->inputs[0], y = op->inputs[1], dx = op->outputs[0];
    const xpb_tensor_desc *ty = T(exe, y);
    odn_step k;
    odn_step_init(&k, exe, ODN_STEP_KERNEL);
    k.fn = bwd_kernel;
    k.p[1] = ty->dims[ty->ndim - 1];
    k.p[0] = xpb_tensor_numel(ty) / k.p[1];
    k.f[0] = op->attrs.scale;
    dnnl_memory_desc_t mdy, my, mdx;
    plain(exe, dy, dnnl_f32, &mdy);
    plain(exe, y, dnnl_f32, &my);
    plain(exe, dx, dnnl_f32, &mdx);
    xpb_status st;
    if ((st = odn_in_as(exe, &k, 0, dy, &mdy, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &k, 1, y, &my, NULL)) != XPB_OK ||
        (st = odn_out_as(exe, &k, 2, dx, &mdx, NULL)) != XPB_OK)
        return st;
    return odn_commit(exe, &k);
}

xpb_status odn_compile_softmax(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    return op->kind == XPB_OP_SOFTMAX ? compile_fwd(exe, op) : compile_bwd(exe, op);
}
