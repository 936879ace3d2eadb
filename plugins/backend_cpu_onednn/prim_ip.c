/* LINEAR (y = x w^T + b) and its backward ops on oneDNN's inner-product primitives, with
 * fused eltwise post-ops. */
#include <string.h>

#include "odn.h"

static xpb_status check_2d(xpb_executable *exe, uint32_t x, uint32_t w, uint32_t y)
{
    const xpb_tensor_desc *tx = xpb_program_tensor(exe->prog, x),
                          *tw = xpb_program_tensor(exe->prog, w),
                          *ty = xpb_program_tensor(exe->prog, y);
    if (tx->ndim == 2 && tw->ndim == 2 && ty->ndim == 2 && tx->dims[1] == tw->dims[1] &&
        ty->dims[1] == tw->dims[0] && ty->dims[0] == tx->dims[0])
        return XPB_OK;
    char label[256];
    odn_op_label(exe, exe->cur_op, label, sizeof label);
    return odn_fail(exe, XPB_INVALID_ARGUMENT,
                    "%s: expects x[N,I], w[O,I], y[N,O] (2-D, matching sizes)", label);
}

static void md2(dnnl_memory_desc_t *md, const xpb_executable *exe, uint32_t tid,
                dnnl_data_type_t dt)
{
    const xpb_tensor_desc *t = xpb_program_tensor(exe->prog, tid);
    odn_md_tag(md, 2, t->dims, dt, dnnl_format_tag_any);
}

static dnnl_data_type_t compute_dt(const xpb_executable *exe)
{
    return exe->bf16 ? dnnl_bf16 : dnnl_f32;
}

static xpb_status hint_pd(dnnl_primitive_desc_t *out, xpb_executable *exe, uint32_t x, uint32_t w,
                          uint32_t y)
{
    dnnl_memory_desc_t src, wei, dst;
    md2(&src, exe, x, compute_dt(exe));
    md2(&wei, exe, w, compute_dt(exe));
    md2(&dst, exe, y, compute_dt(exe));
    dnnl_inner_product_desc_t d;
    ODN_TRY(exe,
            dnnl_inner_product_forward_desc_init(&d, dnnl_forward_training, &src, &wei, NULL, &dst),
            "inner product forward descriptor");
    return odn_pd_create(out, exe, &d, NULL, NULL, "inner product forward hint");
}

static xpb_status compile_fwd(xpb_executable *exe, const xpb_op *op)
{
    const odn_fuse *f = &exe->fuse[exe->cur_op];
    uint32_t x = op->inputs[0], w = op->inputs[1], b = op->n_inputs > 2 ? op->inputs[2] : ODN_NONE;
    uint32_t y = f->out_tensor;
    xpb_status st = check_2d(exe, x, w, y);
    if (st != XPB_OK)
        return st;
    dnnl_memory_desc_t src, wei, bias, dst;
    md2(&src, exe, x, compute_dt(exe));
    md2(&wei, exe, w, compute_dt(exe));
    md2(&dst, exe, y, odn_pref_dt(exe, y));
    int64_t o = xpb_program_tensor(exe->prog, w)->dims[0];
    odn_md_tag(&bias, 1, &o, dnnl_f32, dnnl_a);
    dnnl_inner_product_desc_t d;
    dnnl_prop_kind_t prop = exe->prog->training ? dnnl_forward_training : dnnl_forward_inference;
    ODN_TRY(exe,
            dnnl_inner_product_forward_desc_init(&d, prop, &src, &wei, b != ODN_NONE ? &bias : NULL,
                                                 &dst),
            "inner product forward descriptor");
    dnnl_post_ops_t po = NULL;
    if ((st = odn_fused_post_ops(&po, exe, exe->cur_op)) != XPB_OK)
        return st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    st = odn_pd_create(&s.pd, exe, &d, po, NULL, "inner product");
    if (po)
        dnnl_post_ops_destroy(po);
    if (st != XPB_OK)
        return st;
    if ((st = odn_in(exe, &s, DNNL_ARG_SRC, x, odn_pd_md(s.pd, dnnl_query_src_md))) != XPB_OK ||
        (st = odn_in(exe, &s, DNNL_ARG_WEIGHTS, w, odn_pd_md(s.pd, dnnl_query_weights_md))) !=
            XPB_OK ||
        (b != ODN_NONE && (st = odn_in(exe, &s, DNNL_ARG_BIAS, b, &bias)) != XPB_OK) ||
        (st = odn_out(exe, &s, DNNL_ARG_DST, y, odn_pd_md(s.pd, dnnl_query_dst_md))) != XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

/* dx = dy w. The implementation is chosen by timing (tune.c), in fp32 too, with the reorders
 * of dy and w from their layouts counted: oneDNN 2.6.3's first choice, brgemm_bwd_d on the
 * blocked weights the forward picked, ran lstm-ptb-large's 700 x 10000 x 1500 decoder in 187 ms
 * on an AMD Zen 5 (2 threads, fp32), its gemm-based one in 102 ms with the weights' reorder
 * to plain included. */
static xpb_status compile_bwd_data(xpb_executable *exe, const xpb_op *op)
{
    uint32_t dy = op->inputs[0], w = op->inputs[1], dx = op->outputs[0];
    xpb_status st = check_2d(exe, dx, w, dy);
    if (st != XPB_OK)
        return st;
    dnnl_memory_desc_t dsrc, wei, ddst;
    md2(&dsrc, exe, dx, compute_dt(exe));
    md2(&wei, exe, w, compute_dt(exe));
    md2(&ddst, exe, dy, compute_dt(exe));
    dnnl_inner_product_desc_t d;
    ODN_TRY(exe, dnnl_inner_product_backward_data_desc_init(&d, &dsrc, &wei, &ddst),
            "inner product backward-data descriptor");
    dnnl_primitive_desc_t hint;
    if ((st = hint_pd(&hint, exe, dx, w, dy)) != XPB_OK)
        return st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    const int targs[2] = {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS};
    const dnnl_memory_desc_t *twant[2] = {odn_tensor_md(exe, dy), odn_tensor_md(exe, w)};
    st = odn_pd_tuned(&s.pd, exe, &d, sizeof d, NULL, ODN_TUNE_FP32 | ODN_TUNE_CLEAR_WIN, hint,
                      targs, twant, 2, "inner product backward data");
    dnnl_primitive_desc_destroy(hint);
    if (st != XPB_OK)
        return st;
    if ((st = odn_in(exe, &s, DNNL_ARG_DIFF_DST, dy, odn_pd_md(s.pd, dnnl_query_diff_dst_md))) !=
            XPB_OK ||
        (st = odn_in(exe, &s, DNNL_ARG_WEIGHTS, w, odn_pd_md(s.pd, dnnl_query_weights_md))) !=
            XPB_OK ||
        (st = odn_out(exe, &s, DNNL_ARG_DIFF_SRC, dx, odn_pd_md(s.pd, dnnl_query_diff_src_md))) !=
            XPB_OK) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

static xpb_status compile_bwd_weights(xpb_executable *exe, const xpb_op *op)
{
    uint32_t dy = op->inputs[0], x = op->inputs[1], dw = op->outputs[0];
    uint32_t db = op->n_outputs > 1 ? op->outputs[1] : ODN_NONE;
    xpb_status st = check_2d(exe, x, dw, dy);
    if (st != XPB_OK)
        return st;
    dnnl_memory_desc_t src, dwei, dbias, ddst;
    md2(&src, exe, x, compute_dt(exe));
    md2(&dwei, exe, dw, dnnl_f32);
    md2(&ddst, exe, dy, compute_dt(exe));
    int64_t o = xpb_program_tensor(exe->prog, dw)->dims[0];
    odn_md_tag(&dbias, 1, &o, dnnl_f32, dnnl_a);
    dnnl_inner_product_desc_t d;
    ODN_TRY(exe,
            dnnl_inner_product_backward_weights_desc_init(&d, &src, &dwei,
                                                          db != ODN_NONE ? &dbias : NULL, &ddst),
            "inner product backward-weights descriptor");
    dnnl_primitive_desc_t hint;
    if ((st = hint_pd(&hint, exe, x, dw, dy)) != XPB_OK)
        return st;
    odn_step s;
    odn_step_init(&s, exe, ODN_STEP_PRIM);
    st = odn_pd_create(&s.pd, exe, &d, NULL, hint, "inner product backward weights");
    if (st != XPB_OK) {
        dnnl_primitive_desc_destroy(hint);
        return st;
    }
    uint32_t param = xpb_program_tensor(exe->prog, dw)->grad_of;
    const dnnl_memory_desc_t *pmd =
        param < exe->prog->n_tensors && !exe->t[dw].decided ? odn_tensor_md(exe, param) : NULL;
    if (pmd && pmd->data_type == dnnl_f32 && pmd->ndims == 2) {
        dnnl_inner_product_desc_t d2;
        if (dnnl_inner_product_backward_weights_desc_init(
                &d2, &src, pmd, db != ODN_NONE ? &dbias : NULL, &ddst) == dnnl_success)
            odn_pd_prefer(exe, &s.pd, &d2, hint);
    }
    dnnl_primitive_desc_destroy(hint);
    if ((st = odn_in(exe, &s, DNNL_ARG_DIFF_DST, dy, odn_pd_md(s.pd, dnnl_query_diff_dst_md))) !=
            XPB_OK ||
        (st = odn_in(exe, &s, DNNL_ARG_SRC, x, odn_pd_md(s.pd, dnnl_query_src_md))) != XPB_OK ||
        (st = odn_out(exe, &s, DNNL_ARG_DIFF_WEIGHTS, dw,
                      odn_pd_md(s.pd, dnnl_query_diff_weights_md))) != XPB_OK ||
        (db != ODN_NONE && (st = odn_out(exe, &s, DNNL_ARG_DIFF_BIAS, db, &dbias)) != XPB_OK)) {
        dnnl_primitive_desc_destroy(s.pd);
        return st;
    }
    return odn_commit(exe, &s);
}

xpb_status odn_compile_linear(xpb_executable *exe)
{
    const xpb_op *op = xpb_program_op(exe->prog, exe->cur_op);
    if (op->n_inputs < 2 || op->n_outputs < 1) {
        char label[256];
        odn_op_label(exe, exe->cur_op, label, sizeof label);
        return odn_fail(exe, XPB_INVALID_ARGUMENT, "%s: %u inputs / %u outputs", label,
                        op->n_inputs, op->n_outputs);
    }
    switch (op->kind) {
    case XPB_OP_LINEAR:
        return compile_fwd(exe, op);
    case XPB_OP_LINEAR_BWD_DATA:
        return compile_bwd_data(exe, op);
    default:
        return compile_bwd_weights(exe, op);
    }
}
