/* LAYER_NORM and LAYER_NORM_BWD (op set 3) on oneDNN's layer normalization primitive over the
 * last axis, with gamma as its scale and beta as its shift (the use_scale / use_shift flags of
 * oneDNN 2.6). A 1-D x is seen as [1, D] (oneDNN normalizes 2-D and up).
 *
 * The workspace tensors hold oneDNN's statistics: ws_mean the mean, ws_rstd the biased
 * variance (not 1 / sqrt(var + eps) as the reference keeps: the workspace's contents are the
 * backend's, and oneDNN's backward takes the variance). Under bf16-mixed x, y, dy and dx are
 * bf16; the statistics, gamma, beta and their gradients stay fp32. */
#include "odn.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

/* Tensor `tid` (x's shape) as the primitive sees it: at least 2-D, in `dt`. */
static void data_md(const xpb_executable *exe, uint32_t tid, dnnl_data_type_t dt,
                    dnnl_memory_desc_t *md)
{
    const xpb_tensor_desc *t = T(exe, tid);
    odn_md_padded(md, t->ndim, t->dims, t->ndim < 2 ? 2 : (int)t->ndim, dt);
}

static const unsigned lnorm_flags = dnnl_use_scale | dnnl_use_shift;

static xpb_status compile_fwd(xpb_executable *exe, const xpb_op *op)
{
    uint32_t x = op->inputs[0], y = op->outputs[0];
    uint32_t mean = op->n_outputs > 1 ? op->outputs[1] : XPB_NO_TENSOR;
    uint32_t var = op->n_outputs > 2 ? op->outputs[2] : XPB_NO_TENSOR;
    int stats = mean != XPB_NO_TENSOR || var != XPB_NO_TENSOR;
    dnnl_memory_desc_t src, ymd, gmd;
    data_md(exe, x, exe->bf16 ? dnnl_bf16 : dnnl_f32, &src);
    data_md(exe, y, odn_pref_dt(exe, y), &ymd);
    odn_md_plain(&gmd, T(exe, op->inputs[1]), dnnl_f32);
    dnnl_layer_normalization_desc_t d;
    ODN_TRY(exe,
            dnnl_layer_normalization_forward_desc_init(
                &d, stats ? dnnl_forward_training : dnnl_forward_inference, &src, NULL,
                op->attrs.eps, lnorm_flags),
            "layer normalization descriptor");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_pd_create(&s.pd, exe, &d, NULL, NULL, "layer normalization");
    if (st != XPB_OK)
        return st;
    if ((st = odn_in_as(exe, &s, DNNL_ARG_SRC, x, &src, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_SCALE, op->inputs[1], &gmd, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_SHIFT, op->inputs[2], &gmd, NULL)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DST, y, &ymd, &src)) != XPB_OK ||
        (stats && (st = odn_out_as(exe, &s, DNNL_ARG_MEAN, mean,
                                   dnnl_primitive_desc_query_md(s.pd, dnnl_query_dst_md, 1),
                                   NULL)) != XPB_OK) ||
        (stats && (st = odn_out_as(exe, &s, DNNL_ARG_VARIANCE, var,
                                   dnnl_primitive_desc_query_md(s.pd, dnnl_query_dst_md, 2),
                                   NULL)) != XPB_OK)) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

static xpb_status compile_bwd(xpb_executable *exe, const xpb_op *op)
{
    uint32_t dy = op->inputs[0], x = op->inputs[1], gamma = op->inputs[2];
    uint32_t dx = op->outputs[0];
    uint32_t dgamma = op->n_outputs > 1 ? op->outputs[1] : XPB_NO_TENSOR;
    uint32_t dbeta = op->n_outputs > 2 ? op->outputs[2] : XPB_NO_TENSOR;
    dnnl_data_type_t dt = exe->bf16 ? dnnl_bf16 : dnnl_f32;
    dnnl_memory_desc_t src, dxmd, gmd;
    data_md(exe, x, dt, &src);
    data_md(exe, x, dx != XPB_NO_TENSOR ? odn_pref_dt(exe, dx) : dt, &dxmd);
    odn_md_plain(&gmd, T(exe, gamma), dnnl_f32);
    dnnl_layer_normalization_desc_t fd, bd;
    ODN_TRY(exe,
            dnnl_layer_normalization_forward_desc_init(&fd, dnnl_forward_training, &src, NULL,
                                                       op->attrs.eps, lnorm_flags),
            "layer normalization descriptor");
    ODN_TRY(exe,
            dnnl_layer_normalization_backward_desc_init(&bd, dnnl_backward, &src, &src, NULL,
                                                        op->attrs.eps, lnorm_flags),
            "layer normalization backward descriptor");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_pd_create_bwd(&s.pd, exe, &fd, &bd, "layer normalization backward");
    if (st != XPB_OK)
        return st;
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(s.pd, dnnl_query_src_md, 1);
    if ((st = odn_in_as(exe, &s, DNNL_ARG_DIFF_DST, dy, &src, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_SRC, x, &src, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_SCALE, gamma, &gmd, NULL)) != XPB_OK ||
        /* oneDNN asks for the shift too (use_shift), though no gradient depends on beta,
         * which the op does not get: gamma's bytes stand in */
        (st = odn_in_as(exe, &s, DNNL_ARG_SHIFT, gamma, &gmd, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_MEAN, op->inputs[3], smd, NULL)) != XPB_OK ||
        (st = odn_in_as(exe, &s, DNNL_ARG_VARIANCE, op->inputs[4], smd, NULL)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DIFF_SRC, dx, &dxmd, &src)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DIFF_SCALE, dgamma, &gmd, NULL)) != XPB_OK ||
        (st = odn_out_as(exe, &s, DNNL_ARG_DIFF_SHIFT, dbeta, &gmd, NULL)) != XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

xpb_status odn_compile_lnorm(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    return op->kind == XPB_OP_LAYER_NORM ? compile_fwd(exe, op) : compile_bwd(exe, op);
}
