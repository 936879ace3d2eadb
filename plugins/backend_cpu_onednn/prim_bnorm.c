/* Batch norm (training, inference, backward) on oneDNN's batch-normalization primitive in the
 * layout its input already has, and the running-statistics update as a small kernel
 * (rm = (1-m) rm + m mean, rv = (1-m) rv + m var n/(n-1)). Instance norm is kern_inorm.c. */
#include <string.h>

#include "odn.h"

static const xpb_tensor_desc *T(const xpb_executable *exe, uint32_t id)
{
    return xpb_program_tensor(exe->prog, id);
}

static xpb_status bad(xpb_executable *exe, const char *what)
{
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: %s", label, what);
}

/* Per-channel vectors: f32 [C]. */
static void vec_md(dnnl_memory_desc_t *md, int64_t c)
{
    odn_md_tag(md, 1, &c, dnnl_f32, dnnl_a);
}

static int64_t channels(const xpb_tensor_desc *t)
{
    return t->ndim > 1 ? t->dims[1] : 1;
}

/* ---- running statistics: rm = (1-m) rm + m mean, rv = (1-m) rv + m var n/(n-1) ---- */

static xpb_status running_stats_kernel(odn_step *s)
{
    const float *mean = s->o[0].ptr, *var = s->o[1].ptr;
    float *rm = s->o[2].ptr, *rv = s->o[3].ptr;
    double m = s->f[0], unbias = (double)s->p[1] / (double)(s->p[1] - 1);
    for (int64_t c = 0; c < s->p[0]; c++) {
        rm[c] = (float)((1.0 - m) * rm[c] + m * mean[c]);
        rv[c] = (float)((1.0 - m) * rv[c] + m * var[c] * unbias);
    }
    return XPB_OK;
}

static unsigned relu_flag(const xpb_executable *exe)
{
    return exe->fuse[exe->cur_op].eltwise_op != ODN_NONE ? dnnl_fuse_norm_relu : 0u;
}

static xpb_status compile_fwd(xpb_executable *exe, const xpb_op *op, int training)
{
    if (op->n_inputs < 5 || op->n_outputs < (training ? 3u : 1u))
        return bad(exe, "expects x, gamma, beta, running_mean, running_var");
    uint32_t x = op->inputs[0], y = exe->fuse[exe->cur_op].out_tensor;
    const xpb_tensor_desc *tx = T(exe, x);
    int64_t c = channels(tx), count = xpb_tensor_numel(tx) / c;
    if (tx->ndim != 2 && tx->ndim != 4)
        return bad(exe, "x must be [N,C] or [N,C,H,W]");
    if (training && count < 2)
        return bad(exe, "needs more than 1 value per channel (N*H*W), as PyTorch does");
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_in(exe, &s, DNNL_ARG_SRC, x, NULL);
    if (st != XPB_OK)
        return st;
    dnnl_memory_desc_t data = s.o[0].md, vec;
    vec_md(&vec, c);
    unsigned flags = dnnl_use_scale | dnnl_use_shift | relu_flag(exe);
    if (!training)
        flags |= dnnl_use_global_stats;
    dnnl_batch_normalization_desc_t d;
    ODN_TRY(exe,
            dnnl_batch_normalization_forward_desc_init(
                &d, training ? dnnl_forward_training : dnnl_forward_inference, &data, op->attrs.eps,
                flags),
            "batch normalization descriptor");
    if ((st = odn_pd_create(&s.pd, exe, &d, NULL, NULL, "batch normalization")) != XPB_OK)
        return st;
    if ((st = odn_in(exe, &s, DNNL_ARG_SCALE, op->inputs[1], &vec)) != XPB_OK ||
        (st = odn_in(exe, &s, DNNL_ARG_SHIFT, op->inputs[2], &vec)) != XPB_OK)
        goto fail;
    if (training) {
        if ((st = odn_out_opt(exe, &s, DNNL_ARG_MEAN, op->outputs[1], &vec)) != XPB_OK ||
            (st = odn_out_opt(exe, &s, DNNL_ARG_VARIANCE, op->outputs[2], &vec)) != XPB_OK)
            goto fail;
    } else if ((st = odn_in(exe, &s, DNNL_ARG_MEAN, op->inputs[3], &vec)) != XPB_OK ||
               (st = odn_in(exe, &s, DNNL_ARG_VARIANCE, op->inputs[4], &vec)) != XPB_OK) {
        goto fail;
    }
    if ((st = odn_out(exe, &s, DNNL_ARG_DST, y, odn_pd_md(s.pd, dnnl_query_dst_md))) != XPB_OK)
        goto fail;
    if (training && (flags & dnnl_fuse_norm_relu)) { /* the ReLU mask, for the backward */
        odn_fuse *f = &exe->fuse[exe->cur_op];
        f->ws_md = *odn_pd_md(s.pd, dnnl_query_workspace_md);
        if ((st = odn_buf_new(&f->ws_buf, exe, dnnl_memory_desc_get_size(&f->ws_md), 0)) != XPB_OK)
            goto fail;
        odn_buf_operand(&s, DNNL_ARG_WORKSPACE, f->ws_buf, &f->ws_md);
    }
    /* the statistics as the primitive wrote them (tensors or private buffers) */
    odn_operand stats[2];
    for (uint32_t k = 0; k < s.n; k++) {
        if (s.o[k].arg == DNNL_ARG_MEAN)
            stats[0] = s.o[k];
        if (s.o[k].arg == DNNL_ARG_VARIANCE)
            stats[1] = s.o[k];
    }
    if ((st = odn_commit(exe, &s)) != XPB_OK || !training)
        return st;

    odn_step r;
    odn_step_init(&r, exe, ODN_STEP_KERNEL);
    r.fn = running_stats_kernel;
    r.p[0] = c;
    r.p[1] = count;
    r.f[0] = op->attrs.momentum;
    odn_buf_operand(&r, 0, stats[0].buf, &stats[0].md);
    odn_buf_operand(&r, 1, stats[1].buf, &stats[1].md);
    if ((st = odn_inout(exe, &r, 2, op->inputs[3], &vec)) != XPB_OK ||
        (st = odn_inout(exe, &r, 3, op->inputs[4], &vec)) != XPB_OK)
        return st;
    return odn_commit(exe, &r);
fail:
    dnnl_primitive_desc_destroy(s.pd);
    return st;
}

static xpb_status compile_bwd(xpb_executable *exe, const xpb_op *op)
{
    if (op->n_inputs < 5 || op->n_outputs < 3)
        return bad(exe, "expects dy, x, gamma, ws_mean, ws_var -> dx, dgamma, dbeta");
    const odn_fuse *f = &exe->fuse[exe->cur_op];
    const odn_fuse *ff = f->bn_fwd_op != ODN_NONE ? &exe->fuse[f->bn_fwd_op] : NULL;
    /* fused with the ReLU: the ReLU's incoming gradient, masked here by the forward's mask */
    uint32_t dy = ff ? xpb_program_op(exe->prog, f->relu_bwd_op)->inputs[0] : op->inputs[0];
    uint32_t x = op->inputs[1];
    if (ff && ff->ws_buf == ODN_NONE)
        return bad(exe, "fused ReLU backward without the forward's mask");
    int64_t c = channels(T(exe, x));
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    xpb_status st = odn_in(exe, &s, DNNL_ARG_SRC, x, NULL);
    if (st != XPB_OK)
        return st;
    dnnl_memory_desc_t data = s.o[0].md, vec;
    vec_md(&vec, c);
    unsigned flags = dnnl_use_scale | dnnl_use_shift | (ff ? dnnl_fuse_norm_relu : 0u);
    dnnl_batch_normalization_desc_t fd, bd;
    dnnl_primitive_desc_t hint;
    ODN_TRY(exe,
            dnnl_batch_normalization_forward_desc_init(&fd, dnnl_forward_training, &data,
                                                       op->attrs.eps, flags),
            "batch normalization descriptor");
    ODN_TRY(exe,
            dnnl_batch_normalization_backward_desc_init(&bd, dnnl_backward, &data, &data,
                                                        op->attrs.eps, flags),
            "batch normalization backward descriptor");
    if ((st = odn_pd_create(&hint, exe, &fd, NULL, NULL, "batch normalization")) != XPB_OK)
        return st;
    st = odn_pd_create(&s.pd, exe, &bd, NULL, hint, "batch normalization backward");
    dnnl_primitive_desc_destroy(hint);
    if (st != XPB_OK)
        return st;
    if ((st = odn_in(exe, &s, DNNL_ARG_DIFF_DST, dy, odn_pd_md(s.pd, dnnl_query_diff_dst_md))) !=
            XPB_OK ||
        (st = odn_in(exe, &s, DNNL_ARG_SCALE, op->inputs[2], &vec)) != XPB_OK ||
        /* oneDNN 2.6 wants a shift input too (unused by the maths): gamma will do */
        (st = odn_in(exe, &s, DNNL_ARG_SHIFT, op->inputs[2], &vec)) != XPB_OK ||
        (st = odn_in(exe, &s, DNNL_ARG_MEAN, op->inputs[3], &vec)) != XPB_OK ||
        (st = odn_in(exe, &s, DNNL_ARG_VARIANCE, op->inputs[4], &vec)) != XPB_OK ||
        (ff && !dnnl_memory_desc_equal(odn_pd_md(s.pd, dnnl_query_workspace_md), &ff->ws_md) &&
         (st = bad(exe, "fused ReLU mask of another layout")) != XPB_OK) ||
        (st = odn_out_opt(exe, &s, DNNL_ARG_DIFF_SRC, op->outputs[0],
                          odn_pd_md(s.pd, dnnl_query_diff_src_md))) != XPB_OK ||
        (st = odn_out_opt(exe, &s, DNNL_ARG_DIFF_SCALE, op->outputs[1], &vec)) != XPB_OK ||
        (st = odn_out_opt(exe, &s, DNNL_ARG_DIFF_SHIFT, op->outputs[2], &vec)) != XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    if (ff)
        odn_buf_operand(&s, DNNL_ARG_WORKSPACE, ff->ws_buf, &ff->ws_md);
    return odn_commit(exe, &s);
}

xpb_status odn_compile_bnorm(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    switch (op->kind) {
    case XPB_OP_BATCHNORM_TRAIN:
        return compile_fwd(exe, op, 1);
    case XPB_OP_BATCHNORM_INFER:
        return compile_fwd(exe, op, 0);
    default:
        return compile_bwd(exe, op);
    }
}
